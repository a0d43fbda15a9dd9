// Streaming decoder of the .loupe trace format (docs/format.md).
//
// `decode_trace` walks a trace held in memory record by record, validates it
// strictly and hands every record to a `trace_visitor`: `loupe dump` prints
// them, `loupe::read_trace` (reader.hpp) builds an in-memory model from them.
//
// Guarantees: never reads outside [data, data + size) for any input; every
// problem is a `loupe::trace_error` naming the byte offset of the offending
// field and what was expected there. Strings are resolved and timestamps
// un-delta'd before a visitor sees them.
//
// Cost: one pass, O(size); memory proportional to the number of distinct
// strings, sites and threads (not events).
// Thread-safety: a decode call uses only its own state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "loupe/base/context.hpp"
#include "loupe/format/wire.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/flow_id_text.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/base/record.hpp"
#include "loupe/base/site.hpp"

namespace loupe {

/// A trace that cannot be read. `offset()` is the byte where the offending
/// record or field starts; `truncated()` says the input ended early (as
/// opposed to holding bytes that make no sense).
class trace_error : public error {
public:
    /// `input` names the trace (a path) when known.
    trace_error(std::uint64_t offset, std::string detail, bool truncated = false, const std::string& input = {})
        : error((input.empty() ? "" : input + ": ") + "byte " + std::to_string(offset) + ": " + detail),
          offset_(offset),
          detail_(std::move(detail)),
          truncated_(truncated) {}
    std::uint64_t offset() const noexcept { return offset_; }
    /// The message without input name and offset.
    const std::string& detail() const noexcept { return detail_; }
    bool truncated() const noexcept { return truncated_; }

private:
    std::uint64_t offset_;
    std::string detail_;
    bool truncated_;
};

/// SESSION record plus the file header.
struct trace_session_info {
    std::uint16_t version_major = 0;
    std::uint16_t version_minor = 0;
    std::uint32_t flags = 0;
    std::uint64_t start_ns = 0;
    std::uint64_t wall_anchor_ns = 0;  ///< CLOCK_REALTIME at start_ns
    std::uint32_t pid = 0;
    clock_source clock = clock_source::tsc;
    std::string name;
    std::string program;  ///< the recording program's name (PROCESS record, since 1.7); "" when unknown
    // Which process, on which machine (HOST record, since 1.9; empty/0 when absent):
    std::string host;          ///< host name (gethostname)
    std::string boot_id;       ///< the kernel's boot id (/proc/sys/kernel/random/boot_id)
    /// Traces whose clock domains are equal and not empty share one clock:
    /// their times compare directly (same machine and boot, CLOCK_MONOTONIC).
    std::string clock_domain;
    std::uint64_t process_start_ns = 0;  ///< when the process started, on the trace's clock (0: unknown)
};

struct trace_site {
    std::uint64_t id = 0;
    site_kind kind = site_kind::zone;
    std::string name;
    std::string file;
    std::uint32_t line = 0;
    std::string function;
};

struct trace_thread {
    std::uint64_t id = 0;
    std::uint64_t os_tid = 0;
    std::string name;  ///< latest name; empty when unnamed
};

enum class event_type : std::uint8_t { zone = 1, instant = 2, counter = 3 };

/// trace_event::context when no context record applies.
inline constexpr std::size_t no_context = static_cast<std::size_t>(-1);
/// trace_event::method when the event is not a method call.
inline constexpr std::uint32_t no_method = 0xffffffffu;

/// One event with absolute timestamps (ns on the session's clock).
/// Instants and counters have end_ns == begin_ns; value is set for counters.
struct trace_event {
    event_type type = event_type::zone;
    /// A zone's arguments (LOUPE_ZONE_ARG): trace::zone_args[args_begin,
    /// +args_count) (set by read_trace from the ZONE_ARG records before the zone).
    std::uint32_t args_count = 0;
    std::uint64_t thread_id = 0;
    std::uint64_t site_id = 0;
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    double value = 0.0;
    /// Index into trace::contexts of the context the event ran in (set by
    /// read_trace; decode_trace visitors see no_context).
    std::size_t context = no_context;
    /// A zone's metric deltas: trace::metric_values[metrics_begin, +metrics_count)
    /// (set by read_trace from the ZONE_METRICS record after the zone).
    std::uint32_t metrics_begin = 0;
    std::uint32_t metrics_count = 0;
    /// A method call's zone: index into trace::method_calls of its values
    /// and exit details (set by read_trace from the METHOD_CALL record after
    /// the zone); no_method for other events.
    std::uint32_t method = no_method;
    std::uint32_t args_begin = 0;  ///< see args_count
};

/// `count` events of `thread_id` (0: threads without a ring) were lost.
struct trace_drop {
    std::uint64_t thread_id = 0;
    std::uint64_t count = 0;
    /// Set by read_trace: the end of the thread's last event before this
    /// record in the file (the session start when none). The events were
    /// lost after it, before the collector reported them.
    std::uint64_t after_ns = 0;
};

/// A thread's context (who it serves) from `time_ns` on, until its next
/// context record. Fields are indexed by loupe::context_field; empty = unset.
struct trace_context {
    std::uint64_t thread_id = 0;
    std::uint64_t time_ns = 0;
    std::string fields[context_field_count];
    std::uint8_t truncated_mask = 0;  ///< bit f: field f was cut to 63 bytes
    // The task the thread served (TASK_CONTEXT record, since 1.9); all 0 when none.
    std::uint64_t trace_high = 0;  ///< W3C trace id, first 16 hex digits
    std::uint64_t trace_low = 0;   ///< W3C trace id, last 16 hex digits
    std::uint64_t span_id = 0;     ///< the call the thread runs as (its outgoing calls' parent)
    std::uint8_t trace_flags = 0;  ///< W3C trace-flags
    std::string tracestate;        ///< W3C tracestate as kept, may be empty
    const std::string& get(context_field f) const noexcept { return fields[static_cast<unsigned>(f)]; }
    bool has_task() const noexcept { return (trace_high | trace_low) != 0; }
};

/// What I/O operations were done on (an IO_RESOURCE record): a file, socket
/// or pipe as the handle registry knew it. See loupe::io_resource.
struct trace_io_resource {
    std::uint64_t id = 0;
    io::resource_kind kind = io::resource_kind::unknown;
    std::string name;
    std::uint64_t open_ns = 0;        ///< 0: not seen opened (backfilled or named by path)
    std::uint64_t opener_os_tid = 0;
    bool name_truncated = false;
    bool backfilled = false;
};

/// One I/O operation (an IO record). `resource_id` 0: the descriptor was
/// unknown to the registry. `result` is bytes/descriptor/0, or -errno.
struct trace_io_op {
    std::uint64_t thread_id = 0;
    io::op op = io::op::other;
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    std::uint64_t resource_id = 0;
    std::int64_t fd = -1;
    std::int64_t result = 0;
    /// Index into trace::contexts (set by read_trace, as for trace_event).
    std::size_t context = no_context;
};

/// A metric the session recorded (a METRIC record; see loupe::metric_info).
struct trace_metric {
    metric_id id = 0;
    std::string name;
    std::string unit;
    metric_source source = metric_source::push;
    bool available = true;
    std::string unavailable_reason;
};

/// A ZONE_METRICS record: the deltas of `thread_id`'s latest zone event.
struct trace_zone_metrics {
    std::uint64_t thread_id = 0;
    std::vector<metric_value> values;
};

/// A METRIC_TOTALS record: what a thread (or a CPU) added to each push
/// metric during the session.
struct trace_metric_totals {
    bool per_cpu = false;
    std::uint64_t thread_id = 0;  ///< when !per_cpu
    std::uint32_t cpu = 0;        ///< when per_cpu
    std::vector<metric_value> values;
};

/// A PARAM_SPEC record: parameter spec `index` of the session (what
/// param_value::spec refers to). A later record with the same index
/// replaces it (the session's specs changed).
struct trace_param_spec {
    std::uint32_t index = 0;
    std::string text;  ///< the spec's line as given
    std::string name;  ///< its name, may be empty
};

/// An APPLY_ERROR record: spec `spec` matched the method of site `site_id`
/// but could not be bound to its parameters (its values there read
/// EnableFailed).
struct trace_apply_error {
    std::uint64_t site_id = 0;
    std::uint32_t spec = 0;
    std::string reason;
};

/// A METHOD_CALL record: the parameter values and exit details of
/// `thread_id`'s latest zone event. `values`' text views the decoded input
/// (valid while it is).
struct trace_method_call_record {
    std::uint64_t thread_id = 0;
    bool exceptional = false;        ///< the call left by an exception
    bool values_lost = false;        ///< some values are missing (method_call::values_lost; since 1.5)
    bool has_cpu = false;            ///< cpu_begin_ns/cpu_end_ns are set
    std::uint64_t cpu_begin_ns = 0;  ///< thread CPU time at entry
    std::uint64_t cpu_end_ns = 0;    ///< thread CPU time at exit
    std::vector<param_value> values;
};

/// A FLOW record (since 1.6): a point of flow `flow_id` on `thread_id` at
/// `time_ns`, at site `site_id` (an instant site); `terminates`: the point
/// ends the flow (LOUPE_FLOW_END), else it starts or continues it.
struct trace_flow {
    std::uint64_t thread_id = 0;
    std::uint64_t site_id = 0;
    std::uint64_t time_ns = 0;
    std::uint64_t flow_id = 0;  ///< never 0
    bool terminates = false;
};

/// A TASK record (since 1.9): one interception point of a call (kinds:
/// base/record.hpp's task_point_kind).
///
/// Ids: `call_id` is the id on the wire, the one both processes see. The
/// client made it and sent it as traceparent's parent-id; the server
/// received it (0: the request carried no valid context, a task starts
/// there). `span_id` is the local call: on the client, the span of the
/// code that made the call (the parent of the call); on the server, the
/// span the handler runs as (the parent of the calls it makes).
struct trace_task_point {
    task_point_kind kind = task_point_kind::call_out;
    std::uint64_t thread_id = 0;
    std::uint64_t time_ns = 0;
    std::uint64_t trace_high = 0;  ///< W3C trace id, first 16 hex digits
    std::uint64_t trace_low = 0;   ///< last 16 hex digits
    std::uint64_t call_id = 0;
    std::uint64_t span_id = 0;
    /// return_in: the id the return echoed (traceresponse's child id; 0 when
    /// it carried none); return_out: the id this server echoed (0: none).
    std::uint64_t echoed_id = 0;
    std::int64_t status = 0;  ///< return points: the call's result (e.g. the HTTP status; < 0: failed)
    bool tagged = false;      ///< call_out/return_in: the call carried the context (the rules chose it)
    std::string peer;         ///< call_out: the destination ("inventory", "10.0.0.2:8080"); request_in: the caller if known
    std::string name;         ///< call_out, request_in: the call's name ("GET /stock"); return points: empty
};

/// An argument of a zone (LOUPE_ZONE_ARG): its key and value. Views: see
/// where it comes from (trace_zone_arg, trace::args_of).
struct trace_zone_argument {
    std::string_view key;
    param_value value;  ///< boolean, integer, unsigned_integer, floating or string
};

/// A ZONE_ARG record (since 1.8): an argument (LOUPE_ZONE_ARG) of the zone
/// of `thread_id` that began at `zone_begin_ns`; it comes before that zone's
/// event. `key` and `value`'s text view the decoder's strings and the input
/// (valid while they are).
struct trace_zone_arg {
    std::uint64_t thread_id = 0;
    std::uint64_t zone_begin_ns = 0;
    trace_zone_argument arg;  ///< its value's spec is 0
};

struct trace_end_info {
    std::uint64_t events_written = 0;
    std::uint64_t events_dropped = 0;
    std::uint64_t end_ns = 0;
};

/// Receives the records of a trace in file order. `offset` is the byte where
/// the record (or, for on_event, the event) starts. Override what you need.
class trace_visitor {
public:
    virtual ~trace_visitor() = default;
    virtual void on_session(std::uint64_t /*offset*/, const trace_session_info&) {}
    virtual void on_string(std::uint64_t /*offset*/, std::uint64_t /*id*/, std::string_view /*text*/) {}
    virtual void on_site(std::uint64_t /*offset*/, const trace_site&) {}
    /// A THREAD record: a new thread, or a rename of a known one.
    virtual void on_thread(std::uint64_t /*offset*/, const trace_thread&) {}
    /// Start of an EVENTS record of `thread_id`; its events follow.
    virtual void on_events_begin(std::uint64_t /*offset*/, std::uint64_t /*thread_id*/) {}
    virtual void on_event(std::uint64_t /*offset*/, const trace_event&) {}
    virtual void on_dropped(std::uint64_t /*offset*/, const trace_drop&) {}
    virtual void on_end(std::uint64_t /*offset*/, const trace_end_info&) {}
    virtual void on_context(std::uint64_t /*offset*/, const trace_context&) {}
    virtual void on_io_resource(std::uint64_t /*offset*/, const trace_io_resource&) {}
    virtual void on_io(std::uint64_t /*offset*/, const trace_io_op&) {}
    virtual void on_metric(std::uint64_t /*offset*/, const trace_metric&) {}
    virtual void on_zone_metrics(std::uint64_t /*offset*/, const trace_zone_metrics&) {}
    virtual void on_metric_totals(std::uint64_t /*offset*/, const trace_metric_totals&) {}
    virtual void on_param_spec(std::uint64_t /*offset*/, const trace_param_spec&) {}
    /// Follows the EVENTS record whose last event is the call's zone (and
    /// that zone's ZONE_METRICS, if any).
    virtual void on_method_call(std::uint64_t /*offset*/, const trace_method_call_record&) {}
    virtual void on_apply_error(std::uint64_t /*offset*/, const trace_apply_error&) {}
    virtual void on_flow(std::uint64_t /*offset*/, const trace_flow&) {}
    virtual void on_zone_arg(std::uint64_t /*offset*/, const trace_zone_arg&) {}
    virtual void on_process(std::uint64_t /*offset*/, std::string_view /*program*/) {}
    /// HOST (since 1.9): the identity fields of trace_session_info are set.
    virtual void on_host(std::uint64_t /*offset*/, const trace_session_info&) {}
    /// TASK_CONTEXT (since 1.9): amends the thread's CONTEXT record just
    /// before it (same thread and time) with the task; `c` holds both.
    virtual void on_task_context(std::uint64_t /*offset*/, const trace_context& /*c*/) {}
    virtual void on_task_point(std::uint64_t /*offset*/, const trace_task_point&) {}
    /// A record of a kind this reader does not know (skipped).
    virtual void on_unknown(std::uint64_t /*offset*/, std::uint8_t /*kind*/, std::uint64_t /*payload_bytes*/) {}
};

struct decode_options {
    /// Accept a trace that was cut short (no END, or a last record that is
    /// incomplete, as after a crash or a full disk): decode the whole records
    /// before the cut and report `complete == false`. Corruption inside a
    /// whole record is an error either way.
    bool accept_truncated = false;
};

struct decode_result {
    bool complete = false;         ///< END was read
    std::uint64_t bytes_used = 0;  ///< bytes of whole records (== size when complete)
};

/// Told by a function that reads a trace front to back (decode_trace,
/// count_records, split_trace_set, report::task_joiner::add) which bytes it
/// has read, not to read them again: ranges [begin, end), in order, at
/// record boundaries at least every read_progress_step bytes, the last one
/// ending where it stopped. A caller that holds the trace mapped may drop
/// their pages from memory (detail::mapped_file::release).
using read_progress = std::function<void(std::size_t begin, std::size_t end)>;
inline constexpr std::size_t read_progress_step = std::size_t{1} << 20;

namespace detail {

// Tells a read_progress (when there is one) what was read, a step at a time.
class progress_teller {
public:
    explicit progress_teller(const read_progress& read) noexcept : read_(read ? &read : nullptr) {}
    /// The bytes before `at` are read.
    void passed(std::uint64_t at) {
        if (read_ != nullptr && at - told_ >= read_progress_step) tell(at);
    }
    /// Reading stopped at `at`.
    void stopped(std::uint64_t at) {
        if (read_ != nullptr && at > told_) tell(at);
    }

private:
    void tell(std::uint64_t at) {
        (*read_)(static_cast<std::size_t>(told_), static_cast<std::size_t>(at));
        told_ = at;
    }
    const read_progress* read_;
    std::uint64_t told_ = 0;
};

// Bounds-checked reads over [pos, end) of one input; every failure names the
// offset of the field being read.
class trace_cursor {
public:
    trace_cursor(const unsigned char* data, std::uint64_t pos, std::uint64_t end) : data_(data), pos_(pos), end_(end) {}

    std::uint64_t pos() const noexcept { return pos_; }
    const unsigned char* data() const noexcept { return data_; }
    std::uint64_t left() const noexcept { return end_ - pos_; }

    std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(fixed(what, 1)); }
    std::uint16_t u16(const char* what) { return static_cast<std::uint16_t>(fixed(what, 2)); }
    std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(fixed(what, 4)); }
    std::uint64_t u64(const char* what) { return fixed(what, 8); }
    double f64(const char* what) {
        const std::uint64_t bits = fixed(what, 8);
        double v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
    }

    std::uint64_t varint(const char* what) {
        if (pos_ < end_ && data_[pos_] < 0x80) return data_[pos_++];  // one byte: most ids and deltas
        const std::uint64_t start = pos_;
        std::uint64_t v = 0;
        for (unsigned i = 0; i < format::max_varint_bytes; ++i) {
            if (pos_ == end_) fail_short(start, what, "a varint");
            const unsigned char b = data_[pos_++];
            if (i == format::max_varint_bytes - 1 && b > 1) {
                throw trace_error(start, std::string(what) + ": varint does not fit in 64 bits");
            }
            v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
            if ((b & 0x80) == 0) return v;
        }
        throw trace_error(start, std::string(what) + ": varint longer than 10 bytes");
    }

    std::string_view bytes(const char* what) {
        const std::uint64_t start = pos_;
        const std::uint64_t n = varint(what);
        if (n > left()) {
            fail_short(start, what, std::to_string(n) + " bytes of text");
        }
        std::string_view s(reinterpret_cast<const char*>(data_ + pos_), static_cast<std::size_t>(n));
        pos_ += n;
        return s;
    }

    // When false, running out means the input ended (truncation); when true,
    // the cursor is bounded by a record's payload and running out is
    // corruption (the record's length disagrees with its fields).
    bool bounded_by_record = false;

private:
    std::uint64_t fixed(const char* what, unsigned n) {
        if (left() < n) fail_short(pos_, what, std::to_string(n) + " bytes");
        std::uint64_t v = 0;
        for (unsigned i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(data_[pos_ + i]) << (8 * i);
        pos_ += n;
        return v;
    }

    [[noreturn]] void fail_short(std::uint64_t at, const char* what, const std::string& expected) const {
        if (bounded_by_record) {
            throw trace_error(at, std::string(what) + ": expected " + expected + " but the record ends at byte " +
                                      std::to_string(end_));
        }
        throw trace_error(at, std::string(what) + ": expected " + expected + " but the input ends at byte " +
                                  std::to_string(end_) + " (file cut short?)",
                          true);
    }

    const unsigned char* data_;
    std::uint64_t pos_;
    std::uint64_t end_;
};

/// Decodes the events of one EVENTS payload (after its thread id) up to the
/// cursor's end: `base_ns` is the thread's time base, carried from one EVENTS
/// record of the thread to the next; `site_known(id, offset)` says whether
/// a site is defined before the byte `offset` where the event names it; `on_event(offset, event)` receives each event. Shared by the
/// decoder and by readers that revisit one thread's records.
template <class SiteKnown, class OnEvent>
void decode_event_list(trace_cursor& c, std::uint64_t thread_id, std::uint64_t& base_ns, SiteKnown&& site_known,
                       OnEvent&& on_event) {
    while (c.left() != 0) {
        const std::uint64_t event_at = c.pos();
        const std::uint8_t tag = c.u8("event tag");
        if (tag < format::ev_zone || tag > format::ev_counter) {
            throw trace_error(event_at, "event tag " + std::to_string(tag) +
                                            " is unknown; expected 1 (zone), 2 (instant) or 3 (counter)");
        }
        trace_event e;
        e.type = static_cast<event_type>(tag);
        e.thread_id = thread_id;
        const std::uint64_t site_at = c.pos();
        e.site_id = c.varint("event site");
        if (!site_known(e.site_id, site_at)) {
            throw trace_error(site_at, "event site " + std::to_string(e.site_id) + " is not defined before it");
        }
        e.begin_ns = base_ns + static_cast<std::uint64_t>(format::unzigzag(c.varint("event time delta")));
        e.end_ns = e.begin_ns;
        if (tag == format::ev_zone) {
            const std::uint64_t dur_at = c.pos();
            const std::uint64_t duration = c.varint("zone duration");
            if (duration > UINT64_MAX - e.begin_ns) {
                throw trace_error(dur_at, "zone duration " + std::to_string(duration) +
                                              " ends after the largest representable time");
            }
            e.end_ns = e.begin_ns + duration;
        } else if (tag == format::ev_counter) {
            e.value = c.f64("counter value");
        }
        base_ns = e.begin_ns;
        on_event(event_at, e);
    }
}

/// Decodes the rest of a CONTEXT payload after its thread id: time, flags,
/// then `on_value(field_index, text)` for the six values (each checked
/// against max_context_value). Shared by the decoder and by readers that
/// revisit one thread's records.
template <class OnValue>
void decode_context_payload(trace_cursor& c, std::uint64_t& time_ns, std::uint8_t& truncated_mask, OnValue&& on_value) {
    time_ns = c.u64("CONTEXT time_ns");
    truncated_mask = c.u8("CONTEXT truncated flags");
    for (unsigned f = 0; f < context_field_count; ++f) {
        const std::uint64_t value_at = c.pos();
        const std::string_view v = c.bytes(context_field_name(static_cast<context_field>(f)));
        if (v.size() > max_context_value) {
            throw trace_error(value_at, std::string("CONTEXT ") + context_field_name(static_cast<context_field>(f)) +
                                            " has " + std::to_string(v.size()) + " bytes; expected at most " +
                                            std::to_string(max_context_value));
        }
        on_value(f, v);
    }
}

/// Decodes one traced value, `u8 kind, varint spec, bytes payload`, into
/// `v` (its text views the input). `spec_known(index, offset)` says whether
/// the spec it names (at `offset`) may be there; else the error says
/// `spec_rule`. A kind this reader
/// does not know reads as value_kind::unknown (its payload skipped). Shared
/// by METHOD_CALL and ZONE_ARG.
template <class SpecKnown>
void decode_param_value(trace_cursor& c, param_value& v, SpecKnown&& spec_known, const char* spec_rule) {
    v = param_value{};
    const std::uint8_t kind = c.u8("value kind");
    const std::uint64_t spec_at = c.pos();
    const std::uint64_t spec = c.varint("value spec");
    if (spec > UINT32_MAX || !spec_known(spec, spec_at)) {
        throw trace_error(spec_at, "value spec " + std::to_string(spec) + spec_rule);
    }
    v.spec = static_cast<std::uint32_t>(spec);
    const std::string_view payload = c.bytes("value payload");
    const std::uint64_t payload_begin = c.pos() - payload.size();
    trace_cursor p(c.data(), payload_begin, c.pos());
    p.bounded_by_record = true;
    auto size32 = [&](const char* what) {
        const std::uint64_t at = p.pos();
        const std::uint64_t size = p.varint(what);
        if (size > UINT32_MAX)
            throw trace_error(at, std::string(what) + " " + std::to_string(size) + " is out of range");
        return static_cast<std::uint32_t>(size);
    };
    v.kind = static_cast<value_kind>(kind);
    switch (v.kind) {
        case value_kind::boolean:
            v.bits = p.u8("bool value") != 0 ? 1 : 0;
            break;
        case value_kind::integer:
            v.bits = static_cast<std::uint64_t>(format::unzigzag(p.varint("int value")));
            break;
        case value_kind::unsigned_integer:
            v.bits = p.varint("uint value");
            break;
        case value_kind::object_id:
            v.bits = p.varint("object id");
            break;
        case value_kind::floating:
            v.bits = p.u64("double value");
            break;
        case value_kind::hash:
            v.bits = p.u64("hash value");
            break;
        case value_kind::string:
        case value_kind::type_name: {
            const std::uint64_t flags_at_v = p.pos();
            const std::uint8_t vflags = p.u8("text value flags");
            if (vflags & ~format::value_truncated) {
                throw trace_error(flags_at_v, "text value flags " + std::to_string(vflags) +
                                                  " has unknown bits; expected 0 or 1");
            }
            v.truncated = (vflags & format::value_truncated) != 0;
            v.original_size = size32("text original size");
            v.text = payload.substr(static_cast<std::size_t>(p.pos() - payload_begin));
            p = trace_cursor(c.data(), c.pos(), c.pos());
            break;
        }
        case value_kind::redacted:
            v.original_size = size32("redacted original size");
            break;
        case value_kind::null_value:
        case value_kind::null_in_call:
        case value_kind::invalid_index:
        case value_kind::exception_in_call:
        case value_kind::cast_failed:
        case value_kind::enable_failed:
        case value_kind::unknown:
            break;
        default:  // a kind of a later format version: its payload is skipped
            v.kind = value_kind::unknown;
            p = trace_cursor(c.data(), c.pos(), c.pos());
            break;
    }
    if (p.left() != 0) {
        throw trace_error(p.pos(), std::to_string(p.left()) + " unexpected bytes at the end of a " +
                                       to_string(v.kind) + " value's payload");
    }
}

/// Decodes the rest of a METHOD_CALL payload after its thread id into `m`
/// (its values' text views the input): flags, CPU times, then the values,
/// each `u8 kind, varint spec, bytes payload`. `spec_known(index, offset)`
/// says whether a PARAM_SPEC defines the spec a value names (at `offset`).
/// A kind this reader does not know reads as value_kind::unknown (its
/// payload skipped). Shared by the decoder and the viewer converters.
template <class SpecKnown>
void decode_method_call_payload(trace_cursor& c, trace_method_call_record& m, SpecKnown&& spec_known) {
    const std::uint64_t flags_at = c.pos();
    const std::uint8_t flags = c.u8("METHOD_CALL flags");
    if (flags & ~(format::call_exceptional | format::call_has_cpu | format::call_values_lost)) {
        throw trace_error(flags_at,
                          "METHOD_CALL flags " + std::to_string(flags) + " has unknown bits; expected 0 to 7");
    }
    m.exceptional = (flags & format::call_exceptional) != 0;
    m.values_lost = (flags & format::call_values_lost) != 0;
    m.has_cpu = (flags & format::call_has_cpu) != 0;
    m.cpu_begin_ns = m.cpu_end_ns = 0;
    if (m.has_cpu) {
        m.cpu_begin_ns = c.varint("METHOD_CALL cpu_begin");
        m.cpu_end_ns = m.cpu_begin_ns + static_cast<std::uint64_t>(format::unzigzag(c.varint("METHOD_CALL cpu_delta")));
    }
    const std::uint64_t n_at = c.pos();
    const std::uint64_t n = c.varint("METHOD_CALL count");
    if (n > c.left() / 3) {  // a value takes at least 3 bytes
        throw trace_error(n_at, "METHOD_CALL count " + std::to_string(n) + " does not fit in the " +
                                    std::to_string(c.left()) + " bytes left in the record");
    }
    m.values.resize(static_cast<std::size_t>(n));
    for (param_value& v : m.values) decode_param_value(c, v, spec_known, " is not defined by a PARAM_SPEC before it");
}

// Validating state machine over the records of one trace.
class trace_decoder {
public:
    trace_decoder(const unsigned char* data, std::uint64_t size, trace_visitor& visitor)
        : data_(data), size_(size), visitor_(visitor) {}

    /// false: EVENTS records are framed and reported (on_events_begin) but
    /// their events are neither decoded nor counted against END; the caller
    /// decodes them itself (decode_event_list) and checks the count.
    bool decode_events = true;

    decode_result run(decode_options options, const read_progress& read = {}) {
        progress_teller progress(read);
        try {
            header();
            while (!ended_) {
                if (whole_records_end_ == size_) {
                    throw trace_error(size_, "the trace ends without an END record (file cut short?)", true);
                }
                record();
                progress.passed(whole_records_end_);
            }
            if (whole_records_end_ != size_) {
                throw trace_error(whole_records_end_, std::to_string(size_ - whole_records_end_) +
                                                          " bytes follow the END record; expected end of file");
            }
            progress.stopped(size_);
            return {true, size_};
        } catch (const trace_error& e) {
            // A cut-short trace (input ended while a record or END was still
            // expected) is acceptable on request, once the header was read.
            if (options.accept_truncated && e.truncated() && session_seen_) {
                progress.stopped(whole_records_end_);
                return {false, whole_records_end_};
            }
            throw;
        }
    }

private:
    struct thread_state {
        std::uint64_t base_ns = 0;
    };

    void header() {
        const std::size_t magic_bytes = size_ < sizeof format::magic ? static_cast<std::size_t>(size_) : sizeof format::magic;
        if (std::memcmp(data_, format::magic, magic_bytes) != 0) {
            throw trace_error(0, "not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A");
        }
        if (size_ < format::header_size) {
            throw trace_error(size_, "the input ends inside the 16-byte file header (file cut short?)", true);
        }
        trace_cursor c(data_, 0, size_);
        c.u64("magic");
        info_.version_major = c.u16("major version");
        info_.version_minor = c.u16("minor version");
        info_.flags = c.u32("flags");
        if (info_.version_major != format::version_major) {
            throw trace_error(8, "format version " + std::to_string(info_.version_major) + "." +
                                     std::to_string(info_.version_minor) + " is not supported; expected major version " +
                                     std::to_string(format::version_major));
        }
        whole_records_end_ = format::header_size;
    }

    void record() {
        const std::uint64_t at = whole_records_end_;
        trace_cursor head(data_, at, size_);
        const std::uint8_t kind = head.u8("record kind");
        const std::uint64_t length = head.varint("record length");
        if (length > head.left()) {
            throw trace_error(at, "record of kind " + std::to_string(kind) + " declares " + std::to_string(length) +
                                      " payload bytes but only " + std::to_string(head.left()) +
                                      " remain (file cut short?)",
                              true);
        }
        const std::uint64_t payload_end = head.pos() + length;
        trace_cursor c(data_, head.pos(), payload_end);
        c.bounded_by_record = true;
        if (!session_seen_ && kind != format::rec_session) {
            throw trace_error(at, "expected the SESSION record first, found record kind " + std::to_string(kind));
        }
        switch (kind) {
            case format::rec_session: session(at, c); break;
            case format::rec_string: string(at, c); break;
            case format::rec_site: site(at, c); break;
            case format::rec_thread: thread(at, c); break;
            case format::rec_events: events(at, c); break;
            case format::rec_dropped: dropped(at, c); break;
            case format::rec_end: end(at, c); break;
            case format::rec_context: context_change(at, c); break;
            case format::rec_io_resource: io_resource(at, c); break;
            case format::rec_io: io_operation(at, c); break;
            case format::rec_metric: metric(at, c); break;
            case format::rec_zone_metrics: zone_metrics(at, c); break;
            case format::rec_metric_totals: metric_totals(at, c); break;
            case format::rec_param_spec:
                param_spec(at, c);
                break;
            case format::rec_method_call:
                method_call(at, c);
                break;
            case format::rec_apply_error:
                apply_error(at, c);
                break;
            case format::rec_flow: flow(at, c); break;
            case format::rec_process: process(at, c); break;
            case format::rec_zone_arg: zone_arg(at, c); break;
            case format::rec_host: host(at, c); break;
            case format::rec_task_context: task_context(at, c); break;
            case format::rec_task: task_point(at, c); break;
            default:
                visitor_.on_unknown(at, kind, length);
                c = trace_cursor(data_, payload_end, payload_end);
                break;
        }
        if (c.left() != 0) {
            throw trace_error(c.pos(), std::to_string(c.left()) + " unexpected bytes at the end of the " +
                                           record_name(kind) + " record that starts at byte " + std::to_string(at));
        }
        whole_records_end_ = payload_end;
        previous_kind_ = kind;
    }

    static const char* record_name(std::uint8_t kind) {
        switch (kind) {
            case format::rec_session: return "SESSION";
            case format::rec_string: return "STRING";
            case format::rec_site: return "SITE";
            case format::rec_thread: return "THREAD";
            case format::rec_events: return "EVENTS";
            case format::rec_dropped: return "DROPPED";
            case format::rec_end: return "END";
            case format::rec_context: return "CONTEXT";
            case format::rec_io_resource: return "IO_RESOURCE";
            case format::rec_io: return "IO";
            case format::rec_metric: return "METRIC";
            case format::rec_zone_metrics: return "ZONE_METRICS";
            case format::rec_metric_totals: return "METRIC_TOTALS";
            case format::rec_param_spec:
                return "PARAM_SPEC";
            case format::rec_method_call:
                return "METHOD_CALL";
            case format::rec_apply_error:
                return "APPLY_ERROR";
            case format::rec_flow: return "FLOW";
            case format::rec_process: return "PROCESS";
            case format::rec_zone_arg: return "ZONE_ARG";
            case format::rec_host: return "HOST";
            case format::rec_task_context: return "TASK_CONTEXT";
            case format::rec_task: return "TASK";
            default: return "unknown";
        }
    }

    void session(std::uint64_t at, trace_cursor& c) {
        if (session_seen_) throw trace_error(at, "a second SESSION record; a trace holds one session");
        info_.start_ns = c.u64("SESSION start_ns");
        info_.wall_anchor_ns = c.u64("SESSION wall_anchor_ns");
        const std::uint64_t pos = c.pos();
        const std::uint64_t pid = c.varint("SESSION pid");
        if (pid > UINT32_MAX) throw trace_error(pos, "SESSION pid " + std::to_string(pid) + " is out of range");
        info_.pid = static_cast<std::uint32_t>(pid);
        const std::uint64_t clock_at = c.pos();
        const std::uint8_t clock = c.u8("SESSION clock_source");
        if (clock != format::clock_tsc && clock != format::clock_steady) {
            throw trace_error(clock_at, "SESSION clock_source " + std::to_string(clock) + " is unknown; expected 0 or 1");
        }
        info_.clock = static_cast<clock_source>(clock);
        info_.name = std::string(c.bytes("SESSION name"));
        session_seen_ = true;
        visitor_.on_session(at, info_);
    }

    void string(std::uint64_t at, trace_cursor& c) {
        const std::uint64_t id = c.varint("STRING id");
        const std::string_view text = c.bytes("STRING text");
        if (id == 0) throw trace_error(at, "STRING id 0 is reserved for \"none\"; expected an id >= 1");
        if (!strings_.emplace(id, std::string(text)).second) {
            throw trace_error(at, "STRING id " + std::to_string(id) + " is defined twice");
        }
        visitor_.on_string(at, id, text);
    }

    const std::string& string_ref(trace_cursor& c, const char* what, bool zero_is_none) {
        static const std::string none;
        const std::uint64_t pos = c.pos();
        const std::uint64_t id = c.varint(what);
        if (id == 0 && zero_is_none) return none;
        auto it = strings_.find(id);
        if (it == strings_.end()) {
            throw trace_error(pos, std::string(what) + " refers to string " + std::to_string(id) +
                                       ", which is not defined before it");
        }
        return it->second;
    }

    void site(std::uint64_t at, trace_cursor& c) {
        trace_site s;
        s.id = c.varint("SITE id");
        const std::uint64_t kind_at = c.pos();
        const std::uint8_t kind = c.u8("SITE kind");
        if (kind < 1 || kind > 3) {
            throw trace_error(kind_at, "SITE kind " + std::to_string(kind) + " is unknown; expected 1, 2 or 3");
        }
        s.kind = static_cast<site_kind>(kind);
        s.name = string_ref(c, "SITE name", false);
        s.file = string_ref(c, "SITE file", false);
        const std::uint64_t line_at = c.pos();
        const std::uint64_t line = c.varint("SITE line");
        if (line > UINT32_MAX) throw trace_error(line_at, "SITE line " + std::to_string(line) + " is out of range");
        s.line = static_cast<std::uint32_t>(line);
        s.function = string_ref(c, "SITE function", false);
        if (s.id == 0) throw trace_error(at, "SITE id 0 is reserved; expected an id >= 1");
        if (!sites_.emplace(s.id, s.kind).second) {
            throw trace_error(at, "SITE id " + std::to_string(s.id) + " is defined twice");
        }
        visitor_.on_site(at, s);
    }

    void thread(std::uint64_t at, trace_cursor& c) {
        trace_thread t;
        t.id = c.varint("THREAD id");
        t.os_tid = c.varint("THREAD os_tid");
        t.name = string_ref(c, "THREAD name", true);
        if (t.id == 0) throw trace_error(at, "THREAD id 0 is reserved; expected an id >= 1");
        threads_.try_emplace(t.id, thread_state{info_.start_ns});  // a known id is a rename
        visitor_.on_thread(at, t);
    }

    thread_state& known_thread(trace_cursor& c, const char* what) {
        const std::uint64_t pos = c.pos();
        const std::uint64_t id = c.varint(what);
        auto it = threads_.find(id);
        if (it == threads_.end()) {
            throw trace_error(pos, std::string(what) + " " + std::to_string(id) + " is not defined before it");
        }
        current_thread_ = id;
        return it->second;
    }

    void events(std::uint64_t at, trace_cursor& c) {
        thread_state& t = known_thread(c, "EVENTS thread");
        visitor_.on_events_begin(at, current_thread_);
        if (!decode_events) {
            c = trace_cursor(data_, c.pos() + c.left(), c.pos() + c.left());
            return;
        }
        decode_event_list(
            c, current_thread_, t.base_ns,
            [&](std::uint64_t site, std::uint64_t) { return sites_.find(site) != sites_.end(); },
            [&](std::uint64_t event_at, const trace_event& e) {
                ++events_;
                visitor_.on_event(event_at, e);
            });
    }

    void dropped(std::uint64_t at, trace_cursor& c) {
        trace_drop d;
        const std::uint64_t thread_at = c.pos();
        d.thread_id = c.varint("DROPPED thread");
        if (d.thread_id != 0 && threads_.find(d.thread_id) == threads_.end()) {
            throw trace_error(thread_at, "DROPPED thread " + std::to_string(d.thread_id) + " is not defined before it");
        }
        d.count = c.varint("DROPPED count");
        dropped_ += d.count;
        visitor_.on_dropped(at, d);
    }

    void context_change(std::uint64_t at, trace_cursor& c) {
        trace_context& ctx = context_;  // reused: its strings keep their storage
        const std::uint64_t thread_at = c.pos();
        ctx.thread_id = c.varint("CONTEXT thread");
        if (threads_.find(ctx.thread_id) == threads_.end()) {
            throw trace_error(thread_at, "CONTEXT thread " + std::to_string(ctx.thread_id) + " is not defined before it");
        }
        decode_context_payload(c, ctx.time_ns, ctx.truncated_mask,
                               [&](unsigned f, std::string_view v) { ctx.fields[f].assign(v.data(), v.size()); });
        ctx.trace_high = ctx.trace_low = ctx.span_id = 0;
        ctx.trace_flags = 0;
        ctx.tracestate.clear();
        visitor_.on_context(at, ctx);
    }

    // Amends the CONTEXT record just before it with the thread's task.
    void task_context(std::uint64_t at, trace_cursor& c) {
        trace_context& ctx = context_;
        const std::uint64_t thread_at = c.pos();
        const std::uint64_t thread = c.varint("TASK_CONTEXT thread");
        const std::uint64_t time_at = c.pos();
        const std::uint64_t time = c.u64("TASK_CONTEXT time");
        if (previous_kind_ != format::rec_context) {
            throw trace_error(at, "TASK_CONTEXT record does not follow a CONTEXT record; expected it right after "
                                  "the CONTEXT it amends");
        }
        if (thread != ctx.thread_id) {
            throw trace_error(thread_at, "TASK_CONTEXT thread " + std::to_string(thread) + " differs from its CONTEXT's thread " +
                                             std::to_string(ctx.thread_id));
        }
        if (time != ctx.time_ns) {
            throw trace_error(time_at, "TASK_CONTEXT time " + std::to_string(time) + " differs from its CONTEXT's time " +
                                           std::to_string(ctx.time_ns));
        }
        const std::uint64_t ids_at = c.pos();
        ctx.trace_high = c.u64("TASK_CONTEXT trace id");
        ctx.trace_low = c.u64("TASK_CONTEXT trace id");
        ctx.span_id = c.u64("TASK_CONTEXT span id");
        if ((ctx.trace_high | ctx.trace_low) == 0 || ctx.span_id == 0) {
            throw trace_error(ids_at, "TASK_CONTEXT ids are zero; expected a non-zero trace id and span id");
        }
        ctx.trace_flags = c.u8("TASK_CONTEXT flags");
        const std::uint64_t state_at = c.pos();
        const std::string_view state = c.bytes("TASK_CONTEXT tracestate");
        if (state.size() > 512) {
            throw trace_error(state_at, "TASK_CONTEXT tracestate of " + std::to_string(state.size()) +
                                            " bytes; expected at most 512");
        }
        ctx.tracestate.assign(state.data(), state.size());
        visitor_.on_task_context(at, ctx);
    }

    void task_point(std::uint64_t at, trace_cursor& c) {
        trace_task_point& t = task_point_;  // reused: its strings keep their storage
        known_thread(c, "TASK thread");
        t.thread_id = current_thread_;
        const std::uint64_t kind_at = c.pos();
        const std::uint8_t kind = c.u8("TASK kind");
        if (kind < 1 || kind > 4) {
            throw trace_error(kind_at, "TASK kind " + std::to_string(kind) +
                                           " is unknown; expected 1 (call_out), 2 (return_in), 3 (request_in) or 4 (return_out)");
        }
        t.kind = static_cast<task_point_kind>(kind);
        t.time_ns = info_.start_ns + static_cast<std::uint64_t>(format::unzigzag(c.varint("TASK time")));
        const std::uint64_t ids_at = c.pos();
        t.trace_high = c.u64("TASK trace id");
        t.trace_low = c.u64("TASK trace id");
        if ((t.trace_high | t.trace_low) == 0) throw trace_error(ids_at, "TASK trace id is zero; expected a non-zero id");
        t.call_id = c.u64("TASK call id");
        t.span_id = c.u64("TASK span id");
        t.echoed_id = c.u64("TASK echoed id");
        t.status = format::unzigzag(c.varint("TASK status"));
        const std::uint64_t flags_at = c.pos();
        const std::uint8_t flags = c.u8("TASK flags");
        if (flags > format::task_tagged) {
            throw trace_error(flags_at, "TASK flags " + std::to_string(flags) + " has unknown bits; expected 0 or 1");
        }
        t.tagged = flags == format::task_tagged;
        const std::string_view peer = c.bytes("TASK peer");
        t.peer.assign(peer.data(), peer.size());
        const std::string_view name = c.bytes("TASK name");
        t.name.assign(name.data(), name.size());
        visitor_.on_task_point(at, t);
    }

    void host(std::uint64_t at, trace_cursor& c) {
        if (host_seen_) throw trace_error(at, "a second HOST record; a trace holds one process");
        host_seen_ = true;
        info_.host = std::string(c.bytes("HOST host name"));
        info_.boot_id = std::string(c.bytes("HOST boot id"));
        info_.clock_domain = std::string(c.bytes("HOST clock domain"));
        info_.process_start_ns = c.varint("HOST process start");
        visitor_.on_host(at, info_);
    }

    void io_resource(std::uint64_t at, trace_cursor& c) {
        trace_io_resource r;
        r.id = c.varint("IO_RESOURCE id");
        const std::uint64_t kind_at = c.pos();
        const std::uint8_t kind = c.u8("IO_RESOURCE kind");
        if (kind > static_cast<std::uint8_t>(io::resource_kind::other)) {
            throw trace_error(kind_at, "IO_RESOURCE kind " + std::to_string(kind) + " is unknown; expected 0 to 4");
        }
        r.kind = static_cast<io::resource_kind>(kind);
        const std::uint8_t flags = c.u8("IO_RESOURCE flags");
        r.name_truncated = flags & 1;
        r.backfilled = flags & 2;
        r.open_ns = c.u64("IO_RESOURCE open_ns");
        r.opener_os_tid = c.varint("IO_RESOURCE opener_os_tid");
        r.name = std::string(c.bytes("IO_RESOURCE name"));
        if (r.id == 0) throw trace_error(at, "IO_RESOURCE id 0 is reserved; expected an id >= 1");
        if (!resources_.insert(r.id).second) {
            throw trace_error(at, "IO_RESOURCE id " + std::to_string(r.id) + " is defined twice");
        }
        visitor_.on_io_resource(at, r);
    }

    void io_operation(std::uint64_t at, trace_cursor& c) {
        trace_io_op op;
        known_thread(c, "IO thread");
        op.thread_id = current_thread_;
        const std::uint64_t op_at = c.pos();
        const std::uint8_t code = c.u8("IO op");
        if (code >= io::op_count) {
            throw trace_error(op_at, "IO op " + std::to_string(code) + " is unknown; expected 0 to " +
                                         std::to_string(io::op_count - 1));
        }
        op.op = static_cast<io::op>(code);
        op.begin_ns = info_.start_ns + static_cast<std::uint64_t>(format::unzigzag(c.varint("IO begin")));
        op.end_ns = op.begin_ns + c.varint("IO duration");
        const std::uint64_t resource_at = c.pos();
        op.resource_id = c.varint("IO resource");
        if (op.resource_id != 0 && resources_.find(op.resource_id) == resources_.end()) {
            throw trace_error(resource_at, "IO resource " + std::to_string(op.resource_id) +
                                               " is not defined before it");
        }
        op.fd = format::unzigzag(c.varint("IO fd"));
        op.result = format::unzigzag(c.varint("IO result"));
        visitor_.on_io(at, op);
    }

    void metric(std::uint64_t at, trace_cursor& c) {
        trace_metric m;
        const std::uint64_t id_at = c.pos();
        const std::uint64_t id = c.varint("METRIC id");
        if (id >= max_metrics) {
            throw trace_error(id_at, "METRIC id " + std::to_string(id) + " is out of range; expected 0 to " +
                                         std::to_string(max_metrics - 1));
        }
        m.id = static_cast<metric_id>(id);
        const std::uint64_t source_at = c.pos();
        const std::uint8_t source = c.u8("METRIC source");
        if (source > static_cast<std::uint8_t>(metric_source::pull)) {
            throw trace_error(source_at, "METRIC source " + std::to_string(source) + " is unknown; expected 0 to 2");
        }
        m.source = static_cast<metric_source>(source);
        m.available = c.u8("METRIC available") != 0;
        m.name = std::string(c.bytes("METRIC name"));
        m.unit = std::string(c.bytes("METRIC unit"));
        m.unavailable_reason = std::string(c.bytes("METRIC reason"));
        if (!metrics_.insert(m.id).second) throw trace_error(at, "METRIC id " + std::to_string(id) + " is defined twice");
        visitor_.on_metric(at, m);
    }

    // n × (metric id, zigzag value); each id defined by a METRIC record.
    std::vector<metric_value> metric_values(trace_cursor& c, const char* what) {
        const std::uint64_t n_at = c.pos();
        const std::uint64_t n = c.varint(what);
        if (n > max_metrics) {
            throw trace_error(n_at, std::string(what) + " " + std::to_string(n) + " is too many; expected at most " +
                                        std::to_string(max_metrics));
        }
        std::vector<metric_value> values(static_cast<std::size_t>(n));
        for (metric_value& v : values) {
            const std::uint64_t id_at = c.pos();
            const std::uint64_t id = c.varint("metric id");
            if (metrics_.find(id) == metrics_.end()) {
                throw trace_error(id_at, "metric id " + std::to_string(id) + " is not defined by a METRIC record");
            }
            v.id = static_cast<metric_id>(id);
            v.value = format::unzigzag(c.varint("metric value"));
        }
        return values;
    }

    void zone_metrics(std::uint64_t at, trace_cursor& c) {
        trace_zone_metrics z;
        known_thread(c, "ZONE_METRICS thread");
        z.thread_id = current_thread_;
        z.values = metric_values(c, "ZONE_METRICS count");
        visitor_.on_zone_metrics(at, z);
    }

    void metric_totals(std::uint64_t at, trace_cursor& c) {
        trace_metric_totals t;
        const std::uint64_t scope_at = c.pos();
        const std::uint8_t scope = c.u8("METRIC_TOTALS scope");
        if (scope > 1) throw trace_error(scope_at, "METRIC_TOTALS scope " + std::to_string(scope) + " is unknown; expected 0 (thread) or 1 (CPU)");
        t.per_cpu = scope == 1;
        if (t.per_cpu) {
            t.cpu = static_cast<std::uint32_t>(c.varint("METRIC_TOTALS cpu"));
        } else {
            known_thread(c, "METRIC_TOTALS thread");
            t.thread_id = current_thread_;
        }
        t.values = metric_values(c, "METRIC_TOTALS count");
        visitor_.on_metric_totals(at, t);
    }

    void param_spec(std::uint64_t at, trace_cursor& c) {
        const std::uint64_t index_at = c.pos();
        const std::uint64_t index = c.varint("PARAM_SPEC index");
        if (index > UINT32_MAX) {
            throw trace_error(index_at, "PARAM_SPEC index " + std::to_string(index) + " is out of range");
        }
        trace_param_spec& s = spec_;  // reused: its strings keep their storage
        s.index = static_cast<std::uint32_t>(index);
        const std::string_view text = c.bytes("PARAM_SPEC text");
        s.text.assign(text.data(), text.size());
        const std::string_view name = c.bytes("PARAM_SPEC name");
        s.name.assign(name.data(), name.size());
        specs_.insert(s.index);
        visitor_.on_param_spec(at, s);
    }

    void method_call(std::uint64_t at, trace_cursor& c) {
        trace_method_call_record& m = call_;  // reused: its vector keeps its storage
        known_thread(c, "METHOD_CALL thread");
        m.thread_id = current_thread_;
        decode_method_call_payload(c, m, [&](std::uint64_t spec, std::uint64_t) {
            return specs_.find(static_cast<std::uint32_t>(spec)) != specs_.end();
        });
        visitor_.on_method_call(at, m);
    }

    void apply_error(std::uint64_t at, trace_cursor& c) {
        trace_apply_error& e = apply_error_;
        const std::uint64_t site_at = c.pos();
        e.site_id = c.varint("APPLY_ERROR site");
        if (sites_.find(e.site_id) == sites_.end()) {
            throw trace_error(site_at, "APPLY_ERROR site " + std::to_string(e.site_id) + " is not defined before it");
        }
        const std::uint64_t spec_at = c.pos();
        const std::uint64_t spec = c.varint("APPLY_ERROR spec");
        if (spec > UINT32_MAX)
            throw trace_error(spec_at, "APPLY_ERROR spec " + std::to_string(spec) + " is out of range");
        e.spec = static_cast<std::uint32_t>(spec);
        const std::string_view reason = c.bytes("APPLY_ERROR reason");
        e.reason.assign(reason.data(), reason.size());
        visitor_.on_apply_error(at, e);
    }

    void process(std::uint64_t at, trace_cursor& c) {
        if (process_seen_) throw trace_error(at, "a second PROCESS record; a trace holds one process");
        process_seen_ = true;
        info_.program = std::string(c.bytes("PROCESS program"));
        visitor_.on_process(at, info_.program);
    }

    void flow(std::uint64_t at, trace_cursor& c) {
        trace_flow f;
        known_thread(c, "FLOW thread");
        f.thread_id = current_thread_;
        const std::uint64_t site_at = c.pos();
        f.site_id = c.varint("FLOW site");
        const auto site = sites_.find(f.site_id);
        if (site == sites_.end()) {
            throw trace_error(site_at, "FLOW site " + std::to_string(f.site_id) + " is not defined before it");
        }
        if (site->second != site_kind::instant) {
            throw trace_error(site_at, "FLOW site " + std::to_string(f.site_id) + " is of kind " +
                                           std::to_string(static_cast<unsigned>(site->second)) +
                                           "; expected an instant site (kind 2)");
        }
        f.time_ns = info_.start_ns + static_cast<std::uint64_t>(format::unzigzag(c.varint("FLOW time")));
        const std::uint64_t id_at = c.pos();
        f.flow_id = c.u64("FLOW id");
        if (f.flow_id == 0) throw trace_error(id_at, "FLOW id 0 is reserved for \"no flow\"; expected an id >= 1");
        const std::uint64_t flags_at = c.pos();
        const std::uint8_t flags = c.u8("FLOW flags");
        if (flags > format::flow_terminates) {
            throw trace_error(flags_at, "FLOW flags " + std::to_string(flags) + " has unknown bits; expected 0 or 1");
        }
        f.terminates = flags == format::flow_terminates;
        visitor_.on_flow(at, f);
    }

    void zone_arg(std::uint64_t at, trace_cursor& c) {
        trace_zone_arg a;
        known_thread(c, "ZONE_ARG thread");
        a.thread_id = current_thread_;
        a.zone_begin_ns = info_.start_ns + static_cast<std::uint64_t>(format::unzigzag(c.varint("ZONE_ARG zone time")));
        a.arg.key = string_ref(c, "ZONE_ARG key", false);
        decode_param_value(
            c, a.arg.value, [](std::uint64_t spec, std::uint64_t) { return spec == 0; }, ": expected 0 in a ZONE_ARG");
        visitor_.on_zone_arg(at, a);
    }

    void end(std::uint64_t at, trace_cursor& c) {
        trace_end_info e;
        const std::uint64_t written_at = c.pos();
        e.events_written = c.varint("END events_written");
        const std::uint64_t dropped_at = c.pos();
        e.events_dropped = c.varint("END events_dropped");
        e.end_ns = c.u64("END end_ns");
        if (decode_events && e.events_written != events_) {
            throw trace_error(written_at, "END says " + std::to_string(e.events_written) + " events were written but " +
                                              std::to_string(events_) + " are in the trace");
        }
        if (e.events_dropped != dropped_) {
            throw trace_error(dropped_at, "END says " + std::to_string(e.events_dropped) +
                                              " events were dropped but the DROPPED records count " +
                                              std::to_string(dropped_));
        }
        ended_ = true;
        visitor_.on_end(at, e);
    }

    const unsigned char* data_;
    std::uint64_t size_;
    trace_visitor& visitor_;
    trace_session_info info_;
    std::uint64_t whole_records_end_ = 0;
    bool session_seen_ = false;
    bool process_seen_ = false;
    bool host_seen_ = false;
    std::uint8_t previous_kind_ = 0;
    trace_task_point task_point_;
    bool ended_ = false;
    std::uint64_t current_thread_ = 0;
    std::uint64_t events_ = 0;
    std::uint64_t dropped_ = 0;
    std::unordered_map<std::uint64_t, std::string> strings_;
    std::unordered_map<std::uint64_t, site_kind> sites_;
    std::unordered_map<std::uint64_t, thread_state> threads_;
    std::unordered_set<std::uint64_t> resources_;
    std::unordered_set<std::uint64_t> metrics_;
    std::unordered_set<std::uint32_t> specs_;  // PARAM_SPEC indexes defined so far
    trace_context context_;
    trace_param_spec spec_;
    trace_method_call_record call_;
    trace_apply_error apply_error_;
};

}  // namespace detail

/// How many records of `kind` the trace in [data, data + size) holds, from
/// the record framing alone (no validation; stops at the first record that
/// does not fit). For sizing containers before a decode. `read`, when
/// given, is told what was read (read_progress).
inline std::uint64_t count_records(const void* data, std::size_t size, std::uint8_t kind,
                                   const read_progress& read = {}) {
    const auto* p = static_cast<const unsigned char*>(data);
    detail::progress_teller progress(read);
    std::uint64_t n = 0;
    std::size_t pos = detail::format::header_size;
    while (pos < size) {
        progress.passed(pos);
        const std::uint8_t k = p[pos++];
        std::uint64_t length = 0;
        unsigned shift = 0;
        while (pos < size && shift < 64) {
            const unsigned char b = p[pos++];
            length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        if (length > size - pos) break;
        pos += static_cast<std::size_t>(length);
        n += k == kind;
    }
    progress.stopped(pos);
    return n;
}

/// Decodes the trace in [data, data + size), calling `visitor` for each
/// record in order. Throws loupe::trace_error for a bad trace (see
/// decode_options for traces cut short); exceptions from the visitor pass
/// through. `read`, when given, is told what was read (read_progress).
inline decode_result decode_trace(const void* data, std::size_t size, trace_visitor& visitor,
                                  decode_options options = {}, const read_progress& read = {}) {
    static const unsigned char empty = 0;
    const auto* bytes = size == 0 ? &empty : static_cast<const unsigned char*>(data);
    return detail::trace_decoder(bytes, size, visitor).run(options, read);
}

}  // namespace loupe
