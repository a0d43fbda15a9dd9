// Fake tree for Layout.CheckerCatchesViolations (tests/layout/CMakeLists.txt).
#pragma once
#include <cstdint>
