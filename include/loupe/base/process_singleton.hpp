// One object of a type per process, made on first use and never destroyed,
// that fork() can be made safe for (fork_hooks.hpp).
//
// Not a function-local static: a thread of the parent that is inside a
// static's initialisation guard when another thread forks leaves the guard
// taken in the child, and the child's first use hangs. Here the object is
// made under a plain lock that the owner's fork step takes before fork() (so
// the fork waits for a creation in progress) and releases after it.
//
// Cost: `get()` is one acquire load and a branch once the object exists.
// Thread-safety: every member is safe from any thread.
#pragma once

#include <pthread.h>

#include <atomic>

#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"

namespace loupe::detail {

/// The process's one `T` (across shared libraries too: default visibility).
/// Around fork() `T` provides `before_fork()` (take its locks, in the order
/// it nests them), `after_fork_in_parent()` and `after_fork_in_child()`
/// (release them; the child may also reset state that belonged to threads
/// it does not have); `fork_handling` wraps them with the creation lock, for
/// `register_fork_step`.
template <class T>
struct LOUPE_API process_singleton {
    static inline std::atomic<T*> instance{nullptr};
    // A plain pthread mutex: constant-initialised and never destroyed, so
    // usable during static initialisation, at exit and in fork handlers.
    static inline pthread_mutex_t creation_lock = PTHREAD_MUTEX_INITIALIZER;

    /// The object, made on first use (allocates then; may throw bad_alloc).
    static T& get() {
        T* p = instance.load(std::memory_order_acquire);
        if (LOUPE_LIKELY(p != nullptr)) return *p;
        return create();
    }

    /// The object when it has been made, else null.
    static T* existing() noexcept { return instance.load(std::memory_order_acquire); }

    static void fork_prepare() noexcept {
        pthread_mutex_lock(&creation_lock);
        if (T* p = existing()) p->before_fork();
    }
    static void fork_parent() noexcept {
        if (T* p = existing()) p->after_fork_in_parent();
        pthread_mutex_unlock(&creation_lock);
    }
    static void fork_child() noexcept {
        if (T* p = existing()) p->after_fork_in_child();
        pthread_mutex_unlock(&creation_lock);
    }
    static constexpr fork_step fork_handling{&fork_prepare, &fork_parent, &fork_child};

private:
    LOUPE_NOINLINE static T& create() {
        struct unlock_at_exit {
            ~unlock_at_exit() { pthread_mutex_unlock(&creation_lock); }
        };
        pthread_mutex_lock(&creation_lock);
        unlock_at_exit unlock;
        T* p = instance.load(std::memory_order_relaxed);
        if (p == nullptr) {
            p = new T;
            instance.store(p, std::memory_order_release);
        }
        return *p;
    }
};

}  // namespace loupe::detail
