// How a busy thread's ring grows (core/recorder.hpp: adopt_successor): a
// larger successor hangs on the ring and the thread moves there when the
// ring is full. The collector makes one for each ring it finds at least half
// full; a thread whose ring is full and has none makes its own, so that a
// collector kept off the CPU (a busy machine's scheduler can leave it
// waiting for milliseconds) costs memory within the budget, not events.
//
// Members of `runtime` (runtime_class.hpp). Include runtime.hpp, which has
// the class and these.
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

#include "loupe/core/detail/runtime_class.hpp"
#include "loupe/core/detail/thread_state.hpp"

namespace loupe::detail {

// A successor for `r`, four times its size (twice if four would pass the
// budget), while all rings stay within the sessions' memory_budget. Pooled
// rings, kept for threads to come, are freed to make room (`pooled`: their
// bytes, kept up to date): a busy thread comes first. False when `r` has a
// successor already, its thread left, the budget has no room, or memory ran
// out (the ring stays as it is).
inline bool runtime::grow_ring_locked(ring& r, std::size_t& pooled) noexcept {
    if (memory_budget_ == 0 || r.retired.load(std::memory_order_acquire) ||
        r.successor.load(std::memory_order_relaxed) != nullptr) {
        return false;
    }
    std::size_t bytes = 0;
    for (const std::size_t factor : {4, 2}) {
        if (r.bytes() * factor <= max_ring_bytes && counters_.ring_bytes - pooled + r.bytes() * factor <= memory_budget_) {
            bytes = r.bytes() * factor;
            break;
        }
    }
    if (bytes == 0) return false;
    while (counters_.ring_bytes + bytes > memory_budget_) {  // the live rings leave room: the pool goes
        pooled -= pool_.back()->bytes();
        delete_ring_locked(pool_.back());
        pool_.pop_back();
    }
    ring* next = nullptr;
    try {
        internal_allocation_scope internal;  // on a host thread: not the host's allocation
        next = new_ring_locked(bytes / sizeof(raw_record));
        next->thread_id = r.thread_id;
        next->os_tid = r.os_tid;
        next->name_source_version = r.name_version();
        next->set_name(r.name().c_str());
        next->predecessor = &r;
        live_rings_.insert(std::find(live_rings_.begin(), live_rings_.end(), &r) + 1, next);
    } catch (...) {  // out of memory: the ring stays as it is
        if (next != nullptr) delete_ring_locked(next);
        return false;
    }
    r.successor.store(next, std::memory_order_release);
    ++counters_.rings_grown;
    return true;
}

inline std::size_t runtime::pooled_bytes_locked() const noexcept {
    std::size_t pooled = 0;
    for (const ring* p : pool_) pooled += p->bytes();
    return pooled;
}

// The collector, after a pass: the rings it found at least half full.
inline void runtime::grow_rings_locked(const std::vector<ring*>& busy) noexcept {
    if (busy.empty() || memory_budget_ == 0) return;
    std::size_t pooled = pooled_bytes_locked();
    for (ring* r : busy) grow_ring_locked(*r, pooled);
}

// A host thread whose ring `r` is full and has no successor (the collector
// has not been by since it passed half full). Never waits: with the lock
// taken (the collector's bookkeeping, another thread starting), the event is
// dropped as before. A ring the budget refused is not tried again until
// rings were freed or the budget changed (ring_room_epoch_): until then its
// thread's drops cost a load, not a lock.
inline bool runtime::grow_full_ring(ring& r) noexcept {
    if (r.growth_refused_epoch == ring_room_epoch_.load(std::memory_order_relaxed)) return false;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || shutting_down_) return false;
    if (r.successor.load(std::memory_order_relaxed) != nullptr) return true;  // the collector was quicker
    std::size_t pooled = pooled_bytes_locked();
    if (grow_ring_locked(r, pooled)) {
        ++counters_.rings_grown_by_thread;
        return true;
    }
    r.growth_refused_epoch = ring_room_epoch_.load(std::memory_order_relaxed);
    return false;
}

}  // namespace loupe::detail
