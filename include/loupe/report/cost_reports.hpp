// The cost reports of one metric over a call tree (call_tree_model.hpp),
// each a struct with a text and a JSON form: Calls, Base (self) and Cum
// (inclusive) per row. What `loupe report FILE --tree/--flat/--callers`
// prints.
// - report_tree: every node in depth-first order, children by cum (largest
//   first, ties by name): Level, RL, Calls, Base, Cum, Name.
// - report_flat: per routine, merged over all nodes and threads: Calls and
//   Base summed, Cum summed over the outermost instances only (RL 1), so
//   recursion is not counted twice. By base, largest first.
// - report_callers: per routine, a stanza of parent rows, a self row (the
//   flat row) and child rows, exact because they come from the context tree;
//   see callers_report for what each row holds and verify_stanzas for the
//   invariants.
// The metric is chosen by name (an unknown or unavailable metric throws
// loupe::error saying so); values are its integers, in its unit (wall_time:
// ns). The text forms print a metric in ns in human units when given
// time_format::human (detail/metric_report_output.hpp).
// Cost: each report O(n log n) in nodes.
// Thread-safety: pure functions over values.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"
#include "loupe/report/call_tree_model.hpp"
#include "loupe/report/detail/metric_report_output.hpp"

namespace loupe::report {

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

// One row of Calls, Base and Cum (values of metric `m`, printed as `times`
// says) followed by `name` indented by `indent`; `prefix` (e.g. Level and RL)
// goes first.
inline void append_cost_row(std::string& out, const std::string& prefix, const cost_line& l, std::size_t indent,
                            const trace_metric& m, time_format times) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%10llu %14s %14s  ", static_cast<unsigned long long>(l.calls),
                  metric_value_text(l.base, m, times).c_str(), metric_value_text(l.cum, m, times).c_str());
    out += prefix;
    out += buf;
    out.append(indent, ' ');
    out += printable(l.name);
    out += '\n';
}
inline const char* const cost_header = "     Calls           Base            Cum  Name\n";

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

/// Rows of a tree report are indented by two spaces a level down to this
/// level; deeper rows keep its indentation (their Level column says how deep
/// they are), so the text stays linear in the trace however deep the calls.
inline constexpr std::uint32_t max_tree_indent_levels = 32;

/// write_tree_report's default number of rows per piece.
inline constexpr std::size_t tree_rows_per_piece = 4096;

/// format_tree_report in pieces, for output that streams: calls
/// `write(std::string_view)` with the heading, then with the text of every
/// `rows_per_piece` rows in order, so a deep tree's text is never held whole.
template <class Write>
void write_tree_report(const tree_report& r, Write&& write, std::size_t rows_per_piece = tree_rows_per_piece,
                       time_format times = time_format::raw_ns) {
    std::string out = detail::report_head(r.session, "call tree", r.metric);
    if (r.rows.empty()) {
        write(std::string_view(out + "no threads recorded zones\n"));
        return;
    }
    out += "Level    RL ";
    out += detail::cost_header;
    char prefix[32];
    std::size_t in_piece = 0;
    for (const tree_row& row : r.rows) {
        std::snprintf(prefix, sizeof prefix, "%5u %5u ", row.level, row.rl);
        const std::uint32_t shown = row.level < max_tree_indent_levels ? row.level : max_tree_indent_levels;
        detail::append_cost_row(out, prefix, row.cost, 2 * std::size_t{shown}, r.metric, times);
        if (++in_piece == rows_per_piece) {
            write(std::string_view(out));
            out.clear();
            in_piece = 0;
        }
    }
    if (!out.empty()) write(std::string_view(out));
}

/// Columns Level, RL, Calls, Base, Cum, Name (indented by level, at most
/// max_tree_indent_levels); a metric in ns printed as `times` says.
inline std::string format_tree_report(const tree_report& r, time_format times = time_format::raw_ns) {
    std::string out;
    write_tree_report(
        r, [&](std::string_view piece) { out += piece; }, tree_rows_per_piece, times);
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

/// Columns Calls, Base, Cum, Name; a metric in ns printed as `times` says.
inline std::string format_flat_report(const flat_report& r, time_format times = time_format::raw_ns) {
    std::string out = detail::report_head(r.session, "routines", r.metric);
    if (r.routines.empty()) return out + "no zones recorded\n";
    out += detail::cost_header;
    for (const cost_line& l : r.routines) detail::append_cost_row(out, "", l, 0, r.metric, times);
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
/// one stanza per routine, separated by dashes; a metric in ns printed as
/// `times` says.
inline std::string format_callers_report(const callers_report& r, time_format times = time_format::raw_ns) {
    std::string out = detail::report_head(r.session, "callers and callees", r.metric);
    if (r.stanzas.empty()) return out + "no zones recorded\n";
    out += detail::cost_header;
    for (const stanza& s : r.stanzas) {
        out += std::string(60, '-') + '\n';
        for (const cost_line& p : s.parents) detail::append_cost_row(out, "", p, 4, r.metric, times);
        detail::append_cost_row(out, "", s.self, 0, r.metric, times);
        for (const cost_line& c : s.children) detail::append_cost_row(out, "", c, 4, r.metric, times);
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

}  // namespace loupe::report
