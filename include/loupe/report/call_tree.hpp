// Call trees of a trace's metrics (US 6,904,594, FIGS. 11-17): what
// `loupe report FILE --tree/--flat/--callers/--per-thread/--per-cpu` prints.
//
//   const loupe::trace t = loupe::read_trace_file("out.loupe");
//   const loupe::report::call_tree tree = loupe::report::build_call_tree(t);
//   std::cout << loupe::report::format_tree_report(loupe::report::report_tree(tree, "cpu_time"));
//   std::cout << loupe::report::flat_report_json(loupe::report::report_flat(tree, "db.rows"));
//
// The model. Per thread, a context tree: the zones of a thread nest by time
// (a zone is the child of the innermost zone of its thread that encloses it),
// and a node is one routine (zone name) under one parent node, so the same
// routine called from two places is two nodes and a routine calling itself
// gets a child node of its own. Per node and per metric:
// - calls: how many zones this node stands for;
// - cum (inclusive): the sum of those zones' deltas (a zone carries the
//   change of each metric on its own thread between its entry and exit; wall
//   time is its duration);
// - base (self): cum minus the children's cum: what was spent with exactly
//   this call stack;
// - level: the depth (a thread's root 0, its outermost zones 1);
// - RL, the recursion level: how many nodes of the same routine are on the
//   path from the root to the node, itself included (1 when not recursive).
// Each thread has one root, "thread <name> (tid <os tid>)" ("thread <id>
// (tid ...)" when unnamed), with calls 1. For a push metric of a complete
// trace, and for a pull metric (cpu_time, ...) whose total the thread's
// METRIC_TOTALS record holds, the root's base is the thread's total for the
// session (a push metric with no record: 0) minus the cum of its outermost
// zones: what the thread did outside any zone, so that the bases of all
// nodes add up to the recorded total. Wall time has no total, and a
// cut-short trace may lack them: then the root's base is 0 and its cum is
// what its zones hold.
//
// Reports, each a struct with a text and a JSON form, for one metric chosen
// by name (an unknown or unavailable metric throws loupe::error saying so):
// - report_tree: every node in depth-first order, children by cum (largest
//   first, ties by name): Level, RL, Calls, Base, Cum, Name.
// - report_flat: per routine, merged over all nodes and threads: Calls and
//   Base summed, Cum summed over the outermost instances only (RL 1), so
//   recursion is not counted twice. By base, largest first.
// - report_callers: per routine, a stanza of parent rows, a self row (the
//   flat row) and child rows, exact because they come from the context tree;
//   see callers_report for what each row holds and verify_stanzas for the
//   invariants.
// - report_per_thread: per thread and metric, the recorded total next to the
//   sum of the bases of the thread's tree.
// - report_per_cpu: per CPU, each push metric's total (METRIC_TOTALS).
// Values are the metric's integers, in its unit (wall_time: ns).
//
// Zones whose timestamps tie (coarse clocks) nest by file order: of two
// zones with the same begin and end, the one written later (zones are
// written at exit) encloses the other. Dropped zones are missing from the
// tree; with totals, their cost shows in the root's base.
// Cost: building, O(z log z) in zones plus, per new node, a walk up to its
// nearest ancestor of the same routine; each report O(n log n) in nodes.
// Memory: per node, two int64 per metric of the trace.
// Thread-safety: pure functions over values; a call_tree is a plain value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/metrics/metric.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"

namespace loupe::report {

/// One node of a context tree (see the top of this file).
struct call_node {
    static constexpr std::size_t no_parent = static_cast<std::size_t>(-1);
    std::uint32_t routine = 0;          ///< index into call_tree::names
    std::size_t parent = no_parent;     ///< index into call_tree::nodes; no_parent for a thread's root
    std::vector<std::size_t> children;  ///< indexes into call_tree::nodes, in order of first call
    std::uint32_t level = 0;            ///< 0 for a root, 1 for a thread's outermost zones, ...
    std::uint32_t rl = 1;               ///< recursion level, 1-based
    std::uint64_t calls = 0;            ///< zones this node stands for (1 for a root)
    std::vector<std::int64_t> base;     ///< per metric (index into call_tree::metrics)
    std::vector<std::int64_t> cum;      ///< per metric
    bool is_root() const noexcept { return parent == no_parent; }
};

/// A thread of the trace: its root and its recorded totals.
struct call_tree_thread {
    std::uint64_t thread_id = 0;
    std::uint64_t os_tid = 0;
    std::string name;      ///< empty when unnamed
    std::size_t root = 0;  ///< index into call_tree::nodes
    /// Per metric: the thread's total for the session (push metrics of a
    /// complete trace), nullopt when the trace has none.
    std::vector<std::optional<std::int64_t>> totals;
};

/// The context trees of every thread of a trace that recorded zones or
/// metric totals, with costs for every metric of the trace.
struct call_tree {
    std::string session;
    /// wall_time (id 0) first, then the trace's other metrics in record order.
    std::vector<trace_metric> metrics;
    /// Routine (zone) names and root labels ("thread main (tid 42)"); a root
    /// label is an entry of its own, never a routine's, even when a zone has
    /// the same text.
    std::vector<std::string> names;
    std::vector<call_node> nodes;           ///< every thread's nodes; a parent comes before its children
    std::vector<call_tree_thread> threads;  ///< in the trace's thread order

    const std::string& name_of(const call_node& n) const noexcept { return names[n.routine]; }
    /// The index into `metrics` of the metric called `name`. Throws
    /// loupe::error naming it and listing the trace's metrics when there is
    /// none, and giving the reason when it was unavailable when recorded.
    std::size_t metric_index(std::string_view name) const;
};

/// Calls, base and cum of one metric for one row of a report.
struct cost_line {
    std::string name;
    std::uint64_t calls = 0;
    std::int64_t base = 0;
    std::int64_t cum = 0;
};

/// report_tree: one row per node, depth first, children by cum.
struct tree_row {
    std::size_t node = 0;                       ///< index into call_tree::nodes
    std::size_t parent = call_node::no_parent;  ///< the parent's node index
    std::uint32_t level = 0;
    std::uint32_t rl = 1;
    cost_line cost;
};
struct tree_report {
    std::string session;
    trace_metric metric;
    std::vector<tree_row> rows;
};

/// report_flat: one line per routine, by base (largest first).
struct flat_report {
    std::string session;
    trace_metric metric;
    std::vector<cost_line> routines;
};

/// report_callers: for routine R,
/// - a parent row per routine (or thread root) P calling R: over the nodes
///   of R under a node of P, calls and base summed, cum summed over those
///   that are outermost instances of R (RL 1; a recursive call adds 0);
/// - the self row, as in report_flat;
/// - a child row per routine C that R calls: over the nodes of C under a node
///   of R, calls and base summed, and the cum of those nodes less the cum of
///   the instances of R nested in them (that cost is in those instances' own
///   child rows; a child row of R itself has cum 0).
/// Without recursion a child row of R equals the parent row for R in the
/// child's stanza. Invariants (verify_stanzas): Σ parent calls = self calls,
/// Σ parent base = self base, Σ parent cum = self cum, self cum = self base
/// + Σ child cum. Stanzas by self cum, rows by cum (largest first, ties by name).
struct stanza {
    std::vector<cost_line> parents;
    cost_line self;
    std::vector<cost_line> children;
};
struct callers_report {
    std::string session;
    trace_metric metric;
    std::vector<stanza> stanzas;
};

/// report_per_thread: one metric of one thread.
struct thread_metric_total {
    trace_metric metric;
    std::optional<std::int64_t> total;  ///< the recorded total (METRIC_TOTALS), when there is one
    std::int64_t tree = 0;              ///< Σ base over the thread's nodes, root included (= total when there is one)
    std::int64_t zones = 0;             ///< Σ cum of the thread's outermost zones
    std::int64_t outside = 0;           ///< the root's base: total - zones, 0 without a total
};
struct thread_totals {
    std::uint64_t thread_id = 0;
    std::uint64_t os_tid = 0;
    std::string label;  ///< the root's name
    std::vector<thread_metric_total> metrics;
};
struct per_thread_report {
    std::string session;
    std::vector<thread_totals> threads;
    std::vector<thread_metric_total> all;  ///< per metric, the sums over all threads
};

/// report_per_cpu: what threads added to each push metric while running on
/// each CPU (the last CPU number the session knew collects any beyond it).
struct cpu_totals {
    std::uint32_t cpu = 0;
    std::vector<std::int64_t> values;  ///< per per_cpu_report::metrics
};
struct per_cpu_report {
    std::string session;
    std::vector<trace_metric> metrics;  ///< the push metrics reported
    std::vector<cpu_totals> cpus;       ///< CPUs with a record, by number
    std::vector<std::int64_t> all;      ///< per metric, the sum over the CPUs
};

namespace detail {

inline const char* metric_source_name(metric_source s) noexcept {
    return s == metric_source::wall ? "wall" : s == metric_source::push ? "push" : "pull";
}

inline std::string metric_list(const std::vector<trace_metric>& metrics) {
    std::string out;
    for (const trace_metric& m : metrics) {
        if (!out.empty()) out += ", ";
        out += m.name;
        if (!m.available) out += " (unavailable)";
    }
    return out;
}

// wall_time first (the trace's record when the session listed it), then the
// trace's other metrics.
inline std::vector<trace_metric> metrics_of(const trace& t) {
    std::vector<trace_metric> out(1);
    out[0].id = metrics::wall_time;
    out[0].name = "wall_time";
    out[0].unit = "ns";
    out[0].source = metric_source::wall;
    for (const trace_metric& m : t.metrics) {
        if (m.id == metrics::wall_time) {
            out[0] = m;
        } else {
            out.push_back(m);
        }
    }
    return out;
}

inline std::size_t find_metric_index(const std::vector<trace_metric>& metrics, std::string_view name) {
    for (std::size_t i = 0; i < metrics.size(); ++i) {
        if (metrics[i].name != name) continue;
        if (!metrics[i].available) {
            throw error("metric \"" + std::string(name) + "\" was unavailable when the trace was recorded: " +
                        (metrics[i].unavailable_reason.empty() ? "no reason given" : metrics[i].unavailable_reason));
        }
        return i;
    }
    throw error("no metric \"" + std::string(name) + "\" in this trace; it has: " + metric_list(metrics));
}

// "thread main (tid 42)", or "thread 3 (tid 42)" when unnamed.
inline std::string root_label(const trace_thread& th) {
    return "thread " + (th.name.empty() ? std::to_string(th.id) : th.name) + " (tid " + std::to_string(th.os_tid) + ")";
}

// Adds nodes to a call_tree: interns routine names, finds or creates the
// node of a routine under a parent, and charges a thread's zones.
class tree_builder {
public:
    tree_builder(const trace& t, call_tree& out) : t_(t), out_(out) {}

    std::uint32_t routine_of(const trace_event& e) {
        auto cached = by_site_.find(e.site_id);
        if (cached != by_site_.end()) return cached->second;
        const trace_site* site = t_.find_site(e.site_id);
        const std::string name = site ? site->name : "(site " + std::to_string(e.site_id) + ")";
        auto [it, fresh] = by_name_.emplace(name, static_cast<std::uint32_t>(out_.names.size()));
        if (fresh) out_.names.push_back(name);
        by_site_.emplace(e.site_id, it->second);
        return it->second;
    }

    std::size_t add_node(std::uint32_t routine, std::size_t parent) {
        const std::size_t m = out_.metrics.size();
        call_node n;
        n.routine = routine;
        n.parent = parent;
        n.base.assign(m, 0);
        n.cum.assign(m, 0);
        if (parent != call_node::no_parent) {
            const call_node& p = out_.nodes[parent];
            n.level = p.level + 1;
            for (std::size_t a = parent; a != call_node::no_parent; a = out_.nodes[a].parent) {
                if (out_.nodes[a].routine == routine) {
                    n.rl = out_.nodes[a].rl + 1;
                    break;
                }
            }
        }
        out_.nodes.push_back(std::move(n));
        const std::size_t index = out_.nodes.size() - 1;
        if (parent != call_node::no_parent) {
            out_.nodes[parent].children.push_back(index);
            child_.emplace(std::make_pair(parent, routine), index);
        }
        return index;
    }

    std::size_t child(std::size_t parent, std::uint32_t routine) {
        auto it = child_.find({parent, routine});
        return it != child_.end() ? it->second : add_node(routine, parent);
    }

    // The delta of metric `k` a zone carries (0 when it carries none).
    std::int64_t delta(const trace_event& e, std::size_t k) const {
        const trace_metric& m = out_.metrics[k];
        if (m.source == metric_source::wall) return static_cast<std::int64_t>(e.end_ns - e.begin_ns);
        std::int64_t v = 0;
        return t_.metric_of(e, m.id, v) ? v : 0;
    }

    // Charges `zones` (one thread's, in file order) to the nodes below `root`.
    void add_zones(std::size_t root, const std::vector<const trace_event*>& zones) {
        std::vector<std::size_t> order(zones.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const trace_event& x = *zones[a];
            const trace_event& y = *zones[b];
            if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
            if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
            return a > b;  // same interval: the later-written zone encloses
        });
        std::vector<std::pair<std::uint64_t, std::size_t>> open;  // (end_ns, node) of the enclosing zones
        for (const std::size_t i : order) {
            const trace_event& e = *zones[i];
            while (!open.empty() && open.back().first < e.end_ns) open.pop_back();
            const std::size_t node = child(open.empty() ? root : open.back().second, routine_of(e));
            call_node& n = out_.nodes[node];
            ++n.calls;
            for (std::size_t k = 0; k < n.cum.size(); ++k) n.cum[k] += delta(e, k);
            open.emplace_back(e.end_ns, node);
        }
    }

private:
    const trace& t_;
    call_tree& out_;
    std::unordered_map<std::uint64_t, std::uint32_t> by_site_;
    std::unordered_map<std::string, std::uint32_t> by_name_;
    std::map<std::pair<std::size_t, std::uint32_t>, std::size_t> child_;
};

}  // namespace detail

inline std::size_t call_tree::metric_index(std::string_view name) const {
    return detail::find_metric_index(metrics, name);
}

/// Builds the context trees of `t` (see the top of this file).
inline call_tree build_call_tree(const trace& t) {
    call_tree out;
    out.session = t.session.name;
    out.metrics = detail::metrics_of(t);
    const std::size_t m = out.metrics.size();
    std::vector<std::size_t> index_of(max_metrics, m);  // metric id -> index into out.metrics
    for (std::size_t k = 0; k < m; ++k) index_of[out.metrics[k].id] = k;

    std::unordered_map<std::uint64_t, std::vector<const trace_event*>> zones;
    for (const trace_event& e : t.events) {
        if (e.type == event_type::zone) zones[e.thread_id].push_back(&e);
    }
    // The recorded per-thread totals, by metric index (a metric a thread
    // did not change has no value).
    std::unordered_map<std::uint64_t, std::vector<std::optional<std::int64_t>>> recorded;
    for (const trace_metric_totals& r : t.metric_totals) {
        if (r.per_cpu) continue;
        std::vector<std::optional<std::int64_t>>& row = recorded[r.thread_id];
        row.resize(m);
        for (const metric_value& v : r.values) {
            if (index_of[v.id] < m) row[index_of[v.id]] = v.value;
        }
    }

    detail::tree_builder builder(t, out);
    for (const trace_thread& th : t.threads) {
        const auto z = zones.find(th.id);
        const auto rec = recorded.find(th.id);
        if (z == zones.end() && rec == recorded.end()) continue;
        call_tree_thread thread;
        thread.thread_id = th.id;
        thread.os_tid = th.os_tid;
        thread.name = th.name;
        // A complete trace has every push metric's totals (0 when not
        // written); a pull metric's total is known where a record has it.
        thread.totals.resize(m);
        for (std::size_t k = 0; k < m; ++k) {
            if (rec != recorded.end() && rec->second[k]) {
                thread.totals[k] = rec->second[k];
            } else if (t.complete && out.metrics[k].source == metric_source::push) {
                thread.totals[k] = 0;
            }
        }
        out.names.push_back(detail::root_label(th));  // never shared with a routine
        thread.root = builder.add_node(static_cast<std::uint32_t>(out.names.size() - 1), call_node::no_parent);
        out.nodes[thread.root].calls = 1;
        if (z != zones.end()) builder.add_zones(thread.root, z->second);
        out.threads.push_back(std::move(thread));
    }

    // base = cum - Σ children's cum; a root's cum is its base (the work
    // outside zones, known from the totals) plus its children's cum.
    for (call_node& n : out.nodes) {
        if (!n.is_root()) n.base = n.cum;
    }
    for (const call_node& n : out.nodes) {
        if (n.is_root()) continue;
        call_node& p = out.nodes[n.parent];
        for (std::size_t k = 0; k < m; ++k) {
            if (p.is_root()) {
                p.cum[k] += n.cum[k];
            } else {
                p.base[k] -= n.cum[k];
            }
        }
    }
    for (const call_tree_thread& th : out.threads) {
        call_node& root = out.nodes[th.root];  // cum: Σ of its children's so far
        for (std::size_t k = 0; k < m; ++k) {
            root.base[k] = th.totals[k] ? *th.totals[k] - root.cum[k] : 0;
            root.cum[k] += root.base[k];
        }
    }
    return out;
}

namespace detail {

// Largest `key` first, ties by name.
template <class Key>
void sort_lines(std::vector<cost_line>& lines, Key key) {
    std::stable_sort(lines.begin(), lines.end(), [&](const cost_line& a, const cost_line& b) {
        return key(a) != key(b) ? key(a) > key(b) : a.name < b.name;
    });
}
inline std::int64_t by_cum(const cost_line& l) noexcept { return l.cum; }
inline std::int64_t by_base(const cost_line& l) noexcept { return l.base; }

inline cost_line node_line(const call_tree& tree, const call_node& n, std::size_t k) {
    return {tree.name_of(n), n.calls, n.base[k], n.cum[k]};
}

inline void add_to(cost_line& line, std::uint64_t calls, std::int64_t base, std::int64_t cum) {
    line.calls += calls;
    line.base += base;
    line.cum += cum;
}

// The self line of every routine (flat report, stanza self rows), keyed by routine.
inline std::map<std::uint32_t, cost_line> self_lines(const call_tree& tree, std::size_t k) {
    std::map<std::uint32_t, cost_line> out;
    for (const call_node& n : tree.nodes) {
        if (n.is_root()) continue;
        cost_line& line = out[n.routine];
        line.name = tree.name_of(n);
        add_to(line, n.calls, n.base[k], n.rl == 1 ? n.cum[k] : 0);
    }
    return out;
}

inline std::string metric_title(const trace_metric& m) {
    return m.name + (m.unit.empty() ? "" : " (" + m.unit + ")") + ", " + metric_source_name(m.source) + " metric";
}

inline void append_metric_json(std::string& out, const trace_metric& m) {
    out += "{\"id\":" + std::to_string(m.id) + ",\"name\":" + json::quote(m.name) + ",\"unit\":" + json::quote(m.unit) +
           ",\"source\":\"" + metric_source_name(m.source) + "\"}";
}

// "name":...,"calls":...,"base":...,"cum":... (no braces).
inline void append_cost_fields(std::string& out, const cost_line& l) {
    out += "\"name\":" + json::quote(l.name) + ",\"calls\":" + json::number(l.calls) +
           ",\"base\":" + std::to_string(l.base) + ",\"cum\":" + std::to_string(l.cum);
}
inline void append_cost_json(std::string& out, const cost_line& l) {
    out += '{';
    append_cost_fields(out, l);
    out += '}';
}

template <class T, class Append>
void append_array_json(std::string& out, const std::vector<T>& items, Append append) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        append(out, items[i]);
    }
    out += ']';
}

// `{"session":"..."` and, with a metric, `,"metric":{...}` (left open).
inline std::string report_head_json(const std::string& session) { return "{\"session\":" + json::quote(session); }
inline std::string report_head_json(const std::string& session, const trace_metric& m) {
    std::string out = report_head_json(session) + ",\"metric\":";
    append_metric_json(out, m);
    return out;
}

// `session "name": what` and, with a metric, ` of ticks (unit), push metric`.
inline std::string report_head(const std::string& session, const std::string& what) {
    return "session \"" + printable(session) + "\": " + what + "\n\n";
}
inline std::string report_head(const std::string& session, const std::string& what, const trace_metric& m) {
    return report_head(session, what + " of " + printable(metric_title(m)));
}

// One row of Calls, Base and Cum followed by `name` indented by `indent`;
// `prefix` (e.g. Level and RL) goes first.
inline void append_cost_row(std::string& out, const std::string& prefix, const cost_line& l, std::size_t indent) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%10llu %14lld %14lld  ", static_cast<unsigned long long>(l.calls),
                  static_cast<long long>(l.base), static_cast<long long>(l.cum));
    out += prefix;
    out += buf;
    out.append(indent, ' ');
    out += printable(l.name);
    out += '\n';
}
inline const char* const cost_header = "     Calls           Base            Cum  Name\n";

inline std::string optional_text(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "-"; }
inline std::string optional_json(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "null"; }

}  // namespace detail

/// The tree of every thread for metric `metric` (by name).
inline tree_report report_tree(const call_tree& tree, std::string_view metric = "wall_time") {
    const std::size_t k = tree.metric_index(metric);
    tree_report r;
    r.session = tree.session;
    r.metric = tree.metrics[k];
    auto children = [&](const call_node& n) {
        std::vector<std::size_t> out(n.children);
        std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
            const call_node& x = tree.nodes[a];
            const call_node& y = tree.nodes[b];
            return x.cum[k] != y.cum[k] ? x.cum[k] > y.cum[k] : tree.name_of(x) < tree.name_of(y);
        });
        return out;
    };
    std::vector<std::size_t> stack;  // nodes still to print, next on top
    for (const call_tree_thread& th : tree.threads) {
        stack.push_back(th.root);
        while (!stack.empty()) {
            const std::size_t i = stack.back();
            stack.pop_back();
            const call_node& n = tree.nodes[i];
            r.rows.push_back({i, n.parent, n.level, n.rl, detail::node_line(tree, n, k)});
            const std::vector<std::size_t> sorted = children(n);
            stack.insert(stack.end(), sorted.rbegin(), sorted.rend());
        }
    }
    return r;
}

/// Columns Level, RL, Calls, Base, Cum, Name (indented by level).
inline std::string format_tree_report(const tree_report& r) {
    std::string out = detail::report_head(r.session, "call tree", r.metric);
    if (r.rows.empty()) return out + "no threads recorded zones\n";
    out += "Level    RL ";
    out += detail::cost_header;
    char prefix[32];
    for (const tree_row& row : r.rows) {
        std::snprintf(prefix, sizeof prefix, "%5u %5u ", row.level, row.rl);
        detail::append_cost_row(out, prefix, row.cost, 2 * row.level);
    }
    return out;
}

/// {"session", "metric", "nodes": [{"id", "parent" (an id; null for a
/// root), "level", "rl", "name", "calls", "base", "cum"}]} in the text's order.
inline std::string tree_report_json(const tree_report& r) {
    std::string out = detail::report_head_json(r.session, r.metric) + ",\"nodes\":";
    detail::append_array_json(out, r.rows, [](std::string& o, const tree_row& row) {
        o += "{\"id\":" + std::to_string(row.node) +
             ",\"parent\":" + (row.parent == call_node::no_parent ? std::string("null") : std::to_string(row.parent)) +
             ",\"level\":" + std::to_string(row.level) + ",\"rl\":" + std::to_string(row.rl) + ',';
        detail::append_cost_fields(o, row.cost);
        o += '}';
    });
    return out + "}\n";
}

/// Per routine over all threads: Calls, Base, Cum (outermost instances only).
inline flat_report report_flat(const call_tree& tree, std::string_view metric = "wall_time") {
    const std::size_t k = tree.metric_index(metric);
    flat_report r;
    r.session = tree.session;
    r.metric = tree.metrics[k];
    for (auto& [routine, line] : detail::self_lines(tree, k)) r.routines.push_back(std::move(line));
    detail::sort_lines(r.routines, detail::by_base);
    return r;
}

inline std::string format_flat_report(const flat_report& r) {
    std::string out = detail::report_head(r.session, "routines", r.metric);
    if (r.routines.empty()) return out + "no zones recorded\n";
    out += detail::cost_header;
    for (const cost_line& l : r.routines) detail::append_cost_row(out, "", l, 0);
    return out;
}

/// {"session", "metric", "routines": [{"name", "calls", "base", "cum"}]}.
inline std::string flat_report_json(const flat_report& r) {
    std::string out = detail::report_head_json(r.session, r.metric) + ",\"routines\":";
    detail::append_array_json(out, r.routines, detail::append_cost_json);
    return out + "}\n";
}

/// A parent/self/child stanza per routine (see callers_report).
inline callers_report report_callers(const call_tree& tree, std::string_view metric = "wall_time") {
    const std::size_t k = tree.metric_index(metric);
    // A child row's cum: the node's cum less that of the nearest nested
    // instances of its parent's routine (charged to their own child rows).
    std::vector<std::int64_t> child_cum(tree.nodes.size());
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) child_cum[i] = tree.nodes[i].cum[k];
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        const call_node& n = tree.nodes[i];
        if (n.rl == 1) continue;
        std::size_t below = i;  // the child of the nearest outer instance, on the path to n
        while (tree.nodes[tree.nodes[below].parent].routine != n.routine) below = tree.nodes[below].parent;
        child_cum[below] -= n.cum[k];
    }
    struct lines {
        std::map<std::uint32_t, cost_line> parents, children;
    };
    std::map<std::uint32_t, lines> by_routine;
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        const call_node& n = tree.nodes[i];
        if (n.is_root()) continue;
        const call_node& p = tree.nodes[n.parent];
        cost_line& parent = by_routine[n.routine].parents[p.routine];
        parent.name = tree.name_of(p);
        detail::add_to(parent, n.calls, n.base[k], n.rl == 1 ? n.cum[k] : 0);
        if (p.is_root()) continue;
        cost_line& child = by_routine[p.routine].children[n.routine];
        child.name = tree.name_of(n);
        detail::add_to(child, n.calls, n.base[k], child_cum[i]);
    }
    callers_report r;
    r.session = tree.session;
    r.metric = tree.metrics[k];
    auto sorted = [](std::map<std::uint32_t, cost_line>& m) {
        std::vector<cost_line> out;
        for (auto& [routine, line] : m) out.push_back(std::move(line));
        detail::sort_lines(out, detail::by_cum);
        return out;
    };
    for (auto& [routine, self] : detail::self_lines(tree, k)) {
        lines& l = by_routine[routine];
        r.stanzas.push_back({sorted(l.parents), std::move(self), sorted(l.children)});
    }
    std::stable_sort(r.stanzas.begin(), r.stanzas.end(), [](const stanza& a, const stanza& b) {
        return a.self.cum != b.self.cum ? a.self.cum > b.self.cum : a.self.name < b.self.name;
    });
    return r;
}

/// Checks the four invariants of every stanza (see callers_report): an
/// empty string when they hold, else the first one that does not.
inline std::string verify_stanzas(const callers_report& r) {
    for (const stanza& s : r.stanzas) {
        cost_line parents, children;
        for (const cost_line& p : s.parents) detail::add_to(parents, p.calls, p.base, p.cum);
        for (const cost_line& c : s.children) detail::add_to(children, c.calls, c.base, c.cum);
        auto broken = [&](const char* what, long long sum, long long self) {
            return "stanza \"" + printable(s.self.name) + "\": " + what + " " + std::to_string(sum) +
                   " != " + std::to_string(self);
        };
        if (parents.calls != s.self.calls) {
            return broken("sum of parent calls vs self calls", static_cast<long long>(parents.calls),
                          static_cast<long long>(s.self.calls));
        }
        if (parents.base != s.self.base) return broken("sum of parent base vs self base", parents.base, s.self.base);
        if (parents.cum != s.self.cum) return broken("sum of parent cum vs self cum", parents.cum, s.self.cum);
        if (s.self.base + children.cum != s.self.cum) {
            return broken("self base + sum of child cum vs self cum", s.self.base + children.cum, s.self.cum);
        }
    }
    return {};
}

/// Parents indented above the routine's own row, children indented below,
/// one stanza per routine, separated by dashes.
inline std::string format_callers_report(const callers_report& r) {
    std::string out = detail::report_head(r.session, "callers and callees", r.metric);
    if (r.stanzas.empty()) return out + "no zones recorded\n";
    out += detail::cost_header;
    for (const stanza& s : r.stanzas) {
        out += std::string(60, '-') + '\n';
        for (const cost_line& p : s.parents) detail::append_cost_row(out, "", p, 4);
        detail::append_cost_row(out, "", s.self, 0);
        for (const cost_line& c : s.children) detail::append_cost_row(out, "", c, 4);
    }
    return out;
}

/// {"session", "metric", "stanzas": [{"parents": [line], "self": line,
/// "children": [line]}]}, a line being {"name", "calls", "base", "cum"}.
inline std::string callers_report_json(const callers_report& r) {
    std::string out = detail::report_head_json(r.session, r.metric) + ",\"stanzas\":";
    detail::append_array_json(out, r.stanzas, [](std::string& o, const stanza& s) {
        o += "{\"parents\":";
        detail::append_array_json(o, s.parents, detail::append_cost_json);
        o += ",\"self\":";
        detail::append_cost_json(o, s.self);
        o += ",\"children\":";
        detail::append_array_json(o, s.children, detail::append_cost_json);
        o += '}';
    });
    return out + "}\n";
}

/// Per thread, every available metric (or only `metric`, when given): the
/// recorded total next to the sum of the bases of the thread's tree.
inline per_thread_report report_per_thread(const call_tree& tree, std::string_view metric = {}) {
    std::vector<std::size_t> ks;
    if (!metric.empty()) {
        ks.push_back(tree.metric_index(metric));
    } else {
        for (std::size_t k = 0; k < tree.metrics.size(); ++k) {
            if (tree.metrics[k].available) ks.push_back(k);
        }
    }
    per_thread_report r;
    r.session = tree.session;
    // Σ base per root, per metric: every node's base added to its thread's root.
    std::vector<std::size_t> root_of(tree.nodes.size());
    std::unordered_map<std::size_t, std::vector<std::int64_t>> tree_sum;
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        const call_node& n = tree.nodes[i];
        root_of[i] = n.is_root() ? i : root_of[n.parent];
        std::vector<std::int64_t>& sum = tree_sum[root_of[i]];
        sum.resize(n.base.size());
        for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += n.base[k];
    }
    for (const call_tree_thread& th : tree.threads) {
        const call_node& root = tree.nodes[th.root];
        thread_totals row{th.thread_id, th.os_tid, tree.name_of(root), {}};
        for (const std::size_t k : ks) {
            row.metrics.push_back(
                {tree.metrics[k], th.totals[k], tree_sum[th.root][k], root.cum[k] - root.base[k], root.base[k]});
        }
        r.threads.push_back(std::move(row));
    }
    for (std::size_t j = 0; j < ks.size(); ++j) {
        thread_metric_total all{tree.metrics[ks[j]], std::nullopt, 0, 0, 0};
        bool totals = !r.threads.empty();  // the sum of the totals is known when each is
        std::int64_t total = 0;
        for (const thread_totals& th : r.threads) {
            const thread_metric_total& m = th.metrics[j];
            totals = totals && m.total;
            total += m.total.value_or(0);
            all.tree += m.tree;
            all.zones += m.zones;
            all.outside += m.outside;
        }
        if (totals) all.total = total;
        r.all.push_back(std::move(all));
    }
    return r;
}

/// One row per thread and metric: Total, Tree (Σ base), Zones, Outside;
/// then the sums over all threads. "-": no recorded total.
inline std::string format_per_thread_report(const per_thread_report& r) {
    std::string out = detail::report_head(r.session, "metric totals per thread");
    if (r.threads.empty()) return out + "no threads recorded zones or metrics\n";
    char line[512];
    const char* const fmt = "%-36s %-20s %14s %14s %14s %14s\n";
    std::snprintf(line, sizeof line, fmt, "Thread", "Metric", "Total", "Tree", "Zones", "Outside");
    out += line;
    auto emit = [&](const std::string& label, const std::vector<thread_metric_total>& metrics) {
        for (std::size_t j = 0; j < metrics.size(); ++j) {
            const thread_metric_total& m = metrics[j];
            std::snprintf(line, sizeof line, fmt, j == 0 ? printable(label).c_str() : "",
                          printable(m.metric.name).c_str(), detail::optional_text(m.total).c_str(),
                          std::to_string(m.tree).c_str(), std::to_string(m.zones).c_str(),
                          std::to_string(m.outside).c_str());
            out += line;
        }
    };
    for (const thread_totals& th : r.threads) emit(th.label, th.metrics);
    emit("all threads", r.all);
    return out;
}

/// {"session", "threads": [{"thread_id", "os_tid", "label", "metrics":
/// [{"metric", "total" (null when none), "tree", "zones", "outside"}]}],
/// "all": [same per metric]}.
inline std::string per_thread_report_json(const per_thread_report& r) {
    auto append_metrics = [](std::string& out, const std::vector<thread_metric_total>& metrics) {
        detail::append_array_json(out, metrics, [](std::string& o, const thread_metric_total& m) {
            o += "{\"metric\":";
            detail::append_metric_json(o, m.metric);
            o += ",\"total\":" + detail::optional_json(m.total) + ",\"tree\":" + std::to_string(m.tree) +
                 ",\"zones\":" + std::to_string(m.zones) + ",\"outside\":" + std::to_string(m.outside) + "}";
        });
    };
    std::string out = detail::report_head_json(r.session) + ",\"threads\":";
    detail::append_array_json(out, r.threads, [&](std::string& o, const thread_totals& th) {
        o += "{\"thread_id\":" + json::number(th.thread_id) + ",\"os_tid\":" + json::number(th.os_tid) +
             ",\"label\":" + json::quote(th.label) + ",\"metrics\":";
        append_metrics(o, th.metrics);
        o += '}';
    });
    out += ",\"all\":";
    append_metrics(out, r.all);
    return out + "}\n";
}

/// Per CPU, every push metric of the trace (or only `metric`, which must be
/// a push metric: others have no per-CPU totals; loupe::error otherwise).
inline per_cpu_report report_per_cpu(const trace& t, std::string_view metric = {}) {
    const std::vector<trace_metric> all = detail::metrics_of(t);
    per_cpu_report r;
    r.session = t.session.name;
    if (!metric.empty()) {
        const trace_metric& m = all[detail::find_metric_index(all, metric)];
        if (m.source != metric_source::push) {
            throw error("metric \"" + m.name + "\" is a " + detail::metric_source_name(m.source) +
                        " metric; per-CPU totals are recorded for push metrics only");
        }
        r.metrics.push_back(m);
    } else {
        for (const trace_metric& m : all) {
            if (m.source == metric_source::push) r.metrics.push_back(m);
        }
    }
    r.all.assign(r.metrics.size(), 0);
    std::map<std::uint32_t, std::vector<std::int64_t>> by_cpu;
    for (const trace_metric_totals& rec : t.metric_totals) {
        if (!rec.per_cpu) continue;
        std::vector<std::int64_t>& row = by_cpu[rec.cpu];
        row.resize(r.metrics.size());
        for (const metric_value& v : rec.values) {
            for (std::size_t j = 0; j < r.metrics.size(); ++j) {
                if (r.metrics[j].id != v.id) continue;
                row[j] += v.value;
                r.all[j] += v.value;
            }
        }
    }
    for (auto& [cpu, values] : by_cpu) r.cpus.push_back({cpu, std::move(values)});
    return r;
}

/// One row per CPU, one column per push metric, then the sum.
inline std::string format_per_cpu_report(const per_cpu_report& r) {
    std::string out = detail::report_head(r.session, "push metric totals per CPU");
    if (r.metrics.empty()) return out + "no push metrics recorded\n";
    if (r.cpus.empty()) return out + "no per-CPU totals in the trace (a session writes them when it stops)\n";
    char cell[64];
    auto row = [&](const std::string& first, const std::vector<std::string>& cells) {
        std::snprintf(cell, sizeof cell, "%-8s", first.c_str());
        out += cell;
        for (const std::string& c : cells) {
            std::snprintf(cell, sizeof cell, " %20s", c.c_str());
            out += cell;
        }
        out += '\n';
    };
    auto numbers = [](const std::vector<std::int64_t>& values) {
        std::vector<std::string> cells;
        for (const std::int64_t v : values) cells.push_back(std::to_string(v));
        return cells;
    };
    std::vector<std::string> names;
    for (const trace_metric& m : r.metrics) names.push_back(printable(m.name));
    row("CPU", names);
    for (const cpu_totals& c : r.cpus) row(std::to_string(c.cpu), numbers(c.values));
    row("all", numbers(r.all));
    return out;
}

/// {"session", "metrics": [metric], "cpus": [{"cpu", "values": [per
/// metric]}], "all": [per metric]}.
inline std::string per_cpu_report_json(const per_cpu_report& r) {
    auto numbers = [](std::string& o, const std::vector<std::int64_t>& values) {
        detail::append_array_json(o, values, [](std::string& s, std::int64_t v) { s += std::to_string(v); });
    };
    std::string out = detail::report_head_json(r.session) + ",\"metrics\":";
    detail::append_array_json(out, r.metrics, detail::append_metric_json);
    out += ",\"cpus\":";
    detail::append_array_json(out, r.cpus, [&](std::string& o, const cpu_totals& c) {
        o += "{\"cpu\":" + std::to_string(c.cpu) + ",\"values\":";
        numbers(o, c.values);
        o += '}';
    });
    out += ",\"all\":";
    numbers(out, r.all);
    return out + "}\n";
}

}  // namespace loupe::report
