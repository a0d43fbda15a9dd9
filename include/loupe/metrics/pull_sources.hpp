// Where pull metrics come from, cheapest correct source per metric (costs
// in README "Metrics"):
// - cpu_time: the thread's CPU-time clock, clock_gettime(CLOCK_THREAD_CPUTIME_ID)
//   on the thread itself (a system call; other threads read it through
//   pthread_getcpuclockid's clock);
// - task_clock, cycles, instructions: one perf_event_open counter per thread
//   and metric (user space only, opened on the thread's first zone that
//   needs it, closed at thread exit), read with read(2).
#pragma once

#include "loupe/base/config.hpp"

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
#include <string_view>

#include "loupe/base/metric_types.hpp"

namespace loupe::detail {

// Ids of the pull metrics (loupe::metrics in metrics.hpp names them).
inline constexpr metric_id metric_cpu_time = 1;
inline constexpr metric_id first_perf_metric = 2;  // task_clock, cycles, instructions
inline constexpr unsigned pull_metric_count = 4;   // ids 1 to 4
// Slot of a perf metric in thread_metrics::perf_fd.
constexpr unsigned perf_slot(metric_id id) noexcept { return id - first_perf_metric; }

/// A CPU-time clock's reading in ns (0 if it cannot be read).
inline std::int64_t read_cpu_clock(clockid_t clock) noexcept {
    timespec ts;
    if (::clock_gettime(clock, &ts) != 0) return 0;
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// A perf counter's value, from its descriptor + 1 (0 when not open or unreadable).
inline std::int64_t read_perf_counter(int fd_plus_one) noexcept {
    std::uint64_t value = 0;
    if (fd_plus_one <= 0 || ::read(fd_plus_one - 1, &value, sizeof value) != static_cast<ssize_t>(sizeof value)) return 0;
    return static_cast<std::int64_t>(value);
}

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
    if (id == metric_cpu_time) {
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

}  // namespace loupe::detail
