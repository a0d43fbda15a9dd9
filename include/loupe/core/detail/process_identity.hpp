// Which process a trace comes from, beyond its pid and program name: the
// host, the kernel's boot id and the clock domain, so that `loupe merge`
// knows which traces share a clock (docs/tasks.md).
//
// Clock domain: loupe's nanoseconds are CLOCK_MONOTONIC's (the TSC, where
// used, is calibrated against it), which every process of one boot shares;
// the domain is "monotonic:<boot id>", empty when the boot id is unknown
// (then no two traces are assumed to share a clock).
//
// Read once per runtime (a few system calls); never on the hot path.
#pragma once

#include "loupe/base/config.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if LOUPE_OS_POSIX
#    include <unistd.h>
#endif

namespace loupe::detail {

struct process_identity {
    std::string host;
    std::string boot_id;
    std::string clock_domain;
    std::uint64_t start_ns = 0;  ///< process start since boot (0: unknown)
};

/// The first line of a small file, without its newline; "" when unreadable.
inline std::string read_first_line(const char* path) {
    std::string line;
    if (std::FILE* f = std::fopen(path, "re")) {
        char buffer[256];
        if (std::fgets(buffer, sizeof buffer, f)) line = buffer;
        std::fclose(f);
    }
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
}

/// When the calling process started, in ns since boot: /proc/self/stat's
/// 22nd field (clock ticks). 0 when unknown.
inline std::uint64_t process_start_since_boot_ns() {
#if LOUPE_OS_LINUX
    const std::string stat = read_first_line("/proc/self/stat");
    // The command name (field 2) may hold spaces and parentheses: count
    // fields from the last ')'.
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::size_t at = close + 1;
    for (int field = 3; field <= 22; ++field) {
        while (at < stat.size() && stat[at] == ' ') ++at;
        if (field == 22) {
            const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
            if (ticks_per_second <= 0) return 0;
            const std::uint64_t ticks = std::strtoull(stat.c_str() + at, nullptr, 10);
            return ticks * (1000000000u / static_cast<std::uint64_t>(ticks_per_second));
        }
        while (at < stat.size() && stat[at] != ' ') ++at;
    }
#endif
    return 0;
}

inline process_identity read_process_identity() {
    process_identity id;
#if LOUPE_OS_POSIX
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) id.host = host;
#endif
#if LOUPE_OS_LINUX
    id.boot_id = read_first_line("/proc/sys/kernel/random/boot_id");
    if (!id.boot_id.empty()) id.clock_domain = "monotonic:" + id.boot_id;
#endif
    id.start_ns = process_start_since_boot_ns();
    return id;
}

}  // namespace loupe::detail
