// Violation: includes cycle_b.hpp, which includes this file (an include cycle).
#pragma once
#include "loupe/text/cycle_b.hpp"
