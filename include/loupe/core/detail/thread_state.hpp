// Per-thread state read by the hot path: the cached session masks and the
// thread's ring. Trivially constructible and destructible, so a thread_local
// access is a plain TLS load with no initialization guard; thread exit is
// caught by a pthread key destructor registered when the thread gets a ring.
#pragma once

#include <cstdint>
#include <cstring>

#include "loupe/base/clock.hpp"
#include "loupe/core/detail/hot_state.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/base/site.hpp"

namespace loupe::detail {

enum thread_status : std::uint8_t {
    thread_fresh = 0,      ///< has never needed a ring
    thread_has_ring = 1,
    thread_exiting = 2,    ///< past its exit hook: records nothing more
    thread_collector = 3,  ///< loupe's own collector: never records
};

inline constexpr std::size_t max_thread_name = 63;

struct thread_metrics;  // metric_registry.hpp
struct metric_plan;     // metric_plan.hpp
struct value_stack;     // method_wire.hpp

struct thread_state {
    std::uint64_t epoch;  ///< hot_state::epoch the masks below were computed for
    std::uint64_t sessions_by_kind[site_kind_slots];  ///< indexed by site_kind
    std::uint64_t os_tid;  ///< gettid(), cached on first need (0: not yet)
    ring* owned_ring;
    std::uint8_t status;
    std::uint8_t context_shown;  ///< last context written to a session was not empty
    char pending_name[max_thread_name + 1];  ///< name set before the thread had a ring
    thread_metrics* metrics;  ///< push-metric accumulators (null until first use)
    /// Metrics the sessions recording this thread's zones want (null: none);
    /// computed with sessions_by_kind.
    const metric_plan* plan;
    std::uint32_t internal_allocations;  ///< > 0 while loupe allocates for itself on this thread
    /// > 0 while a parameter chain runs on this thread: methods it calls are
    /// not traced (the recursion guard, US 9,129,056 ¶0158).
    std::uint32_t in_chain;
    /// Values of the method calls this thread is inside (null until its first
    /// recorded call with parameters).
    value_stack* values;
    /// This thread's C++ exception globals (Itanium ABI __cxa_eh_globals;
    /// null until first needed), so the method scopes read the count of
    /// uncaught exceptions with one load (uncaught_exceptions.hpp).
    const void* eh_globals;
};

LOUPE_API inline thread_local thread_state t_state;

/// Marks loupe's own allocations on the calling thread, so the allocation
/// metrics (metrics.hpp) do not count them. Nests.
struct internal_allocation_scope {
    internal_allocation_scope() noexcept { ++t_state.internal_allocations; }
    ~internal_allocation_scope() { --t_state.internal_allocations; }
    internal_allocation_scope(const internal_allocation_scope&) = delete;
    internal_allocation_scope& operator=(const internal_allocation_scope&) = delete;
};

// Slow paths, defined in runtime.hpp. Templates only to get vague linkage
// with a separate declaration: GCC rejects `inline` plus `noinline` there.
template <int = 0>
LOUPE_NOINLINE std::uint64_t refresh_sessions(thread_state& ts, site_kind kind) noexcept;
template <int = 0>
LOUPE_NOINLINE void push_slow(const site* where, std::uint64_t t0, std::uint64_t t1, std::uint64_t sessions) noexcept;

/// The session slots that want events of `kind` from this thread (0: none).
LOUPE_ALWAYS_INLINE std::uint64_t sessions_for(site_kind kind) noexcept {
    thread_state& ts = t_state;
    if (LOUPE_UNLIKELY(ts.epoch != g_hot.epoch.load(std::memory_order_relaxed))) {
        return refresh_sessions(ts, kind);
    }
    return ts.sessions_by_kind[static_cast<unsigned>(kind)];
}

LOUPE_ALWAYS_INLINE std::uint64_t read_ticks() noexcept {
    return LOUPE_LIKELY(g_hot.use_tsc.load(std::memory_order_relaxed)) ? tick_clock::rdtsc()
                                                                       : steady_ns();
}

/// Appends one record to this thread's ring; never blocks unless a session
/// with the `block` policy asked for it, never throws.
LOUPE_ALWAYS_INLINE void push(const site* where, std::uint64_t t0, std::uint64_t t1, std::uint64_t sessions) noexcept {
    ring* rg = t_state.owned_ring;
    if (LOUPE_LIKELY(rg != nullptr) && LOUPE_LIKELY(rg->try_push(where, t0, t1, sessions))) return;
    push_slow(where, t0, t1, sessions);
}

}  // namespace loupe::detail
