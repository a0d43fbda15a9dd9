// Per-zone duration statistics of a trace, overall and per thread: what
// `loupe stats` prints and examples/quickstart.cpp shows.
//
//   auto report = loupe::report::zone_stats(loupe::read_trace_file("out.loupe"));
//   std::cout << loupe::report::format_zone_stats(report);   // or zone_stats_json(report)
//
// A zone is one call site (name + file + line): two LOUPE_ZONE("x") at
// different lines are reported separately. Percentiles are exact, by the
// nearest-rank method (p50 of 1,2,3,4 is 2). Durations are wall durations
// (end - begin, ns), nested zones included. When events were dropped, the
// dropped share per thread and per tenth of the session follows the table
// (report/drop_stats.hpp).
// Cost: O(n log n) in the number of zone events. Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/report/detail/units.hpp"
#include "loupe/report/drop_stats.hpp"
#include "loupe/text/json.hpp"

namespace loupe::report {

struct duration_stats {
    std::uint64_t count = 0;
    std::uint64_t total_ns = 0;
    double mean_ns = 0.0;
    std::uint64_t min_ns = 0;
    std::uint64_t p50_ns = 0;
    std::uint64_t p99_ns = 0;
    std::uint64_t max_ns = 0;
};

/// What the rows under each zone are: one per thread, or one per value of a
/// context field (the context each zone ran in, see context.hpp).
enum class group_by : std::uint8_t { thread, client, user, session, request, app, component };

/// "thread", "client", "user", ... Also what `loupe stats --by` accepts.
inline const char* group_by_name(group_by g) noexcept {
    return g == group_by::thread ? "thread" : context_field_name(static_cast<context_field>(static_cast<unsigned>(g) - 1));
}
/// Parses a group_by_name; false when `name` is none of them.
inline bool parse_group_by(std::string_view name, group_by& out) noexcept {
    for (unsigned i = 0; i <= context_field_count; ++i) {
        if (name == group_by_name(static_cast<group_by>(i))) {
            out = static_cast<group_by>(i);
            return true;
        }
    }
    return false;
}

struct zone_group_stats {
    std::string label;  ///< thread name ("thread <id>" if unnamed) or field value ("(unset)" if none)
    duration_stats stats;
};

struct zone_summary {
    std::string name;
    std::string file;
    std::uint32_t line = 0;
    std::string function;
    duration_stats overall;
    std::vector<zone_group_stats> groups;  ///< by thread id, or by field value
};

struct zone_report {
    std::string session;
    group_by grouping = group_by::thread;
    std::uint64_t duration_ns = 0;  ///< session start to stop (0 for a cut-short trace)
    std::uint64_t events = 0;
    std::uint64_t dropped = 0;
    bool complete = true;
    std::vector<zone_summary> zones;  ///< by total time, largest first
    drop_report drops;                ///< where and when events were lost (report/drop_stats.hpp)
};

namespace detail {

/// Nearest-rank percentile of sorted values; p in (0, 100].
inline std::uint64_t nearest_rank(const std::vector<std::uint64_t>& sorted, unsigned p) {
    const std::size_t rank = (sorted.size() * p + 99) / 100;  // ceil(n * p / 100), >= 1
    return sorted[rank - 1];
}

inline duration_stats summarize(std::vector<std::uint64_t>& durations) {
    duration_stats s;
    if (durations.empty()) return s;
    std::sort(durations.begin(), durations.end());
    s.count = durations.size();
    for (const auto d : durations) s.total_ns += d;
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.min_ns = durations.front();
    s.max_ns = durations.back();
    s.p50_ns = nearest_rank(durations, 50);
    s.p99_ns = nearest_rank(durations, 99);
    return s;
}

}  // namespace detail

namespace detail {
inline std::string group_label(const trace& t, const trace_event& e, group_by g) {
    if (g == group_by::thread) {
        const trace_thread* th = t.find_thread(e.thread_id);
        return th && !th->name.empty() ? th->name : "thread " + std::to_string(e.thread_id);
    }
    const trace_context* c = t.context_of(e);
    const std::string none = "(unset)";
    if (!c) return none;
    const std::string& v = c->fields[static_cast<unsigned>(g) - 1];
    return v.empty() ? none : v;
}
}  // namespace detail

/// Computes the statistics of every zone site of `t`, with rows per thread
/// or per value of a context field.
inline zone_report zone_stats(const trace& t, group_by grouping = group_by::thread) {
    zone_report r;
    r.session = t.session.name;
    r.grouping = grouping;
    r.complete = t.complete;
    r.duration_ns = t.complete && t.end.end_ns > t.session.start_ns ? t.end.end_ns - t.session.start_ns : 0;
    r.events = t.events.size();
    r.dropped = t.dropped_total();
    r.drops = drop_stats(t);

    // site id -> group key -> (label, durations); threads sort by id, values by text
    struct group {
        std::string label;
        std::vector<std::uint64_t> durations;
    };
    std::map<std::uint64_t, std::map<std::pair<std::uint64_t, std::string>, group>> by_site;
    for (const auto& e : t.events) {
        if (e.type != event_type::zone) continue;
        std::string label = detail::group_label(t, e, grouping);
        const std::uint64_t order = grouping == group_by::thread ? e.thread_id : 0;
        group& g = by_site[e.site_id][{order, grouping == group_by::thread ? std::string() : label}];
        if (g.label.empty()) g.label = std::move(label);
        g.durations.push_back(e.end_ns - e.begin_ns);
    }
    for (auto& [site_id, groups] : by_site) {
        const trace_site* site = t.find_site(site_id);
        zone_summary z;
        z.name = site->name;
        z.file = site->file;
        z.line = site->line;
        z.function = site->function;
        std::vector<std::uint64_t> all;
        for (auto& [key, g] : groups) {
            all.insert(all.end(), g.durations.begin(), g.durations.end());
            z.groups.push_back({g.label, detail::summarize(g.durations)});
        }
        z.overall = detail::summarize(all);
        r.zones.push_back(std::move(z));
    }
    std::stable_sort(r.zones.begin(), r.zones.end(), [](const zone_summary& a, const zone_summary& b) {
        return a.overall.total_ns > b.overall.total_ns;
    });
    return r;
}

/// A text table: one line per zone ("all") followed by one line per thread
/// (or field value) that ran it.
inline std::string format_zone_stats(const zone_report& r) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "session \"%s\": %llu events, %llu dropped, %s%s\n\n", printable(r.session).c_str(),
                  static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.dropped),
                  detail::human_duration(static_cast<double>(r.duration_ns)).c_str(),
                  r.complete ? "" : " (trace cut short)");
    out += line;
    if (r.zones.empty()) {
        out += "no zones recorded\n";
        return out;
    }
    const char* const row = "%-24s %-16s %9s %10s %10s %10s %10s %10s %10s  %s\n";
    std::snprintf(line, sizeof line, row, "zone", group_by_name(r.grouping), "count", "total", "mean", "min", "p50", "p99", "max",
                  "where");
    out += line;
    auto emit = [&](const std::string& zone, const std::string& thread, const duration_stats& s,
                    const std::string& where) {
        std::snprintf(line, sizeof line, row, zone.c_str(), thread.c_str(), std::to_string(s.count).c_str(),
                      detail::human_duration(static_cast<double>(s.total_ns)).c_str(),
                      detail::human_duration(s.mean_ns).c_str(),
                      detail::human_duration(static_cast<double>(s.min_ns)).c_str(),
                      detail::human_duration(static_cast<double>(s.p50_ns)).c_str(),
                      detail::human_duration(static_cast<double>(s.p99_ns)).c_str(),
                      detail::human_duration(static_cast<double>(s.max_ns)).c_str(), where.c_str());
        out += line;
    };
    for (const auto& z : r.zones) {
        const std::string where = z.file.empty() ? std::string() : z.file + ":" + std::to_string(z.line);
        emit(printable(z.name), "all", z.overall, printable(where));
        for (const auto& g : z.groups) emit("", printable(g.label), g.stats, "");
    }
    out += format_drop_stats(r.drops);
    return out;
}

namespace detail {
inline void append_stats_json(std::string& out, const duration_stats& s) {
    out += "{\"count\":" + json::number(s.count) + ",\"total_ns\":" + json::number(s.total_ns) +
           ",\"mean_ns\":" + json::number(s.mean_ns) + ",\"min_ns\":" + json::number(s.min_ns) +
           ",\"p50_ns\":" + json::number(s.p50_ns) + ",\"p99_ns\":" + json::number(s.p99_ns) +
           ",\"max_ns\":" + json::number(s.max_ns) + "}";
}
}  // namespace detail

/// The report as one JSON object (durations in integer ns, mean as a number).
inline std::string zone_stats_json(const zone_report& r) {
    std::string out = "{\"session\":" + json::quote(r.session) + ",\"group_by\":\"" + group_by_name(r.grouping) +
                      "\",\"complete\":" + (r.complete ? "true" : "false") +
                      ",\"duration_ns\":" + json::number(r.duration_ns) + ",\"events\":" + json::number(r.events) +
                      ",\"dropped\":" + json::number(r.dropped) + ",\"drops\":" + drop_stats_json(r.drops) +
                      ",\"zones\":[";
    for (std::size_t i = 0; i < r.zones.size(); ++i) {
        const auto& z = r.zones[i];
        if (i) out += ',';
        out += "{\"name\":" + json::quote(z.name) + ",\"file\":" + json::quote(z.file) +
               ",\"line\":" + std::to_string(z.line) + ",\"function\":" + json::quote(z.function) + ",\"overall\":";
        detail::append_stats_json(out, z.overall);
        out += ",\"groups\":[";
        for (std::size_t j = 0; j < z.groups.size(); ++j) {
            const auto& g = z.groups[j];
            if (j) out += ',';
            out += "{\"label\":" + json::quote(g.label) + ",\"stats\":";
            detail::append_stats_json(out, g.stats);
            out += '}';
        }
        out += "]}";
    }
    out += "]}\n";
    return out;
}

}  // namespace loupe::report
