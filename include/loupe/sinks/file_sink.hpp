// A sink that writes the native .loupe trace format (docs/format.md) to a file.
#pragma once

#include <string>

#include "loupe/base/error.hpp"
#include "loupe/core/sink.hpp"
#include "loupe/format/encoder.hpp"
#include "loupe/sinks/detail/claimed_file.hpp"

namespace loupe::sinks {

/// Writes one session to `path` as a .loupe trace. The file is opened when a
/// session starts with the sink, after the session's whole configuration was
/// checked (`sink::open`): a bad path makes `start_session` throw a
/// `loupe::error` naming the path and the OS reason, and a session that does
/// not start leaves no file behind (one it would have created is removed; an
/// existing one keeps its bytes). An existing file is truncated before the
/// first write.
/// Buffers up to `buffer_bytes` (default 256 KiB) and writes with write(2);
/// the collector also flushes it about once a second.
/// A write error (disk full, I/O error) throws on the collector thread, where
/// loupe reports it once and counts the lost records; the host never sees it.
/// The descriptor is close-on-exec. In a child process after fork() the file
/// is left alone (see `session::stop`).
/// Thread-safety: used by one session; loupe calls it from the collector only
/// (`open` and `abandon` from the thread that starts the session).
class file_sink final : public sink {
public:
    explicit file_sink(std::string path, std::size_t buffer_bytes = 256 * 1024)
        : file_(std::move(path)), buffer_bytes_(buffer_bytes) {}
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
        if (encoder_.bytes().size() >= buffer_bytes_) write_out();
    }

    void flush() override {
        encoder_.close_batch();
        write_out();
    }

    /// Writes what is buffered and closes the file. A session that did not
    /// end (process died) leaves a file without an END record, which readers
    /// report as cut short. Idempotent.
    void close() override {
        if (!file_.is_open() && !encoder_.begun()) return;  // nothing to write: no file made
        try {
            flush();
        } catch (...) {
            file_.close();
            throw;
        }
        file_.close();
    }

    const std::string& path() const noexcept { return file_.path(); }
    /// Bytes written to the file so far.
    std::uint64_t bytes_written() const noexcept { return file_.written(); }

private:
    void write_out() {
        auto& bytes = encoder_.bytes();
        try {
            file_.append(bytes.data(), bytes.size());
        } catch (const error& e) {
            bytes.clear();
            throw error(std::string("trace file ") + e.what());
        }
        bytes.clear();
    }

    detail::claimed_file file_;
    std::size_t buffer_bytes_;
    detail::trace_encoder encoder_;
};

}  // namespace loupe::sinks
