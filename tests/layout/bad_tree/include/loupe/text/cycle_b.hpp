// Violation: the other half of the cycle with cycle_a.hpp.
#pragma once
#include "loupe/text/cycle_a.hpp"
#include "loupe/text/json.hpp"
