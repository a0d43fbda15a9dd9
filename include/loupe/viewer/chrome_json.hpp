// Writes a trace in the Chrome Trace Event JSON format, which
// ui.perfetto.dev, chrome://tracing and speedscope open.
//
//   loupe::trace t = loupe::read_trace_file("out.loupe");
//   loupe::viewer::write_chrome_json_file(t, "out.json");
//   // or straight from .loupe bytes, without the in-memory model:
//   loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), out);
//   // or several traces, a pid each, on one timeline (loupe merge):
//   loupe::viewer::write_chrome_json({{&a, {0, a.session.pid}}, {&b, {-offset_b, b.session.pid}}}, out);
//
// The output is one JSON object {"traceEvents": [...], "displayTimeUnit":
// "ns", "otherData": {...}}:
// - metadata events ("ph":"M") name the process (the program that recorded
//   the trace, from its PROCESS record; the session name when the trace has
//   none) and every thread;
// - zones are complete events ("ph":"X") with "ts" and "dur" in microseconds
//   with three decimals (ns precision), in the order a viewer nests them;
// - instants are "ph":"i" with thread scope; counters are "ph":"C" with the
//   value under "args": {"value": v} (the format has no per-thread counters:
//   a counter name recorded on several threads is one track);
// - context fields go into "args" of a zone or instant whose context differs
//   from the zone around it;
// - I/O operations are complete events named after the operation, with
//   "args": {"resource": path or peer, "result": bytes or -errno, "fd": n};
// - a zone's metric deltas go into its "args", one integer per metric,
//   named after it ("cpu_time":1200, "db.rows":5; metrics this machine
//   could not measure are left out);
// - a method call's parameter values go into its zone's "args", named after
//   their spec (its name, else "param<index>"; a further value of one spec
//   in a call gets "[k]"): booleans and numbers as JSON values (NaN and
//   infinities as the strings "NaN", "Infinity", "-Infinity"), everything
//   else as the string loupe::format_value gives (statuses by their names,
//   "NullInCall"; truncated text ending in "…"); "exceptional": true when
//   the call left by an exception, "values_lost": true when some of its
//   values did not fit, "cpu_ns" when its thread CPU time was measured;
// - flow points (flow.hpp) are instants with "args": {"flow": "<16 hex
//   digits>"}, each with a flow event at its time ("ph":"s" for the first
//   point of a flow, "f" for LOUPE_FLOW_END, "t" otherwise; "cat":
//   "loupe.flow", "id": the flow id, "bp":"e"): chrome://tracing and
//   ui.perfetto.dev draw the arrow between the zones around the points (a
//   point outside any zone has no arrow there; the Perfetto output links the
//   points themselves);
// - events lost to full rings: an instant "N events dropped" on the
//   thread's track where they were lost, "args": {"dropped": N};
// - "otherData" holds the session name, its wall-clock start
//   (wall_anchor_ns, ns since 1970, at timestamp start_ns/1000 µs) and the
//   number of events lost to full rings.
// Timestamps are loupe's monotonic clock (ns) / 1000, as recorded. The text
// is valid JSON whatever the names contain: invalid UTF-8 bytes become the
// text \xHH, control characters are escaped.
//
// Cost: O(n log n) in the events of the largest thread; about 100–200 bytes
// of output per event. Thread-safety: pure functions over a `trace` value.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/format/output_file.hpp"
#include "loupe/viewer/detail/sources.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"

namespace loupe::viewer {

namespace detail {

// "<µs>.<3 digits>" for a time in ns.
inline void append_microseconds(std::string& out, std::uint64_t ns) {
    char buf[32];
    const int n = std::snprintf(buf, sizeof buf, "%llu.%03u", static_cast<unsigned long long>(ns / 1000),
                                static_cast<unsigned>(ns % 1000));
    out.append(buf, static_cast<std::size_t>(n));
}

class chrome_json_writer {
public:
    /// Whether thread()'s flows must say which points start a flow: yes, a
    /// flow's first point is a "ph":"s" event.
    static constexpr bool needs_flow_starts = true;

    /// In an output of several traces (chrome_json_set_writer), `placement`
    /// moves the trace's times and names its pid; only the first trace
    /// (`opens`) writes the document's header, and finish() closes it only
    /// when `closes`.
    chrome_json_writer(const trace& t, std::string& out, trace_placement placement = {}, bool opens = true,
                       bool closes = true)
        : t_(t), out_(&out), placement_(placement), opens_(opens), closes_(closes) {}
    /// A writer for a worker thread (see loupe::detail::convert_viewer).
    chrome_json_writer(const chrome_json_writer& main, std::string& out)
        : chrome_json_writer(main.t_, out, main.placement_, main.opens_, main.closes_) {
        flows_ = main.flows_;
        prepare();
    }

    /// Where thread() writes from now on, and where it writes.
    void retarget(std::string& out) { out_ = &out; }
    std::string& target() { return *out_; }

    /// Before the first thread: header and process metadata. `flows`
    /// outlives the writer and the writers made from it.
    void begin(std::size_t expected_events, const loupe::detail::thread_flows& flows) {
        flows_ = &flows;
        out_->reserve(out_->size() + 110 * expected_events + 4096);
        prepare();
        if (!opens_) {  // a later trace of a set: its process, after the previous traces' events
            *out_ += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid_ + ",\"tid\":0,\"args\":{\"name\":";
            report::json::append_string(*out_, t_.session.program.empty() ? t_.session.name : t_.session.program);
            *out_ += "}}";
            return;
        }

        *out_ += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"session\":";
        report::json::append_string(*out_, t_.session.name);
        *out_ += ",\"start_ns\":" + std::to_string(t_.session.start_ns) +
                ",\"wall_anchor_ns\":" + std::to_string(t_.session.wall_anchor_ns) +
                ",\"dropped_events\":" + std::to_string(t_.dropped_total()) +
                ",\"complete\":" + (t_.complete ? "true" : "false") + "},\"traceEvents\":[\n";
        *out_ += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid_ + ",\"tid\":0,\"args\":{\"name\":";
        report::json::append_string(*out_, t_.session.program.empty() ? t_.session.name : t_.session.program);
        *out_ += "}}";
    }

    /// One thread's events (as loupe::detail::for_each_thread_events gives them).
    void thread(const trace_thread& thread, const std::vector<loupe::detail::timeline_event>& events,
                const loupe::detail::thread_contexts& contexts, const loupe::detail::thread_zone_metrics& metrics) {
        contexts_ = &contexts;
        metrics_ = &metrics;
        tid_ = std::to_string(thread.os_tid != 0 ? thread.os_tid : thread.id);
        if (!thread.name.empty()) {
            *out_ += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid_ + ",\"tid\":" + tid_ + ",\"args\":{\"name\":";
            report::json::append_string(*out_, thread.name);
            *out_ += "}}";
        }
        thread_has_metrics_ = !metrics.empty();
        thread_has_calls_ = metrics.has_calls();
        thread_has_args_ = metrics.has_args();
        loupe::detail::replay_thread(events, begins_, [&](const loupe::detail::timeline_step& step) {
            if (step.kind != loupe::detail::timeline_step::end) write_event(events[step.event], step);
        });
        write_flows(flows_->of(thread.id));
        write_gaps(drops_.of(thread.id));
    }

    void finish() {
        if (closes_) *out_ += "\n]}\n";
    }

private:
    // The thread's flow points: each an instant and the flow event that
    // binds it to the zone around it.
    void write_flows(const std::vector<std::uint32_t>& points) {
        for (const std::uint32_t index : points) {
            const trace_flow& f = t_.flows[index];
            const trace_site* site = t_.find_site(f.site_id);
            if (!site) continue;  // the decoder checked it; a hand-made trace may not have
            const std::string id = loupe::flow_id_text(f.flow_id);
            *out_ += ",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":";
            *out_ += quoted_sites_[static_cast<std::size_t>(site - t_.sites.data())];
            *out_ += ",\"pid\":" + pid_ + ",\"tid\":" + tid_ + ",\"ts\":";
            append_microseconds(*out_, at(f.time_ns));
            *out_ += ",\"args\":{\"flow\":\"" + id + "\"}}";
            *out_ += ",\n{\"ph\":\"";
            *out_ += f.terminates ? 'f' : flows_->starts(index) ? 's' : 't';
            *out_ += "\",\"bp\":\"e\",\"cat\":\"loupe.flow\",\"name\":\"flow\",\"id\":\"0x" + id + "\",\"pid\":" + pid_ +
                     ",\"tid\":" + tid_ + ",\"ts\":";
            append_microseconds(*out_, at(f.time_ns));
            *out_ += '}';
        }
    }

    // The thread's drops: each an instant "N events dropped" where the
    // events were lost (trace_drop::after_ns), the count in "args".
    void write_gaps(const std::vector<std::uint32_t>& drops) {
        for (const std::uint32_t index : drops) {
            const trace_drop& d = t_.drops[index];
            *out_ += ",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"" + loupe::detail::drop_marker_name(d.count) +
                     "\",\"pid\":" + pid_ + ",\"tid\":" + tid_ + ",\"ts\":";
            append_microseconds(*out_, at(d.after_ns));
            *out_ += ",\"args\":{\"dropped\":" + std::to_string(d.count) + "}}";
        }
    }

    void prepare() {
        drops_ = loupe::detail::thread_drops(t_);
        // Names are quoted once per site, not once per event.
        quoted_sites_.clear();
        quoted_sites_.reserve(t_.sites.size() + io::op_count);
        for (const trace_site& s : t_.sites) quoted_sites_.push_back(report::json::quote(s.name));
        for (unsigned o = 0; o < io::op_count; ++o) quoted_sites_.push_back(report::json::quote(io::op_name(static_cast<io::op>(o))));
        // "name": for each metric shown (defined and available), by id.
        for (std::string& key : metric_keys_) key.clear();
        for (const trace_metric& m : t_.metrics) {
            if (m.available && m.id < max_metrics) metric_keys_[m.id] = report::json::quote(m.name) + ':';
        }
        pid_ = std::to_string(placement_.pid != 0 ? placement_.pid : t_.session.pid);
        param_labels_ = loupe::detail::param_labels(t_);
    }

    void write_event(const loupe::detail::timeline_event& e, const loupe::detail::timeline_step& step) {
        *out_ += ",\n{\"ph\":\"";
        *out_ += step.kind == loupe::detail::timeline_step::begin     ? "X"
                : step.kind == loupe::detail::timeline_step::instant ? "i\",\"s\":\"t"
                                                                     : "C";
        const trace_io_op* op = loupe::detail::io_operation_of(t_, e);
        *out_ += "\",\"name\":";
        *out_ += quoted_sites_[op ? t_.sites.size() + static_cast<unsigned>(op->op) : e.site()];
        *out_ += ",\"pid\":" + pid_ + ",\"tid\":" + tid_ + ",\"ts\":";
        append_microseconds(*out_, at(e.begin_ns));
        if (step.kind == loupe::detail::timeline_step::begin) {
            *out_ += ",\"dur\":";
            append_microseconds(*out_, e.end_ns() - e.begin_ns);
        }
        if (step.kind == loupe::detail::timeline_step::counter) {
            *out_ += ",\"args\":{\"value\":" + report::json::number(e.value()) + "}}";
            return;
        }
        loupe::detail::context_view shown;
        const loupe::detail::context_view* context = nullptr;
        if (step.show_context && e.context != loupe::detail::timeline_event::no_context) {
            shown = contexts_->get(e.context);
            context = &shown;
        }
        // A zone's metrics: looked up only on threads that have some.
        loupe::detail::thread_zone_metrics::span metrics;
        if (LOUPE_UNLIKELY(thread_has_metrics_) && step.kind == loupe::detail::timeline_step::begin) {
            metrics = metrics_->of(step.event);
        }
        // A method call's values: looked up only on threads that have some.
        loupe::detail::thread_zone_metrics::call call;
        const bool is_call = LOUPE_UNLIKELY(thread_has_calls_) && step.kind == loupe::detail::timeline_step::begin &&
                             metrics_->call_of(step.event, call);
        // A zone's arguments: likewise.
        item_span<trace_zone_argument> args;
        if (LOUPE_UNLIKELY(thread_has_args_) && step.kind == loupe::detail::timeline_step::begin) {
            args = metrics_->args_of(step.event);
        }
        if (context || op || metrics.count != 0 || is_call || !args.empty()) {
            *out_ += ",\"args\":{";
            bool first = true;
            if (op) {
                const trace_io_resource* resource = t_.find_io_resource(op->resource_id);
                *out_ += "\"resource\":";
                report::json::append_string(*out_, resource ? std::string_view(resource->name) : "(unknown)");
                *out_ += ",\"result\":" + std::to_string(op->result) + ",\"fd\":" + std::to_string(op->fd);
                first = false;
            }
            if (LOUPE_UNLIKELY(metrics.count != 0)) first = write_metric_args(metrics, first);
            if (LOUPE_UNLIKELY(is_call)) first = write_param_args(call, first);
            if (LOUPE_UNLIKELY(!args.empty())) first = write_zone_args(args, first);
            for (unsigned f = 0; context && f < context_field_count; ++f) {
                if (context->fields[f].empty()) continue;
                if (!first) *out_ += ',';
                first = false;
                *out_ += '"';
                *out_ += context_field_name(static_cast<context_field>(f));
                *out_ += "\":";
                report::json::append_string(*out_, context->fields[f]);
            }
            *out_ += '}';
        }
        *out_ += '}';
    }

    // A zone's deltas as "name":value arguments; `first`: no argument
    // before. Returns whether still none. Cold: most traces have no
    // metrics, and keeping this out of line and small keeps the per-event
    // code as fast as without them.
    LOUPE_COLD bool write_metric_args(loupe::detail::thread_zone_metrics::span metrics, bool first) {
        for (std::uint32_t i = 0; i < metrics.count; ++i) {
            const metric_value& v = metrics.values[i];
            if (v.id >= max_metrics || metric_keys_[v.id].empty()) continue;  // not shown
            if (!first) *out_ += ',';
            first = false;
            *out_ += metric_keys_[v.id];
            *out_ += std::to_string(v.value);
        }
        return first;
    }

    // A method call's values, "exceptional", "values_lost" and "cpu_ns" as arguments (see
    // write_metric_args).
    LOUPE_COLD bool write_param_args(const loupe::detail::thread_zone_metrics::call& call, bool first) {
        for (std::uint32_t i = 0; i < call.count; ++i) {
            const param_value& v = call.values[i];
            if (!first) *out_ += ',';
            first = false;
            report::json::append_string(*out_, loupe::detail::param_label_at(param_labels_, call.values, i));
            *out_ += ':';
            append_param_value(*out_, v);
        }
        if (call.exceptional) {
            *out_ += first ? "\"exceptional\":true" : ",\"exceptional\":true";
            first = false;
        }
        if (call.values_lost) {
            *out_ += first ? "\"values_lost\":true" : ",\"values_lost\":true";
            first = false;
        }
        if (call.has_cpu) {
            *out_ += first ? "\"cpu_ns\":" : ",\"cpu_ns\":";
            *out_ += std::to_string(static_cast<std::int64_t>(call.cpu_end_ns - call.cpu_begin_ns));
            first = false;
        }
        return first;
    }

    // A zone's arguments as "key":value (see write_metric_args).
    LOUPE_COLD bool write_zone_args(item_span<trace_zone_argument> args, bool first) {
        for (const trace_zone_argument& a : args) {
            if (!first) *out_ += ',';
            first = false;
            report::json::append_string(*out_, a.key);
            *out_ += ':';
            append_param_value(*out_, a.value);
        }
        return first;
    }

    static void append_param_value(std::string& out, const param_value& v) {
        switch (v.kind) {
            case value_kind::boolean:
                out += v.as_bool() ? "true" : "false";
                return;
            case value_kind::integer:
                out += std::to_string(v.as_int());
                return;
            case value_kind::unsigned_integer:
                out += std::to_string(v.as_uint());
                return;
            case value_kind::floating: {
                const double d = v.as_double();
                if (d != d) {
                    out += "\"NaN\"";
                } else if (d == std::numeric_limits<double>::infinity()) {
                    out += "\"Infinity\"";
                } else if (d == -std::numeric_limits<double>::infinity()) {
                    out += "\"-Infinity\"";
                } else {
                    out += report::json::number(d);
                }
                return;
            }
            default:
                report::json::append_string(out, format_value(v));
                return;
        }
    }

    // A time of the trace as written (moved by its placement).
    std::uint64_t at(std::uint64_t time_ns) const noexcept {
        return loupe::detail::placed_time(time_ns, placement_.time_offset_ns);
    }

    const trace& t_;
    std::string* out_;
    trace_placement placement_;
    bool opens_ = true;
    bool closes_ = true;
    std::vector<std::string> quoted_sites_;
    std::vector<std::uint32_t> begins_;  // scratch for replay_thread
    const loupe::detail::thread_contexts* contexts_ = nullptr;  // of the thread being written
    const loupe::detail::thread_zone_metrics* metrics_ = nullptr;  // of the thread being written
    bool thread_has_metrics_ = false;                              // !metrics_->empty()
    bool thread_has_calls_ = false;                                // metrics_->has_calls()
    bool thread_has_args_ = false;                                 // metrics_->has_args()
    std::vector<std::pair<std::uint32_t, std::string>> param_labels_;  // spec index -> label
    std::string metric_keys_[max_metrics];  // by metric id: "\"name\":" for the metrics shown, else empty
    std::string pid_;
    std::string tid_;
    const loupe::detail::thread_flows* flows_ = nullptr;  // of the trace (begin)
    loupe::detail::thread_drops drops_;                    // of the trace (prepare)
};

}  // namespace detail

/// Appends the Chrome Trace Event JSON of `t` to `out`.
inline void write_chrome_json(const trace& t, std::string& out) {
    detail::chrome_json_writer writer(t, out);
    loupe::detail::write_viewer(t, writer);
}

/// The Chrome Trace Event JSON of `t`.
inline std::string to_chrome_json(const trace& t) {
    std::string out;
    write_chrome_json(t, out);
    return out;
}

/// Writes `t` to `path` as Chrome Trace Event JSON. Throws loupe::error
/// naming the path when it cannot be written.
inline void write_chrome_json_file(const trace& t, const std::string& path) {
    loupe::detail::write_output_file(path, to_chrome_json(t));
}

/// Writes several traces into one Chrome JSON document, one process each
/// (what `loupe merge --to chrome-json` writes): each trace's times moved by
/// its placement's offset, its events under its placement's pid (give
/// distinct pids). Flow ids shared by the traces link their points across
/// processes ("ph":"s" where a flow's first point is in its trace, "f" at a
/// LOUPE_FLOW_END point). "otherData" is the first trace's. Add the traces in
/// order, then finish(); each is written when added.
class chrome_json_set_writer {
public:
    explicit chrome_json_set_writer(std::string& out) : out_(out) {}
    void add(const trace& t, trace_placement placement = {}) {
        detail::chrome_json_writer writer(t, out_, placement, traces_ == 0, false);
        loupe::detail::write_viewer(t, writer);
        ++traces_;
    }
    /// Closes the document (an empty set gives one with no events).
    void finish() {
        if (traces_ == 0) out_ += "{\"displayTimeUnit\":\"ns\",\"otherData\":{},\"traceEvents\":[";
        out_ += "\n]}\n";
    }

private:
    std::string& out_;
    std::size_t traces_ = 0;
};

/// Appends the Chrome JSON of several placed traces to `out` (see
/// chrome_json_set_writer). One trace with the default placement gives the
/// text write_chrome_json(t) gives.
inline void write_chrome_json(const std::vector<placed_trace>& traces, std::string& out) {
    chrome_json_set_writer writer(out);
    for (const placed_trace& p : traces) writer.add(*p.t, p.placement);
    writer.finish();
}

/// Converts the .loupe trace in [data, data + size) to Chrome JSON, appending
/// to `out`, one thread at a time (see convert_to_perfetto). Same output as
/// read_trace + write_chrome_json. Throws loupe::trace_error for a bad trace.
/// `workers`: threads converting in parallel (0: one per core, at most 8).
/// The default is 1: JSON output is large, and on a 2-core machine two
/// threads filling fresh memory were slower than one (1.1 s against 0.7 s
/// per million events in bench/convert.cpp).
inline void convert_to_chrome_json(const void* data, std::size_t size, std::string& out, decode_options decode = {},
                                   unsigned workers = 1) {
    trace skeleton;
    detail::chrome_json_writer writer(skeleton, out);
    loupe::detail::convert_viewer(data, size, skeleton, decode, writer, workers);
}

}  // namespace loupe::viewer
