// The call-tree model (US 6,904,594, FIGS. 11-17): the context trees of a
// trace's threads with per-node costs for every metric of the trace. Built
// by build_call_tree (call_tree_builder.hpp); read by the reports in
// cost_reports.hpp and totals_reports.hpp.
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
// Memory: per node, two int64 per metric of the trace.
// Thread-safety: a call_tree is a plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/report/detail/trace_metrics.hpp"

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

inline std::size_t call_tree::metric_index(std::string_view name) const {
    return detail::find_metric_index(metrics, name);
}

}  // namespace loupe::report
