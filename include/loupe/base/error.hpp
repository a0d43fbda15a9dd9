// loupe's one exception type and the handler that receives runtime faults.
//
// Configuration mistakes (an unwritable trace path, a bad session config) throw
// loupe::error at the call that made them. Runtime faults that happen away from
// the caller — a sink that fails on the collector thread, a ring that cannot be
// allocated — are never thrown into a host thread: they are counted and
// reported through the error handler, once per cause.
#pragma once

#include <cstdio>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "loupe/base/config.hpp"

namespace loupe {

/// Thrown for configuration mistakes and unreadable traces. The message names
/// the input, the position when there is one, and what was expected.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

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
}  // namespace detail

/// Replaces the handler of runtime faults; an empty handler restores the
/// default, which prints "loupe: <message>" to stderr.
/// Thread-safety: any thread. The handler runs on the thread that met the
/// fault (usually the collector) and must not throw; if it does, the
/// exception is swallowed.
inline void set_error_handler(error_handler handler) {
    auto& s = detail::error_handler_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.handler = std::move(handler);
}

namespace detail {
/// Delivers one fault report. Never throws.
inline void report_error(const std::string& message) noexcept {
    try {
        auto& s = error_handler_state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.handler) {
            s.handler(message);
        } else {
            std::fprintf(stderr, "loupe: %s\n", message.c_str());
        }
    } catch (...) {
    }
}
}  // namespace detail

}  // namespace loupe
