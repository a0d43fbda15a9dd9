// What a zone reads at entry and exit when sessions record metrics: the
// plan (the union of the running sessions' metrics), how each metric is
// read on the calling thread, and the ring unit that carries a zone with
// its deltas.
//
// Sources, cheapest correct one per metric (costs in README "Metrics"):
// - push metrics: the thread's own accumulator (a load);
// - cpu_time: clock_gettime(CLOCK_THREAD_CPUTIME_ID), a system call;
// - task_clock, cycles, instructions: one perf_event_open counter per thread
//   and metric (user space only, opened on the thread's first zone that
//   needs it, closed at thread exit), read with read(2).
#pragma once

#include "loupe/config.hpp"

#include <errno.h>
#include <time.h>
#include <unistd.h>
#if LOUPE_OS_LINUX
#    include <linux/perf_event.h>
#    include <sys/syscall.h>
#endif

#include <cstdint>
#include <cstring>
#include <string>

#include "loupe/detail/metric_registry.hpp"
#include "loupe/detail/ring.hpp"
#include "loupe/metric_types.hpp"

namespace loupe::detail {

/// Immutable once published; the runtime keeps every plan it made.
struct metric_plan {
    std::uint32_t count = 0;
    metric_id ids[max_zone_metrics] = {};
    metric_source sources[max_zone_metrics] = {};
};

/// Header of a zone-with-metrics unit: t0 = the plan's address, t1 = the
/// first metric's delta; the other deltas follow (8 bytes each, 4 a record),
/// then the zone record.
LOUPE_API inline constexpr site zone_metrics_marker{"loupe.zone_metrics", "", "", 0, site_kind::zone};

// ------------------------------------------------------------ perf counters

/// perf_event_open's event for a pull metric; false for metrics perf does not measure.
inline bool perf_event_for(metric_id id, std::uint32_t& type, std::uint64_t& config) noexcept {
#if LOUPE_OS_LINUX
    switch (id) {
        case 2: type = PERF_TYPE_SOFTWARE, config = PERF_COUNT_SW_TASK_CLOCK; return true;
        case 3: type = PERF_TYPE_HARDWARE, config = PERF_COUNT_HW_CPU_CYCLES; return true;
        case 4: type = PERF_TYPE_HARDWARE, config = PERF_COUNT_HW_INSTRUCTIONS; return true;
        default: return false;
    }
#else
    (void)id, (void)type, (void)config;
    return false;
#endif
}

/// Opens the calling thread's counter for `id`: a descriptor, or -errno.
inline int open_perf_counter(metric_id id) noexcept {
#if LOUPE_OS_LINUX
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    std::uint64_t config = 0;
    if (!perf_event_for(id, attr.type, config)) return -EINVAL;
    attr.config = config;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? static_cast<int>(fd) : -errno;
#else
    (void)id;
    return -ENOSYS;
#endif
}

/// Empty when the calling thread can measure pull metric `id`; otherwise why
/// not (for the trace and the session's error handler).
inline std::string pull_metric_unavailable(metric_id id, std::string_view name) {
    if (id == 1) {  // cpu_time
        timespec ts;
        if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return {};
        return "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed: " + std::string(std::strerror(errno));
    }
    const int fd = open_perf_counter(id);
    if (fd >= 0) {
        ::close(fd);
        return {};
    }
    std::string why = "perf_event_open(" + std::string(name) + ") failed: " + std::strerror(-fd);
    if (fd == -ENOENT || fd == -EOPNOTSUPP) {
        why += " (this kernel or hypervisor exposes no such counter)";
    } else if (fd == -EACCES || fd == -EPERM) {
        why += " (not permitted: see /proc/sys/kernel/perf_event_paranoid)";
    }
    return why;
}

// Slot of a perf metric in thread_metrics::perf_fd.
constexpr unsigned perf_slot(metric_id id) noexcept { return id - 2; }

/// The calling thread's current value of pull metric `id` (0 when it cannot
/// be read: the delta is then 0).
template <int = 0>
LOUPE_NOINLINE std::int64_t read_pull_metric(metric_id id, thread_metrics& b) noexcept {
    if (id == 1) {
        timespec ts;
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
    int& slot = b.perf_fd[perf_slot(id)];
    if (slot == 0) {
        const int fd = open_perf_counter(id);
        slot = fd >= 0 ? fd + 1 : -1;
    }
    std::uint64_t value = 0;
    if (slot < 0 || ::read(slot - 1, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) return 0;
    return static_cast<std::int64_t>(value);
}

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
template <int = 0>
LOUPE_NOINLINE const metric_plan* enter_zone_metrics(const metric_plan* plan) noexcept {
    thread_metrics* b = current_thread_metrics();
    if (b == &g_overflow_metrics || b->entry_top + plan->count > thread_metrics::entry_capacity) {
        return nullptr;
    }
    read_plan(*plan, *b, b->entry_values + b->entry_top);  // last thing at entry: loupe's own work stays outside
    b->entry_top += plan->count;
    return plan;
}

/// Packs a zone and its deltas (end − begin per plan metric) into `out`: a
/// header holding the plan and the first delta, the other deltas (4 a
/// record), the zone record. Returns the number of records: 2 for one
/// metric.
inline std::size_t pack_zone_with_metrics(const site* where, std::uint64_t t0, std::uint64_t t1,
                                          std::uint64_t sessions, const metric_plan& plan,
                                          const std::int64_t* begin, const std::int64_t* end,
                                          raw_record* out) noexcept {
    // Modular: a counter that wrapped still gives the right difference.
    auto delta = [&](std::uint32_t i) {
        return static_cast<std::uint64_t>(end[i]) - static_cast<std::uint64_t>(begin[i]);
    };
    out[0] = raw_record{&zone_metrics_marker, reinterpret_cast<std::uintptr_t>(&plan), delta(0), sessions};
    std::size_t n = 1;
    if (LOUPE_UNLIKELY(plan.count > 1)) {
        std::uint64_t rest[max_zone_metrics] = {};
        for (std::uint32_t i = 1; i < plan.count; ++i) rest[i - 1] = delta(i);
        const std::size_t records = ((plan.count - 1) * sizeof(std::uint64_t) + sizeof(raw_record) - 1) / sizeof(raw_record);
        std::memcpy(static_cast<void*>(out + 1), rest, records * sizeof(raw_record));
        n += records;
    }
    out[n] = raw_record{where, t0, t1, sessions};
    return n + 1;
}

/// The most records a zone-with-metrics unit takes.
inline constexpr std::size_t max_zone_metrics_records = 2 + ((max_zone_metrics - 1) * 8 + 31) / 32;

}  // namespace loupe::detail
