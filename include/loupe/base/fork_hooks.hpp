// loupe around fork(): the process's one fork handler (pthread_atfork) and
// the steps it runs. Each lock loupe holds, and each one-time initialisation
// that can be in progress, belongs to a step that the header owning it
// registers at static initialisation, at a fixed rank. Before the fork the
// handler takes the steps in rank order; after it, the parent releases them
// in the reverse order and the child makes them usable again (releases
// them, or repairs what a thread of the parent left half done; the child
// has only the forking thread). So a child finds no loupe lock held and no
// initialisation half done, and can start sessions, record and exit.
//
// The ranks are the lock order: a thread that holds a lock of one rank takes
// locks of later ranks only, never of earlier ones. The fixed ranks, not the
// order in which layers happen to register (pthread_atfork runs prepare
// handlers in reverse registration order), decide the order, so it cannot
// invert. A step registered by no header (a layer the program does not use)
// is skipped.
#pragma once

#include <pthread.h>

#include <atomic>

#include "loupe/base/config.hpp"

namespace loupe::detail {

/// The steps in the order fork() takes them. What nests inside each (taken
/// while it is held) comes later in the list.
enum class fork_rank : unsigned {
    /// base: the error handler's mutex. The user's handler runs under it and
    /// may use any part of loupe, so it comes first.
    error_handler,
    /// core: the runtime's creation lock, then the runtime's mutex (session
    /// slots, rings). The runtime is built under the first (it calibrates
    /// the clock and allocates, which may attach a metric block); session
    /// start and stop take the metric registry's mutex under the second.
    runtime,
    /// core: the one-time calibration of the process clock (~20 ms). Its
    /// allocation may attach a metric block.
    clock,
    /// io: the handle registry's creation and its overflow map (descriptors
    /// beyond the direct array). An allocation under it may attach a metric
    /// block.
    io_registry,
    /// core: the sites of zones named at run time (core/detail/site_interner.hpp).
    /// Nothing nests inside it but allocation.
    zone_names,
    /// params: the method registry (which specs apply to which site). Binding
    /// a site takes the three below under it; session start and stop take
    /// it under the runtime's mutex.
    param_methods,
    /// params: the reflection registry (loupe::reflect, runtime chains).
    param_reflection,
    /// params: the class graph (match=inherited|subclasses).
    param_classes,
    /// params: the cache of demangled type names (`type_of`).
    param_type_names,
    /// metrics: the metric registry's creation and its mutex (blocks, metric
    /// sessions, metric definitions). Nothing nests inside it; an allocation
    /// under any earlier rank may take it (a thread's first counted
    /// allocation attaches its metric block).
    metric_registry,
    count
};

/// What one rank does around fork(). `prepare` runs in the parent before the
/// fork and takes the rank's locks; `parent` and `child` run after it and
/// release them. All three run on the forking thread.
struct fork_step {
    void (*prepare)() noexcept;
    void (*parent)() noexcept;
    void (*child)() noexcept;
};

inline constexpr unsigned fork_rank_count = static_cast<unsigned>(fork_rank::count);

/// The registered steps, one per rank (default visibility: shared libraries
/// share one table and one handler).
LOUPE_API inline std::atomic<const fork_step*> g_fork_steps[fork_rank_count] = {};

/// The ranks the forking thread's prepare took, so that parent and child
/// release exactly those (a step registered meanwhile is not released).
LOUPE_API inline thread_local unsigned t_fork_steps_taken = 0;

inline void fork_prepare_steps() noexcept {
    unsigned taken = 0;
    for (unsigned r = 0; r < fork_rank_count; ++r) {
        if (const fork_step* s = g_fork_steps[r].load(std::memory_order_acquire)) {
            s->prepare();
            taken |= 1u << r;
        }
    }
    t_fork_steps_taken = taken;
}

inline void fork_release_steps(bool in_child) noexcept {
    const unsigned taken = t_fork_steps_taken;
    t_fork_steps_taken = 0;
    for (unsigned r = fork_rank_count; r-- > 0;) {
        if (!(taken & (1u << r))) continue;
        const fork_step* s = g_fork_steps[r].load(std::memory_order_acquire);
        (in_child ? s->child : s->parent)();
    }
}

inline void fork_parent_steps() noexcept { fork_release_steps(false); }
inline void fork_child_steps() noexcept { fork_release_steps(true); }

inline void install_fork_handler() noexcept { pthread_atfork(&fork_prepare_steps, &fork_parent_steps, &fork_child_steps); }

LOUPE_API inline pthread_once_t g_fork_handler_once = PTHREAD_ONCE_INIT;

/// Registers `step` for `rank` and, on the first call in the process,
/// installs the fork handler. Called at static initialisation by the header
/// that owns the rank (`inline const bool ... = register_fork_step(...)`), so
/// before any thread can hold the rank's locks. The first registration of a
/// rank stays (every translation unit, and every shared library, registers
/// the same step). Returns true.
inline bool register_fork_step(fork_rank rank, const fork_step& step) noexcept {
    pthread_once(&g_fork_handler_once, &install_fork_handler);
    const fork_step* none = nullptr;
    g_fork_steps[static_cast<unsigned>(rank)].compare_exchange_strong(none, &step, std::memory_order_acq_rel);
    return true;
}

}  // namespace loupe::detail

/// Registers a fork step at static initialisation from a header that
/// instrumenting files include and <loupe/implementation.hpp> includes too
/// (<loupe/loupe.hpp>, <loupe/io.hpp>, <loupe/params.hpp>,
/// <loupe/metrics.hpp>): `LOUPE_DETAIL_SHARED_FORK_STEP(variable, rank,
/// step);`. Header-only, every file that includes the header registers it
/// (the first registration stays). With the separate implementation
/// (base/config.hpp) the implementation file alone does, so a file that
/// only instruments compiles no fork handler and no initialiser.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
#    define LOUPE_DETAIL_SHARED_FORK_STEP(variable, rank, step) \
        LOUPE_API inline const bool variable = ::loupe::detail::register_fork_step(rank, step)
#else
#    define LOUPE_DETAIL_SHARED_FORK_STEP(variable, rank, step) static_assert(true, "")
#endif
