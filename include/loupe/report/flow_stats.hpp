// The hops of a trace's flows (flow.hpp): for each pair of consecutive
// points of one flow, the time between them, grouped by the points' names —
// "how long does a request wait between the client sending it and a worker
// picking it up?". What `loupe stats FILE --flows` prints.
//
//     auto report = loupe::report::flow_stats(loupe::read_trace_file("out.loupe"));
//     std::cout << loupe::report::format_flow_stats(report);   // or flow_stats_json(report)
//
// A flow's points are taken in time order (file order on ties). A point that
// ends a flow (LOUPE_FLOW_END) closes it: a later point with the same id
// starts a new flow, as in Perfetto. Percentiles as in zone_stats
// (nearest rank).
// Cost: O(n log n) in the number of flow points. Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "loupe/format/flow_order.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/report/zone_stats.hpp"

namespace loupe::report {

/// The time from points named `from` to the next point of the same flow,
/// named `to`.
struct flow_hop_stats {
    std::string from;
    std::string to;
    std::uint64_t cross_thread = 0;  ///< hops whose two points are on different threads
    duration_stats stats;
};

struct flow_report {
    std::string session;
    std::uint64_t points = 0;
    std::uint64_t flows = 0;
    std::uint64_t ended = 0;  ///< flows with an end point (LOUPE_FLOW_END)
    /// Flows with one point in this trace: their other points are in another
    /// process's trace, on threads the session's filter left out, or were
    /// never recorded.
    std::uint64_t single_point = 0;
    std::vector<flow_hop_stats> hops;  ///< by total time, largest first
};

/// Computes the hop statistics of every flow of `t`.
inline flow_report flow_stats(const trace& t) {
    flow_report r;
    r.session = t.session.name;
    r.points = t.flows.size();
    struct hop_group {
        std::uint64_t cross_thread = 0;
        std::vector<std::uint64_t> durations;
    };
    std::map<std::pair<std::string, std::string>, hop_group> groups;
    const auto name_of = [&](const trace_flow& f) {
        const trace_site* site = t.find_site(f.site_id);
        return site ? site->name : "site " + std::to_string(f.site_id);
    };
    const loupe::detail::flow_order order(t);
    r.flows = order.size();
    for (std::size_t k = 0; k < order.size(); ++k) {
        const std::uint32_t begin = order.first[k], end = order.first[k + 1];
        r.ended += t.flows[order.points[end - 1]].terminates;
        r.single_point += end - begin == 1;
        for (std::uint32_t p = begin + 1; p < end; ++p) {
            const trace_flow& before = t.flows[order.points[p - 1]];
            const trace_flow& f = t.flows[order.points[p]];
            hop_group& g = groups[{name_of(before), name_of(f)}];
            g.durations.push_back(f.time_ns - before.time_ns);
            g.cross_thread += before.thread_id != f.thread_id;
        }
    }
    for (auto& [names, g] : groups) {
        r.hops.push_back({names.first, names.second, g.cross_thread, detail::summarize(g.durations)});
    }
    std::stable_sort(r.hops.begin(), r.hops.end(), [](const flow_hop_stats& a, const flow_hop_stats& b) {
        return a.stats.total_ns > b.stats.total_ns;
    });
    return r;
}

/// A text table: one line per hop (from -> to), with how many crossed threads.
inline std::string format_flow_stats(const flow_report& r) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line,
                  "session \"%s\": %llu flow points, %llu flows (%llu ended, %llu with one point here)\n\n",
                  printable(r.session).c_str(), static_cast<unsigned long long>(r.points),
                  static_cast<unsigned long long>(r.flows), static_cast<unsigned long long>(r.ended),
                  static_cast<unsigned long long>(r.single_point));
    out += line;
    if (r.hops.empty()) {
        out += r.points == 0 ? "no flows recorded (LOUPE_FLOW, kinds::flows)\n" : "no flow has two points here\n";
        return out;
    }
    const char* const row = "%-44s %9s %9s %10s %10s %10s %10s\n";
    std::snprintf(line, sizeof line, row, "hop", "count", "threads", "mean", "p50", "p99", "max");
    out += line;
    for (const flow_hop_stats& h : r.hops) {
        const std::string hop = printable(h.from) + " -> " + printable(h.to);
        std::snprintf(line, sizeof line, row, hop.c_str(), std::to_string(h.stats.count).c_str(),
                      (std::to_string(h.cross_thread * 100 / h.stats.count) + "%").c_str(),
                      detail::human_duration(h.stats.mean_ns).c_str(),
                      detail::human_duration(static_cast<double>(h.stats.p50_ns)).c_str(),
                      detail::human_duration(static_cast<double>(h.stats.p99_ns)).c_str(),
                      detail::human_duration(static_cast<double>(h.stats.max_ns)).c_str());
        out += line;
    }
    out += "(threads: the share of hops whose two points are on different threads)\n";
    return out;
}

/// The report as one JSON object (durations in integer ns).
inline std::string flow_stats_json(const flow_report& r) {
    std::string out = "{\"session\":" + json::quote(r.session) + ",\"points\":" + json::number(r.points) +
                      ",\"flows\":" + json::number(r.flows) + ",\"ended\":" + json::number(r.ended) +
                      ",\"single_point\":" + json::number(r.single_point) + ",\"hops\":[";
    for (std::size_t i = 0; i < r.hops.size(); ++i) {
        const flow_hop_stats& h = r.hops[i];
        if (i) out += ',';
        out += "{\"from\":" + json::quote(h.from) + ",\"to\":" + json::quote(h.to) +
               ",\"cross_thread\":" + json::number(h.cross_thread) + ",\"stats\":";
        detail::append_stats_json(out, h.stats);
        out += '}';
    }
    out += "]}\n";
    return out;
}

}  // namespace loupe::report
