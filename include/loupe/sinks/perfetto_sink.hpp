// A sink that writes one session as a Perfetto trace (.pftrace), ready for
// ui.perfetto.dev. See viewer/perfetto.hpp for what the file holds.
#pragma once

#include <string>

#include "loupe/detail/converting_sink.hpp"
#include "loupe/viewer/perfetto.hpp"

namespace loupe::sinks {

/// Writes one session to `path` in Perfetto's protobuf trace format.
///
/// The constructor creates (or truncates) the file, so a bad path throws
/// loupe::error naming it before the session starts. While the session runs
/// the sink holds it in memory in the compact .loupe encoding (about 4–6
/// bytes per event); at the end it converts and writes the file (the
/// collector thread does this; the host's threads never wait for it). For
/// sessions of hundreds of millions of events, record with file_sink and
/// convert afterwards with `loupe convert FILE --to perfetto -o OUT`.
/// Thread-safety: used by one session; loupe calls it from the collector only.
class perfetto_sink final : public detail::converting_sink<viewer::write_perfetto> {
public:
    using converting_sink::converting_sink;
};

}  // namespace loupe::sinks
