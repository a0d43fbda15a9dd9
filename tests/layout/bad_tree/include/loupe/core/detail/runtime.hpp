// fake: core -> metrics/detail/ (VIOLATION: private to metrics)
#pragma once
#include <atomic>
#    include "loupe/metrics/detail/registry.hpp"
