// Metric vocabulary shared by the recording side (metrics/) and the sink
// interface (base/record.hpp): ids, sources, and the views sinks receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace loupe {

/// Identifies a metric: a built-in one (`loupe::metrics::*`, metrics.hpp) or
/// one returned by `loupe::metric(name)`.
using metric_id = std::uint32_t;

/// The id of wall time, the metric every zone has (its duration): `loupe::metrics::wall_time`.
inline constexpr metric_id wall_time_metric_id = 0;

/// How many metrics a process can have, built-in ones included.
inline constexpr std::size_t max_metrics = 64;

/// How many metrics, over all sessions running at once, a zone can carry
/// (wall time, which every zone has, not counted).
inline constexpr std::size_t max_zone_metrics = 8;

/// How a metric's values reach loupe.
enum class metric_source : std::uint8_t {
    wall = 0,  ///< wall time: every zone's duration, always recorded
    push = 1,  ///< `metric_add` (and the allocation counters): per-thread and per-CPU accumulators
    pull = 2,  ///< read from the kernel per thread at zone entry and exit (CPU time, perf counters)
};

/// A metric a session records, as its sinks see it (session_info::metrics).
struct metric_info {
    metric_id id = 0;
    std::string_view name;
    std::string_view unit;  ///< "ns", "B", or empty
    metric_source source = metric_source::push;
    /// False when this machine cannot measure it (e.g. no hardware counters):
    /// the session runs without it and `unavailable_reason` says why.
    bool available = true;
    std::string_view unavailable_reason;
};

/// One metric's value: a zone's delta, or a thread's or CPU's total.
struct metric_value {
    metric_id id = 0;
    std::int64_t value = 0;
};

}  // namespace loupe
