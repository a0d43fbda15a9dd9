// The body of the viewer-format sinks (sinks/perfetto_sink.hpp,
// sinks/chrome_json_sink.hpp): keeps the session in memory in the compact
// .loupe encoding (about 4–6 bytes per event, plus context changes) and
// converts it with the given converter into the file: when the session ends,
// and while it runs, so that a process that dies leaves a file that opens.
// Viewer formats need a whole thread's events to nest slices, and the .loupe
// encoding is the smallest way to hold them until then.
//
// While the session runs, the collector's flush (about once a second)
// rewrites the file once the session has grown by half since the last
// write, or, while it is small (up to 4 MiB encoded, about 1 M events),
// when 10 s have passed: conversion work stays within a few times the final
// conversion's, and a process killed meanwhile leaves the session up to
// the last write. Each write replaces the file at once (claimed_file.hpp).
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "loupe/format/encoder.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/core/sink.hpp"
#include "loupe/sinks/detail/claimed_file.hpp"

namespace loupe::detail {

class converting_sink : public sink {
public:
    /// Converts .loupe bytes (data, size, decode options) and appends to out.
    using converter = std::function<void(const void*, std::size_t, decode_options, std::string&)>;

    /// The file is claimed when a session starts with the sink (`open`, see
    /// claimed_file.hpp): a bad path makes start_session throw loupe::error
    /// naming it, and a session that does not start leaves no file behind.
    /// `max_buffer_bytes` bounds the memory the session may take: past it the
    /// sink fails (loupe reports it once and counts the records it no longer
    /// takes) and the file holds the session up to that point.
    converting_sink(std::string path, converter convert, std::size_t max_buffer_bytes)
        : file_(std::move(path)), convert_(std::move(convert)), max_buffer_bytes_(max_buffer_bytes) {}
    ~converting_sink() override {
        try {
            close();
        } catch (...) {  // destructors do not throw; close() already reported through loupe
        }
    }
    converting_sink(const converting_sink&) = delete;
    converting_sink& operator=(const converting_sink&) = delete;

    void open() override { file_.claim(); }
    void abandon() noexcept override { file_.release_unstarted(); }

    void write(const record& r) override {
        if (r.kind != record_kind::session_end) check_room();
        encoder_.encode(r);
    }
    bool write_batch(const record* records, std::size_t count) override {  // plain events
        check_room();
        for (std::size_t i = 0; i < count; ++i) encoder_.encode(records[i]);
        return true;
    }
    void flush() override {
        encoder_.close_batch();
        const std::size_t size = encoder_.bytes().size();
        if (!encoder_.begun() || size == written_size_) return;
        const auto now = std::chrono::steady_clock::now();
        const bool grown = size >= written_size_ + written_size_ / 2;
        const bool small_and_due = size <= small_session_bytes && now - written_at_ >= small_session_interval;
        if (!grown && !small_and_due) return;
        write_file();
        written_at_ = now;
    }

    /// Converts what the session recorded and writes the file. A session that
    /// did not end (stopped by process exit) is converted as far as it got.
    /// Idempotent.
    void close() override {
        if (closed_) return;
        closed_ = true;
        encoder_.close_batch();
        if (!encoder_.begun() && !file_.is_open()) return;  // never used: no file made
        try {
            // Unless the last flush wrote all of it already.
            if (!encoder_.begun() || encoder_.bytes().size() != written_size_) write_file();
        } catch (...) {
            release();
            throw;
        }
        release();
    }

    const std::string& path() const noexcept { return file_.path(); }

private:
    // Fails the sink once the session outgrew its buffer (a batch may take
    // it past by a few hundred bytes).
    void check_room() {
        if (encoder_.bytes().size() < max_buffer_bytes_) return;
        throw error("'" + path() + "': the session outgrew the sink's buffer of " + std::to_string(max_buffer_bytes_) +
                    " bytes; the file keeps what came before (record long sessions with file_sink and convert "
                    "them with `loupe convert`)");
    }

    static constexpr std::size_t small_session_bytes = std::size_t{4} << 20;
    static constexpr std::chrono::seconds small_session_interval{10};

    // Converts what the session recorded so far (as far as it got: a
    // session still running has no END yet) and replaces the file with it.
    void write_file() {
        std::string out;
        if (encoder_.begun()) {  // else no session wrote here: an empty file
            decode_options options;
            options.accept_truncated = true;
            convert_(encoder_.bytes().data(), encoder_.bytes().size(), options, out);
        }
        file_.replace_contents(out.data(), out.size());
        written_size_ = encoder_.bytes().size();
    }

    void release() noexcept {
        file_.close();
        encoder_.bytes() = {};
    }

    claimed_file file_;
    converter convert_;
    std::size_t max_buffer_bytes_;
    trace_encoder encoder_;
    std::size_t written_size_ = 0;  ///< encoded bytes the file holds
    std::chrono::steady_clock::time_point written_at_ = std::chrono::steady_clock::now();
    bool closed_ = false;
};

}  // namespace loupe::detail
