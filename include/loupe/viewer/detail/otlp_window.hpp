// Which spans one conversion of a live export writes, and ids that do not
// depend on which conversion writes them (sinks/otlp_http_sink.hpp).
//
// The live sink converts a session piece by piece: each conversion holds
// two windows of records and writes the spans that ended, per thread, in
// the first of them; the second is there so that a span's parent, which
// ends after it, is known when the span is written. A span written by one
// conversion and its parent written by the next must agree on the parent's
// id, so in a window ids are not numbered by the event's place in the file
// (otlp_ids.hpp) but made from what the span is: its thread, begin, end,
// event type and site. Two spans alike in all of these (which only a clock
// coarser than the zones can make) would share an id.
//
// Cost: a few hash steps per span; a map lookup per span for its thread's
// bounds (one per thread, cached by the writer). Thread-safety: read-only
// during a conversion.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "loupe/viewer/detail/otlp_ids.hpp"

namespace loupe::detail::otlp {

/// The spans a conversion writes: on each thread, those whose end is in
/// (after, up_to]. A thread missing from `after` has no lower bound; one
/// missing from `up_to` has no span in the first window (none is written)
/// unless `last` is set, which lifts every upper bound (the session ended).
struct span_window {
    std::unordered_map<std::uint64_t, std::uint64_t> after;  ///< by loupe thread id
    std::unordered_map<std::uint64_t, std::uint64_t> up_to;  ///< by loupe thread id
    bool last = false;

    /// The bounds of one thread, looked up once per thread: ends in
    /// (lower, upper] when `any`, none otherwise.
    struct bounds {
        bool any = false;
        bool has_lower = false;
        std::uint64_t lower = 0;
        std::uint64_t upper = 0;
        bool writes(std::uint64_t end_ns) const noexcept {
            return any && (!has_lower || end_ns > lower) && end_ns <= upper;
        }
    };
    bounds of(std::uint64_t thread_id) const {
        bounds b;
        if (auto it = after.find(thread_id); it != after.end()) {
            b.has_lower = true;
            b.lower = it->second;
        }
        if (last) {
            b.any = true;
            b.upper = UINT64_MAX;
        } else if (auto it = up_to.find(thread_id); it != up_to.end()) {
            b.any = true;
            b.upper = it->second;
        }
        return b;
    }
};

/// What makes a span itself, hashed: thread, begin, end, event type and
/// the site's identity (`site_key`, see below). Below 2^63.
inline std::uint64_t span_key(std::uint64_t thread_id, std::uint64_t begin_ns, std::uint64_t end_ns,
                              unsigned type, std::uint64_t site_key) noexcept {
    std::uint64_t h = mix(thread_id + 0x9e3779b97f4a7c15ull);
    h = mix(h ^ begin_ns);
    h = mix(h ^ end_ns);
    h = mix(h ^ (static_cast<std::uint64_t>(type) << 56 | (site_key & 0x00ffffffffffffffull)));
    return h & 0x7fffffffffffffffull;
}

/// A site's identity across conversions (its index in one trace is not):
/// its name, file and line.
inline std::uint64_t site_key(std::string_view name, std::string_view file, std::uint32_t line) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    const auto add = [&h](std::string_view s) {
        for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
        h = (h ^ 0xff) * 0x100000001b3ull;
    };
    add(name);
    add(file);
    return mix(h ^ line);
}

}  // namespace loupe::detail::otlp
