// How many times bad task context came in from outside: a malformed or
// repeated traceparent, a tracestate with a member that had to be dropped,
// a malformed in-band token. Each is recovered from (a new task starts, the
// member is dropped, the name is left as it was) and counted here once per
// header set or name, so an operator can tell that a peer sends garbage.
//
// The parsers themselves (parse_traceparent, parse_tracestate) count
// nothing: they are pure. What counts is what reads a carrier: extract(),
// extract_response(), the map and header-block adapters (carrier.hpp) and
// strip() (in_band_token.hpp). A missing traceparent is not an error.
//
// Cost: one relaxed atomic increment per error, nothing otherwise.
// Thread-safety: any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "loupe/base/config.hpp"

namespace loupe::tasks {

namespace detail {

/// One per process, across shared libraries too (default visibility).
LOUPE_API inline std::atomic<std::uint64_t> g_propagation_errors{0};

inline void count_propagation_error() noexcept { g_propagation_errors.fetch_add(1, std::memory_order_relaxed); }

}  // namespace detail

/// The errors counted since the process started (not reset by fork: a child
/// starts from its parent's count).
inline std::uint64_t propagation_errors() noexcept {
    return detail::g_propagation_errors.load(std::memory_order_relaxed);
}

}  // namespace loupe::tasks
