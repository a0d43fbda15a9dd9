// Writes a whole output file (converted traces) with a clear error on
// failure. Used by the viewer writers and the converting sinks.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "loupe/base/error.hpp"

namespace loupe::detail {

/// Creates or truncates `path` and writes `bytes` to it. Throws loupe::error
/// naming the path and the OS reason when it cannot.
inline void write_output_file(const std::string& path, std::string_view bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw error("cannot open '" + path + "' for writing: " + std::strerror(errno));
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const int write_errno = errno;
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed) {
        throw error("cannot write '" + path + "': " + std::strerror(written ? errno : write_errno));
    }
}

}  // namespace loupe::detail
