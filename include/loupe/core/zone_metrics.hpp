// What a zone reads at entry and exit when sessions record metrics: the
// plan (the union of the running sessions' metrics), how each metric is
// read on the calling thread, and the ring unit that carries a zone with
// its deltas.
//
// Push metrics are the thread's own accumulator (a load); pull metrics come
// from pull_sources.hpp.
#pragma once

#include "loupe/base/config.hpp"

#include <cstdint>
#include <cstring>

#include "loupe/metrics/registry.hpp"
#include "loupe/metrics/pull_sources.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/base/metric_types.hpp"

namespace loupe::detail {

/// Immutable once published; the runtime keeps every plan it made.
struct metric_plan {
    std::uint32_t count = 0;
    metric_id ids[max_zone_metrics] = {};
    metric_source sources[max_zone_metrics] = {};
};

/// Header of a zone-with-metrics unit: t0 = the plan's address, t1 = the
/// first metric's delta; the other deltas follow (8 bytes each, 4 a record),
/// then the zone record. Its kind is none of the plain events', so the
/// collector's batch of plain events stops at it with the same one table
/// load that tells a zone from an instant.
LOUPE_API inline constexpr site zone_metrics_marker{"loupe.zone_metrics", "", "", 0, site_kind::zone_metrics};

/// The calling thread's current value of pull metric `id` (0 when it cannot
/// be read: the delta is then 0).
template <int = 0>
LOUPE_NOINLINE std::int64_t read_pull_metric(metric_id id, thread_metrics& b) noexcept {
    if (id == metric_cpu_time) return read_cpu_clock(CLOCK_THREAD_CPUTIME_ID);
    std::atomic<int>& slot = b.perf_fd[perf_slot(id)];
    if (slot.load(std::memory_order_relaxed) == 0) {
        const int fd = open_perf_counter(id);
        slot.store(fd >= 0 ? fd + 1 : -1, std::memory_order_relaxed);
    }
    return read_perf_counter(slot.load(std::memory_order_relaxed));
}
LOUPE_DETAIL_SHARED_INSTANCE(std::int64_t read_pull_metric<0>(metric_id, thread_metrics&) noexcept);

/// Reads every metric of `plan` on the calling thread into `out`.
inline void read_plan(const metric_plan& plan, thread_metrics& b, std::int64_t* out) noexcept {
    for (std::uint32_t i = 0; i < plan.count; ++i) {
        out[i] = LOUPE_LIKELY(plan.sources[i] == metric_source::push)
                     ? b.value[plan.ids[i]].load(std::memory_order_relaxed)
                     : read_pull_metric(plan.ids[i], b);
    }
}

/// Zone entry: pushes the values of `plan`'s metrics on the calling thread's
/// entry stack. Returns `plan`, or null when the zone cannot carry metrics
/// (nested deeper than the stack holds, or the thread has no block of its
/// own): it is then recorded without them.
inline const metric_plan* read_zone_entry_metrics(const metric_plan* plan) noexcept {
    thread_metrics* b = current_thread_metrics();
    if (b == &g_overflow_metrics || b->entry_top + plan->count > thread_metrics::entry_capacity) {
        return nullptr;
    }
    read_plan(*plan, *b, b->entry_values + b->entry_top);  // last thing at entry: loupe's own work stays outside
    b->entry_top += plan->count;
    return plan;
}

/// Records pack_metric_deltas writes for `plan`: the header, then the deltas
/// after the first, 4 a record.
constexpr std::size_t metric_delta_records(const metric_plan& plan) noexcept {
    return 1 + ((plan.count - 1) * sizeof(std::uint64_t) + 31) / 32;
}

/// Packs the deltas (end − begin per plan metric) of the zone or method call
/// that follows into `out`: a header holding the plan and the first delta,
/// then the other deltas (4 a record). The collector holds them for the next
/// zone record or method-call unit of the ring. Returns the number of records.
inline std::size_t pack_metric_deltas(std::uint64_t sessions, const metric_plan& plan, const std::int64_t* begin,
                                      const std::int64_t* end, raw_record* out) noexcept {
    // Modular: a counter that wrapped still gives the right difference.
    auto delta = [&](std::uint32_t i) {
        return static_cast<std::uint64_t>(end[i]) - static_cast<std::uint64_t>(begin[i]);
    };
    out[0] = raw_record{&zone_metrics_marker, reinterpret_cast<std::uintptr_t>(&plan), delta(0), sessions};
    const std::size_t n = metric_delta_records(plan);
    if (LOUPE_UNLIKELY(n > 1)) {
        std::uint64_t rest[max_zone_metrics] = {};
        for (std::uint32_t i = 1; i < plan.count; ++i) rest[i - 1] = delta(i);
        std::memcpy(static_cast<void*>(out + 1), rest, (n - 1) * sizeof(raw_record));
    }
    return n;
}

/// Packs a zone and its deltas into `out`: the deltas (pack_metric_deltas),
/// then the zone record. Returns the number of records: 2 for one metric.
inline std::size_t pack_zone_with_metrics(const site* where, std::uint64_t t0, std::uint64_t t1,
                                          std::uint64_t sessions, const metric_plan& plan,
                                          const std::int64_t* begin, const std::int64_t* end,
                                          raw_record* out) noexcept {
    const std::size_t n = pack_metric_deltas(sessions, plan, begin, end, out);
    out[n] = raw_record{where, t0, t1, sessions};
    return n + 1;
}

/// The most records a zone-with-metrics unit takes.
inline constexpr std::size_t max_zone_metrics_records = 2 + ((max_zone_metrics - 1) * 8 + 31) / 32;

}  // namespace loupe::detail
