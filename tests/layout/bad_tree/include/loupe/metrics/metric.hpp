// fake: fine (metrics -> base, own detail/)
#pragma once
#include "loupe/base/config.hpp"
#include "loupe/metrics/detail/registry.hpp"
