// Metrics: what a zone costs besides wall time, charged exactly to the
// thread that caused it (US 6,904,594).
//
// Two kinds of metric:
// - push metrics: the program reports deltas with `loupe::metric_add`
//   (allocation counters do it for you, see allocations.hpp). Each delta goes
//   to the calling thread's accumulator and to the row of the CPU it runs on;
//   a zone is charged the change of its own thread's accumulator between its
//   entry and exit, never the change of a counter other threads also move.
// - pull metrics: read from the kernel per thread at zone entry and exit:
//   `cpu_time` (CLOCK_THREAD_CPUTIME_ID), `task_clock`, `cycles` and
//   `instructions` (perf_event_open, user space only).
//
// A session chooses its metrics by name in `session_config::metrics`; every
// zone it records then carries the delta of each of them (wall time is the
// zone's duration). At session stop the trace also gets each thread's and
// each CPU's push-metric totals. `loupe report --tree/--flat/--callers`
// turns that into call trees with base (self) and cum (inclusive) costs.
//
// Thread-safety: every function here may be called from any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "loupe/metrics/registry.hpp"

namespace loupe {

/// Ids of the built-in metrics (names in quotes, as `session_config::metrics`
/// takes them).
namespace metrics {
inline constexpr metric_id wall_time = wall_time_metric_id;  ///< "wall_time", ns: the zone's duration (always recorded)
inline constexpr metric_id cpu_time = 1;      ///< "cpu_time", ns of this thread's CPU time (user + system)
inline constexpr metric_id task_clock = 2;    ///< "task_clock", ns: perf's task clock for this thread
inline constexpr metric_id cycles = 3;        ///< "cycles": user-space CPU cycles (perf hardware counter)
inline constexpr metric_id instructions = 4;  ///< "instructions": user-space instructions retired (perf)
inline constexpr metric_id alloc_bytes = 5;   ///< "alloc_bytes", B: bytes allocated (push)
inline constexpr metric_id alloc_count = 6;   ///< "alloc_count": allocations (push)
inline constexpr metric_id free_bytes = 7;    ///< "free_bytes", B: bytes freed (push)
inline constexpr metric_id free_count = 8;    ///< "free_count": deallocations (push)
inline constexpr metric_id first_custom = 9;  ///< ids from loupe::metric() start here
}  // namespace metrics

/// The id of the push metric `name` (letters, digits, '_', '.', '-'; at most
/// 47 characters), defining it on first use; later calls with the same name
/// return the same id. `unit` is shown in reports ("B", "ns", "rows", ...).
/// Throws loupe::error naming the offending character for an invalid name,
/// for the name of a built-in metric loupe measures itself ("cpu_time"), and
/// when the process already has `max_metrics` metrics.
/// Cost: a lock and a scan of the table; call it once and keep the id.
inline metric_id metric(std::string_view name, std::string_view unit = {}) {
    return detail::metrics_registry().define(name, unit);
}

/// The id of an existing metric, built-in or defined; -1 when there is none.
inline long find_metric(std::string_view name) noexcept { return detail::metrics_registry().find(name); }

/// Adds `delta` (may be negative) to push metric `id` for the calling thread,
/// for the CPU it runs on and so for the process total.
/// Cost: a thread-local add, the CPU number (one load from the rseq area)
/// and one relaxed atomic add to that CPU's row (measured: README,
/// BM_MetricAdd). An id >= max_metrics is ignored; adding to the id of a
/// pull metric changes nothing a session records.
LOUPE_ALWAYS_INLINE void metric_add(metric_id id, std::int64_t delta) noexcept {
    if (LOUPE_UNLIKELY(id >= max_metrics)) return;
    detail::current_thread_metrics()->add(id, delta);
    detail::metrics_registry().add_on_this_cpu(id, delta);
}

/// The calling thread's accumulated value of push metric `id` (Cum(m,t)):
/// everything it added since it first used a metric.
inline std::int64_t thread_metric(metric_id id) noexcept {
    return id < max_metrics ? detail::current_thread_metrics()->value[id].load(std::memory_order_relaxed) : 0;
}

/// The process total of push metric `id`: the sum of the per-CPU rows
/// (Total(m)). Exact once the threads that add have stopped adding; while
/// they run, a snapshot that may miss deltas being added.
inline std::int64_t metric_total(metric_id id) noexcept {
    return id < max_metrics ? detail::metrics_registry().total(id) : 0;
}

/// The per-CPU rows of push metric `id`: element c is what threads added
/// while running on CPU c; the last element collects CPU numbers beyond the
/// configured count (hotplug). Sums to metric_total(id).
inline std::vector<std::int64_t> metric_per_cpu(metric_id id) {
    std::vector<std::int64_t> out;
    if (id >= max_metrics) return out;
    const detail::metric_registry& r = detail::metrics_registry();
    for (std::size_t c = 0; c <= r.cpus(); ++c) out.push_back(r.cpu_value(c, id));
    return out;
}

}  // namespace loupe
