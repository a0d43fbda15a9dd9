// Test helpers: decode a serialized perfetto.protos.Trace with protoc against
// Perfetto's schema (tests/data/perfetto_trace.proto), and count what the
// text form holds. Only where CMake found protoc (LOUPE_PROTOC).
#pragma once

#include <loupe/format/output_file.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "support/trace_files.hpp"

namespace loupe_test {

/// The whole file at `path` ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// How often `needle` occurs in `text`.
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

#ifdef LOUPE_PROTOC
/// protoc's text form of a serialized Trace, or "" with protoc's output in
/// `error`. `tag` names the scratch files.
inline std::string protoc_decode(const std::string& bytes, const std::string& tag, std::string& error) {
    const std::string in = temp_trace_path(tag) + ".pftrace";
    const std::string out = in + ".txt";
    loupe::detail::write_output_file(in, bytes);
    const std::string command = std::string(LOUPE_PROTOC) + " --proto_path=" + LOUPE_PERFETTO_SCHEMA_DIR +
                                " --decode=perfetto.protos.Trace perfetto_trace.proto < " + in + " > " + out + " 2>&1";
    const int status = std::system(command.c_str());
    std::string text = read_text(out);
    std::remove(in.c_str());
    std::remove(out.c_str());
    if (status != 0) {
        error = text;
        return {};
    }
    return text;
}
#endif

}  // namespace loupe_test
