// A sink that writes one session as a Perfetto trace (.pftrace), ready for
// ui.perfetto.dev. See viewer/perfetto.hpp for what the file holds.
#pragma once

#include <string>
#include <utility>

#include "loupe/sinks/detail/converting_sink.hpp"
#include "loupe/viewer/perfetto.hpp"

namespace loupe::sinks {

/// Writes one session to `path` in Perfetto's protobuf trace format.
///
/// The file is opened when the session starts (a bad path makes
/// start_session throw loupe::error naming it; a session that does not
/// start leaves no file). While the session runs the sink holds it in memory
/// in the compact .loupe encoding (about 4–6 bytes per event) and rewrites
/// the file as it grows (detail/converting_sink.hpp: a process that dies
/// leaves the session up to the last write); when the session stops it
/// converts and writes the file on the collector thread: `session::stop()`
/// returns once the file is written (about 0.15–0.3 s per million events);
/// other threads never wait. The
/// buffer is bounded by `max_buffer_bytes` (default 512 MiB, about 100 M
/// events): past it the sink fails, loupe reports it once and counts the
/// records it no longer takes, and the file holds the session up to there.
/// For longer sessions, record with file_sink and
/// convert afterwards with `loupe convert FILE --to perfetto -o OUT`.
/// Thread-safety: used by one session; loupe calls it from the collector only.
class perfetto_sink final : public detail::converting_sink {
public:
    explicit perfetto_sink(std::string path, viewer::perfetto_options options = {},
                           std::size_t max_buffer_bytes = std::size_t{512} << 20)
        : converting_sink(
              std::move(path),
              [options](const void* data, std::size_t size, decode_options decode, std::string& out) {
                  viewer::convert_to_perfetto(data, size, out, options, decode);
              },
              max_buffer_bytes) {}
};

}  // namespace loupe::sinks
