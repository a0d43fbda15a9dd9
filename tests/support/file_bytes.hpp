// Test helper: a whole file's bytes (standard library only, so that any test
// binary can use it).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace loupe_test {

/// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
    std::string s;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
        std::fclose(f);
    }
    return s;
}

}  // namespace loupe_test
