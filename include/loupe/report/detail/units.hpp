// Durations for people: what the reports print unless asked for raw
// nanoseconds.
#pragma once

#include <cstdio>
#include <string>

namespace loupe::report::detail {

/// "812 ns", "12.3 us", "4.56 ms", "1.23 s": three significant digits.
inline std::string human_duration(double ns) {
    static const char* const units[] = {"ns", "us", "ms", "s"};
    int unit = 0;
    while (unit < 3 && ns >= 1000.0) {
        ns /= 1000.0;
        ++unit;
    }
    char buf[32];
    if (unit == 0 || ns >= 100.0) {
        std::snprintf(buf, sizeof buf, "%.0f %s", ns, units[unit]);
    } else {
        std::snprintf(buf, sizeof buf, ns >= 10.0 ? "%.1f %s" : "%.2f %s", ns, units[unit]);
    }
    return buf;
}


}  // namespace loupe::report::detail
