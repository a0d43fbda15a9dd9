// Where and when a trace lost events to full rings: the dropped share per
// thread and per time window, what `loupe stats` prints under its zone table
// when anything was dropped.
//
//   auto d = loupe::report::drop_stats(loupe::read_trace_file("out.loupe"));
//   std::cout << loupe::report::format_drop_stats(d);
//
// A DROPPED record says how many events a thread lost since the previous
// report; the reader places it at the end of the thread's last event before
// it (trace_drop::after_ns): the events were lost after that, before the
// collector reported them (within about a collector pass, 200 us to a
// millisecond on a busy machine). Windows split the session into equal
// parts; an event counts in the window where it ends (a zone is recorded when
// it ends), a loss in the window of its after_ns. The share is
// dropped / (recorded + dropped).
//
// Cost: O(events + drops). Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/report/detail/units.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"

namespace loupe::report {

/// One thread's recorded and dropped events.
struct thread_drop_stats {
    std::uint64_t thread_id = 0;  ///< 0: threads that had no ring yet (their losses only)
    std::string thread;           ///< its name, or "thread <id>"
    std::uint64_t recorded = 0;
    std::uint64_t dropped = 0;
    double share = 0;  ///< dropped / (recorded + dropped), 0..1
};

/// One time window of the session.
struct drop_window {
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    std::uint64_t recorded = 0;
    std::uint64_t dropped = 0;
    double share = 0;
};

struct drop_report {
    std::uint64_t recorded = 0;
    std::uint64_t dropped = 0;
    double share = 0;
    std::vector<thread_drop_stats> threads;  ///< threads that dropped, most dropped first
    std::vector<drop_window> windows;        ///< in time order; empty when nothing was dropped
};

namespace detail {
inline double share_of(std::uint64_t dropped, std::uint64_t recorded) {
    return dropped == 0 ? 0.0 : static_cast<double>(dropped) / static_cast<double>(dropped + recorded);
}
}  // namespace detail

/// The drops of `t` per thread and in `windows` equal windows of the
/// session (from its start to its end, or to its last event when cut short).
inline drop_report drop_stats(const trace& t, std::size_t windows = 10) {
    drop_report r;
    r.recorded = t.events.size();
    r.dropped = t.dropped_total();
    r.share = detail::share_of(r.dropped, r.recorded);
    if (r.dropped == 0) return r;

    std::unordered_map<std::uint64_t, thread_drop_stats> by_thread;
    for (const trace_drop& d : t.drops) {
        if (d.count == 0) continue;
        thread_drop_stats& s = by_thread[d.thread_id];
        s.thread_id = d.thread_id;
        s.dropped += d.count;
    }
    std::uint64_t last_ns = t.session.start_ns;
    for (const trace_event& e : t.events) {
        last_ns = std::max(last_ns, e.end_ns);
        auto it = by_thread.find(e.thread_id);
        if (it != by_thread.end()) ++it->second.recorded;
    }
    for (auto& [id, s] : by_thread) {
        const trace_thread* th = id == 0 ? nullptr : t.find_thread(id);
        s.thread = th && !th->name.empty() ? th->name
                   : id == 0              ? std::string("(threads without a ring)")
                                          : "thread " + std::to_string(id);
        s.share = detail::share_of(s.dropped, s.recorded);
        r.threads.push_back(s);
    }
    std::sort(r.threads.begin(), r.threads.end(), [](const thread_drop_stats& a, const thread_drop_stats& b) {
        return a.dropped != b.dropped ? a.dropped > b.dropped : a.thread_id < b.thread_id;
    });

    const std::uint64_t begin = t.session.start_ns;
    const std::uint64_t end = std::max(t.complete ? t.end.end_ns : last_ns, begin + 1);
    const std::size_t n = std::max<std::size_t>(windows, 1);
    const std::uint64_t span = end - begin;
    r.windows.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        r.windows[i].begin_ns = begin + span * i / n;
        r.windows[i].end_ns = begin + span * (i + 1) / n;
    }
    auto window_of = [&](std::uint64_t ns) {
        if (ns <= begin) return std::size_t{0};
        const std::uint64_t at = (ns - begin) * n / span;
        return static_cast<std::size_t>(std::min<std::uint64_t>(at, n - 1));
    };
    for (const trace_event& e : t.events) ++r.windows[window_of(e.end_ns)].recorded;
    for (const trace_drop& d : t.drops) r.windows[window_of(d.after_ns)].dropped += d.count;
    for (drop_window& w : r.windows) w.share = detail::share_of(w.dropped, w.recorded);
    return r;
}

/// Text: nothing when nothing was dropped; else the share overall, one
/// line per thread that dropped and one per window.
inline std::string format_drop_stats(const drop_report& r) {
    if (r.dropped == 0) return {};
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "\ndropped events: %llu of %llu (%.1f %%), rings full\n",
                  static_cast<unsigned long long>(r.dropped), static_cast<unsigned long long>(r.dropped + r.recorded),
                  100.0 * r.share);
    out += line;
    // One row: a label, then recorded, dropped and the share as a percentage.
    auto row = [&](const std::string& label, std::uint64_t recorded, std::uint64_t dropped, double share) {
        char percent[32];
        std::snprintf(percent, sizeof percent, "%.1f %%", 100.0 * share);
        std::snprintf(line, sizeof line, "  %-24s %12s %12s %8s\n", label.c_str(), std::to_string(recorded).c_str(),
                      std::to_string(dropped).c_str(), percent);
        out += line;
    };
    std::snprintf(line, sizeof line, "  %-24s %12s %12s %8s\n", "thread", "recorded", "dropped", "share");
    out += line;
    for (const thread_drop_stats& s : r.threads) row(printable(s.thread), s.recorded, s.dropped, s.share);
    std::snprintf(line, sizeof line, "  %-24s %12s %12s %8s\n", "window (from start)", "recorded", "dropped", "share");
    out += line;
    const std::uint64_t start = r.windows.empty() ? 0 : r.windows.front().begin_ns;
    for (const drop_window& w : r.windows) {
        row(detail::human_duration(static_cast<double>(w.begin_ns - start)) + " - " +
                detail::human_duration(static_cast<double>(w.end_ns - start)),
            w.recorded, w.dropped, w.share);
    }
    return out;
}

/// The report as one JSON object (times in ns since the epoch of the trace's clock).
inline std::string drop_stats_json(const drop_report& r) {
    std::string out = "{\"recorded\":" + json::number(r.recorded) + ",\"dropped\":" + json::number(r.dropped) +
                      ",\"share\":" + json::number(r.share) + ",\"threads\":[";
    for (std::size_t i = 0; i < r.threads.size(); ++i) {
        const thread_drop_stats& s = r.threads[i];
        if (i) out += ',';
        out += "{\"thread_id\":" + json::number(s.thread_id) + ",\"thread\":" + json::quote(s.thread) +
               ",\"recorded\":" + json::number(s.recorded) + ",\"dropped\":" + json::number(s.dropped) +
               ",\"share\":" + json::number(s.share) + "}";
    }
    out += "],\"windows\":[";
    for (std::size_t i = 0; i < r.windows.size(); ++i) {
        const drop_window& w = r.windows[i];
        if (i) out += ',';
        out += "{\"begin_ns\":" + json::number(w.begin_ns) + ",\"end_ns\":" + json::number(w.end_ns) +
               ",\"recorded\":" + json::number(w.recorded) + ",\"dropped\":" + json::number(w.dropped) +
               ",\"share\":" + json::number(w.share) + "}";
    }
    out += "]}";
    return out;
}

}  // namespace loupe::report
