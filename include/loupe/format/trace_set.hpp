// Trace sets: several .loupe traces in one file, back to back, each intact
// (what `loupe merge -o FILE.loupe` writes). A plain .loupe file is a set of
// one.
//
//   std::vector<loupe::trace> traces = loupe::read_trace_set_file("tasks.loupe");
//
// Layout: trace, trace, ...; each trace is a whole .loupe file (16-byte
// header, records, END: docs/format.md). The split needs only the record
// framing: from a trace's header, records `u8 kind, varint length,
// payload[length]` up to and including END (kind 0x07); the next trace
// starts right after it, with the magic bytes again. Nothing else may come
// between or after the traces.
//
// A trace cut short (no END: the process died while it recorded) can only be
// the last of a set, or be followed by the magic bytes of the next trace at
// a record boundary (the writer of the set was given a cut-short file). Both
// are errors unless decode_options::accept_truncated, when the trace is read
// up to its last whole record (trace::complete false), as read_trace does.
//
// Errors are loupe::trace_error naming the byte of the set where the problem
// is (and, in a set of several, which trace it is in); read_trace_set_file
// adds the path.
//
// Cost: split_trace_set reads the framing only (O(records)); reading is
// read_trace per trace, or with trace_set_options::events false, the same
// validation with every event checked and none kept (a model of the
// definitions, contexts, I/O, flows and task points: what the task reports
// need, at a small fraction of the memory).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/format/decoder.hpp"
#include "loupe/format/mapped_file.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/format/wire.hpp"

namespace loupe {

/// Where one trace of a set is: its bytes are [offset, offset + size). A
/// trace cut short is its whole records: a record the input ends inside is
/// not part of it (as decode_result::bytes_used).
struct trace_segment {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    bool ended = true;  ///< it holds its END record (false: cut short; only with accept_truncated)
};

/// How read_trace_set reads each trace.
struct trace_set_options {
    decode_options decode = {};
    /// false: every event is decoded and checked, none is kept (trace::events
    /// stays empty, and so do the zones' metrics, method calls and
    /// arguments); everything else is read as read_trace does.
    bool events = true;
};

namespace detail {

inline bool starts_with_magic(const unsigned char* p, std::uint64_t left) noexcept {
    return left >= sizeof format::magic && std::memcmp(p, format::magic, sizeof format::magic) == 0;
}

// The first `left` bytes (fewer than the magic's) are the magic's beginning.
inline bool magic_prefix(const unsigned char* p, std::uint64_t left) noexcept {
    return left < sizeof format::magic && std::memcmp(p, format::magic, static_cast<std::size_t>(left)) == 0;
}

// Builds a trace from decoder callbacks, keeping no event: what a report on
// the task points (or anything but events) needs.
class trace_builder_without_events final : public trace_builder {
public:
    using trace_builder::trace_builder;
    void on_event(std::uint64_t, const trace_event&) override {}
    void on_zone_metrics(std::uint64_t, const trace_zone_metrics&) override {}
    void on_method_call(std::uint64_t, const trace_method_call_record&) override {}
    void on_zone_arg(std::uint64_t, const trace_zone_arg&) override {}
};

}  // namespace detail

/// Reads the trace in [data, data + size) as read_trace does, but keeps no
/// event (see trace_set_options::events). Throws loupe::trace_error.
inline trace read_trace_without_events(const void* data, std::size_t size, decode_options options = {}) {
    trace t;
    detail::trace_builder_without_events builder(t);
    t.complete = decode_trace(data, size, builder, options).complete;
    builder.attribute_contexts();
    builder.finish_args();
    builder.finish_params();
    return t;
}

/// The traces of the set in [data, data + size), in order, from the record
/// framing alone (records are not validated: reading them does). Throws
/// loupe::trace_error naming the byte: no magic where a trace must start,
/// bytes after an END that do not start a trace, a trace cut short (unless
/// options.accept_truncated), an empty input. `read`, when given, is told
/// what was read (read_progress).
inline std::vector<trace_segment> split_trace_set(const void* data, std::size_t size, decode_options options = {},
                                                  const read_progress& read = {}) {
    static const unsigned char empty = 0;
    const auto* p = size == 0 ? &empty : static_cast<const unsigned char*>(data);
    const std::uint64_t n = size;
    detail::progress_teller progress(read);
    std::vector<trace_segment> out;
    if (n == 0) throw trace_error(0, "empty input: expected a .loupe trace (file cut short?)", true);
    std::uint64_t start = 0;
    while (start < n) {
        const std::uint64_t left = n - start;
        if (!detail::starts_with_magic(p + start, left)) {
            if (detail::magic_prefix(p + start, left)) {
                throw trace_error(n, "the input ends inside the magic bytes of the trace that starts at byte " +
                                         std::to_string(start) + " (file cut short?)",
                                  true);
            }
            if (start == 0) throw trace_error(0, "not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A");
            std::uint64_t junk = left;  // up to the next trace, if one follows
            for (std::uint64_t q = start + 1; q < n; ++q) {
                if (detail::starts_with_magic(p + q, n - q)) {
                    junk = q - start;
                    break;
                }
            }
            throw trace_error(start, "what follows the END record of the trace that starts at byte " +
                                         std::to_string(out.back().offset) + " does not start a trace: " +
                                         std::to_string(junk) + (junk == 1 ? " byte" : " bytes") + " before " +
                                         (junk == left ? std::string("the end of the input")
                                                       : "the next trace (at byte " + std::to_string(start + junk) + ")") +
                                         "; expected the magic bytes 89 4C 4F 55 50 45 0D 0A or the end of the input");
        }
        if (left < detail::format::header_size) {
            if (!options.accept_truncated) {
                throw trace_error(n, "the input ends inside the 16-byte header of the trace that starts at byte " +
                                         std::to_string(start) + " (file cut short?)",
                                  true);
            }
            out.push_back({start, left, false});  // reading it says what is wrong
            progress.stopped(n);
            return out;
        }
        std::uint64_t at = start + detail::format::header_size;
        bool ended = false;
        bool next_trace = false;
        while (at < n && !ended) {
            if (detail::starts_with_magic(p + at, n - at)) {  // a trace starts where a record should
                next_trace = true;
                break;
            }
            detail::trace_cursor head(p, at, n);
            const std::uint8_t kind = head.u8("record kind");
            std::uint64_t length = 0;
            try {
                length = head.varint("record length");
            } catch (const trace_error& e) {
                if (!(options.accept_truncated && e.truncated())) throw;
                break;  // cut inside the length: the trace is cut short there
            }
            if (length > head.left()) {
                if (options.accept_truncated) break;
                throw trace_error(at, "record of kind " + std::to_string(kind) + " declares " + std::to_string(length) +
                                          " payload bytes but only " + std::to_string(head.left()) +
                                          " remain (file cut short?)",
                                  true);
            }
            at = head.pos() + length;
            ended = kind == detail::format::rec_end;
            progress.passed(at);
        }
        if (!ended && !options.accept_truncated) {
            if (next_trace) {
                throw trace_error(at, "a trace starts here, inside the trace that starts at byte " +
                                          std::to_string(start) + ", which has no END record (cut short?)",
                                  true);
            }
            throw trace_error(n, "the trace that starts at byte " + std::to_string(start) +
                                     " ends without an END record (file cut short?)",
                              true);
        }
        if (!ended && !next_trace) {  // cut short: this trace is its whole records, the rest is lost
            out.push_back({start, at - start, false});
            progress.stopped(n);
            return out;
        }
        out.push_back({start, at - start, ended});
        start = at;
    }
    progress.stopped(n);
    return out;
}

/// Reads every trace of the set in [data, data + size), in order. Throws
/// loupe::trace_error naming the byte of the set (offsets are the set's,
/// not the trace's) and, in a set of several, which trace.
inline std::vector<trace> read_trace_set(const void* data, std::size_t size, const trace_set_options& options = {}) {
    const std::vector<trace_segment> segments = split_trace_set(data, size, options.decode);
    const auto* p = static_cast<const unsigned char*>(data);
    std::vector<trace> out;
    out.reserve(segments.size());
    for (std::size_t k = 0; k < segments.size(); ++k) {
        const trace_segment& s = segments[k];
        try {
            const void* bytes = p + s.offset;
            const std::size_t length = static_cast<std::size_t>(s.size);
            out.push_back(options.events ? read_trace(bytes, length, options.decode)
                                         : read_trace_without_events(bytes, length, options.decode));
        } catch (const trace_error& e) {
            const std::string where = segments.size() == 1 ? std::string()
                                                            : "trace " + std::to_string(k + 1) + " of " +
                                                                  std::to_string(segments.size()) + " (from byte " +
                                                                  std::to_string(s.offset) + "): ";
            throw trace_error(e.offset() + s.offset, where + e.detail(), e.truncated());
        }
    }
    return out;
}

/// Reads the trace set (or plain .loupe file) at `path`. Throws loupe::error
/// when it cannot be read, loupe::trace_error (prefixed with the path) when
/// it is not a valid set.
inline std::vector<trace> read_trace_set_file(const std::string& path, const trace_set_options& options = {}) {
    const detail::mapped_file bytes(path);
    try {
        return read_trace_set(bytes.data(), bytes.size(), options);
    } catch (const trace_error& e) {
        throw trace_error(e.offset(), e.detail(), e.truncated(), path);
    }
}

}  // namespace loupe
