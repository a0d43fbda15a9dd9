// The output file of a file-writing sink, claimed when a session starts
// (sink::open) rather than when the sink is made, so that a session whose
// configuration is refused leaves no file behind and truncates none.
//
// The first claim opens the file for writing, creating it when missing and
// leaving an existing file's bytes alone; the sink truncates it before its
// first write (`append`). A claim whose session did not start is
// given back (sink::abandon); when no claim is left, the file is closed and,
// if the claim created it, removed.
//
// Thread-safety: `claim` and `release_unstarted` may run on any thread (the
// threads that start sessions); `append` and `replace_contents` run on one
// thread at a time (the file sink's writer thread, background_writer.hpp;
// the converting sinks' collector), after a claim whose session started or
// for a sink driven without a session; `close` after the last of them.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "loupe/base/error.hpp"

namespace loupe::detail {

class claimed_file {
public:
    explicit claimed_file(std::string path) : path_(std::move(path)) {}
    ~claimed_file() { close(); }
    claimed_file(const claimed_file&) = delete;
    claimed_file& operator=(const claimed_file&) = delete;

    /// One more session will write here. The first claim opens the file.
    /// Throws loupe::error naming the path and the OS reason when it cannot.
    void claim() {
        std::lock_guard<std::mutex> lock(mutex_);
        claim_locked();
    }

    /// Gives back a claim whose session did not start. The last one (no
    /// session that claimed the file started) closes the file and removes it
    /// if `claim` created it.
    void release_unstarted() noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        if (claims_ == 0 || --claims_ > 0) return;
        ::close(fd_);
        fd_ = -1;
        if (created_) ::unlink(path_.c_str());
        created_ = truncate_ = false;
    }

    /// True while the file is open (claimed, not closed).
    bool is_open() const noexcept { return fd_ >= 0; }

    /// Appends `size` bytes (an existing file's old bytes go first). A file
    /// never claimed is claimed now (a sink driven without a session); one
    /// closed takes nothing. Throws loupe::error naming the path, the bytes
    /// written so far and the OS reason (disk full, I/O error).
    void append(const void* data, std::size_t size) {
        if (fd_ < 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (claims_ != 0) return;  // closed by the session that ended
            claim_locked();
        }
        if (truncate_) {
            if (::ftruncate(fd_, 0) != 0) {
                throw error("'" + path_ + "': cannot truncate it: " + std::strerror(errno));
            }
            truncate_ = false;
        }
        std::uint64_t done = written_.load(std::memory_order_relaxed);
        const int err = write_all(fd_, data, size, done);
        written_.store(done, std::memory_order_release);
        if (err != 0) {
            throw error("'" + path_ + "': write failed after " + std::to_string(done) + " bytes: " + std::strerror(err));
        }
    }

    /// Bytes appended so far. Any thread.
    std::uint64_t written() const noexcept { return written_.load(std::memory_order_acquire); }

    /// Replaces the file's contents with `size` bytes at once: they are
    /// written to a temporary file beside it (PATH.PID.tmp), which is then
    /// renamed over it, so a reader, or a process killed meanwhile, finds the
    /// old contents or the new, never a part. A file never claimed is
    /// claimed now. Throws loupe::error naming the path and the OS reason.
    void replace_contents(const void* data, std::size_t size) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (claims_ == 0) claim_locked();
        }
        const std::string temporary = path_ + "." + std::to_string(::getpid()) + ".tmp";
        const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) throw error("cannot write '" + temporary + "': " + std::strerror(errno));
        std::uint64_t done = 0;
        if (const int err = write_all(fd, data, size, done)) {
            ::close(fd);
            ::unlink(temporary.c_str());
            throw error("'" + temporary + "': write failed after " + std::to_string(done) + " bytes: " + std::strerror(err));
        }
        if (::close(fd) != 0 || ::rename(temporary.c_str(), path_.c_str()) != 0) {
            const int err = errno;
            ::unlink(temporary.c_str());
            throw error("cannot replace '" + path_ + "': " + std::strerror(err));
        }
        written_.store(size, std::memory_order_release);
        truncate_ = false;
    }

    /// Closes the descriptor. Idempotent.
    void close() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    const std::string& path() const noexcept { return path_; }

private:
    // Writes all `size` bytes to `fd` (retrying on EINTR), adding what it
    // wrote to `done`. Returns 0, or the errno of the failure (EIO for a
    // write that wrote nothing).
    static int write_all(int fd, const void* data, std::size_t size, std::uint64_t& done) noexcept {
        const auto* p = static_cast<const unsigned char*>(data);
        while (size > 0) {
            const ssize_t n = ::write(fd, p, size);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return n < 0 ? errno : EIO;
            p += n;
            size -= static_cast<std::size_t>(n);
            done += static_cast<std::uint64_t>(n);
        }
        return 0;
    }

    void claim_locked() {
        if (claims_ > 0) {  // open already (or closed by a session that ended: it stays so)
            ++claims_;
            return;
        }
        int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        const bool created = fd >= 0;
        if (fd < 0 && errno == EEXIST) fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw error("cannot open '" + path_ + "' for writing: " + std::strerror(errno));
        struct stat st {};
        fd_ = fd;
        created_ = created;
        truncate_ = !created && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);  // not a device (/dev/full)
        ++claims_;
    }

    std::string path_;
    std::mutex mutex_;
    int claims_ = 0;
    int fd_ = -1;
    std::atomic<std::uint64_t> written_{0};
    bool created_ = false;
    bool truncate_ = false;
};

}  // namespace loupe::detail
