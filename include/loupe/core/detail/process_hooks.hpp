// The runtime around fork() and exit. fork (the runtime's step of
// base/fork_hooks.hpp, rank `runtime`): the runtime's creation lock and its
// mutex are taken before and released after in the parent; the child gets a
// fresh runtime lazily and leaves the parent's sessions, rings and files
// untouched. exit: sessions are stopped and the collector joined by an
// atexit hook, so static destructors that still record find a live runtime.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdlib>

#include "loupe/base/fork_hooks.hpp"
#include "loupe/core/detail/runtime_class.hpp"

namespace loupe::detail {

inline void fork_prepare() noexcept {
    runtime_init_mutex().lock();
    if (runtime* r = runtime_pointer().load(std::memory_order_acquire)) r->mutex().lock();
}

inline void fork_parent() noexcept {
    if (runtime* r = runtime_pointer().load(std::memory_order_acquire)) r->mutex().unlock();
    runtime_init_mutex().unlock();
}

// The child has one thread (this one). The parent's runtime stays behind,
// locked and untouched; a new one is made when the child starts a session.
inline void fork_child() noexcept {
    if (runtime* old = runtime_pointer().load(std::memory_order_acquire)) {
        pthread_setspecific(old->exit_key(), nullptr);
    }
    runtime_pointer().store(nullptr, std::memory_order_release);
    g_hot.armed.store(0, std::memory_order_relaxed);
    g_hot.active_slots.store(0, std::memory_order_relaxed);
    g_hot.block_slots.store(0, std::memory_order_relaxed);
    for (auto& k : g_hot.slot_kinds) k.store(0, std::memory_order_relaxed);
    g_hot.epoch.fetch_add(1, std::memory_order_release);
    g_hot.paused_collector_wake.store(nullptr, std::memory_order_relaxed);  // the parent's collector paused at fork
    thread_state& ts = t_state;
    // A method call running on this thread may have its values waiting in
    // the ring left behind: onto the value stack with them, where its exit
    // finds them (params/method.hpp).
    if (ts.owned_ring != nullptr) ts.owned_ring->set_aside_waiting_frame();
    ts.owned_ring = nullptr;
    t_metric_thread.thread_id = 0;
    ts.os_tid = 0;  // the child's thread has its own id
    if (ts.status == thread_has_ring) ts.status = thread_fresh;
    runtime_init_mutex().unlock();
}

inline void at_exit() noexcept {
    if (runtime* r = runtime_pointer().load(std::memory_order_acquire)) r->shutdown();
}

inline constexpr fork_step runtime_fork_step{&fork_prepare, &fork_parent, &fork_child};
LOUPE_API inline const bool runtime_fork_step_registered = register_fork_step(fork_rank::runtime, runtime_fork_step);
// The runtime calibrates the clock when it is made (recorder.hpp).
LOUPE_API inline const bool runtime_clock_fork_step_registered = register_fork_step(fork_rank::clock, clock_fork_step);

LOUPE_API inline std::atomic<bool>& process_hooks_installed() {
    static std::atomic<bool> installed{false};
    return installed;
}

// Called with runtime_init_mutex held. Once per process image (a forked
// child inherits the registration). The fork step is registered at static
// initialisation (above).
inline void install_process_hooks() {
    if (process_hooks_installed().exchange(true)) return;
    std::atexit(&at_exit);
}

}  // namespace loupe::detail
