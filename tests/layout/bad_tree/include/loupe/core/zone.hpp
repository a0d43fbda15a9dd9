// fake: core -> io/detail/ (VIOLATION: io is above core), the rest fine
#pragma once
#include "loupe/base/config.hpp"
#include "loupe/metrics/metric.hpp"
#include "loupe/core/detail/runtime.hpp"
#include "loupe/io/detail/io_wire.hpp"
