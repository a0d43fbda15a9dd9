// Time arithmetic of the task reports: recorded times are unsigned ns on a
// trace's clock, placed times signed ns on the merged timeline. Every
// operation saturates instead of overflowing, so a damaged trace (times near
// 2^64) gives odd numbers, never undefined behaviour.
#pragma once

#include <cstdint>
#include <limits>

namespace loupe::report::detail {

inline constexpr std::int64_t time_max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t time_min = std::numeric_limits<std::int64_t>::min();

inline std::int64_t sat_add(std::int64_t a, std::int64_t b) noexcept {
    if (b > 0 && a > time_max - b) return time_max;
    if (b < 0 && a < time_min - b) return time_min;
    return a + b;
}

inline std::int64_t sat_sub(std::int64_t a, std::int64_t b) noexcept {
    if (b == time_min) return a >= 0 ? time_max : a - b;  // a - MIN = a + 2^63: fits only when a < 0
    return sat_add(a, -b);
}

/// A recorded time as a signed value (times beyond 2^63 - 1 saturate).
inline std::int64_t to_signed(std::uint64_t t) noexcept {
    return t > static_cast<std::uint64_t>(time_max) ? time_max : static_cast<std::int64_t>(t);
}

/// a - b for two recorded times.
inline std::int64_t time_diff(std::uint64_t a, std::uint64_t b) noexcept { return sat_sub(to_signed(a), to_signed(b)); }

/// A non-negative length (0 when end < begin).
inline std::uint64_t length(std::int64_t begin, std::int64_t end) noexcept {
    return end > begin ? static_cast<std::uint64_t>(sat_sub(end, begin)) : 0;
}

}  // namespace loupe::report::detail
