// The few process-wide words the hot path reads. Kept apart from the heavy
// runtime so that `LOUPE_ZONE` compiles to one relaxed load and a branch when
// nothing records.
#pragma once

// Programs that only read traces (the CLI, reports, viewers) must not pull
// in the recorder: a translation unit that defines LOUPE_READER_ONLY fails
// here if any recorder header reaches it (tests/layout).
#if defined(LOUPE_READER_ONLY)
#    error "a reader-only translation unit included a recorder header (loupe/core/...)"
#endif

#include <atomic>
#include <cstdint>

#include "loupe/base/config.hpp"

namespace loupe::detail {

inline constexpr int max_sessions = 64;

struct metric_plan;  // core/zone_metrics.hpp

struct alignas(64) hot_state {
    /// OR of the `kinds` of every active session: the "armed?" test.
    std::atomic<std::uint32_t> armed{0};
    /// True when ticks are TSC readings (set before the first session arms).
    std::atomic<bool> use_tsc{false};
    /// Bumped whenever the set of sessions changes; threads recompute their
    /// cached per-kind session masks when they see a new value.
    std::atomic<std::uint64_t> epoch{1};
    /// Session slots whose overflow policy is `block`.
    std::atomic<std::uint64_t> block_slots{0};
    /// Session slots that are active, and what each one records.
    std::atomic<std::uint64_t> active_slots{0};
    std::atomic<std::uint32_t> slot_kinds[max_sessions] = {};
    /// The epoch that published each slot's latest session (its start):
    /// threads that looked before it have written nothing to that session.
    std::atomic<std::uint64_t> slot_start_epoch[max_sessions] = {};
    /// Active session slots that have a thread filter.
    std::atomic<std::uint64_t> filtered_slots{0};
    /// Ring size (bytes) that a thread acquiring a ring now should get.
    std::atomic<std::uint64_t> ring_bytes{1u << 20};
    /// Active session slots that record metrics, and the metrics their zones
    /// read (the union; null when none).
    std::atomic<std::uint64_t> metric_slots{0};
    std::atomic<const metric_plan*> plan{nullptr};
    /// While the collector pauses between passes: what wakes it early (set
    /// by the collector, core/detail/collector.hpp). A producer whose ring
    /// passes half full takes it and calls it (ring::fits_slow); null when
    /// the collector is not pausing. A line of its own: the collector
    /// writes it twice a pass, the producers read the lines above per event.
    alignas(64) std::atomic<void (*)() noexcept> paused_collector_wake{nullptr};
};

/// The one instance per process. Default visibility (LOUPE_API) makes the
/// dynamic linker bind every shared library that includes loupe to it.
LOUPE_API inline hot_state g_hot;

}  // namespace loupe::detail
