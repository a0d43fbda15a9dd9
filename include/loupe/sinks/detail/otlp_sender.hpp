// The live OTLP sink's sending side (sinks/otlp_http_sink.hpp): a bounded
// queue of finished requests and one thread that POSTs them in order with
// loupe::exporter::otlp_http_exporter (retries, backoff, partial success).
//
// The queue never blocks its producer (the collector): a request that does
// not fit is dropped and its spans counted. A request that could not be
// delivered (retries spent, or a reply not to be retried) is counted, and
// the next one is tried afresh, so a collector that restarts gets the
// session's later spans. stop() gives the queue a deadline to drain, then
// cuts a retry's wait short and counts what was left unsent.
//
// Cost: per request one TCP connection (the exporter's), on the sender
// thread. Thread-safety: enqueue from one thread (the collector), stats()
// from any; start/stop from the thread that owns the sink.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "loupe/base/error.hpp"
#include "loupe/export/otlp_http.hpp"

namespace loupe::sinks {

/// What a live OTLP sink did with the spans of its sessions.
struct otlp_http_sink_stats {
    std::uint64_t spans = 0;           ///< converted from the session's records
    std::uint64_t spans_accepted = 0;  ///< in requests the collector answered 2xx (rejected ones included)
    std::uint64_t spans_rejected = 0;  ///< the collector's partial_success.rejected_spans, summed
    std::uint64_t spans_failed = 0;    ///< in requests not delivered (retries spent, or an error reply)
    std::uint64_t spans_queue_full = 0;  ///< in requests dropped because the queue was full
    std::uint64_t spans_unsent = 0;      ///< still queued when a stop's shutdown_timeout ran out
    std::uint64_t requests = 0;          ///< handed to the sender
    std::uint64_t requests_accepted = 0;
    std::uint64_t retries = 0;
    std::uint64_t bytes = 0;   ///< request bodies accepted, as sent
    std::string first_error;   ///< why the first request not delivered was not ("" when none)
    /// Spans converted but not accepted (failed, dropped, unsent, rejected).
    std::uint64_t spans_lost() const noexcept {
        return spans_failed + spans_queue_full + spans_unsent + spans_rejected;
    }
};

}  // namespace loupe::sinks

namespace loupe::detail {

class otlp_sender {
public:
    otlp_sender(exporter::otlp_http_options http, std::size_t max_queue_bytes)
        : http_(std::move(http)), max_queue_bytes_(max_queue_bytes) {
        // The exporter's waits between retries end early when stop() runs out of time.
        http_.wait = [this](std::chrono::milliseconds wait) {
            std::unique_lock<std::mutex> lock(mutex_);
            return !wake_.wait_for(lock, wait, [this] { return abort_; });
        };
    }
    ~otlp_sender() { stop(std::chrono::milliseconds(0)); }
    otlp_sender(const otlp_sender&) = delete;
    otlp_sender& operator=(const otlp_sender&) = delete;

    void start() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (thread_.joinable()) return;
        stopping_ = abort_ = false;
        thread_ = std::thread([this] { run(); });
    }

    /// Queues a request of `spans` spans; false (counted) when the queue is full.
    bool enqueue(std::string&& request, std::uint64_t spans) {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_.spans += spans;
        if (queued_bytes_ + request.size() > max_queue_bytes_ && !queue_.empty()) {
            stats_.spans_queue_full += spans;
            note_error("the send queue was full (" + std::to_string(max_queue_bytes_) +
                       " bytes): a request was dropped; the collector is slower than the session");
            return false;
        }
        queued_bytes_ += request.size();
        queue_.push_back({std::move(request), spans});
        wake_.notify_all();
        return true;
    }

    /// A copy of the counts so far.
    sinks::otlp_http_sink_stats snapshot() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return stats_;
    }

    /// Waits until the queue is sent or `timeout` passed, then stops the
    /// thread; what was not sent by then is counted unsent.
    void stop(std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!thread_.joinable()) return;
        stopping_ = true;
        wake_.notify_all();
        wake_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; });
        abort_ = true;
        wake_.notify_all();
        lock.unlock();
        thread_.join();
        lock.lock();
        for (const item& i : queue_) stats_.spans_unsent += i.spans;
        queue_.clear();
        queued_bytes_ = 0;
    }

private:
    struct item {
        std::string request;
        std::uint64_t spans = 0;
    };

    void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return abort_ || stopping_ || !queue_.empty(); });
            if (abort_ || queue_.empty()) return;  // stopped, or stopping with nothing left
            item next = std::move(queue_.front());
            queue_.pop_front();
            queued_bytes_ -= next.request.size();
            busy_ = true;
            lock.unlock();
            send(next);
            lock.lock();
            busy_ = false;
            wake_.notify_all();
        }
    }

    // One request with a fresh exporter: one that failed stops for good.
    void send(const item& i) {
        if (!exporter_ || exporter_->stopped()) exporter_.emplace(http_);
        const exporter::otlp_http_result before = exporter_->result();
        const bool delivered = exporter_->send(i.request);
        const exporter::otlp_http_result& after = exporter_->result();
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.requests;
        stats_.retries += after.retries - before.retries;
        if (delivered) {
            ++stats_.requests_accepted;
            stats_.spans_accepted += i.spans;
            stats_.spans_rejected += after.spans_rejected - before.spans_rejected;
            stats_.bytes += after.bytes - before.bytes;
            if (after.spans_rejected != before.spans_rejected) {
                note_error("the collector rejected " + std::to_string(after.spans_rejected - before.spans_rejected) +
                           " spans" + (after.rejection_message.empty() ? "" : ": " + after.rejection_message));
            }
        } else {
            stats_.spans_failed += i.spans;
            note_error(after.first_error);
        }
    }

    // The first error is reported through loupe's error handler at once;
    // all are counted.
    void note_error(const std::string& what) {
        if (!stats_.first_error.empty()) return;
        stats_.first_error = what;
        report_error("otlp_http_sink '" + http_.endpoint + "': " + what);
    }

    exporter::otlp_http_options http_;
    std::size_t max_queue_bytes_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<item> queue_;
    std::size_t queued_bytes_ = 0;
    bool busy_ = false;      // a request is being sent
    bool stopping_ = false;  // drain, then end
    bool abort_ = false;     // end now
    sinks::otlp_http_sink_stats stats_;
    std::optional<exporter::otlp_http_exporter> exporter_;  // sender thread only
    std::thread thread_;
};

}  // namespace loupe::detail
