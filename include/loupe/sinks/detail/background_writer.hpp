// The writer thread of a file-writing sink. The collector hands it whole
// buffers of encoded bytes and goes back to the rings; the thread appends
// them to the file. While the disk makes write(2) wait (dirty-page
// throttling, a slow device, a full pipe), the collector keeps draining the
// rings instead of waiting with it, so the host's events are not dropped
// for a stall that the queue can hold.
//
// Bounded: at most `max_queued_bytes` wait, the buffer being written
// included. A hand-over beyond that waits until the writer has made room
// (what the collector did for every write before). Written buffers are
// kept for reuse, so a steady stream allocates nothing.
//
// Errors: the first append that fails (disk full, I/O error) is kept; what
// was queued after it is discarded, and the next hand_over, or finish(),
// throws it as loupe::error.
//
// The thread starts with the first hand-over (a sink that never writes
// starts none) and ends in finish(). If it cannot start, buffers are
// written on the caller's thread, as before. In a child process after
// fork() there is no writer thread: finish() there writes nothing (the
// child never writes its parent's file) and forgets the parent's thread;
// the child must not hand over to a writer its parent started.
//
// Thread-safety: hand_over, finish and the destructor from one thread at a
// time (the collector); cpu_ns() from any thread.
#pragma once

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/error.hpp"
#include "loupe/sinks/detail/claimed_file.hpp"

namespace loupe::detail {

class background_writer {
public:
    using buffer = std::vector<unsigned char>;

    background_writer(claimed_file& file, std::size_t max_queued_bytes) noexcept
        : file_(file), max_queued_(max_queued_bytes) {}
    ~background_writer() {
        try {
            finish();
        } catch (...) {  // reported by the sink's close() already, or nobody asks
        }
    }
    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Queues `bytes` to be appended and gives back an empty buffer to fill
    /// next (a written one's capacity reused). Waits only while the queue is
    /// full. Throws loupe::error when an earlier append failed.
    void hand_over(buffer& bytes) {
        std::unique_lock<std::mutex> lock(mutex_);
        room_.wait(lock, [&] { return queued_bytes_ == 0 || queued_bytes_ + bytes.size() <= max_queued_ || failed_; });
        if (failed_) bytes.clear();  // nowhere to go: the sink counts what it cannot deliver
        throw_if_failed_locked();
        if (bytes.empty()) return;
        const std::size_t size = bytes.size();
        queue_.push_back(std::move(bytes));
        queued_bytes_ += size;
        bytes = take_spare_locked(size);
        if (!thread_.joinable() && !writes_here_) start_locked();
        if (!writes_here_) {
            work_.notify_one();
            return;
        }
        while (!queue_.empty()) write_front(lock);
        throw_if_failed_locked();
    }

    /// Waits until everything handed over is written and ends the thread.
    /// Throws loupe::error when an append failed. Later hand-overs start a
    /// new thread.
    void finish() {
        if (owner_pid_ != 0 && owner_pid_ != ::getpid()) {  // a forked child: the thread was the parent's
            // Never writes, and never takes the lock that thread may have held.
            if (thread_.joinable()) ::new (static_cast<void*>(&thread_)) std::thread();
            return;
        }
        if (thread_.joinable()) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                closing_ = true;
            }
            work_.notify_one();
            thread_.join();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        closing_ = false;
        throw_if_failed_locked();
    }

    /// The writer threads' time on CPU, in ns, counted when each ends.
    std::uint64_t cpu_ns() const noexcept { return cpu_ns_.load(std::memory_order_acquire); }

private:
    static constexpr std::size_t max_spares = 4;

    void start_locked() {
        try {
            owner_pid_ = ::getpid();
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error&) {  // no thread to be had: write here, as before
            writes_here_ = true;
        }
    }

    void run() noexcept {
#if LOUPE_OS_LINUX
        pthread_setname_np(pthread_self(), "loupe-writer");
#endif
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            work_.wait(lock, [&] { return !queue_.empty() || closing_; });
            if (queue_.empty()) break;
            write_front(lock);
        }
        timespec cpu{};
        if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
            cpu_ns_.fetch_add(static_cast<std::uint64_t>(cpu.tv_sec) * 1000000000u + static_cast<std::uint64_t>(cpu.tv_nsec),
                              std::memory_order_release);
        }
    }

    // Appends the queue's first buffer with the lock released.
    void write_front(std::unique_lock<std::mutex>& lock) noexcept {
        buffer bytes = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        bool ok = true;
        std::string message;
        try {
            file_.append(bytes.data(), bytes.size());
        } catch (const std::exception& e) {
            ok = false;
            try {
                message = e.what();
            } catch (...) {  // no memory for the text: throw_if_failed_locked says "write failed"
            }
        }
        const std::size_t size = bytes.size();
        bytes.clear();
        lock.lock();
        queued_bytes_ -= size;
        if (!ok && !failed_) {
            failed_ = true;
            error_ = std::move(message);
            queued_bytes_ = 0;
            queue_.clear();
        }
        if (spares_.size() < max_spares) {
            try {
                spares_.push_back(std::move(bytes));
            } catch (...) {  // not kept: the next buffer allocates
            }
        }
        room_.notify_all();
    }

    // A written buffer to fill next, else a new one with room for `bytes`
    // (what the last one held): the encoder then fills it without a copy
    // each time it doubles. Out of memory: an empty one, which grows.
    buffer take_spare_locked(std::size_t bytes) noexcept {
        buffer b;
        if (!spares_.empty()) {
            b = std::move(spares_.back());
            spares_.pop_back();
            return b;
        }
        try {
            b.reserve(bytes);
        } catch (...) {
        }
        return b;
    }

    void throw_if_failed_locked() const {
        if (failed_) throw error("trace file " + (error_.empty() ? std::string("write failed") : error_));
    }

    claimed_file& file_;
    const std::size_t max_queued_;
    std::mutex mutex_;
    std::condition_variable work_;  // the writer waits for buffers (or closing_)
    std::condition_variable room_;  // the collector waits for room
    std::deque<buffer> queue_;
    std::vector<buffer> spares_;
    std::size_t queued_bytes_ = 0;
    bool closing_ = false;
    bool failed_ = false;
    bool writes_here_ = false;
    std::string error_;
    std::atomic<std::uint64_t> cpu_ns_{0};
    pid_t owner_pid_ = 0;
    std::thread thread_;
};

}  // namespace loupe::detail
