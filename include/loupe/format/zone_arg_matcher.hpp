// Gives each zone of one thread its arguments (ZONE_ARG records). A ZONE_ARG
// names its zone by the zone's begin time and comes before the zone's event
// (zones are written when they end). Zones on a thread nest, and end
// innermost first; so when a zone's event arrives, the held arguments that
// name its begin time are its own, and those that name a later begin time
// belong to zones inside it that never arrived (dropped, or the trace was
// cut short): they are counted, not kept. Held arguments of enclosing zones
// wait for theirs.
//
// Used by the reader (format/reader.hpp) and the viewers' streaming source
// (viewer/detail/sources.hpp). Cost: amortized O(1) per argument and zone
// when arguments arrive in begin order (the usual case), O(log n) to hold
// one otherwise. Thread-safety: a plain value; one per thread being read.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "loupe/format/decoder.hpp"

namespace loupe::detail {

class zone_arg_matcher {
public:
    /// Holds `arg` for the zone that began at `zone_begin_ns`.
    void hold(std::uint64_t zone_begin_ns, const trace_zone_argument& arg) {
        held_.insert(std::upper_bound(held_.begin(), held_.end(), zone_begin_ns,
                                      [](std::uint64_t t, const held_arg& h) { return t < h.zone_begin_ns; }),
                     held_arg{zone_begin_ns, arg});
    }

    /// A zone that began at `zone_begin_ns` arrived: appends its held
    /// arguments to `out` in the order they were held; returns how many.
    std::size_t take(std::uint64_t zone_begin_ns, std::vector<trace_zone_argument>& out) {
        if (held_.empty() || held_.back().zone_begin_ns < zone_begin_ns) return 0;
        auto first = std::lower_bound(held_.begin(), held_.end(), zone_begin_ns,
                                      [](const held_arg& h, std::uint64_t t) { return h.zone_begin_ns < t; });
        auto last = first;
        for (; last != held_.end() && last->zone_begin_ns == zone_begin_ns; ++last) out.push_back(last->arg);
        without_zone_ += static_cast<std::uint64_t>(held_.end() - last);
        const std::size_t taken = static_cast<std::size_t>(last - first);
        held_.erase(first, held_.end());
        return taken;
    }

    /// Arguments held now.
    std::size_t held() const noexcept { return held_.size(); }
    /// Arguments whose zone never arrived: those passed over by take, and
    /// (after finish) those still held at the end of the thread.
    std::uint64_t without_zone() const noexcept { return without_zone_; }
    void finish() noexcept {
        without_zone_ += held_.size();
        held_.clear();
    }
    void clear() noexcept {
        held_.clear();
        without_zone_ = 0;
    }

private:
    struct held_arg {
        std::uint64_t zone_begin_ns;
        trace_zone_argument arg;
    };
    std::vector<held_arg> held_;  // by zone_begin_ns, then in the order held
    std::uint64_t without_zone_ = 0;
};

}  // namespace loupe::detail
