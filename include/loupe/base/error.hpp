// loupe's one exception type and how runtime faults are reported.
//
// Configuration mistakes (an unwritable trace path, a bad session config) throw
// loupe::error at the call that made them. Runtime faults that happen away from
// the caller — a sink that fails on the collector thread, a ring that cannot be
// allocated — are never thrown into a host thread: they are counted and
// reported through the error handler (base/error_handler.hpp), once per cause.
#pragma once

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "loupe/base/config.hpp"

namespace loupe {

/// Thrown for configuration mistakes and unreadable traces. The message names
/// the input, the position when there is one, and what was expected.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

/// Where fault reports go: stderr until set_error_handler installs the
/// handler's reporter (kept behind a pointer so that code which only reports
/// does not compile std::function; a string_view so that it does not compile
/// a std::string either).
using error_reporter = void (*)(std::string_view message) noexcept;

inline void print_error(std::string_view message) noexcept {
    std::fprintf(stderr, "loupe: %.*s\n", static_cast<int>(message.size()), message.data());
}

LOUPE_API inline std::atomic<error_reporter> g_error_reporter{&print_error};

/// Delivers one fault report. Never throws. Any thread.
inline void report_error(std::string_view message) noexcept {
    g_error_reporter.load(std::memory_order_acquire)(message);
}

}  // namespace detail
}  // namespace loupe
