// Where a session's timestamps come from. Both are nanoseconds on one
// monotonic clock; `tsc` ticks are converted with a calibration taken when
// the process first needed the clock.
#pragma once

#include <cstdint>

namespace loupe {

enum class clock_source : std::uint8_t { tsc = 0, steady_clock = 1 };

}  // namespace loupe
