// The sink interface: where a session sends what it recorded.
//
// A sink receives `record` views, one at a time (`write`) or as a run of
// plain events (`write_batch`, optional), from the collector thread only,
// never concurrently for one sink (so a sink needs no lock of its own unless
// another thread reads what it stores). Records arrive in this order:
// `session_begin`, then events, drop counts and context changes as they are
// drained (a thread's context record comes before the events it applies to),
// then `session_end`, followed by `flush()` and `close()`. Before all that,
// `open()` (and `abandon()` if the session did not start after all) runs on
// the thread that starts the session.
//
// Pointers in a record are valid only during the `write` (or `write_batch`)
// call; copy what you keep. `site` pointers are the exception: they point
// at static call-site metadata and stay valid while the program runs.
#pragma once

#include <cstddef>

#include "loupe/base/record.hpp"

namespace loupe {

/// Base class of every sink.
///
/// Thread-safety: loupe calls `write`, `flush` and `close` from its collector
/// thread only, one call at a time per sink. A sink shared by two sessions is
/// still called from that one thread.
///
/// Failure: a sink reports a failure by throwing (any exception). loupe catches
/// it, reports it once through the error handler, stops calling the sink for
/// that session and counts the records it could not deliver
/// (`session_stats::sink_failures`, `records_undelivered`). A failure never
/// reaches a host thread.
class sink {
public:
    virtual ~sink() = default;
    /// Acquires the destination (a file sink opens its file), on the thread
    /// that starts a session with this sink: after the session's whole
    /// configuration was checked and before its first record. Throw
    /// (loupe::error naming the destination) to refuse: `start_session`
    /// then throws it and the session does not start. Called once per
    /// session that uses the sink. Default: nothing.
    virtual void open() {}
    /// The session that `open` was called for did not start (another sink
    /// refused it, or the runtime did): undo what that `open` did, e.g.
    /// remove a file it created (a destination that a session which did
    /// start writes to stays). Default: nothing.
    virtual void abandon() noexcept {}
    /// Consumes one record. Must not call back into loupe's session API.
    virtual void write(const record& r) = 0;
    /// Consumes `count` records at once, in order, as `write` would one by
    /// one; return true. The collector offers runs of plain events this way
    /// (zones without metrics or a method call, instants, counters, flow
    /// points; up to `max_batch_records`, all of one thread and one session;
    /// other records, and events of a run it cannot send whole, come
    /// through `write`). Overriding it saves a virtual call and the sink's
    /// per-record set-up for each event: it is what lets the collector keep
    /// up with producers recording flat out. Default: returns false without taking
    /// any, and the collector then calls `write` for each (and asks no more).
    /// A sink that throws from here fails as from `write`, and every record
    /// of the batch counts as undelivered.
    virtual bool write_batch(const record* records, std::size_t count) {
        static_cast<void>(records);
        static_cast<void>(count);
        return false;
    }
    /// The most records one `write_batch` call receives.
    static constexpr std::size_t max_batch_records = 32;
    /// Pushes buffered data to its destination.
    virtual void flush() = 0;
    /// Flushes and releases the destination. Idempotent: later calls do nothing.
    virtual void close() = 0;
};

}  // namespace loupe
