// How a method spec's class part selects receivers (`match=` in a spec).
#pragma once

#include <cstdint>

namespace loupe {

/// How a method spec's class part selects receivers (US 9,129,056 ¶0126,
/// Tables 1 and 2). Public because specs built in code may name it.
enum class match_mode : std::uint8_t {
    exact = 0,       ///< V1: the receiver's class is the spec's class
    inherited = 1,   ///< V2: ... or a subclass that does not override the method
    subclasses = 2,  ///< V3: ... or any subclass (the default of `match=`)
};

}  // namespace loupe
