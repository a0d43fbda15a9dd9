// A sink that writes the native .loupe trace format (docs/format.md) to a file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "loupe/format/encoder.hpp"
#include "loupe/base/error.hpp"
#include "loupe/core/sink.hpp"

namespace loupe::sinks {

/// Writes one session to `path` as a .loupe trace. Opens (creates or
/// truncates) the file in the constructor, so a bad path fails before the
/// session starts: `loupe::error` names the path and the OS reason.
/// Buffers up to `buffer_bytes` (default 256 KiB) and writes with write(2);
/// the collector also flushes it about once a second.
/// A write error (disk full, I/O error) throws on the collector thread, where
/// loupe reports it once and counts the lost records; the host never sees it.
/// The descriptor is close-on-exec. In a child process after fork() the file
/// is left alone (see `session::stop`).
/// Thread-safety: used by one session; loupe calls it from the collector only.
class file_sink final : public sink {
public:
    explicit file_sink(std::string path, std::size_t buffer_bytes = 256 * 1024)
        : path_(std::move(path)), buffer_bytes_(buffer_bytes) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd_ < 0) {
            throw error("cannot open trace file '" + path_ + "' for writing: " + std::strerror(errno));
        }
    }
    ~file_sink() override {
        try {
            close();
        } catch (...) {  // destructors do not throw; close() already reported through loupe
        }
    }
    file_sink(const file_sink&) = delete;
    file_sink& operator=(const file_sink&) = delete;

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
        if (fd_ < 0) return;
        try {
            flush();
        } catch (...) {
            ::close(fd_);
            fd_ = -1;
            throw;
        }
        ::close(fd_);
        fd_ = -1;
    }

    const std::string& path() const noexcept { return path_; }
    /// Bytes written to the file so far.
    std::uint64_t bytes_written() const noexcept { return written_; }

private:
    void write_out() {
        auto& bytes = encoder_.bytes();
        if (fd_ < 0) {
            bytes.clear();
            return;
        }
        const unsigned char* p = bytes.data();
        std::size_t left = bytes.size();
        while (left > 0) {
            ssize_t n = ::write(fd_, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                const int err = n < 0 ? errno : EIO;
                bytes.clear();
                throw error("trace file '" + path_ + "': write failed after " + std::to_string(written_) +
                            " bytes: " + std::strerror(err));
            }
            p += n;
            left -= static_cast<std::size_t>(n);
            written_ += static_cast<std::uint64_t>(n);
        }
        bytes.clear();
    }

    std::string path_;
    std::size_t buffer_bytes_;
    int fd_ = -1;
    std::uint64_t written_ = 0;
    detail::trace_encoder encoder_;
};

}  // namespace loupe::sinks
