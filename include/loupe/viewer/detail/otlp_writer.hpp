// Turns a trace's threads into OTLP spans (the mapping is docs/otlp.md):
// a viewer writer (begin / thread / finish, as loupe::detail::write_viewer
// drives it) that replays each thread's events properly nested
// (timeline.hpp) and keeps a stack of the open zones. A zone or I/O
// operation becomes a span when its end is replayed, with the span open
// around it as its parent. A span whose context at its begin serves a task
// (the cross-process W3C task, trace_context::trace_high...) is in the
// task's trace, and its parent is the task's span unless the span open
// around it is in that trace too; other spans inherit the trace of the span
// around them, or start one of their own (otlp_ids.hpp). Instants and
// counters become events of the span open around them; a flow point
// becomes a link from the span open around it to the span around the
// flow's previous point. That previous point may be on a thread written
// later: such a span waits, encoded without its links, until finish().
//
// The resource and scope messages are encoded here too (encode_resource,
// encode_scope); spans go to a batcher (otlp_batches.hpp).
//
// Cost: O(n log n) in the events of the largest thread (the replay's
// sort); per span a few hundred bytes copied. A site's name and code
// attributes, a thread's attributes and the latest context's are encoded
// once and copied. Thread-safety: one writer per conversion.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/flow_id_text.hpp"
#include "loupe/base/io_types.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/base/param_value.hpp"
#include "loupe/base/version.hpp"
#include "loupe/format/flow_order.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/viewer/detail/otlp_attributes.hpp"
#include "loupe/viewer/detail/otlp_batches.hpp"
#include "loupe/viewer/detail/otlp_ids.hpp"
#include "loupe/viewer/detail/otlp_window.hpp"
#include "loupe/viewer/detail/protobuf_writer.hpp"
#include "loupe/viewer/detail/sources.hpp"
#include "loupe/viewer/detail/timeline.hpp"

namespace loupe::detail::otlp {

namespace field {
// Span fields written for the spans of a task only (Span.trace_state,
// Span.flags: a fixed32).
constexpr std::uint32_t trace_state = 3, flags = 16;
}  // namespace field

/// The context fields' attribute names, in context_field order: the
/// OpenTelemetry semantic conventions' where one exists.
inline constexpr const char* context_attribute_names[context_field_count] = {
    "loupe.client", "enduser.id", "session.id", "loupe.request", "loupe.app", "loupe.component"};

/// The Resource message's body: the process that recorded the trace, then
/// `extra` (string attributes, in order). service.name is `service_name`,
/// else `extra`'s service.name, else the program's name; an `extra` key
/// loupe writes itself, or one already given in `extra`, is left out.
inline std::string encode_resource(const trace& t, std::string_view service_name,
                                   const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    std::string out;
    const std::string_view program = t.session.program;
    std::string_view extra_service;
    for (const auto& kv : extra) {
        if (kv.first == "service.name" && extra_service.empty()) extra_service = kv.second;
    }
    const std::string_view service = !service_name.empty()  ? service_name
                                     : !extra_service.empty() ? extra_service
                                     : !program.empty()       ? program
                                                              : std::string_view("unknown_service");
    append_string_attribute(out, field::resource_attributes, "service.name", service);
    append_int_attribute(out, field::resource_attributes, "process.pid", t.session.pid);
    std::vector<std::string_view> written = {"service.name", "process.pid"};
    if (!program.empty()) {
        append_string_attribute(out, field::resource_attributes, "process.executable.name", program);
        written.push_back("process.executable.name");
    }
    // HOST record (format 1.9), unless the caller's attributes name the host.
    const bool host_given = std::any_of(extra.begin(), extra.end(), [](const auto& kv) { return kv.first == "host.name"; });
    if (!t.session.host.empty() && !host_given) {
        append_string_attribute(out, field::resource_attributes, "host.name", t.session.host);
        written.push_back("host.name");
    }
    if (!t.session.name.empty()) {
        append_string_attribute(out, field::resource_attributes, "loupe.session.name", t.session.name);
        written.push_back("loupe.session.name");
    }
    for (const auto& kv : extra) {
        if (std::find(written.begin(), written.end(), std::string_view(kv.first)) != written.end()) continue;
        append_string_attribute(out, field::resource_attributes, kv.first, kv.second);
        written.push_back(kv.first);
    }
    return out;
}

/// The InstrumentationScope message's body: loupe, its version, and the
/// events the recording lost (the whole trace's count, in every batch).
inline std::string encode_scope(const trace& t) {
    std::string out;
    pb::append_bytes(out, field::scope_name, "loupe");
    pb::append_bytes(out, field::scope_version, LOUPE_VERSION_STRING);
    const std::uint64_t dropped = t.dropped_total();
    if (dropped != 0) {
        append_int_attribute(out, field::scope_attributes, "loupe.dropped_events",
                             static_cast<std::int64_t>(std::min<std::uint64_t>(dropped, INT64_MAX)));
    }
    return out;
}

class span_writer {
public:
    /// Whether thread()'s flows must say which points start a flow: no, the
    /// writer orders each flow's points itself (flow_order).
    static constexpr bool needs_flow_starts = false;

    /// `window`: write only the spans it selects, with ids made from what
    /// each span is (otlp_window.hpp); nullptr: every span, ids numbered.
    span_writer(const trace& t, batcher& out, std::size_t max_events, std::size_t max_links,
                const span_window* window = nullptr)
        : t_(t), out_(out), ids_(t.session), max_events_(max_events), max_links_(max_links), window_(window) {}

    void begin(std::size_t /*expected_events*/, const thread_flows& flows) {
        flows_ = &flows;
        // Each flow point's predecessor in its flow.
        const flow_order order(t_);
        previous_.assign(t_.flows.size(), none);
        for (std::size_t k = 0; k < order.size(); ++k) {
            for (std::uint32_t p = order.first[k] + 1; p < order.first[k + 1]; ++p) {
                previous_[order.points[p]] = order.points[p - 1];
            }
        }
        points_.assign(t_.flows.size(), point{});
        site_bytes_.assign(t_.sites.size(), std::string());
        site_encoded_.assign(t_.sites.size(), false);
        if (window_) {
            site_keys_.clear();
            for (const trace_site& s : t_.sites) site_keys_.push_back(site_key(s.name, s.file, s.line));
        }
        for (std::string& key : metric_keys_) key.clear();
        for (const trace_metric& m : t_.metrics) {
            if (m.available && m.id < max_metrics) metric_keys_[m.id] = "loupe.metric." + m.name;
        }
        param_labels_ = param_labels(t_);
    }

    void thread(const trace_thread& thread, const std::vector<timeline_event>& events,
                const thread_contexts& contexts, const thread_zone_metrics& metrics) {
        events_ = &events;
        contexts_ = &contexts;
        metrics_ = &metrics;
        thread_index_ = static_cast<std::uint64_t>(&thread - t_.threads.data());
        thread_id_ = thread.id;
        if (window_) bounds_ = window_->of(thread.id);
        thread_bytes_.clear();
        append_int_attribute(thread_bytes_, field::attributes, "thread.id",
                             static_cast<std::int64_t>(thread.os_tid != 0 ? thread.os_tid : thread.id));
        if (!thread.name.empty()) append_string_attribute(thread_bytes_, field::attributes, "thread.name", thread.name);
        context_ = timeline_event::no_context;
        context_bytes_.clear();
        stack_.clear();
        span_events_.clear();
        span_links_.clear();

        const std::vector<std::uint32_t>& flows = flows_->of(thread.id);
        std::size_t next_flow = 0;
        // A flow point was recorded inside the zones open at its time: after
        // the begins at that time, before the ends and instants.
        const auto flows_before = [&](std::uint64_t time, bool at_time_too) {
            for (; next_flow < flows.size(); ++next_flow) {
                const std::uint64_t at = t_.flows[flows[next_flow]].time_ns;
                if (at > time || (at == time && !at_time_too)) break;
                on_flow_point(flows[next_flow]);
            }
        };
        replay_thread(events, begins_, [&](const timeline_step& step) {
            if (LOUPE_UNLIKELY(next_flow < flows.size())) flows_before(step.time_ns, step.kind != timeline_step::begin);
            on_step(step);
        });
        flows_before(UINT64_MAX, true);
        // Zones whose end was never replayed (only in a damaged trace).
        while (!stack_.empty()) close_frame(stack_.size() - 1);
    }

    /// Writes the spans that waited for their links' targets.
    void finish() {
        for (waiting& w : waiting_) {
            span_.clear();
            span_.append(w.body.data(), w.body.size());
            append_links(w.flows.data(), w.flows.size(), w.span);
            out_.add(span_.view());
        }
        waiting_.clear();
    }

private:
    static constexpr std::uint32_t none = 0xffffffffu;

    struct frame {
        std::uint32_t event = 0;  // index in the thread's events
        std::uint64_t span = 0;
        std::uint64_t parent = 0;  // 0: a root span
        trace_id trace;
        const trace_context* task = nullptr;  // the task whose trace it is in; nullptr: a trace of its own
        std::size_t events_begin = 0;  // its instants and counters: span_events_[events_begin, ...)
        std::size_t links_begin = 0;   // its flow points: span_links_[links_begin, ...)
    };
    // Where a flow point was: in which span, once its thread is written.
    struct point {
        bool seen = false;
        std::uint64_t span = 0;  // 0: outside any zone
        trace_id trace;
    };
    // A span encoded but for its links, waiting for finish().
    struct waiting {
        std::string body;
        std::vector<std::uint32_t> flows;
        std::uint64_t span = 0;
    };

    void on_step(const timeline_step& step) {
        const timeline_event& e = (*events_)[step.event];
        switch (step.kind) {
            case timeline_step::begin:
                // A zone ending before it begins (only in a hand-made
                // trace) is written at its end, which is always replayed.
                if (LOUPE_LIKELY(e.end_or_value >= e.begin_ns)) stack_.push_back(new_frame(step.event));
                return;
            case timeline_step::end:
                // Normally the innermost open zone; a zone that overlaps
                // others without nesting (a damaged trace) is found deeper.
                for (std::size_t i = stack_.size(); i-- > 0;) {
                    if (stack_[i].event == step.event) {
                        close_frame(i);
                        return;
                    }
                }
                if (e.end_or_value < e.begin_ns) write_span(new_frame(step.event));  // zero length, see write_span
                return;
            case timeline_step::instant:
                if (!stack_.empty()) {
                    span_events_.push_back(step.event);
                } else {  // outside any zone: a zero-length span of its own
                    write_span(new_frame(step.event));
                }
                return;
            case timeline_step::counter:
                if (!stack_.empty()) span_events_.push_back(step.event);  // outside zones: not exported
                return;
        }
    }

    // A span for event `event`, collecting nothing yet. In a task (its
    // context at its begin serves one): in the task's trace, child of the
    // innermost open zone when that zone is in the same trace, else of the
    // task's span. Otherwise: child of the innermost open zone, in its trace
    // (and task), or the root of a new trace.
    frame new_frame(std::uint32_t event) const {
        frame f;
        f.event = event;
        const std::uint64_t counter = counter_of(event);
        f.span = ids_.span(counter);
        const frame* around = stack_.empty() ? nullptr : &stack_.back();
        if (const trace_context* task = task_of((*events_)[event].context)) {
            f.task = task;
            f.trace = {task->trace_high, task->trace_low};
            f.parent = around && around->trace == f.trace ? around->span : task->span_id;
        } else if (around) {
            f.parent = around->span;
            f.trace = around->trace;
            f.task = around->task;
        } else {
            f.trace = ids_.trace(counter);
        }
        f.events_begin = span_events_.size();
        f.links_begin = span_links_.size();
        return f;
    }

    // What event `event`'s ids are made from: its place in the trace, or in
    // a window what it is.
    std::uint64_t counter_of(std::uint32_t event) const noexcept {
        if (!window_) return id_source::counter(thread_index_, event);
        const timeline_event& e = (*events_)[event];
        const std::uint32_t site = e.site();
        return span_key(thread_id_, e.begin_ns, e.end_ns(), static_cast<unsigned>(e.type()),
                        site < site_keys_.size() ? site_keys_[site] : site);
    }

    // The task context `context` (the thread's numbering) serves, or nullptr
    // when it serves none (both W3C ids must be non-zero).
    const trace_context* task_of(std::uint32_t context) const noexcept {
        if (context >= contexts_->size()) return nullptr;  // no_context
        const trace_context* c = contexts_->model_context(context);
        return c != nullptr && c->has_task() && c->span_id != 0 ? c : nullptr;
    }

    void on_flow_point(std::uint32_t index) {
        point& p = points_[index];
        p.seen = true;
        if (stack_.empty()) return;
        p.span = stack_.back().span;
        p.trace = stack_.back().trace;
        span_links_.push_back(index);
    }

    // Writes the frame at stack_[i] and removes it; what it collected goes.
    void close_frame(std::size_t i) {
        const frame f = stack_[i];
        write_span(f);
        stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(i));
        span_events_.resize(std::min(span_events_.size(), f.events_begin));
        span_links_.resize(std::min(span_links_.size(), f.links_begin));
    }

    std::uint64_t unix_ns(std::uint64_t t) const noexcept {
        return t_.session.wall_anchor_ns + (t - t_.session.start_ns);  // modulo 2^64: right for t < start too
    }

    void write_span(const frame& f) {
        const timeline_event& e = (*events_)[f.event];
        if (window_ && !bounds_.writes(e.end_ns())) return;  // another conversion's
        const trace_io_op* op = io_operation_of(t_, e);
        span_.clear();
        append_id(span_, field::trace_id, f.trace.high, f.trace.low, true);
        append_id(span_, field::span_id, 0, f.span, false);
        if (f.task && !f.task->tracestate.empty()) append_text(span_, field::trace_state, f.task->tracestate);
        if (f.parent != 0) append_id(span_, field::parent_span_id, 0, f.parent, false);
        if (f.task && f.task->trace_flags != 0) append_trace_flags(f.task->trace_flags);
        pb::append_uint(span_, field::kind, span_kind_internal);
        const std::uint64_t begin = e.begin_ns;
        const std::uint64_t end = e.type() == event_type::zone ? std::max(e.end_or_value, begin) : begin;
        pb::append_fixed64(span_, field::start_time, unix_ns(begin));
        pb::append_fixed64(span_, field::end_time, unix_ns(end));
        const std::string& name = op ? io_bytes(*op) : site_bytes(e.site());
        span_.append(name.data(), name.size());
        span_.append(thread_bytes_.data(), thread_bytes_.size());
        if (e.context != timeline_event::no_context) {
            if (e.context != context_) encode_context(e.context);
            span_.append(context_bytes_.data(), context_bytes_.size());
        }
        if (op) {
            write_io(*op);
        } else if (e.type() == event_type::zone) {
            if (LOUPE_UNLIKELY(!metrics_->empty())) write_metrics(f.event);
            if (LOUPE_UNLIKELY(metrics_->has_calls())) write_call(f.event);
            if (LOUPE_UNLIKELY(metrics_->has_args())) write_zone_args(f.event);
        } else {
            append_string_attribute(span_, field::attributes, "loupe.event", "instant");
        }
        write_events(f);
        const std::size_t links_end = span_links_.size();
        const std::size_t links_begin = std::min(f.links_begin, links_end);
        if (links_begin == links_end) {
            out_.add(span_.view());
            return;
        }
        const std::uint32_t* links = span_links_.data() + links_begin;
        const std::size_t link_count = links_end - links_begin;
        for (std::size_t i = 0; i < link_count; ++i) {
            if (resolve(links[i]) == nullptr && !resolved_none_) {  // its target's thread comes later
                waiting_.push_back({std::string(span_.view()), std::vector<std::uint32_t>(links, links + link_count), f.span});
                return;
            }
        }
        append_links(links, link_count, f.span);
        out_.add(span_.view());
    }

    // Span.flags: the W3C trace-flags in bits 0-7 (whether the parent is
    // remote, bits 8-9, unknown).
    void append_trace_flags(std::uint8_t flags) {
        pb::append_varint(span_, std::uint64_t{field::flags} << 3 | 5);  // wire type 5: fixed32
        const char little_endian[4] = {static_cast<char>(flags), 0, 0, 0};
        span_.append(little_endian, 4);
    }

    // The span around the flow point before `index` (or before that, when
    // it was outside any zone); nullptr with resolved_none_ false when a
    // point on the way is on a thread not written yet, true when there is
    // no such span.
    const point* resolve(std::uint32_t index) {
        resolved_none_ = false;
        for (std::uint32_t j = previous_[index]; j != none; j = previous_[j]) {
            if (!points_[j].seen) return nullptr;
            if (points_[j].span != 0) return &points_[j];
        }
        resolved_none_ = true;
        return nullptr;
    }

    // Links (at most max_links_) to the spans around the flows' previous
    // points, but to the span itself.
    void append_links(const std::uint32_t* flows, std::size_t count, std::uint64_t own_span) {
        std::uint64_t written = 0, dropped = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const point* target = resolve(flows[i]);
            if (!target || target->span == own_span) continue;
            if (written == max_links_) {
                ++dropped;
                continue;
            }
            const std::size_t link = pb::open(span_, field::links);
            append_id(span_, field::link_trace_id, target->trace.high, target->trace.low, true);
            append_id(span_, field::link_span_id, 0, target->span, false);
            append_string_attribute(span_, field::link_attributes, "loupe.flow.id",
                                    flow_id_text(t_.flows[flows[i]].flow_id));
            pb::close(span_, link);
            ++written;
        }
        if (dropped != 0) pb::append_uint(span_, field::dropped_links, dropped);
    }

    void write_events(const frame& f) {
        const std::size_t end = span_events_.size();
        std::uint64_t dropped = 0;
        for (std::size_t i = std::min(f.events_begin, end), written = 0; i < end; ++i) {
            if (written == max_events_) {
                ++dropped;
                continue;
            }
            ++written;
            const timeline_event& e = (*events_)[span_events_[i]];
            const std::size_t event = pb::open(span_, field::events);
            pb::append_fixed64(span_, field::event_time, unix_ns(e.begin_ns));
            append_text(span_, field::event_name, t_.sites[e.site()].name);
            if (e.type() == event_type::counter) {
                append_double_attribute(span_, field::event_attributes, "loupe.counter.value", e.value());
            }
            pb::close(span_, event);
        }
        if (dropped != 0) pb::append_uint(span_, field::dropped_events, dropped);
    }

    // A site's name and code attributes, encoded on first use.
    const std::string& site_bytes(std::uint32_t index) {
        std::string& out = site_bytes_[index];
        if (site_encoded_[index]) return out;
        site_encoded_[index] = true;
        const trace_site& s = t_.sites[index];
        append_text(out, field::name, s.name);
        if (!s.function.empty()) append_string_attribute(out, field::attributes, "code.function.name", s.function);
        if (!s.file.empty()) append_string_attribute(out, field::attributes, "code.file.path", s.file);
        if (s.line != 0) append_int_attribute(out, field::attributes, "code.line.number", s.line);
        return out;
    }

    // An I/O operation's name (the operation's).
    const std::string& io_bytes(const trace_io_op& op) {
        const unsigned code = static_cast<unsigned>(op.op) < io::op_count ? static_cast<unsigned>(op.op) : 0;
        std::string& out = op_bytes_[code];
        if (out.empty()) append_text(out, field::name, io::op_name(static_cast<io::op>(code)));
        return out;
    }

    void encode_context(std::uint32_t index) {
        context_ = index;
        context_bytes_.clear();
        const context_view v = contexts_->get(index);
        for (unsigned f = 0; f < context_field_count; ++f) {
            if (v.fields[f].empty()) continue;
            append_string_attribute(context_bytes_, field::attributes, context_attribute_names[f], v.fields[f]);
        }
    }

    // What the operation was done on, its result and its descriptor.
    void write_io(const trace_io_op& op) {
        if (const trace_io_resource* r = t_.find_io_resource(op.resource_id)) {
            if (r->kind == io::resource_kind::file) {
                append_string_attribute(span_, field::attributes, "file.path", r->name);
            } else if (r->kind == io::resource_kind::socket) {
                write_peer(r->name);
            } else {
                append_string_attribute(span_, field::attributes, "loupe.io.resource", r->name);
            }
        }
        if (op.fd >= 0) append_int_attribute(span_, field::attributes, "loupe.io.fd", op.fd);
        append_int_attribute(span_, field::attributes, "loupe.io.result", op.result);
        if (op.result >= 0 && io::op_direction(op.op) != io::direction::none) {
            append_int_attribute(span_, field::attributes, "loupe.io.bytes", op.result);
        }
        if (op.result < 0) {
            const std::size_t status = pb::open(span_, field::status);
            pb::append_bytes(span_, field::status_message, "errno " + std::to_string(-op.result));
            pb::append_uint(span_, field::status_code, status_error);
            pb::close(span_, status);
        }
    }

    // A socket's name as loupe records it ("127.0.0.1:8080", "[::1]:443",
    // "unix:/run/app.sock") as network.peer.address (and .port, or
    // network.transport "unix").
    void write_peer(std::string_view name) {
        if (name.substr(0, 5) == "unix:") {
            append_string_attribute(span_, field::attributes, "network.peer.address", name.substr(5));
            append_string_attribute(span_, field::attributes, "network.transport", "unix");
            return;
        }
        const std::size_t colon = name.rfind(':');
        std::uint64_t port = 0;
        bool numeric = colon != std::string_view::npos && colon + 1 < name.size() && name.size() - colon <= 6;
        for (std::size_t i = colon + 1; numeric && i < name.size(); ++i) {
            numeric = name[i] >= '0' && name[i] <= '9';
            port = port * 10 + static_cast<unsigned>(name[i] - '0');
        }
        if (!numeric || port > 65535) {
            append_string_attribute(span_, field::attributes, "network.peer.address", name);
            return;
        }
        std::string_view host = name.substr(0, colon);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
        append_string_attribute(span_, field::attributes, "network.peer.address", host);
        append_int_attribute(span_, field::attributes, "network.peer.port", static_cast<std::int64_t>(port));
    }

    LOUPE_COLD void write_metrics(std::uint32_t event) {
        const thread_zone_metrics::span values = metrics_->of(event);
        for (std::uint32_t i = 0; i < values.count; ++i) {
            const metric_value& v = values.values[i];
            if (v.id < max_metrics && !metric_keys_[v.id].empty()) {
                append_int_attribute(span_, field::attributes, metric_keys_[v.id], v.value);
            }
        }
    }

    // A zone's arguments as `loupe.arg.<key>` attributes, typed.
    LOUPE_COLD void write_zone_args(std::uint32_t event) {
        for (const trace_zone_argument& a : metrics_->args_of(event)) {
            append_value_attribute("loupe.arg." + std::string(a.key), a.value);
        }
    }

    // A traced value as a typed attribute: bool, int (an unsigned value
    // past int64 as text), double; anything else as its text.
    void append_value_attribute(const std::string& key, const param_value& v) {
        switch (v.kind) {
            case value_kind::boolean: append_bool_attribute(span_, field::attributes, key, v.as_bool()); break;
            case value_kind::integer: append_int_attribute(span_, field::attributes, key, v.as_int()); break;
            case value_kind::unsigned_integer:
                if (v.as_uint() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                    append_int_attribute(span_, field::attributes, key, static_cast<std::int64_t>(v.as_uint()));
                } else {
                    append_string_attribute(span_, field::attributes, key, format_value(v));
                }
                break;
            case value_kind::floating: append_double_attribute(span_, field::attributes, key, v.as_double()); break;
            default: append_string_attribute(span_, field::attributes, key, format_value(v)); break;
        }
    }

    LOUPE_COLD void write_call(std::uint32_t event) {
        thread_zone_metrics::call call;
        if (!metrics_->call_of(event, call)) return;
        for (std::uint32_t i = 0; i < call.count; ++i) {
            const param_value& v = call.values[i];
            append_value_attribute("loupe.param." + param_label_at(param_labels_, call.values, i), v);
        }
        if (call.values_lost) append_bool_attribute(span_, field::attributes, "loupe.values_lost", true);
        if (call.has_cpu) {
            append_int_attribute(span_, field::attributes, "loupe.cpu_ns",
                                 static_cast<std::int64_t>(call.cpu_end_ns - call.cpu_begin_ns));
        }
        if (call.exceptional) {
            const std::size_t status = pb::open(span_, field::status);
            pb::append_bytes(span_, field::status_message, "exception");
            pb::append_uint(span_, field::status_code, status_error);
            pb::close(span_, status);
        }
    }

    const trace& t_;
    batcher& out_;
    id_source ids_;
    std::uint64_t max_events_;
    std::uint64_t max_links_;
    const span_window* window_;
    std::vector<std::uint64_t> site_keys_;  // by site index, in a window
    const thread_flows* flows_ = nullptr;
    std::vector<std::uint32_t> previous_;  // by flow point: its flow's previous point, or none
    std::vector<point> points_;            // by flow point
    std::vector<waiting> waiting_;
    bool resolved_none_ = false;  // resolve's second answer
    // Of the thread being written:
    const std::vector<timeline_event>* events_ = nullptr;
    const thread_contexts* contexts_ = nullptr;
    const thread_zone_metrics* metrics_ = nullptr;
    std::uint64_t thread_index_ = 0;
    std::uint64_t thread_id_ = 0;
    span_window::bounds bounds_;  // in a window
    std::vector<std::uint32_t> begins_;  // scratch of replay_thread
    std::vector<frame> stack_;           // the open zones, innermost last
    std::vector<std::uint32_t> span_events_;  // instants and counters of the open zones (event indexes)
    std::vector<std::uint32_t> span_links_;   // flow points of the open zones (indexes into trace::flows)
    std::string thread_bytes_;               // thread.id, thread.name
    std::uint32_t context_ = timeline_event::no_context;  // whose attributes context_bytes_ holds
    std::string context_bytes_;
    // Of the trace:
    std::vector<std::string> site_bytes_;  // by site index: name and code attributes
    std::vector<bool> site_encoded_;
    std::string op_bytes_[io::op_count];  // by op code: the name
    std::string metric_keys_[max_metrics];  // by metric id: "loupe.metric.<name>", empty when not shown
    std::vector<std::pair<std::uint32_t, std::string>> param_labels_;
    pb::buffer span_;  // the span being encoded
};

}  // namespace loupe::detail::otlp
