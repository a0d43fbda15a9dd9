// Trace and span ids for the OTLP export (docs/otlp.md, "Ids").
//
// Each trace file gets a seed: a hash of what tells one recording from
// another (its pid, its start time on the monotonic clock and on the wall
// clock, its session's and program's names). A span is numbered within
// the file by a counter (its thread's place in the trace and its event's
// place in the thread); its id is mix(seed ^ counter), where mix is the
// splitmix64 finalizer, a bijection of 64-bit words with mix(0) = 0. The
// seed has its top bit set and counters stay below 2^63, so mix's input is
// never 0: ids are never zero, and distinct counters give distinct ids
// within a file. Files of different recordings get unrelated seeds, so their
// ids collide only by chance (2^-64 per pair of spans). A trace id is two
// such words from two other seeds, numbered by the trace's outermost span;
// spans of a task take the task's W3C trace id instead (otlp_writer.hpp),
// their span ids are still these. Converting the same file again gives the
// same ids.
//
// Cost: a few multiplications per id. Thread-safety: pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "loupe/format/decoder.hpp"

namespace loupe::detail::otlp {

/// The splitmix64 finalizer: a bijection, mix(0) == 0.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// A 128-bit trace id.
struct trace_id {
    std::uint64_t high = 0;
    std::uint64_t low = 0;
    friend bool operator==(const trace_id& a, const trace_id& b) noexcept { return a.high == b.high && a.low == b.low; }
};

/// The ids of one converted trace file.
class id_source {
public:
    static constexpr std::uint64_t top_bit = 1ull << 63;

    explicit id_source(const trace_session_info& session) {
        std::uint64_t h = 0x6c6f757065ull;  // "loupe"
        const auto add = [&h](std::uint64_t v) { h = mix(h ^ (v + 0x9e3779b97f4a7c15ull)); };
        const auto add_text = [&](std::string_view s) {
            add(s.size());
            for (const char c : s) add(static_cast<unsigned char>(c));
        };
        add(session.pid);
        add(session.start_ns);
        add(session.wall_anchor_ns);
        add_text(session.name);
        add_text(session.program);
        span_seed_ = mix(h ^ 1) | top_bit;
        trace_seed_high_ = mix(h ^ 2) | top_bit;
        trace_seed_low_ = mix(h ^ 3) | top_bit;
    }

    /// The counter of event `event` of the thread at `thread_index` in
    /// trace::threads: below 2^63 for any index a trace can have.
    static constexpr std::uint64_t counter(std::uint64_t thread_index, std::uint32_t event) noexcept {
        return ((thread_index + 1) & 0x7fffffffull) << 32 | event;
    }
    /// Never 0; distinct for distinct counters.
    std::uint64_t span(std::uint64_t counter) const noexcept { return mix(span_seed_ ^ counter); }
    /// Neither half is 0; distinct for distinct counters.
    trace_id trace(std::uint64_t counter) const noexcept {
        return {mix(trace_seed_high_ ^ counter), mix(trace_seed_low_ ^ counter)};
    }

private:
    std::uint64_t span_seed_ = 0;
    std::uint64_t trace_seed_high_ = 0;
    std::uint64_t trace_seed_low_ = 0;
};

}  // namespace loupe::detail::otlp
