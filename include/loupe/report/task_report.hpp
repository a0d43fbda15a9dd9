// The task report: every task of a task_forest (task_join.hpp) as a tree
// across processes, its critical path, and statistics per (process, call).
// What `loupe report FILE... --tasks` prints.
//
//     auto report = loupe::report::report_tasks(loupe::report::join_tasks(traces));
//     std::cout << loupe::report::format_task_report(report);   // or task_report_json(report)
//
// Per task: its trace id, duration, processes and calls, then one row per
// call in depth-first order (children by begin), indented by depth: its
// duration (what its caller saw; a root's or unlinked request's own), its
// self time (duration minus the union of its children's intervals: parallel
// fan-out counted once), where it ran and its name, who called it, and
// marks for what the join had to decide (task_tree.hpp).
//
// The critical path of a task is that of its longest tree (ties: the first
// by begin), computed backwards from the root's end, as tracing tools do: a
// node's time from `until` back to its begin belongs to the child that
// finished last (at or before `until`; children ending after it overlap a
// child already on the path and are skipped), recursively from that child's
// end, then to the node itself from that child's begin on, and so on; time
// no child covers is the node's own. Its steps add up to the root's
// duration; each node's share is its time on the path, nodes in order of
// their first time on it.
//
// Statistics per (process, call name) over every task: calls, total and
// self time, mean, p50, p95, p99 and max of the durations (nearest rank, as
// zone_stats), calls still open when their trace ended counted apart and
// left out of the times. By total time, largest first.
//
// Cost: O(n log n) in the calls. Thread-safety: pure functions over values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "loupe/report/detail/task_time.hpp"
#include "loupe/report/detail/units.hpp"
#include "loupe/report/task_tree.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"

namespace loupe::report {

/// One node's share of a critical path.
struct task_path_step {
    std::uint32_t node = no_task_node;  ///< index into task_forest::nodes
    std::int64_t ns = 0;                ///< its time on the path
};

/// What the report adds to a task.
struct task_summary {
    std::uint32_t root = no_task_node;         ///< the tree the critical path runs through
    std::vector<task_path_step> critical_path;  ///< in order of first time on the path
    std::int64_t critical_ns = 0;               ///< the root's duration: the sum of the steps
};

/// Statistics of one (process, call name).
struct task_call_stats {
    std::string process;  ///< task_forest::process_of
    std::string call;     ///< task_forest::name_of
    std::uint64_t count = 0;  ///< calls with an end (the times are theirs)
    std::uint64_t open = 0;   ///< calls still open when their trace ended (not in the times)
    std::int64_t total_ns = 0;
    std::int64_t self_ns = 0;
    double mean_ns = 0.0;
    std::int64_t p50_ns = 0;
    std::int64_t p95_ns = 0;
    std::int64_t p99_ns = 0;
    std::int64_t max_ns = 0;
};

struct task_report {
    task_forest forest;
    std::vector<task_summary> tasks;     ///< per forest.tasks
    std::vector<task_call_stats> calls;  ///< by total, largest first
};

/// The critical path of the tree under `root` (see the top of this file).
inline std::vector<task_path_step> critical_path(const task_forest& f, std::uint32_t root) {
    struct segment {
        std::uint32_t node;
        std::int64_t ns;
    };
    std::vector<segment> backwards;  // segments from the end back to the begin
    struct frame {
        std::uint32_t node;
        std::int64_t cur;    // the node's time from cur back to floor is not assigned yet
        std::int64_t floor;  // where its share of the path begins (its begin, clipped to its parent's)
        std::int64_t bound;  // where it ends (its end, clipped to its parent's)
        std::vector<std::uint32_t> by_end;  // its children, latest (clipped) end first
        std::size_t next = 0;
    };
    const auto clip_end = [&](const task_node& parent, const task_node& child) {
        return std::min(std::max(child.end_ns, parent.begin_ns), parent.end_ns);
    };
    const auto clip_begin = [&](const task_node& parent, const task_node& child) {
        return std::min(std::max(child.begin_ns, parent.begin_ns), parent.end_ns);
    };
    const auto open = [&](std::uint32_t node, std::int64_t until, std::int64_t floor) {
        frame fr{node, until, floor, until, {}, 0};
        const task_node& n = f.nodes[node];
        fr.by_end.assign(f.children_of(n), f.children_of(n) + n.children_count);
        std::stable_sort(fr.by_end.begin(), fr.by_end.end(), [&](std::uint32_t a, std::uint32_t b) {
            const std::int64_t ea = clip_end(n, f.nodes[a]), eb = clip_end(n, f.nodes[b]);
            if (ea != eb) return ea > eb;
            return f.nodes[a].begin_ns > f.nodes[b].begin_ns;
        });
        return fr;
    };
    std::vector<frame> stack;
    stack.push_back(open(root, f.nodes[root].end_ns, f.nodes[root].begin_ns));
    while (!stack.empty()) {
        frame& fr = stack.back();
        const task_node& n = f.nodes[fr.node];
        bool descended = false;
        while (fr.next < fr.by_end.size()) {
            const std::uint32_t c = fr.by_end[fr.next++];
            const std::int64_t end = std::min(clip_end(n, f.nodes[c]), fr.bound);
            if (end <= fr.floor) {  // this child and the rest end before the node's share begins
                fr.next = fr.by_end.size();
                break;
            }
            if (end > fr.cur) continue;  // overlaps a child already on the path
            const std::int64_t begin = std::max(clip_begin(n, f.nodes[c]), fr.floor);
            if (begin >= end) continue;  // nothing of it inside the node's share
            if (fr.cur > end) backwards.push_back({fr.node, detail::sat_sub(fr.cur, end)});
            fr.cur = begin;
            stack.push_back(open(c, end, begin));  // invalidates fr
            descended = true;
            break;
        }
        if (descended) continue;
        if (fr.cur > fr.floor) backwards.push_back({fr.node, detail::sat_sub(fr.cur, fr.floor)});
        stack.pop_back();
    }
    // Steps per node, in order of their first time on the path.
    std::vector<task_path_step> steps;
    std::map<std::uint32_t, std::size_t> at;
    for (auto it = backwards.rbegin(); it != backwards.rend(); ++it) {
        const auto [where, fresh] = at.try_emplace(it->node, steps.size());
        if (fresh) steps.push_back({it->node, 0});
        steps[where->second].ns = detail::sat_add(steps[where->second].ns, it->ns);
    }
    if (steps.empty()) steps.push_back({root, 0});
    return steps;
}

namespace detail {

inline std::int64_t nearest_rank_of(const std::vector<std::int64_t>& sorted, unsigned p) {
    const std::size_t rank = (sorted.size() * p + 99) / 100;  // ceil(n * p / 100), >= 1
    return sorted[rank - 1];
}

}  // namespace detail

/// The report of `forest` (moved into it): critical paths and statistics.
inline task_report report_tasks(task_forest forest) {
    task_report r;
    r.forest = std::move(forest);
    const task_forest& f = r.forest;
    for (const task_tree& t : f.tasks) {
        task_summary s;
        for (const std::uint32_t root : t.roots) {
            if (s.root == no_task_node || f.nodes[root].duration_ns() > f.nodes[s.root].duration_ns()) s.root = root;
        }
        if (s.root != no_task_node) {
            s.critical_path = critical_path(f, s.root);
            s.critical_ns = f.nodes[s.root].duration_ns();
        }
        r.tasks.push_back(std::move(s));
    }
    struct group {
        std::vector<std::int64_t> durations;
        std::int64_t self = 0;
        std::uint64_t open = 0;
    };
    std::map<std::pair<std::string, std::string>, group> groups;
    for (const task_node& n : f.nodes) {
        group& g = groups[{f.process_of(n), f.name_of(n)}];
        if (n.has(task_flag::open)) {
            ++g.open;
            continue;
        }
        g.durations.push_back(n.duration_ns());
        g.self = detail::sat_add(g.self, n.self_ns);
    }
    for (auto& [key, g] : groups) {
        task_call_stats s;
        s.process = key.first;
        s.call = key.second;
        s.count = g.durations.size();
        s.open = g.open;
        s.self_ns = g.self;
        if (!g.durations.empty()) {
            std::sort(g.durations.begin(), g.durations.end());
            for (const std::int64_t d : g.durations) s.total_ns = detail::sat_add(s.total_ns, d);
            s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
            s.p50_ns = detail::nearest_rank_of(g.durations, 50);
            s.p95_ns = detail::nearest_rank_of(g.durations, 95);
            s.p99_ns = detail::nearest_rank_of(g.durations, 99);
            s.max_ns = g.durations.back();
        }
        r.calls.push_back(std::move(s));
    }
    std::stable_sort(r.calls.begin(), r.calls.end(), [](const task_call_stats& a, const task_call_stats& b) {
        return a.total_ns > b.total_ns;
    });
    return r;
}

namespace detail {

inline std::string human_ns(std::int64_t ns) { return human_duration(static_cast<double>(ns < 0 ? 0 : ns)); }

/// "+1.20 ms", "-812 ns", "0 ns".
inline std::string signed_duration(std::int64_t ns) {
    if (ns == 0) return "0 ns";
    const double magnitude = ns < 0 ? -static_cast<double>(ns) : static_cast<double>(ns);
    return (ns < 0 ? "-" : "+") + human_duration(magnitude);
}

/// The marks of a node, " [opaque: not profiled] [clamped +1.2 us]", or "".
inline std::string node_marks(const task_node& n) {
    std::string out;
    switch (n.kind) {
        case task_node_kind::opaque: out += " [opaque: not profiled]"; break;
        case task_node_kind::root: out += " [root]"; break;
        case task_node_kind::unlinked: out += " [unlinked: its caller is in no trace]"; break;
        case task_node_kind::via_unprofiled: out += " [via unprofiled: inferred]"; break;
        case task_node_kind::call: break;
    }
    if (n.has(task_flag::clamped)) out += " [clamped " + signed_duration(n.shift_ns) + "]";
    if (n.has(task_flag::overlong)) out += " [server longer than its client]";
    if (n.has(task_flag::open)) out += " [open: no return before the trace ended]";
    if (n.has(task_flag::begin_unknown)) out += " [began before the trace]";
    if (n.has(task_flag::duplicate)) out += " [duplicate call id]";
    if (n.has(task_flag::unaligned)) out += " [clocks not aligned]";
    if (n.has(task_flag::cycle)) out += " [cycle cut]";
    return out;
}

/// The flags of a node as JSON strings: ["clamped","open"].
inline std::string flags_json(const task_node& n) {
    static const std::pair<std::uint16_t, const char*> names[] = {
        {task_flag::clamped, "clamped"},     {task_flag::open, "open"},
        {task_flag::begin_unknown, "begin_unknown"}, {task_flag::duplicate, "duplicate"},
        {task_flag::unaligned, "unaligned"}, {task_flag::overlong, "overlong"},
        {task_flag::cycle, "cycle"}};
    std::string out = "[";
    for (const auto& [bit, name] : names) {
        if (!n.has(bit)) continue;
        if (out.size() > 1) out += ',';
        out += '"';
        out += name;
        out += '"';
    }
    return out + "]";
}

inline std::string number(std::int64_t v) { return std::to_string(v); }

// One call's line in the text: what it is, where it ran, who called it.
inline std::string node_label(const task_forest& f, const task_node& n) {
    std::string s = printable(f.process_of(n));
    const std::string& name = f.name_of(n);
    if (!name.empty()) s += "  " + printable(name);
    const std::string caller = f.caller_of(n);
    if (!caller.empty()) s += "  from " + printable(caller);
    return s + node_marks(n);
}

}  // namespace detail

/// The clock domains of a forest as text lines (what `loupe merge`
/// summarizes too): "d2 (b): +5.00 ms ± 1.00 us from d1, 4 calls".
inline std::string format_clock_domains(const task_forest& f) {
    std::string out;
    const clock_alignment& a = f.alignment;
    for (std::size_t d = 0; d < a.domains.size(); ++d) {
        const clock_domain& dom = a.domains[d];
        std::string inputs;
        for (const std::uint32_t i : dom.inputs) inputs += (inputs.empty() ? "" : ", ") + printable(f.inputs[i].label);
        std::string line = "  " + (dom.name.empty() ? std::string("(no clock domain)") : printable(dom.name)) + " (" + inputs + "): ";
        if (dom.reference) {
            line += "reference";
        } else if (!dom.aligned) {
            line += "not aligned: no complete call relates it to the others; times as recorded";
        } else {
            const clock_domain& via = a.domains[dom.via];
            line += detail::signed_duration(dom.offset_ns) + " ± " + detail::human_ns(dom.uncertainty_ns) + " from " +
                    (via.name.empty() ? "(no clock domain)" : printable(via.name)) + ", " +
                    std::to_string(dom.samples) + (dom.samples == 1 ? " call" : " calls");
        }
        out += line + "\n";
    }
    return out;
}

/// The report as text (see the top of this file).
inline std::string format_task_report(const task_report& r) {
    const task_forest& f = r.forest;
    const task_counts& k = f.counts;
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%zu input%s, %zu clock domain%s\n", f.inputs.size(), f.inputs.size() == 1 ? "" : "s",
                  f.alignment.domains.size(), f.alignment.domains.size() == 1 ? "" : "s");
    out += line;
    out += format_clock_domains(f);
    const auto count = [](std::uint64_t n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    out += count(k.tasks, "task", "tasks") + ", " + count(k.calls, "call", "calls") + ": " + std::to_string(k.joined) +
           " joined, " + std::to_string(k.opaque) + " opaque, " + count(k.roots, "root", "roots") + ", " +
           std::to_string(k.unlinked) + " unlinked, " + std::to_string(k.via_unprofiled) + " via unprofiled, " +
           std::to_string(k.clamped) + " clamped, " + std::to_string(k.open) + " open\n";
    if (f.tasks.empty()) {
        out += k.points == 0 ? "no task points recorded (TASK records: interception of calls, docs/tasks.md)\n"
                             : "no task has a call here\n";
        return out;
    }
    for (std::size_t t = 0; t < f.tasks.size(); ++t) {
        const task_tree& tree = f.tasks[t];
        const task_summary& s = r.tasks[t];
        std::snprintf(line, sizeof line, "\ntask %s: %s, %u %s, %u %s\n",
                      trace_id_text(tree.trace_high, tree.trace_low).c_str(),
                      detail::human_ns(detail::sat_sub(tree.end_ns, tree.begin_ns)).c_str(), tree.processes,
                      tree.processes == 1 ? "process" : "processes", tree.node_count,
                      tree.node_count == 1 ? "call" : "calls");
        out += line;
        std::snprintf(line, sizeof line, "  %10s %10s  %s\n", "duration", "self", "call");
        out += line;
        for (std::uint32_t i = tree.first_node; i < tree.first_node + tree.node_count; ++i) {
            const task_node& n = f.nodes[i];
            const std::string indent(2 * std::min<std::uint32_t>(n.depth, 40), ' ');
            out += "  ";
            std::snprintf(line, sizeof line, "%10s %10s  ", detail::human_ns(n.duration_ns()).c_str(),
                          detail::human_ns(n.self_ns).c_str());
            out += line;
            out += indent + detail::node_label(f, n) + "\n";
        }
        if (s.root != no_task_node) {
            out += "  critical path (" + detail::human_ns(s.critical_ns) + "):";
            for (std::size_t p = 0; p < s.critical_path.size(); ++p) {
                const task_node& n = f.nodes[s.critical_path[p].node];
                out += p == 0 ? " " : " > ";
                out += printable(f.process_of(n));
                const std::string& name = f.name_of(n);
                if (!name.empty()) out += " " + printable(name);
                out += " " + detail::human_ns(s.critical_path[p].ns);
            }
            out += "\n";
        }
    }
    out += "\nper process and call (open calls not in the times):\n";
    const char* const row = "  %-20s %-28s %7s %5s %10s %10s %10s %10s %10s %10s %10s\n";
    std::snprintf(line, sizeof line, row, "process", "call", "count", "open", "total", "self", "mean", "p50", "p95",
                  "p99", "max");
    out += line;
    for (const task_call_stats& c : r.calls) {
        std::snprintf(line, sizeof line, row, printable(c.process).c_str(), printable(c.call).c_str(),
                      std::to_string(c.count).c_str(), std::to_string(c.open).c_str(),
                      detail::human_ns(c.total_ns).c_str(), detail::human_ns(c.self_ns).c_str(),
                      detail::human_duration(c.mean_ns).c_str(), detail::human_ns(c.p50_ns).c_str(),
                      detail::human_ns(c.p95_ns).c_str(), detail::human_ns(c.p99_ns).c_str(),
                      detail::human_ns(c.max_ns).c_str());
        out += line;
    }
    return out;
}

namespace detail {

inline void append_side_json(std::string& out, const task_forest& f, const task_side& s) {
    if (!s.present()) {
        out += "null";
        return;
    }
    out += "{\"input\":" + std::to_string(s.input) + ",\"thread\":" + json::number(s.thread_id) +
           ",\"begin_recorded\":" + json::number(s.begin_recorded) + ",\"end_recorded\":" +
           json::number(s.end_recorded) + ",\"begin_ns\":" + number(s.begin_ns) + ",\"end_ns\":" + number(s.end_ns) +
           ",\"has_begin\":" + (s.has_begin ? "true" : "false") + ",\"has_end\":" + (s.has_end ? "true" : "false") +
           ",\"span_id\":" + json::number(s.span_id) + ",\"echoed_id\":" + json::number(s.echoed_id) +
           ",\"status\":" + number(s.status) + ",\"name\":" + json::quote(f.text(s.name)) +
           ",\"peer\":" + json::quote(f.text(s.peer)) + "}";
}

}  // namespace detail

/// The report as one JSON object (times in integer ns on the merged
/// timeline; recorded times on their trace's clock). Nodes are listed per
/// task in depth-first order with their parent's index (null for a root).
inline std::string task_report_json(const task_report& r) {
    const task_forest& f = r.forest;
    const task_counts& k = f.counts;
    std::string out = "{\"inputs\":[";
    for (std::size_t i = 0; i < f.inputs.size(); ++i) {
        const task_input& in = f.inputs[i];
        if (i) out += ',';
        out += "{\"label\":" + json::quote(in.label) + ",\"program\":" + json::quote(in.program) +
               ",\"session\":" + json::quote(in.session) + ",\"pid\":" + std::to_string(in.pid) +
               ",\"host\":" + json::quote(in.host) + ",\"clock_domain\":" + json::quote(in.clock_domain) +
               ",\"domain\":" + std::to_string(f.alignment.domain_of[i]) + ",\"complete\":" +
               (in.complete ? "true" : "false") + ",\"task_points\":" + json::number(in.task_points) + "}";
    }
    out += "],\"domains\":[";
    for (std::size_t d = 0; d < f.alignment.domains.size(); ++d) {
        const clock_domain& dom = f.alignment.domains[d];
        if (d) out += ',';
        out += "{\"name\":" + json::quote(dom.name) + ",\"inputs\":[";
        for (std::size_t i = 0; i < dom.inputs.size(); ++i) out += (i ? "," : "") + std::to_string(dom.inputs[i]);
        out += std::string("],\"reference\":") + (dom.reference ? "true" : "false") +
               ",\"aligned\":" + (dom.aligned ? "true" : "false") + ",\"offset_ns\":" + detail::number(dom.offset_ns) +
               ",\"uncertainty_ns\":" + detail::number(dom.uncertainty_ns) +
               ",\"via\":" + (dom.via == no_domain ? std::string("null") : std::to_string(dom.via)) +
               ",\"samples\":" + json::number(dom.samples) + "}";
    }
    out += "],\"counts\":{\"points\":" + json::number(k.points) + ",\"points_ignored\":" + json::number(k.points_ignored) +
           ",\"tasks\":" + json::number(k.tasks) + ",\"calls\":" + json::number(k.calls) +
           ",\"joined\":" + json::number(k.joined) + ",\"opaque\":" + json::number(k.opaque) +
           ",\"roots\":" + json::number(k.roots) + ",\"unlinked\":" + json::number(k.unlinked) +
           ",\"via_unprofiled\":" + json::number(k.via_unprofiled) + ",\"clamped\":" + json::number(k.clamped) +
           ",\"open\":" + json::number(k.open) + ",\"duplicates\":" + json::number(k.duplicates) +
           ",\"unaligned\":" + json::number(k.unaligned) + ",\"cycles\":" + json::number(k.cycles) + "},\"tasks\":[";
    for (std::size_t t = 0; t < f.tasks.size(); ++t) {
        const task_tree& tree = f.tasks[t];
        const task_summary& s = r.tasks[t];
        if (t) out += ',';
        out += "{\"trace_id\":\"" + trace_id_text(tree.trace_high, tree.trace_low) +
               "\",\"begin_ns\":" + detail::number(tree.begin_ns) + ",\"end_ns\":" + detail::number(tree.end_ns) +
               ",\"duration_ns\":" + detail::number(detail::sat_sub(tree.end_ns, tree.begin_ns)) +
               ",\"processes\":" + std::to_string(tree.processes) + ",\"roots\":[";
        for (std::size_t i = 0; i < tree.roots.size(); ++i) out += (i ? "," : "") + std::to_string(tree.roots[i]);
        out += "],\"nodes\":[";
        for (std::uint32_t i = tree.first_node; i < tree.first_node + tree.node_count; ++i) {
            const task_node& n = f.nodes[i];
            if (i != tree.first_node) out += ',';
            out += "{\"id\":" + std::to_string(i) + ",\"parent\":" +
                   (n.parent == no_task_node ? std::string("null") : std::to_string(n.parent)) +
                   ",\"depth\":" + std::to_string(n.depth) + ",\"kind\":\"" + task_node_kind_name(n.kind) +
                   "\",\"flags\":" + detail::flags_json(n) + ",\"process\":" + json::quote(f.process_of(n)) +
                   ",\"caller\":" + json::quote(f.caller_of(n)) + ",\"call\":" + json::quote(f.name_of(n)) +
                   ",\"call_id\":" + json::number(n.call_id) + ",\"begin_ns\":" + detail::number(n.begin_ns) +
                   ",\"end_ns\":" + detail::number(n.end_ns) + ",\"duration_ns\":" + detail::number(n.duration_ns()) +
                   ",\"self_ns\":" + detail::number(n.self_ns) + ",\"shift_ns\":" + detail::number(n.shift_ns) +
                   ",\"client\":";
            detail::append_side_json(out, f, f.client_side(n));
            out += ",\"server\":";
            detail::append_side_json(out, f, f.server_side(n));
            out += '}';
        }
        out += "],\"critical_path_ns\":" + detail::number(s.critical_ns) + ",\"critical_path\":[";
        for (std::size_t p = 0; p < s.critical_path.size(); ++p) {
            out += (p ? ",{\"node\":" : "{\"node\":") + std::to_string(s.critical_path[p].node) +
                   ",\"ns\":" + detail::number(s.critical_path[p].ns) + "}";
        }
        out += "]}";
    }
    out += "],\"calls\":[";
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
        const task_call_stats& c = r.calls[i];
        if (i) out += ',';
        out += "{\"process\":" + json::quote(c.process) + ",\"call\":" + json::quote(c.call) +
               ",\"count\":" + json::number(c.count) + ",\"open\":" + json::number(c.open) +
               ",\"total_ns\":" + detail::number(c.total_ns) + ",\"self_ns\":" + detail::number(c.self_ns) +
               ",\"mean_ns\":" + json::number(c.mean_ns) + ",\"p50_ns\":" + detail::number(c.p50_ns) +
               ",\"p95_ns\":" + detail::number(c.p95_ns) + ",\"p99_ns\":" + detail::number(c.p99_ns) +
               ",\"max_ns\":" + detail::number(c.max_ns) + "}";
    }
    out += "]}\n";
    return out;
}

}  // namespace loupe::report
