// fake CLI: core (VIOLATION: the CLI must not pull in the recorder), the rest fine
#include <loupe/report/stats.hpp>
#include <loupe/core/zone.hpp>
#include "local.hpp"
int main() { return 0; }
