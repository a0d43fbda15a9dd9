// Metrics: custom counters, pull metrics (CPU time, perf counters) and
// allocation counting. The umbrella for code that adds to metrics or counts
// allocations; sessions choose what they record (session_config::metrics).
#pragma once

#include "loupe/metrics/allocations.hpp"
#include "loupe/metrics/metric.hpp"
