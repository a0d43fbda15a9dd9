// The recorder as instrumentation and capabilities see it: the hot-path
// tests (armed? wanted?), the clock, the push into the calling thread's ring,
// and the runtime's slow paths behind one table of function pointers.
//
// Why a table: a file that only instruments must not compile the runtime
// (collector, session registry, filter parser, sinks). The runtime
// (core/detail/runtime.hpp, brought in by <loupe/session.hpp>) fills
// `g_recorder` when it is created, before any session arms; until then
// nothing is armed and no slow path runs. The hot path itself calls no hook:
// a recorded event with room in its ring is one inline store.
//
// Cost: nothing recording, one relaxed load and a branch; recording, two
// clock reads and a 32-byte store; a slow path (a thread's first event, a
// session change, a full ring) costs one more indirect call.
// Thread-safety: every function acts on the calling thread's own state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "loupe/base/clock.hpp"
#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/base/site.hpp"
#include "loupe/core/detail/hot_state.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/core/detail/thread_state.hpp"
#include "loupe/metrics/thread_metric_state.hpp"

namespace loupe::detail {

struct metric_plan;  // core/zone_metrics.hpp

enum class push_outcome { pushed, no_ring, full };

/// The runtime's slow paths, null until the runtime fills them (no runtime:
/// nothing can be armed), so a file that only instruments compiles no
/// stand-ins. Only refresh_sessions is tested for null: a thread has session
/// slots and a metric plan only from the runtime's refresh_sessions, which
/// the runtime installs last, so whoever reaches another hook sees it set.
struct recorder_hooks {
    /// Re-evaluates which sessions record the calling thread (its epoch is stale).
    std::atomic<std::uint64_t (*)(thread_state&, site_kind) noexcept> refresh_sessions;
    /// Pushes `n` records as one unit into the calling thread's ring, getting
    /// the thread a ring first and waiting for room when one of `sessions`
    /// has the block policy. A unit larger than the whole ring is never
    /// pushed nor waited for: it comes back `full` at once, to be counted.
    std::atomic<push_outcome (*)(thread_state&, std::uint64_t sessions, const raw_record*, std::size_t n) noexcept>
        push_records;
    /// Counts one event of `sessions` that could not be pushed.
    std::atomic<void (*)(thread_state&, push_outcome, std::uint64_t sessions) noexcept> count_lost;
    /// Zone entry with metrics: reads `plan`'s metrics (null: the zone carries none).
    std::atomic<const metric_plan* (*)(const metric_plan*) noexcept> enter_zone_metrics;
    /// Zone exit with metrics: reads them again and pushes the zone with its deltas.
    std::atomic<void (*)(const site*, std::uint64_t t0, std::uint64_t sessions, const metric_plan&) noexcept>
        push_zone_with_metrics;
    /// Of `sessions`, those whose task rules tag a call to `peer` named `name`
    /// (core/task_rules.hpp).
    std::atomic<std::uint64_t (*)(std::uint64_t sessions, std::string_view peer, std::string_view name) noexcept>
        tagging;
};

/// One table per process (default visibility: shared libraries share it).
LOUPE_API inline recorder_hooks g_recorder{};

/// Session slots whose task rules (core/task_rules.hpp) may leave a call
/// untagged: only calls recorded for one of them ask recorder_hooks::tagging.
LOUPE_API inline std::atomic<std::uint64_t> g_task_rules_slots{0};

/// The process's tick clock once calibrated (null before), and the lock its
/// one calibration runs under. Not a function-local static: fork() must be
/// able to wait for a calibration in progress (fork_hooks.hpp), and a child
/// forked in the middle of one must not find its guard taken forever.
LOUPE_API inline std::atomic<const tick_clock*> g_process_clock{nullptr};
LOUPE_API inline std::mutex& clock_calibration_mutex() {
    static std::mutex* m = [] {  // never destroyed: used at exit and in fork handlers
        internal_allocation_scope internal;
        return new std::mutex;
    }();
    return *m;
}

/// Calibrates the process clock (~20 ms) unless another thread did; those
/// that come meanwhile wait for it.
LOUPE_NOINLINE inline const tick_clock& calibrate_process_clock() {
    internal_allocation_scope internal;  // loupe's memory, not the host's
    std::lock_guard<std::mutex> lock(clock_calibration_mutex());
    const tick_clock* c = g_process_clock.load(std::memory_order_relaxed);
    if (c == nullptr) {
        c = new tick_clock;
        // From here on read_ticks() (hot paths, the io registry) uses the
        // same ticks that this clock converts.
        g_hot.use_tsc.store(c->uses_tsc(), std::memory_order_relaxed);
        g_process_clock.store(c, std::memory_order_release);
    }
    return *c;
}

/// The process's tick clock, calibrated on first use and kept across fork
/// (the child runs on the same TSC). Calibrated: one load and a branch.
LOUPE_API inline const tick_clock& process_clock() {
    const tick_clock* c = g_process_clock.load(std::memory_order_acquire);
    if (LOUPE_LIKELY(c != nullptr)) return *c;
    return calibrate_process_clock();
}

// fork() (fork_hooks.hpp): a calibration in progress ends before the fork,
// so the child finds the clock either calibrated or never started. The two
// places that calibrate register this step at static initialisation: the
// runtime (core/detail/process_hooks.hpp) and the I/O wrappers
// (io/run_op.hpp); files that only instrument register nothing, so they
// carry no static initialiser (nor does a file compiled out).
inline void clock_fork_prepare() noexcept { clock_calibration_mutex().lock(); }
inline void clock_fork_release() noexcept { clock_calibration_mutex().unlock(); }
inline constexpr fork_step clock_fork_step{&clock_fork_prepare, &clock_fork_release, &clock_fork_release};

/// The kinds some active session records (the "armed?" test).
LOUPE_ALWAYS_INLINE std::uint32_t armed() noexcept { return g_hot.armed.load(std::memory_order_relaxed); }

// Out of line, so that every call site stays one call. A thread that sees
// a session armed before it sees the runtime's hooks treats its event as one
// that came before the session started.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART std::uint64_t refresh_sessions(thread_state& ts, site_kind kind) noexcept {
    const auto f = g_recorder.refresh_sessions.load(std::memory_order_acquire);
    return f ? f(ts, kind) : 0;
}
#else
// Compiled by the implementation file alone (base/config.hpp).
std::uint64_t refresh_sessions(thread_state& ts, site_kind kind) noexcept;
#endif

/// The session slots that want events of `kind` from this thread (0: none).
LOUPE_ALWAYS_INLINE std::uint64_t sessions_for(site_kind kind) noexcept {
    thread_state& ts = t_state;
    if (LOUPE_UNLIKELY(ts.epoch != g_hot.epoch.load(std::memory_order_relaxed))) {
        return refresh_sessions(ts, kind);
    }
    return ts.sessions_by_kind[static_cast<unsigned>(kind)];
}

// Out of line, so that a site inlines only the TSC read: CLOCK_MONOTONIC
// when the TSC is not usable.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART std::uint64_t steady_ticks() noexcept { return steady_ns(); }
#else
// Compiled by the implementation file alone (base/config.hpp).
std::uint64_t steady_ticks() noexcept;
#endif

LOUPE_ALWAYS_INLINE std::uint64_t read_ticks() noexcept {
    return LOUPE_LIKELY(g_hot.use_tsc.load(std::memory_order_relaxed)) ? tick_clock::rdtsc() : steady_ticks();
}

/// Counts one event of `sessions` that was not pushed (`outcome`).
inline void count_lost(thread_state& ts, push_outcome outcome, std::uint64_t sessions) noexcept {
    g_recorder.count_lost.load(std::memory_order_acquire)(ts, outcome, sessions);
}

/// Pushes `n` records as one unit (see recorder_hooks::push_records).
inline push_outcome push_records(thread_state& ts, std::uint64_t sessions, const raw_record* unit,
                                 std::size_t n) noexcept {
    return g_recorder.push_records.load(std::memory_order_acquire)(ts, sessions, unit, n);
}

/// Pushes `n` records as one unit and counts the event as lost for
/// `sessions` when it could not be pushed. Returns true when it was pushed.
inline bool push_or_count(thread_state& ts, std::uint64_t sessions, const raw_record* unit, std::size_t n) noexcept {
    const push_outcome outcome = push_records(ts, sessions, unit, n);
    if (LOUPE_LIKELY(outcome == push_outcome::pushed)) return true;
    count_lost(ts, outcome, sessions);
    return false;
}

/// Writes a unit of `n` records (at most N) through `fill(raw_record* out)`:
/// straight into the thread's ring when it has room without wrapping, else
/// into a local copy pushed through push_or_count (which waits for a
/// `block` session or counts the unit lost). `fill` runs once.
/// `PrefetchAhead`: for units that fill the ring quickly, also hints the
/// ring's lines ahead (ring::prefetch_ahead_for_write).
template <std::size_t N, bool PrefetchAhead = false, class Fill>
LOUPE_ALWAYS_INLINE void write_unit(std::uint64_t sessions, std::size_t n, Fill&& fill) noexcept {
    thread_state& ts = t_state;
    raw_record local[N];
    ring* rg = ts.owned_ring;
    raw_record* slots = rg != nullptr ? rg->try_reserve(n) : nullptr;
    fill(slots != nullptr ? slots : local);
    if (LOUPE_LIKELY(slots != nullptr)) {
        if constexpr (PrefetchAhead) rg->prefetch_ahead_for_write();
        rg->commit(n);
        return;
    }
    push_or_count(ts, sessions, local, n);
}

// A busy thread's ring grows: the collector, finding a ring at least half
// full when it drains it, makes a larger successor (runtime::grow_rings_locked,
// within the sessions' memory_budget) and hangs it on the ring; the owning
// thread moves to it the next time its ring is full. The full ring is
// retired and drained to its end before the successor, so the thread's
// records keep their order. The move swaps a pointer: no allocation, no
// lock. A thread that finds its ring full with no successor (the collector
// was kept away) makes one itself when the runtime's lock is free
// (runtime::grow_full_ring); that is the only allocation, once per growth.

/// Host thread, its ring full: moves the thread to the ring's successor and
/// returns it; null when there is none, or while a parameter chain runs (a
/// method call's frame may be open in place in the full ring). A frame that
/// waits in the full ring, closed, goes to the thread's value stack first,
/// where the call's exit finds it.
inline ring* adopt_successor(thread_state& ts) noexcept {
    ring* const full = ts.owned_ring;
    if (full == nullptr || ts.in_chain != 0) return nullptr;
    ring* const next = full->successor.load(std::memory_order_acquire);
    if (next == nullptr) return nullptr;
    full->set_aside_waiting_frame();
    if (full->name_version() != next->name_source_version) {  // renamed since the collector copied the name
        try {
            next->set_name(full->name().c_str());
        } catch (...) {  // out of memory: the successor keeps the older name
        }
    }
    next->adopted.store(true, std::memory_order_relaxed);
    ts.owned_ring = next;
    full->retired.store(true, std::memory_order_release);  // its last push happened before
    return next;
}

#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART void push_slow(const site* where, std::uint64_t t0, std::uint64_t t1,
                                                       std::uint64_t sessions) noexcept {
    const raw_record record{where, t0, t1, sessions};
    push_or_count(t_state, sessions, &record, 1);
}
#else
// Compiled by the implementation file alone (base/config.hpp).
void push_slow(const site* where, std::uint64_t t0, std::uint64_t t1,
               std::uint64_t sessions) noexcept;
#endif

/// Appends one record to this thread's ring; never blocks unless a session
/// with the `block` policy asked for it, never throws.
LOUPE_ALWAYS_INLINE void push(const site* where, std::uint64_t t0, std::uint64_t t1, std::uint64_t sessions) noexcept {
    ring* rg = t_state.owned_ring;
    if (LOUPE_LIKELY(rg != nullptr) && LOUPE_LIKELY(rg->try_push(where, t0, t1, sessions))) return;
    push_slow(where, t0, t1, sessions);
}

/// Of `sessions`, those whose task rules tag a call to `peer` named `name`.
inline std::uint64_t tagging(std::uint64_t sessions, std::string_view peer, std::string_view name) noexcept {
    return g_recorder.tagging.load(std::memory_order_acquire)(sessions, peer, name);
}

#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART const metric_plan* enter_zone_metrics(const metric_plan* plan) noexcept {
    return g_recorder.enter_zone_metrics.load(std::memory_order_acquire)(plan);
}
#else
// Compiled by the implementation file alone (base/config.hpp).
const metric_plan* enter_zone_metrics(const metric_plan* plan) noexcept;
#endif

#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART void push_zone_with_metrics(const site* where, std::uint64_t t0,
                                                                    std::uint64_t sessions,
                                                                    const metric_plan& plan) noexcept {
    g_recorder.push_zone_with_metrics.load(std::memory_order_acquire)(where, t0, sessions, plan);
}
#else
// Compiled by the implementation file alone (base/config.hpp).
void push_zone_with_metrics(const site* where, std::uint64_t t0, std::uint64_t sessions,
                            const metric_plan& plan) noexcept;
#endif

/// The exit of a recorded zone that began at `t0` (with `plan`'s metric
/// entry values on the thread's stack when `plan` is set): reads the exit
/// ticks and pushes one zone (after its metric deltas). Shared by
/// zone_scope and the method calls that carry nothing but their timing.
LOUPE_ALWAYS_INLINE void end_zone(const site* where, std::uint64_t t0, std::uint64_t sessions,
                                  const metric_plan* plan) noexcept {
    if (LOUPE_UNLIKELY(plan != nullptr)) {
        push_zone_with_metrics(where, t0, sessions, *plan);
        return;
    }
    push(where, t0, read_ticks(), sessions);
}

}  // namespace loupe::detail
