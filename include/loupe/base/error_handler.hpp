// The handler that receives runtime faults (see base/error.hpp): a program
// that wants them somewhere other than stderr sets one.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "loupe/base/config.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/fork_hooks.hpp"

namespace loupe {

/// Receives one line describing a runtime fault (no trailing newline).
using error_handler = std::function<void(const std::string& message)>;

namespace detail {
struct error_handler_slot {
    std::mutex mutex;
    error_handler handler;
};
LOUPE_API inline error_handler_slot& error_handler_state() {
    static error_handler_slot* slot = new error_handler_slot;  // never destroyed: usable at exit
    return *slot;
}

// The reporter set_error_handler installs: the handler under its mutex.
inline void report_to_handler(std::string_view message) noexcept {
    try {
        auto& s = error_handler_state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.handler) {
            s.handler(std::string(message));
        } else {
            print_error(message);
        }
    } catch (...) {
    }
}

// fork() (fork_hooks.hpp): the mutex is taken first of all loupe's locks; a
// handler running on another thread finishes before the fork.
inline void error_handler_fork_prepare() noexcept { error_handler_state().mutex.lock(); }
inline void error_handler_fork_release() noexcept { error_handler_state().mutex.unlock(); }
inline constexpr fork_step error_handler_fork_step{&error_handler_fork_prepare, &error_handler_fork_release,
                                                   &error_handler_fork_release};
LOUPE_API inline const bool error_handler_fork_step_registered =
    register_fork_step(fork_rank::error_handler, error_handler_fork_step);
}  // namespace detail

/// Replaces the handler of runtime faults; an empty handler restores the
/// default, which prints "loupe: <message>" to stderr.
/// Thread-safety: any thread. The handler runs on the thread that met the
/// fault (usually the collector) and must not throw; if it does, the
/// exception is swallowed.
inline void set_error_handler(error_handler handler) {
    auto& s = detail::error_handler_state();
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.handler = std::move(handler);
    }
    detail::g_error_reporter.store(&detail::report_to_handler, std::memory_order_release);
}

}  // namespace loupe
