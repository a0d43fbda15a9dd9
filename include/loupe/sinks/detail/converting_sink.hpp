// The body of the viewer-format sinks (sinks/perfetto_sink.hpp,
// sinks/chrome_json_sink.hpp): keeps the session in memory in the compact
// .loupe encoding (about 4–6 bytes per event, plus context changes) and, when
// the session ends, converts it with the given converter and writes the file.
// Viewer formats need a whole thread's events to nest slices, and the .loupe
// encoding is the smallest way to hold them until then.
#pragma once

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
        if (encoder_.bytes().size() >= max_buffer_bytes_ && r.kind != record_kind::session_end) {
            throw error("'" + path() + "': the session outgrew the sink's buffer of " + std::to_string(max_buffer_bytes_) +
                        " bytes; the file keeps what came before (record long sessions with file_sink and convert "
                        "them with `loupe convert`)");
        }
        encoder_.encode(r);
    }
    void flush() override { encoder_.close_batch(); }

    /// Converts what the session recorded and writes the file. A session that
    /// did not end (stopped by process exit) is converted as far as it got.
    /// Idempotent.
    void close() override {
        if (closed_) return;
        closed_ = true;
        encoder_.close_batch();
        if (!encoder_.begun() && !file_.is_open()) return;  // never used: no file made
        std::vector<unsigned char> bytes = std::move(encoder_.bytes());
        std::string out;
        if (encoder_.begun()) {  // else no session wrote here: an empty file
            decode_options options;
            options.accept_truncated = true;
            convert_(bytes.data(), bytes.size(), options, out);
        }
        bytes = {};
        try {
            file_.append(out.data(), out.size());
        } catch (...) {
            file_.close();
            throw;
        }
        file_.close();
    }

    const std::string& path() const noexcept { return file_.path(); }

private:
    claimed_file file_;
    converter convert_;
    std::size_t max_buffer_bytes_;
    trace_encoder encoder_;
    bool closed_ = false;
};

}  // namespace loupe::detail
