// one_zone.cpp with the instrumentation compiled out: compile_cost.sh
// compiles this file with -DLOUPE_ENABLED=0.
#include "one_zone.cpp"
