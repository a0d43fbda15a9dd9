// Process-wide metric state (US 6,904,594, "apportioning changes in metric
// variables"): the table of metric names, the per-processor data areas and
// the per-thread accumulators.
//
// - Per-thread: one `thread_metrics` block per thread that ever used a push
//   metric or recorded a zone with metrics. Its owner writes it with plain
//   relaxed load+store (no locked instruction); others read it. Blocks live
//   in the registry, so the collector reads a thread's totals after the
//   thread exited; a block of an exited thread is reused by a new thread only
//   while no metric session runs, which bounds memory by the threads alive
//   at once plus those that exited during a metric session.
// - Per-processor: one cache-line aligned row of `max_metrics` counters per
//   CPU. With rseq (x86-64, glibc >= 2.35) the add is a plain add committed
//   only while the thread still runs on the row's CPU (rseq_add.hpp): every
//   row is exact. Without it, a relaxed atomic add to the row of the CPU
//   sched_getcpu() named: a thread that migrates in between puts the delta
//   in the row of the CPU it just left; the sum of all rows (the process
//   total) stays exact either way.
#pragma once

#include "loupe/base/config.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#if LOUPE_OS_LINUX
#    include <sys/syscall.h>
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/metrics/pull_sources.hpp"
#include "loupe/metrics/detail/rseq_add.hpp"
#include "loupe/metrics/thread_metric_state.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/fork_hooks.hpp"


namespace loupe {

namespace detail {

struct metric_definition {
    char name[48];
    char unit[16];
    metric_source source;
};

/// One thread's push-metric accumulators (Cum(M,t) in the patent) and what
/// others need to read its pull metrics.
struct alignas(64) thread_metrics {
    std::atomic<std::int64_t> value[max_metrics];
    std::atomic<bool> exited;
    std::uint64_t os_tid;
    std::atomic<std::uint64_t> thread_id;  ///< loupe thread id once the thread has a ring (0: not yet)
    /// Perf counters of task_clock, cycles, instructions: descriptor + 1,
    /// 0 not opened yet, -1 could not be opened. The owner opens them;
    /// others read them under the registry's mutex (the owner closes them
    /// at exit under it too).
    std::atomic<int> perf_fd[3];
    // Written at attach and at exit under the registry's mutex:
    clockid_t cpu_clock;                          ///< the owner's CPU-time clock, for other threads
    bool cpu_clock_valid;
    std::int64_t cpu_at_attach;                   ///< its reading when the block was attached
    std::int64_t pull_at_exit[pull_metric_count];  ///< pull metrics' last values (ids 1-4), once exited
    /// Owner only: the metric values read at the entry of each open zone
    /// that carries metrics, innermost last (zones nest, so a stack).
    static constexpr std::uint32_t entry_capacity = 1024;
    std::uint32_t entry_top;
    std::int64_t entry_values[entry_capacity];

    /// Owner thread only: Cum(m,t) += delta, without a locked instruction.
    void add(metric_id id, std::int64_t delta) noexcept {
        value[id].store(value[id].load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    }
};

/// One CPU's row of push-metric totals (PCum(M,p)), on its own cache lines.
struct alignas(64) cpu_metrics {
    std::atomic<std::int64_t> value[max_metrics];
};

class metric_registry {
public:
    metric_registry() {
        const long n = ::sysconf(_SC_NPROCESSORS_CONF);
        cpus_ = n > 0 ? static_cast<std::size_t>(n) : 1;
        // One extra row for CPU numbers beyond the configured count (hotplug).
        rows_ = static_cast<cpu_metrics*>(std::calloc(cpus_ + 1, sizeof(cpu_metrics)));
        if (!rows_) throw std::bad_alloc();
        define_builtin();
    }

    // ----------------------------------------------------------- the table

    /// The id of `name`, registering it (as a push metric with `unit`) if it
    /// is new. Throws loupe::error for an invalid name or a full table.
    metric_id define(std::string_view name, std::string_view unit);
    /// The id of `name`, or -1 when no metric has that name.
    long find(std::string_view name) const noexcept {
        const std::size_t n = count_.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < n; ++i) {
            if (name == defs_[i].name) return static_cast<long>(i);
        }
        return -1;
    }
    std::size_t count() const noexcept { return count_.load(std::memory_order_acquire); }
    const metric_definition& definition(metric_id id) const noexcept { return defs_[id]; }
    /// Every defined name, for error messages.
    std::string names() const {
        std::string out;
        for (std::size_t i = 0; i < count(); ++i) {
            if (i) out += ", ";
            out += defs_[i].name;
        }
        return out;
    }

    // ---------------------------------------------------------- per CPU

    std::size_t cpus() const noexcept { return cpus_; }
    /// PCum(m,p) += delta for the CPU the caller runs on: with rseq, a plain
    /// add committed only while still on that CPU (retried after a
    /// preemption); otherwise a relaxed atomic add to the row of the CPU
    /// read just before. Rows of CPUs beyond the configured count share the
    /// last row, which is only ever updated atomically.
    LOUPE_ALWAYS_INLINE void add_on_this_cpu(metric_id id, std::int64_t delta) noexcept {
#if LOUPE_HAS_RSEQ_ADD
        if (LOUPE_LIKELY(use_rseq_)) {
            for (;;) {
                const std::uint32_t cpu = rseq_cpu_id();
                if (LOUPE_UNLIKELY(cpu >= cpus_)) break;  // beyond the rows, or no rseq area
                // The row's storage is a plain int64 that other threads read atomically.
                if (LOUPE_LIKELY(rseq_add_on_cpu(reinterpret_cast<std::int64_t*>(&rows_[cpu].value[id]), delta, cpu))) {
                    return;
                }
            }
            rows_[cpus_].value[id].fetch_add(delta, std::memory_order_relaxed);
            return;
        }
#endif
        rows_[current_cpu_row()].value[id].fetch_add(delta, std::memory_order_relaxed);
    }
    /// Row `cpu` (0..cpus(), the last one being CPUs beyond the configured count).
    std::int64_t cpu_value(std::size_t cpu, metric_id id) const noexcept {
        return rows_[cpu].value[id].load(std::memory_order_relaxed);
    }
    /// Σ over CPUs: Total(m).
    std::int64_t total(metric_id id) const noexcept {
        std::int64_t sum = 0;
        for (std::size_t c = 0; c <= cpus_; ++c) sum += cpu_value(c, id);
        return sum;
    }

    std::size_t current_cpu_row() const noexcept {
        const unsigned cpu = current_cpu();
        return cpu < cpus_ ? cpu : cpus_;
    }

    static unsigned current_cpu() noexcept {
#if LOUPE_HAS_RSEQ_ADD
        if (rseq_registered()) {
            const std::uint32_t cpu = rseq_cpu_id();
            if (static_cast<std::int32_t>(cpu) >= 0) return cpu;
        }
#endif
#if LOUPE_OS_LINUX
        const int cpu = ::sched_getcpu();
        return cpu >= 0 ? static_cast<unsigned>(cpu) : 0u;
#else
        return 0;
#endif
    }

    // ------------------------------------------------------- per thread

    /// The calling thread's block, attaching one on first use. Never null:
    /// when no block can be had (out of memory), g_overflow_metrics.
    thread_metrics* attach_current_thread() noexcept;
    /// Thread exit: marks the block reusable once no metric session runs.
    void detach(thread_metrics* b) noexcept {
        b->exited.store(true, std::memory_order_release);
    }
    /// Pull metric `id` of the thread owning `b` (its last value if it
    /// exited; 0 when it cannot be read). The caller holds mutex().
    static std::int64_t pull_value_locked(const thread_metrics& b, metric_id id) noexcept {
        if (b.exited.load(std::memory_order_acquire)) return b.pull_at_exit[id - metric_cpu_time];
        if (id == metric_cpu_time) return b.cpu_clock_valid ? read_cpu_clock(b.cpu_clock) : 0;
        return read_perf_counter(b.perf_fd[perf_slot(id)].load(std::memory_order_relaxed));
    }
    /// What pull metric `id` read for `b` before it counted for a session
    /// that started before the block was attached: its CPU time then; perf
    /// counters start at 0 when opened.
    static std::int64_t pull_origin(const thread_metrics& b, metric_id id) noexcept {
        return id == metric_cpu_time ? b.cpu_at_attach : 0;
    }
    /// Calls f(block) for every block; the caller holds mutex().
    template <class F>
    void for_each_thread_locked(F&& f) {
        for (thread_metrics* b : blocks_) f(*b);
    }
    /// Sessions recording metrics: blocks of exited threads are not reused
    /// while one runs (its totals still need them).
    void metric_session_started_locked() noexcept { ++metric_sessions_; }
    void metric_session_finished_locked() noexcept {
        if (metric_sessions_ > 0) --metric_sessions_;
    }
    std::mutex& mutex() noexcept { return mutex_; }

    /// In a forked child, with mutex() held since before the fork (the
    /// registry's fork step): the child has no metric session and no thread
    /// but the calling one, so the blocks of the parent's other threads are
    /// marked exited (reusable, their totals fixed at 0, their perf counters
    /// closed) and the mutex released.
    void after_fork_in_child() noexcept {
        metric_sessions_ = 0;
        const thread_metrics* const mine = t_metric_thread.block;
        for (thread_metrics* b : blocks_) {
            if (b == mine || b->exited.load(std::memory_order_relaxed)) continue;
            for (std::int64_t& v : b->pull_at_exit) v = 0;
            for (std::atomic<int>& fd : b->perf_fd) {  // the child's copies of the parent thread's counters
                if (fd.load(std::memory_order_relaxed) > 0) ::close(fd.load(std::memory_order_relaxed) - 1);
                fd.store(0, std::memory_order_relaxed);
            }
            b->exited.store(true, std::memory_order_release);
        }
        mutex_.unlock();
    }

private:
    void define_builtin() noexcept;
    metric_definition defs_[max_metrics] = {};
    std::atomic<std::size_t> count_{0};
    std::size_t cpus_ = 1;
    cpu_metrics* rows_ = nullptr;
#if LOUPE_HAS_RSEQ_ADD
    bool use_rseq_ = rseq_registered();
#endif

    std::mutex mutex_;  // guards blocks_, metric_sessions_ and defining metrics
    std::vector<thread_metrics*> blocks_;
    unsigned metric_sessions_ = 0;
    pthread_key_t exit_key_{};
    bool exit_key_ok_ = false;
};

/// Takes the deltas of threads that cannot have a block of their own (out of
/// memory, exiting); shared, so its values are approximate.
LOUPE_API inline thread_metrics g_overflow_metrics{};

/// The one registry per process once made (null before), and the lock it is
/// made under. Not a function-local static: fork() must be able to wait for
/// a creation in progress (fork_hooks.hpp).
LOUPE_API inline std::atomic<metric_registry*> g_metric_registry{nullptr};
LOUPE_API inline std::mutex& metric_registry_creation_mutex() {
    // Never destroyed: used at exit and in fork handlers. Not counted: a
    // counted allocation would ask for the registry, which needs this lock.
    static std::mutex* m = [] {
        internal_allocation_scope internal;
        return new std::mutex;
    }();
    return *m;
}

LOUPE_NOINLINE inline metric_registry& create_metrics_registry() {
    internal_allocation_scope internal;
    std::lock_guard<std::mutex> lock(metric_registry_creation_mutex());
    metric_registry* r = g_metric_registry.load(std::memory_order_relaxed);
    if (r == nullptr) {
        r = new metric_registry;
        g_metric_registry.store(r, std::memory_order_release);
    }
    return *r;
}

/// The one registry per process, created on first use and never destroyed
/// (allocation hooks and thread-exit hooks may use it during exit).
LOUPE_API inline metric_registry& metrics_registry() {
    metric_registry* r = g_metric_registry.load(std::memory_order_acquire);
    if (LOUPE_LIKELY(r != nullptr)) return *r;
    return create_metrics_registry();
}

// fork() (fork_hooks.hpp; the last rank: nothing is locked under the
// registry's mutex): the creation lock, then the mutex.
inline void metric_registry_fork_prepare() noexcept {
    metric_registry_creation_mutex().lock();
    if (metric_registry* r = g_metric_registry.load(std::memory_order_acquire)) r->mutex().lock();
}
inline void metric_registry_fork_parent() noexcept {
    if (metric_registry* r = g_metric_registry.load(std::memory_order_acquire)) r->mutex().unlock();
    metric_registry_creation_mutex().unlock();
}
inline void metric_registry_fork_child() noexcept {
    if (metric_registry* r = g_metric_registry.load(std::memory_order_acquire)) r->after_fork_in_child();
    metric_registry_creation_mutex().unlock();
}
inline constexpr fork_step metric_registry_fork_step{&metric_registry_fork_prepare, &metric_registry_fork_parent,
                                                     &metric_registry_fork_child};
LOUPE_DETAIL_SHARED_FORK_STEP(metric_registry_fork_step_registered, fork_rank::metric_registry,
                              metric_registry_fork_step);

/// The calling thread's accumulator block (never null).
LOUPE_ALWAYS_INLINE thread_metrics* current_thread_metrics() noexcept {
    thread_metrics* b = t_metric_thread.block;
    if (LOUPE_LIKELY(b != nullptr)) return b;
    return metrics_registry().attach_current_thread();
}

}  // namespace detail
}  // namespace loupe

// ------------------------------------------------------------------ bodies

namespace loupe::detail {

inline void metric_registry::define_builtin() noexcept {
    struct builtin {
        const char* name;
        const char* unit;
        metric_source source;
    };
    // Order = the ids in loupe::metrics (metrics/metric.hpp).
    static constexpr builtin table[] = {
        {"wall_time", "ns", metric_source::wall},    {"cpu_time", "ns", metric_source::pull},
        {"task_clock", "ns", metric_source::pull},   {"cycles", "", metric_source::pull},
        {"instructions", "", metric_source::pull},   {"alloc_bytes", "B", metric_source::push},
        {"alloc_count", "", metric_source::push},    {"free_bytes", "B", metric_source::push},
        {"free_count", "", metric_source::push},
    };
    std::size_t i = 0;
    for (const builtin& b : table) {
        std::strncpy(defs_[i].name, b.name, sizeof defs_[i].name - 1);
        std::strncpy(defs_[i].unit, b.unit, sizeof defs_[i].unit - 1);
        defs_[i].source = b.source;
        ++i;
    }
    count_.store(i, std::memory_order_release);
}

inline metric_id metric_registry::define(std::string_view name, std::string_view unit) {
    const std::string shown = "loupe::metric(\"" + std::string(name) + "\")";
    if (name.empty()) throw error(shown + ": the name is empty: expected 1 to 47 letters, digits, '_', '.' or '-'");
    if (name.size() >= sizeof(metric_definition::name)) {
        throw error(shown + ": the name has " + std::to_string(name.size()) + " characters: expected at most 47");
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '.' || c == '-';
        if (!ok) {
            throw error(shown + ": character '" + std::string(1, c) + "' at position " + std::to_string(i) +
                        " is not allowed: expected letters, digits, '_', '.' or '-'");
        }
    }
    if (unit.size() >= sizeof(metric_definition::unit)) {
        throw error(shown + ": the unit \"" + std::string(unit) + "\" is longer than 15 characters");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const long known = find(name);
    if (known >= 0) {
        if (defs_[known].source != metric_source::push) {
            throw error(shown + ": \"" + std::string(name) +
                        "\" is a built-in metric that loupe measures itself; choose another name");
        }
        return static_cast<metric_id>(known);
    }
    const std::size_t n = count_.load(std::memory_order_relaxed);
    if (n >= max_metrics) {
        throw error(shown + ": the process already has " + std::to_string(max_metrics) +
                    " metrics (built-in ones included), the most loupe keeps");
    }
    name.copy(defs_[n].name, name.size());
    unit.copy(defs_[n].unit, unit.size());  // (an empty view may have a null data())
    defs_[n].source = metric_source::push;
    count_.store(n + 1, std::memory_order_release);
    return static_cast<metric_id>(n);
}

namespace metric_registry_detail {
// Thread exit: keeps the pull metrics' last values for the totals, closes
// the perf counters, and marks the block reusable.
inline void on_thread_exit(void* p) noexcept {
    metric_registry& r = metrics_registry();
    // Later deltas of this thread (other exit hooks that allocate) go to the
    // overflow block: the thread's own block may be reused from now on.
    t_metric_thread.block = &g_overflow_metrics;
    auto* b = static_cast<thread_metrics*>(p);
    std::lock_guard<std::mutex> lock(r.mutex());
    b->pull_at_exit[0] = read_cpu_clock(CLOCK_THREAD_CPUTIME_ID);
    for (metric_id id = first_perf_metric; id < metric_cpu_time + pull_metric_count; ++id) {
        std::atomic<int>& fd = b->perf_fd[perf_slot(id)];
        b->pull_at_exit[id - metric_cpu_time] = read_perf_counter(fd.load(std::memory_order_relaxed));
        if (fd.load(std::memory_order_relaxed) > 0) ::close(fd.load(std::memory_order_relaxed) - 1);
        fd.store(0, std::memory_order_relaxed);
    }
    r.detach(b);
}
}  // namespace metric_registry_detail

inline thread_metrics* metric_registry::attach_current_thread() noexcept {
    thread_metric_state& ts = t_metric_thread;
    if (ts.exiting) return ts.block = &g_overflow_metrics;
    internal_allocation_scope guard;
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        thread_metrics* b = nullptr;
        if (metric_sessions_ == 0) {
            for (thread_metrics* old : blocks_) {
                if (old->exited.load(std::memory_order_acquire)) {
                    b = old;
                    for (auto& v : b->value) v.store(0, std::memory_order_relaxed);
                    b->exited.store(false, std::memory_order_relaxed);
                    break;
                }
            }
        }
        if (!b) {
            void* raw = std::aligned_alloc(alignof(thread_metrics), sizeof(thread_metrics));
            if (!raw) return ts.block = &g_overflow_metrics;
            b = new (raw) thread_metrics{};
            try {
                blocks_.push_back(b);
            } catch (...) {
                b->~thread_metrics();
                std::free(raw);
                return ts.block = &g_overflow_metrics;
            }
        }
#if LOUPE_OS_LINUX
        b->os_tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
#endif
        b->thread_id.store(ts.thread_id, std::memory_order_relaxed);
        b->cpu_clock_valid = pthread_getcpuclockid(pthread_self(), &b->cpu_clock) == 0;
        b->cpu_at_attach = read_cpu_clock(CLOCK_THREAD_CPUTIME_ID);
        if (!exit_key_ok_) exit_key_ok_ = pthread_key_create(&exit_key_, &metric_registry_detail::on_thread_exit) == 0;
        if (exit_key_ok_) pthread_setspecific(exit_key_, b);
        return ts.block = b;
    } catch (...) {  // the lock failed
        return ts.block = &g_overflow_metrics;
    }
}

}  // namespace loupe::detail
