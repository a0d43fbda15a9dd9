// Per-thread state read by the hot path: the cached session masks and the
// thread's ring. Trivially constructible and destructible, so a thread_local
// access is a plain TLS load with no initialization guard; thread exit is
// caught by a pthread key destructor registered when the thread gets a ring.
#pragma once

#include "loupe/base/config.hpp"

#include <cstdint>
#include <cstring>

#include "loupe/base/clock.hpp"
#include "loupe/core/detail/hot_state.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/base/site.hpp"
#include "loupe/metrics/thread_metric_state.hpp"

namespace loupe::detail {

enum thread_status : std::uint8_t {
    thread_fresh = 0,      ///< has never needed a ring
    thread_has_ring = 1,
    thread_exiting = 2,    ///< past its exit hook: records nothing more
    thread_collector = 3,  ///< loupe's own collector: never records
};

inline constexpr std::size_t max_thread_name = 63;

struct metric_plan;     // zone_metrics.hpp
struct value_stack;     // below

struct thread_state {
    std::uint64_t epoch;  ///< hot_state::epoch the masks below were computed for
    std::uint64_t sessions_by_kind[site_kind_slots];  ///< indexed by site_kind
    std::uint64_t os_tid;  ///< gettid(), cached on first need (0: not yet)
    ring* owned_ring;
    std::uint8_t status;
    char pending_name[max_thread_name + 1];  ///< name set before the thread had a ring
    /// Metrics the sessions recording this thread's zones want (null: none);
    /// computed with sessions_by_kind.
    const metric_plan* plan;
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
    /// Which sessions have this thread's context (the slow path writes it to
    /// those that record the thread and lack it): slots that got the context
    /// of generation `context_generation` (t_context's), slots whose last
    /// context from this thread was not empty, and the epoch up to which
    /// both masks know of the sessions started in their slots.
    std::uint32_t context_generation;
    std::uint64_t context_sent;
    std::uint64_t context_nonempty;
    std::uint64_t context_epoch;
};

/// Per-thread scratch stack of the capabilities: the frames of the method
/// calls (params/method.hpp) a thread is inside, innermost last.
/// Bounded: a call nested beyond its capacity has no frame and carries no
/// values (flagged values_lost).
struct alignas(64) value_stack {
    static constexpr std::size_t capacity = 32 * 1024;
    std::size_t top = 0;
    alignas(8) unsigned char bytes[capacity];
};

LOUPE_API inline thread_local thread_state t_state;



}  // namespace loupe::detail
