// A sink that writes the native .loupe trace format (docs/format.md) to a file.
#pragma once

#include <string>

#include "loupe/base/error.hpp"
#include "loupe/core/sink.hpp"
#include "loupe/format/encoder.hpp"
#include "loupe/sinks/detail/background_writer.hpp"
#include "loupe/sinks/detail/claimed_file.hpp"

namespace loupe::sinks {

/// Writes one session to `path` as a .loupe trace. The file is opened when a
/// session starts with the sink, after the session's whole configuration was
/// checked (`sink::open`): a bad path makes `start_session` throw a
/// `loupe::error` naming the path and the OS reason, and a session that does
/// not start leaves no file behind (one it would have created is removed; an
/// existing one keeps its bytes). An existing file is truncated before the
/// first write.
///
/// The collector encodes records into a buffer of `buffer_bytes` (default
/// 256 KiB); full buffers, and what the collector flushes about once a
/// second, go to a writer thread of the sink's own, which appends them with
/// write(2). So a disk that makes write(2) wait stalls that thread, not the
/// collector: up to `queue_bytes` (default 16 MiB, about 4 M zones) wait
/// for it, and only beyond that does the collector wait too (and the rings
/// fill). `close` waits until everything is written. The thread starts
/// with the first hand-over and ends with `close`.
/// A write error (disk full, I/O error) throws on the collector thread at
/// its next hand-over or at `close`, where loupe reports it once and counts
/// the records it could not deliver; the host never sees it.
/// The descriptor is close-on-exec. In a child process after fork() the file
/// is left alone (see `session::stop`). A process killed without
/// `stop_sessions_on_signal` loses what was queued and not yet written.
/// Thread-safety: used by one session; loupe calls it from the collector only
/// (`open` and `abandon` from the thread that starts the session).
class file_sink final : public sink {
public:
    explicit file_sink(std::string path, std::size_t buffer_bytes = 256 * 1024, std::size_t queue_bytes = 16 << 20)
        : file_(std::move(path)), buffer_bytes_(buffer_bytes), writer_(file_, queue_bytes) {}
    ~file_sink() override {
        try {
            close();
        } catch (...) {  // destructors do not throw; close() already reported through loupe
        }
    }
    file_sink(const file_sink&) = delete;
    file_sink& operator=(const file_sink&) = delete;

    void open() override { file_.claim(); }
    void abandon() noexcept override { file_.release_unstarted(); }

    void write(const record& r) override {
        encoder_.encode(r);
        if (encoder_.bytes().size() >= buffer_bytes_) writer_.hand_over(encoder_.bytes());
    }
    bool write_batch(const record* records, std::size_t count) override {
        for (std::size_t i = 0; i < count; ++i) encoder_.encode(records[i]);
        if (encoder_.bytes().size() >= buffer_bytes_) writer_.hand_over(encoder_.bytes());
        return true;
    }

    /// Hands what is buffered to the writer thread (does not wait for it).
    void flush() override {
        encoder_.close_batch();
        writer_.hand_over(encoder_.bytes());
    }

    /// Writes what is buffered and closes the file. A session that did not
    /// end (process died) leaves a file without an END record, which readers
    /// report as cut short. Idempotent.
    void close() override {
        // Nothing encoded: no file made (and no writer thread that may be
        // opening it, so is_open() is read only then).
        if (!encoder_.begun() && !file_.is_open()) return;
        try {
            flush();
            writer_.finish();
        } catch (...) {
            finish_quietly();
            file_.close();
            throw;
        }
        file_.close();
    }

    const std::string& path() const noexcept { return file_.path(); }
    /// Bytes written to the file so far (by the writer thread). Any thread.
    std::uint64_t bytes_written() const noexcept { return file_.written(); }
    /// The writer thread's time on CPU so far, in ns (counted when it ends,
    /// at `close`). Any thread.
    std::uint64_t writer_cpu_ns() const noexcept { return writer_.cpu_ns(); }

private:
    // The writer thread ends even when a hand-over failed.
    void finish_quietly() noexcept {
        try {
            writer_.finish();
        } catch (...) {  // the error was thrown once already
        }
    }

    detail::claimed_file file_;
    std::size_t buffer_bytes_;
    detail::trace_encoder encoder_;
    detail::background_writer writer_;  // after file_: ends (joins) before the file closes
};

}  // namespace loupe::sinks
