// The calling thread's words of the metrics layer: its push-metric
// accumulator block and whether its allocations are counted. Trivially
// constructible, so a thread_local access is a plain TLS load.
//
// The core writes two of them (it owns threads' rings and exit): the loupe
// thread id once the thread has a ring, and `exiting` once the thread is
// past loupe's exit hook. Thread-safety: the calling thread's own state.
#pragma once

#include <cstdint>

#include "loupe/base/config.hpp"

namespace loupe::detail {

struct thread_metrics;  // registry.hpp

struct thread_metric_state {
    thread_metrics* block;     ///< push-metric accumulators (null until first use)
    std::uint32_t quiet;       ///< > 0: allocations are not counted (loupe's own, or the collector's)
    bool exiting;              ///< past loupe's thread-exit hook: deltas go to the shared overflow block
    std::uint64_t thread_id;   ///< loupe thread id while the thread has a ring (0: none)
};

LOUPE_API inline thread_local thread_metric_state t_metric_thread;

/// Marks loupe's own allocations on the calling thread, so the allocation
/// metrics (metrics/allocations.hpp) do not count them. Nests.
struct internal_allocation_scope {
    internal_allocation_scope() noexcept { ++t_metric_thread.quiet; }
    ~internal_allocation_scope() { --t_metric_thread.quiet; }
    internal_allocation_scope(const internal_allocation_scope&) = delete;
    internal_allocation_scope& operator=(const internal_allocation_scope&) = delete;
};

}  // namespace loupe::detail
