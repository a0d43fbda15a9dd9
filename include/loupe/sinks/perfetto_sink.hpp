// A sink that writes one session as a Perfetto trace (.pftrace), ready for
// ui.perfetto.dev. See viewer/perfetto.hpp for what the file holds.
#pragma once

#include <string>
#include <utility>

#include "loupe/detail/converting_sink.hpp"
#include "loupe/viewer/perfetto.hpp"

namespace loupe::sinks {

/// Writes one session to `path` in Perfetto's protobuf trace format.
///
/// The constructor creates (or truncates) the file, so a bad path throws
/// loupe::error naming it before the session starts. While the session runs
/// the sink holds it in memory in the compact .loupe encoding (about 4–6
/// bytes per event); when the session stops it converts and writes the file
/// on the collector thread: `session::stop()` returns once the file is
/// written (about 0.7 s per million events); other threads never wait. For
/// sessions of hundreds of millions of events, record with file_sink and
/// convert afterwards with `loupe convert FILE --to perfetto -o OUT`.
/// Thread-safety: used by one session; loupe calls it from the collector only.
class perfetto_sink final : public detail::converting_sink {
public:
    explicit perfetto_sink(std::string path, viewer::perfetto_options options = {})
        : converting_sink(std::move(path),
                          [options](const void* data, std::size_t size, decode_options decode, std::string& out) {
                              viewer::convert_to_perfetto(data, size, out, options, decode);
                          }) {}
};

}  // namespace loupe::sinks
