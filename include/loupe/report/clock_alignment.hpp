// Placing the traces of several processes on one timeline (what `loupe
// merge` and `loupe report --tasks` do before they compare times).
//
// Clock domains. Traces whose trace_session_info::clock_domain is equal and
// not empty share one clock (same machine and boot, CLOCK_MONOTONIC): their
// times compare directly. Every other trace (an empty domain: a trace
// written before format 1.9) is a domain of its own.
//
// Offsets between domains come from complete calls between them, as NTP
// does: a call leaves the client at t1 and returns at t4 on the client's
// clock, arrives at the server at t2 and leaves it at t3 on the server's.
// Whatever the network did, the server's clock minus the client's is
//
//     θ = ((t2 − t1) + (t3 − t4)) / 2   within   δ = ((t4 − t1) − (t3 − t2)) / 2
//
// (θ ± δ is exactly the set of offsets that keep t1 ≤ t2 and t3 ≤ t4). Per
// pair of domains, calls in either direction, the estimate with the least δ
// is kept; a call whose server time exceeds the client's (δ < 0: the clocks
// ran at different rates) is no sample. The first input's domain is the
// reference (offset 0). Every other domain is placed through the pairs, by
// the path from the reference whose uncertainties add up to the least (a
// spanning tree grown from the reference, Dijkstra's way: the tightest
// domain first, ties to the lower domain index, so the result is
// deterministic); its uncertainty is that sum. A domain with no path keeps offset 0 and is flagged unaligned: its
// times are shown as recorded.
//
// A domain's offset is its clock minus the reference's: a time t of one of
// its traces is t − offset_ns on the merged timeline.
//
// Cost: O(samples + domains² log domains). Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "loupe/report/detail/task_time.hpp"

namespace loupe::report {

inline constexpr std::uint32_t no_domain = 0xffffffffu;

/// θ and δ of one complete call (see the top of this file); `valid` is false
/// when δ < 0 (the server's interval is longer than the client's).
struct clock_estimate {
    std::int64_t offset_ns = 0;       ///< θ: the server's clock minus the client's
    std::int64_t uncertainty_ns = 0;  ///< δ: the true offset is within θ ± δ
    bool valid = false;
};

/// NTP's estimate from the four times of one call (t1, t4 on the client's
/// clock; t2, t3 on the server's).
inline clock_estimate estimate_offset(std::uint64_t t1, std::uint64_t t2, std::uint64_t t3, std::uint64_t t4) noexcept {
    using namespace detail;
    clock_estimate e;
    e.offset_ns = sat_add(time_diff(t2, t1), time_diff(t3, t4)) / 2;
    e.uncertainty_ns = sat_sub(time_diff(t4, t1), time_diff(t3, t2)) / 2;
    e.valid = time_diff(t4, t1) >= time_diff(t3, t2) && t4 >= t1 && t3 >= t2;
    return e;
}

/// One complete call between two inputs (indexes of the traces).
struct clock_sample {
    std::uint32_t client_input = 0;
    std::uint32_t server_input = 0;
    std::uint64_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
};

/// The best estimate between two domains `a` < `b`: b's clock minus a's.
struct clock_pair {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::int64_t offset_ns = 0;
    std::int64_t uncertainty_ns = 0;
    std::uint64_t samples = 0;  ///< complete calls between them, either direction (valid ones)
};

struct clock_domain {
    std::string name;                  ///< the traces' clock_domain ("" for a trace without one)
    std::vector<std::uint32_t> inputs;  ///< the traces in it, in input order
    bool reference = false;            ///< the first input's domain
    bool aligned = false;              ///< the reference, or placed through calls
    std::int64_t offset_ns = 0;        ///< its clock minus the reference's (0 when not aligned)
    std::int64_t uncertainty_ns = 0;   ///< the true offset is within offset_ns ± this
    std::uint32_t via = no_domain;     ///< the domain it was placed from (no_domain for the reference)
    std::uint64_t samples = 0;         ///< calls between it and `via`
};

/// Where every input is on the merged timeline.
struct clock_alignment {
    std::vector<clock_domain> domains;     ///< in order of their first input
    std::vector<std::uint32_t> domain_of;  ///< per input
    std::vector<clock_pair> pairs;         ///< every pair of domains with samples, by (a, b)

    /// The offset of input `input`'s clock (0 for an unknown input).
    std::int64_t offset_of(std::uint32_t input) const noexcept {
        return input < domain_of.size() ? domains[domain_of[input]].offset_ns : 0;
    }
    /// A time recorded by input `input`, on the merged timeline.
    std::int64_t to_timeline(std::uint32_t input, std::uint64_t t) const noexcept {
        return detail::sat_sub(detail::to_signed(t), offset_of(input));
    }
    bool aligned(std::uint32_t input) const noexcept {
        return input < domain_of.size() && domains[domain_of[input]].aligned;
    }
};

/// The domains of inputs whose clock_domain values are `input_domains` (one
/// per input, in order), aligned with `samples`. See the top of this file.
inline clock_alignment align_clocks(const std::vector<std::string>& input_domains,
                                    const std::vector<clock_sample>& samples) {
    clock_alignment r;
    std::map<std::string, std::uint32_t> named;
    r.domain_of.resize(input_domains.size());
    for (std::uint32_t i = 0; i < input_domains.size(); ++i) {
        const std::string& name = input_domains[i];
        std::uint32_t d;
        const auto it = name.empty() ? named.end() : named.find(name);
        if (it != named.end()) {
            d = it->second;
        } else {
            d = static_cast<std::uint32_t>(r.domains.size());
            r.domains.emplace_back();
            r.domains.back().name = name;
            if (!name.empty()) named.emplace(name, d);
        }
        r.domains[d].inputs.push_back(i);
        r.domain_of[i] = d;
    }
    if (r.domains.empty()) return r;

    // The best estimate per pair of domains (b's clock minus a's, a < b).
    std::map<std::pair<std::uint32_t, std::uint32_t>, clock_pair> best;
    for (const clock_sample& s : samples) {
        if (s.client_input >= r.domain_of.size() || s.server_input >= r.domain_of.size()) continue;
        const std::uint32_t client = r.domain_of[s.client_input], server = r.domain_of[s.server_input];
        if (client == server) continue;
        const clock_estimate e = estimate_offset(s.t1, s.t2, s.t3, s.t4);
        if (!e.valid) continue;
        const std::uint32_t a = std::min(client, server), b = std::max(client, server);
        const std::int64_t offset = client == a ? e.offset_ns : -e.offset_ns;  // b minus a
        auto [it, fresh] = best.try_emplace({a, b});
        clock_pair& p = it->second;
        if (fresh || e.uncertainty_ns < p.uncertainty_ns) {
            p.a = a;
            p.b = b;
            p.offset_ns = offset;
            p.uncertainty_ns = e.uncertainty_ns;
        }
        ++p.samples;
    }
    for (const auto& [key, p] : best) r.pairs.push_back(p);

    // Least total uncertainty from the reference (Dijkstra over few domains).
    const std::uint32_t n = static_cast<std::uint32_t>(r.domains.size());
    std::vector<std::vector<const clock_pair*>> edges(n);
    for (const clock_pair& p : r.pairs) {
        edges[p.a].push_back(&p);
        edges[p.b].push_back(&p);
    }
    std::vector<bool> done(n, false);
    r.domains[0].reference = r.domains[0].aligned = true;
    for (;;) {
        std::uint32_t next = no_domain;
        for (std::uint32_t d = 0; d < n; ++d) {
            if (done[d] || !r.domains[d].aligned) continue;
            if (next == no_domain || r.domains[d].uncertainty_ns < r.domains[next].uncertainty_ns) next = d;
        }
        if (next == no_domain) break;
        done[next] = true;
        const clock_domain& from = r.domains[next];
        for (const clock_pair* p : edges[next]) {
            const std::uint32_t other = p->a == next ? p->b : p->a;
            if (done[other]) continue;
            // other's clock minus next's, then minus the reference's.
            const std::int64_t step = p->a == next ? p->offset_ns : -p->offset_ns;
            const std::int64_t uncertainty = detail::sat_add(from.uncertainty_ns, p->uncertainty_ns);
            clock_domain& to = r.domains[other];
            if (to.aligned && uncertainty >= to.uncertainty_ns) continue;
            to.aligned = true;
            to.offset_ns = detail::sat_add(from.offset_ns, step);
            to.uncertainty_ns = uncertainty;
            to.via = next;
            to.samples = p->samples;
        }
    }
    return r;
}

}  // namespace loupe::report
