// What `info` says about the process: its program name (/proc/self/comm)
// and its start time (from /proc/self/stat and the boot time).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace loupe::control::detail {

/// The program's name as the kernel keeps it (15 bytes at most), or "?".
inline std::string program_name() {
    std::ifstream in("/proc/self/comm");
    std::string name;
    if (!std::getline(in, name) || name.empty()) return "?";
    return name;
}

/// The process's start time in milliseconds since the Unix epoch; 0 when
/// /proc does not tell.
inline std::uint64_t process_start_unix_ms() {
    std::ifstream stat_file("/proc/self/stat");
    std::string stat_line;
    if (!std::getline(stat_file, stat_line)) return 0;
    const std::size_t close = stat_line.rfind(')');  // the name may hold spaces and ')'
    if (close == std::string::npos) return 0;
    std::istringstream fields(stat_line.substr(close + 2));
    std::string field;
    unsigned long long start_ticks = 0;
    for (int i = 3; i <= 22 && (fields >> field); ++i) {
        if (i == 22) start_ticks = std::strtoull(field.c_str(), nullptr, 10);
    }
    std::ifstream boot("/proc/stat");
    unsigned long long btime = 0;
    for (std::string line; std::getline(boot, line);) {
        if (line.compare(0, 6, "btime ") == 0) btime = std::strtoull(line.c_str() + 6, nullptr, 10);
    }
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (btime == 0 || hz <= 0) return 0;
    return btime * 1000 + start_ticks * 1000 / static_cast<unsigned long long>(hz);
}

}  // namespace loupe::control::detail
