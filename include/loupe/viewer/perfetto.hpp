// Writes a trace in Perfetto's protobuf trace format, which ui.perfetto.dev
// and Perfetto's trace_processor open directly (schema:
// perfetto_trace.proto, message perfetto.protos.Trace).
//
//   loupe::trace t = loupe::read_trace_file("out.loupe");
//   loupe::viewer::write_perfetto_file(t, "out.pftrace");
//   // or straight from .loupe bytes, without the in-memory model:
//   loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out);
//   // or several traces, one process each, on one timeline (loupe merge):
//   loupe::viewer::write_perfetto({{&a, {0, a.session.pid}}, {&b, {-offset_b, b.session.pid}}}, out);
//
// What the output holds:
// - a process track (pid; named after the program that recorded the trace,
//   from its PROCESS record, or perfetto_options::process_name) and
//   one thread track per thread (tid and name; a name two threads share gets
//   the tid: "main (4242)", see thread_track_name), each thread on its own
//   packet sequence;
// - the session's name as the process's label (ProcessDescriptor.
//   process_labels, shown next to the process in the UI) and as the trace's
//   session name (TraceConfig.unique_session_name, trace_processor's
//   metadata "unique_session_name");
// - zones as slices (TYPE_SLICE_BEGIN/END), properly nested, ns precision;
// - instants as TYPE_INSTANT events, counters as counter tracks under their
//   thread's track ("<name>", double values);
// - context fields (client, user, session, request, app, component) as debug
//   annotations on a slice or instant whose context differs from the slice
//   around it, so nested slices inherit them instead of repeating them;
// - I/O operations as slices named after the operation, nested in their
//   zone, annotated with "resource" (path or peer), "result" (bytes, new
//   descriptor or -errno) and "fd";
// - a zone's metric deltas as integer annotations on its slice, one per
//   metric, named after it ("cpu_time", "alloc_bytes", "db.rows"; metrics
//   this machine could not measure are left out);
// - a method call's parameter values as typed annotations on its zone's
//   slice (bool_value, int_value, uint_value, double_value; everything else
//   as the string_value loupe::format_value gives: statuses by their names,
//   "NullInCall", truncated text ending in "…"), named after their spec (its
//   name, else "param<index>"; a further value of one spec in a call gets
//   "[k]"), plus "exceptional" (true) when the call left by an exception,
//   "values_lost" (true) when some of its values did not fit, and "cpu_ns"
//   when its thread CPU time was measured;
// - flow points (flow.hpp) as instants on their thread's track that carry
//   their flow id (TrackEvent.flow_ids, or terminating_flow_ids for
//   LOUPE_FLOW_END), merged in time order with the thread's events (inside
//   a zone that begins or ends at the point's time): the viewer draws the
//   arrows from the earliest point of an id to the next; a flow id written
//   by another process's trace joins the two when they are opened together;
// - events lost to full rings: on the thread's track, an instant "N events
//   dropped" where they were lost (trace_drop::after_ns), the count as an
//   annotation "dropped"; and the session's total as one instant "loupe:
//   events dropped" on the process track at its end (annotation "count");
// - a clock snapshot tying the timeline to wall-clock time (REALTIME), so
//   traces of several processes line up.
// Event names, annotation names and annotation values (but request ids,
// which never repeat) are interned per sequence, timestamps are deltas on a
// sequence-scoped incremental clock, as Perfetto's own SDK does (so a
// sequence's packets never go back in time), and packets
// are deflate-compressed in groups of about 256 KiB, one or more per thread
// (perfetto_options::compress), as Perfetto's tracing service does. Strings
// that are not valid UTF-8 show their bad bytes as the text \xHH
// (report::printable).
//
// Cost: O(n log n) in the events of the largest thread; about 3 bytes of
// output per event compressed, 20 plain. convert_to_perfetto needs 24 bytes
// per event of the largest thread per worker, not the whole model.
// Thread-safety: pure functions; convert_to_perfetto starts and joins its
// own worker threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/viewer/detail/deflate.hpp"
#include "loupe/format/output_file.hpp"
#include "loupe/viewer/detail/protobuf_writer.hpp"
#include "loupe/viewer/detail/sources.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/text/printable.hpp"

namespace loupe::viewer {

struct perfetto_options {
    /// Deflate-compress the packets (TracePacket.compressed_packets, in
    /// groups of about 256 KiB), as Perfetto's own service does. The file
    /// shrinks 4–25×; ui.perfetto.dev and trace_processor read it as is.
    /// Turn off to inspect the packets with
    /// `protoc --decode=perfetto.protos.Trace`.
    bool compress = true;
    /// convert_to_perfetto: threads converting the trace's threads in
    /// parallel (0: one per core, at most 8). The output does not depend on it.
    unsigned workers = 0;
    /// The process's name (ProcessDescriptor.process_name). Empty: the
    /// program that recorded the trace (its PROCESS record; a trace written
    /// before format 1.7 has none, and the UI then shows the process by its
    /// pid). The session's name is not used: it is the process's label and
    /// the trace's session name.
    std::string process_name = {};
};

namespace detail {

namespace pb = loupe::detail::protobuf;

// Field numbers from perfetto_trace.proto.
namespace field {
constexpr std::uint32_t trace_packet = 1;
// TracePacket
constexpr std::uint32_t clock_snapshot = 6, compressed_packets = 50, timestamp = 8, sequence_id = 10, track_event = 11, interned_data = 12,
                        sequence_flags = 13, trace_config = 33, timestamp_clock_id = 58, packet_defaults = 59,
                        track_descriptor = 60, first_packet_on_sequence = 87;
// TraceConfig
constexpr std::uint32_t unique_session_name = 22;
// ClockSnapshot / ClockSnapshot.Clock
constexpr std::uint32_t clocks = 1, clock_id = 1, clock_timestamp = 2, clock_is_incremental = 3;
// TracePacketDefaults / TrackEventDefaults
constexpr std::uint32_t defaults_clock_id = 58, track_event_defaults = 11, default_track_uuid = 11;
// TrackDescriptor, ProcessDescriptor, ThreadDescriptor
constexpr std::uint32_t track_uuid = 1, track_name = 2, track_process = 3, track_thread = 4, parent_uuid = 5,
                        track_counter = 8;
constexpr std::uint32_t process_pid = 1, process_name = 6, process_labels = 8;
constexpr std::uint32_t thread_pid = 1, thread_tid = 2, thread_name = 5;
// TrackEvent
constexpr std::uint32_t event_annotations = 4, event_type = 9, event_name_iid = 10, event_track_uuid = 11,
                        event_name = 23, event_double_counter_value = 44, event_flow_ids = 47,
                        event_terminating_flow_ids = 48;
// DebugAnnotation
constexpr std::uint32_t annotation_name_iid = 1, annotation_bool_value = 2, annotation_uint_value = 3,
                        annotation_int_value = 4, annotation_double_value = 5, annotation_string_value = 6,
                        annotation_name = 10, annotation_string_iid = 17;
// InternedData and its entries (EventName, DebugAnnotationName, InternedString)
constexpr std::uint32_t interned_event_names = 2, interned_annotation_names = 3, interned_string_values = 29;
constexpr std::uint32_t entry_iid = 1, entry_name = 2;
}  // namespace field

// A protobuf string field's text: valid UTF-8, no copy when ASCII.
using printable_text = report::printable_view;

enum track_event_type : std::uint64_t { slice_begin = 1, slice_end = 2, instant_event = 3, counter_event = 4 };
constexpr std::uint64_t clock_realtime = 1, clock_boottime = 6, clock_incremental = 64;
constexpr std::uint64_t incremental_state_cleared = 1;
constexpr std::uint32_t process_sequence = 1;
// Request ids are unique per request: interning them would only add an
// interned entry per value, so they are written inline.
constexpr unsigned request_field = static_cast<unsigned>(context_field::request);
// An I/O operation's slice carries these annotations (interned names after
// the six context fields'): what it was done on (inline: paths and peers
// are many), its result (bytes, descriptor or -errno) and descriptor.
constexpr unsigned io_annotation_first = context_field_count;
constexpr const char* io_annotation_names[] = {"resource", "result", "fd"};
constexpr unsigned io_annotation_count = 3;
// A zone's metric deltas: one annotation per metric, integer values, names
// interned after the I/O ones (by metric id) once per sequence, when the
// thread's track is described (see write_metric_names).
constexpr unsigned metric_annotation_first = io_annotation_first + io_annotation_count;
// A method call's annotations, names interned after the metrics' in the
// same packet: "exceptional", "cpu_ns", "values_lost", then each spec's
// label (in the order of trace::param_specs).
constexpr unsigned call_annotation_first = metric_annotation_first + max_metrics;
constexpr unsigned exceptional_annotation = call_annotation_first, cpu_annotation = call_annotation_first + 1,
                   values_lost_annotation = call_annotation_first + 2, param_annotation_first = call_annotation_first + 3;

// Track uuids: a hash of (pid, kind, id), so tracks of several processes
// can share one timeline without colliding.
inline std::uint64_t track_uuid(std::uint32_t pid, std::uint64_t kind, std::uint64_t id) {
    std::uint64_t x = (static_cast<std::uint64_t>(pid) << 8 | kind) * 0x9e3779b97f4a7c15ull ^ id;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;  // splitmix64 finalizer
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (x ^ (x >> 31)) | 1;  // never 0 ("no track")
}
enum track_kind : std::uint64_t { process_track = 1, thread_track = 2, counter_track_kind = 3 };

class perfetto_writer {
public:
    /// Whether thread()'s flows must say which points start a flow: no,
    /// Perfetto infers a flow's start from its points' times.
    static constexpr bool needs_flow_starts = false;

    /// `t` supplies the session, sites, threads, drops and end (events and
    /// contexts come through thread()); it may be filled after construction,
    /// before begin().
    ///
    /// In an output of several traces (write_perfetto of placed traces),
    /// `placement` moves its times and names its pid, `sequence_base` is
    /// where its packet sequences start (after the previous traces'), and
    /// only the first (`first`) ties the timeline to wall-clock time and
    /// names the trace's session.
    perfetto_writer(const trace& t, std::string& out, const perfetto_options& options,
                    trace_placement placement = {}, std::uint32_t sequence_base = 0, bool first = true)
        : t_(t),
          result_(&out),
          compress_(options.compress),
          options_(&options),
          offset_(placement.time_offset_ns),
          pid_(placement.pid != 0 ? placement.pid : t.session.pid),
          sequence_base_(sequence_base),
          first_(first) {}
    /// A writer for a worker thread: same trace and settings as `main`,
    /// writing threads to `out` (see loupe::detail::convert_viewer).
    perfetto_writer(const perfetto_writer& main, std::string& out)
        : perfetto_writer(main.t_, out, *main.options_, {main.offset_, main.pid_}, main.sequence_base_, main.first_) {
        flows_ = main.flows_;
        prepare(0);
    }

    /// Before the first thread: the process track and clocks. `flows`
    /// outlives the writer and the writers made from it.
    void begin(std::size_t expected_events, const loupe::detail::thread_flows& flows) {
        flows_ = &flows;
        prepare(expected_events);
        write_process();
        flush();
    }

    /// One thread's events (as loupe::detail::for_each_thread_events gives
    /// them). Its packets end in their own group: a thread's output does not
    /// depend on the threads written before it.
    void thread(const trace_thread& thread, const std::vector<loupe::detail::timeline_event>& events,
                const loupe::detail::thread_contexts& contexts, const loupe::detail::thread_zone_metrics& metrics) {
        contexts_ = &contexts;
        events_ = &events;
        metrics_ = &metrics;
        write_thread(thread);
        flush();
    }

    /// After the last thread: drop counts.
    void finish() {
        write_drops();
        flush();
    }

    /// Where thread() writes from now on, and where it writes.
    void retarget(std::string& out) { result_ = &out; }
    std::string& target() { return *result_; }

private:
    void prepare(std::size_t expected_events) {
        pid_ = pid_ != 0 ? pid_ : t_.session.pid;  // `t` may have been filled after construction
        out_.reserve(chunk_bytes + 64 * 1024);
        // Compressed: 0.5-5 bytes per event; plain: about 11 per begin or end packet.
        result_->reserve(result_->size() + (compress_ ? 2 : 24) * expected_events + 4096);
        interned_sites_.assign(t_.sites.size() + io::op_count, false);  // sites, then I/O op names
        for (std::string_view& name : metric_names_) name = {};
        for (const trace_metric& m : t_.metrics) {
            if (m.available && m.id < max_metrics) metric_names_[m.id] = m.name;
        }
        param_labels_ = loupe::detail::param_labels(t_);
        drops_ = loupe::detail::thread_drops(t_);
        thread_names_.clear();
        thread_name_tids_.clear();
        for (const trace_thread& th : t_.threads) {
            if (th.name.empty()) continue;
            ++thread_names_[th.name];
            ++thread_name_tids_[{th.name, shown_tid(th)}];
        }
    }

    // The tid a thread's track shows: the kernel's, else loupe's id.
    static std::uint64_t shown_tid(const trace_thread& thread) noexcept {
        return thread.os_tid != 0 ? thread.os_tid : thread.id;
    }

    // A thread track's name: the thread's, followed by its tid when another
    // thread of the trace has the same name ("main (4242)"), and by its loupe
    // id too when that one also had the tid (reused: "main (4242 #7)"), so
    // that no two tracks share a name. Unnamed threads stay unnamed (the UI
    // shows "Thread <tid>").
    std::string thread_track_name(const trace_thread& thread) const {
        if (thread.name.empty()) return {};
        const auto shared = thread_names_.find(thread.name);
        if (shared == thread_names_.end() || shared->second < 2) return thread.name;
        const std::uint64_t tid = shown_tid(thread);
        std::string name = thread.name + " (" + std::to_string(tid);
        const auto same_tid = thread_name_tids_.find({thread.name, tid});
        if (same_tid != thread_name_tids_.end() && same_tid->second > 1) name += " #" + std::to_string(thread.id);
        return name + ")";
    }

    // Whether a zone's delta is shown: its metric is defined and available.
    bool metric_shown(const metric_value& v) const noexcept {
        return v.id < max_metrics && !metric_names_[v.id].empty();
    }

    // An event's name: its site's, or for an I/O operation its op's (name
    // slots after the sites, one per op code).
    std::size_t name_slot(const loupe::detail::timeline_event& e) const noexcept {
        const trace_io_op* op = loupe::detail::io_operation_of(t_, e);
        return op ? t_.sites.size() + static_cast<unsigned>(op->op) : e.site();
    }
    std::string_view name_text(std::size_t slot) const noexcept {
        return slot < t_.sites.size() ? std::string_view(t_.sites[slot].name)
                                      : std::string_view(io::op_name(static_cast<io::op>(slot - t_.sites.size())));
    }

    // Packets are staged and moved to the result in groups of about this
    // many bytes; compressed groups stay under the 512 KiB Perfetto asks for
    // (deflate output is at most 9/8 of its input).
    static constexpr std::size_t chunk_bytes = 256 * 1024;

    void close_packet(std::size_t at) {
        pb::close(out_, at);
        if (out_.size() >= chunk_bytes) flush();
    }

    // Plain: the staged packets as they are. Compressed: one TracePacket
    // { compressed_packets: zlib(staged packets) }.
    void flush() {
        if (out_.empty()) return;
        if (!compress_) {
            result_->append(out_.view().data(), out_.size());
        } else {
            compressed_.clear();
            loupe::detail::deflate::zlib_compress(out_.view(), compressed_, deflate_table_);
            const std::size_t packet = pb::open(*result_, field::trace_packet);
            pb::append_bytes(*result_, field::compressed_packets, compressed_);
            pb::close(*result_, packet);
        }
        out_.clear();
    }

    std::size_t open_packet(std::uint32_t sequence) {
        const std::size_t at = pb::open(out_, field::trace_packet);
        pb::append_uint(out_, field::sequence_id, sequence);
        return at;
    }

    // A time of the trace as written (moved by its placement).
    std::uint64_t at(std::uint64_t time_ns) const noexcept { return loupe::detail::placed_time(time_ns, offset_); }

    void write_process() {
        std::size_t packet = 0;
        if (first_) {  // one tie to wall-clock time per output
            packet = open_packet(sequence_base_ + process_sequence);
            pb::append_uint(out_, field::timestamp, at(t_.session.start_ns));
            std::size_t snapshot = pb::open(out_, field::clock_snapshot);
            append_clock(clock_boottime, at(t_.session.start_ns), false);
            append_clock(clock_realtime, t_.session.wall_anchor_ns, false);
            pb::close(out_, snapshot);
            close_packet(packet);
        }

        // The process: named after the program (when known), labelled with
        // the session's name.
        const std::string& program = options_->process_name.empty() ? t_.session.program : options_->process_name;
        packet = open_packet(sequence_base_ + process_sequence);
        const std::size_t track = pb::open(out_, field::track_descriptor);
        pb::append_uint(out_, field::track_uuid, track_uuid(pid_, process_track, 0));
        const std::size_t process = pb::open(out_, field::track_process);
        pb::append_uint(out_, field::process_pid, pid_);
        if (!program.empty()) pb::append_bytes(out_, field::process_name, printable_text(program));
        if (!t_.session.name.empty()) pb::append_bytes(out_, field::process_labels, printable_text(t_.session.name));
        pb::close(out_, process);
        pb::close(out_, track);
        close_packet(packet);

        // The session's name on the trace itself: trace_processor keeps it as
        // the metadata "unique_session_name".
        if (t_.session.name.empty() || !first_) return;
        packet = open_packet(sequence_base_ + process_sequence);
        const std::size_t config = pb::open(out_, field::trace_config);
        pb::append_bytes(out_, field::unique_session_name, printable_text(t_.session.name));
        pb::close(out_, config);
        close_packet(packet);
    }

    void append_clock(std::uint64_t id, std::uint64_t timestamp, bool incremental) {
        const std::size_t clock = pb::open(out_, field::clocks);
        pb::append_uint(out_, field::clock_id, id);
        pb::append_uint(out_, field::clock_timestamp, timestamp);
        if (incremental) pb::append_uint(out_, field::clock_is_incremental, 1);
        pb::close(out_, clock);
    }

    void write_thread(const trace_thread& thread) {
        sequence_ = static_cast<std::uint32_t>(sequence_base_ + process_sequence + 1 + (&thread - t_.threads.data()));
        thread_uuid_ = track_uuid(pid_, thread_track, thread.id);
        thread_id_ = thread.id;
        const std::vector<std::uint32_t>& flows = flows_->of(thread.id);
        const std::vector<std::uint32_t>& drops = drops_.of(thread.id);
        last_time_ = UINT64_MAX;
        for (const loupe::detail::timeline_event& e : *events_) last_time_ = std::min(last_time_, e.begin_ns);
        if (!flows.empty()) last_time_ = std::min(last_time_, t_.flows[flows.front()].time_ns);  // by time
        if (!drops.empty()) last_time_ = std::min(last_time_, t_.drops[drops.front()].after_ns);  // likewise
        if (last_time_ == UINT64_MAX) last_time_ = t_.session.start_ns;
        last_time_ = at(last_time_);
        reset_interning();

        // First packet: clears the sequence's state, sets the defaults (the
        // incremental clock, the thread's track) and anchors the clock.
        std::size_t packet = open_packet(sequence_);
        pb::append_uint(out_, field::timestamp, last_time_);
        pb::append_uint(out_, field::timestamp_clock_id, clock_boottime);
        pb::append_uint(out_, field::sequence_flags, incremental_state_cleared);
        pb::append_uint(out_, field::first_packet_on_sequence, 1);
        std::size_t defaults = pb::open(out_, field::packet_defaults);
        pb::append_uint(out_, field::defaults_clock_id, clock_incremental);
        std::size_t event_defaults = pb::open(out_, field::track_event_defaults);
        pb::append_uint(out_, field::default_track_uuid, thread_uuid_);
        pb::close(out_, event_defaults);
        pb::close(out_, defaults);
        std::size_t snapshot = pb::open(out_, field::clock_snapshot);
        append_clock(clock_incremental, last_time_, true);
        append_clock(clock_boottime, last_time_, false);
        pb::close(out_, snapshot);
        close_packet(packet);

        packet = open_packet(sequence_);
        std::size_t track = pb::open(out_, field::track_descriptor);
        pb::append_uint(out_, field::track_uuid, thread_uuid_);
        pb::append_uint(out_, field::parent_uuid, track_uuid(pid_, process_track, 0));
        // The distinct name as the thread's (what trace_processor and the UI
        // show: they ignore a root thread track's own name) and the track's.
        const std::string name = thread_track_name(thread);
        if (!name.empty()) pb::append_bytes(out_, field::track_name, printable_text(name));
        std::size_t descriptor = pb::open(out_, field::track_thread);
        pb::append_uint(out_, field::thread_pid, pid_);
        pb::append_uint(out_, field::thread_tid, shown_tid(thread));
        if (!name.empty()) pb::append_bytes(out_, field::thread_name, printable_text(name));
        pb::close(out_, descriptor);
        pb::close(out_, track);
        thread_has_metrics_ = !metrics_->empty();
        thread_has_calls_ = metrics_->has_calls();
        thread_has_args_ = metrics_->has_args();
        if (thread_has_metrics_ || thread_has_calls_) write_metric_names();
        close_packet(packet);

        // The flow points (by time) merged with the events: a point goes
        // after the begins at its time and before the ends, instants and
        // counters at its time (it was recorded inside the zones open then).
        // The gap markers of the thread's drops likewise, at the end of the
        // last event before each (after the ends at that time).
        std::size_t next_flow = 0, next_drop = 0;
        const auto points_before = [&](std::uint64_t time, bool at_time_too) {
            for (; next_flow < flows.size(); ++next_flow) {
                const std::uint64_t at = t_.flows[flows[next_flow]].time_ns;
                if (at > time || (at == time && !at_time_too)) break;
                write_flow(flows[next_flow]);
            }
            for (; next_drop < drops.size(); ++next_drop) {
                const std::uint64_t at = t_.drops[drops[next_drop]].after_ns;
                if (at > time || (at == time && !at_time_too)) break;
                write_gap(t_.drops[drops[next_drop]]);
            }
        };
        loupe::detail::replay_thread(*events_, begins_, [&](const loupe::detail::timeline_step& step) {
            if (LOUPE_UNLIKELY(next_flow < flows.size() || next_drop < drops.size())) {
                points_before(step.time_ns, step.kind != loupe::detail::timeline_step::begin);
            }
            write_step(step);
        });
        points_before(UINT64_MAX, true);
    }

    // A drop of the thread being written: an instant "N events dropped" on
    // its track where the events were lost, the count as an annotation.
    void write_gap(const trace_drop& d) {
        const std::size_t packet = open_packet(sequence_);
        append_time(d.after_ns);
        const std::size_t event = pb::open(out_, field::track_event);
        pb::append_uint(out_, field::event_type, instant_event);
        pb::append_bytes(out_, field::event_name, loupe::detail::drop_marker_name(d.count));
        const std::size_t annotation = pb::open(out_, field::event_annotations);
        pb::append_bytes(out_, field::annotation_name, "dropped");
        pb::append_uint(out_, field::annotation_uint_value, d.count);
        pb::close(out_, annotation);
        pb::close(out_, event);
        close_packet(packet);
    }

    // A packet's timestamp: the delta on the sequence's incremental clock; a
    // time that goes back (only in a damaged trace) is clamped to the
    // previous one, so a sequence's times never decrease.
    void append_time(std::uint64_t recorded_ns) {
        const std::uint64_t time_ns = at(recorded_ns);
        pb::append_uint(out_, field::timestamp, time_ns > last_time_ ? time_ns - last_time_ : 0);
        if (time_ns > last_time_) last_time_ = time_ns;
    }

    // A flow point (index into trace::flows) of the thread being written,
    // its name interned as the events' are.
    void write_flow(std::uint32_t index) {
        const trace_flow& f = t_.flows[index];
        const trace_site* site = t_.find_site(f.site_id);
        if (!site) return;  // the decoder checked it; a hand-made trace may not have
        const std::size_t slot = static_cast<std::size_t>(site - t_.sites.data());
        const std::size_t packet = open_packet(sequence_);
        append_time(f.time_ns);
        if (!interned_sites_[slot]) {
            const std::size_t interned = pb::open(out_, field::interned_data);
            append_entry(field::interned_event_names, slot + 1, site->name);
            pb::close(out_, interned);
            interned_sites_[slot] = true;
        }
        const std::size_t event = pb::open(out_, field::track_event);
        pb::append_uint(out_, field::event_type, instant_event);
        pb::append_uint(out_, field::event_name_iid, slot + 1);
        pb::append_fixed64(out_, f.terminates ? field::event_terminating_flow_ids : field::event_flow_ids,
                           f.flow_id);
        pb::close(out_, event);
        close_packet(packet);
    }

    void write_step(const loupe::detail::timeline_step& step) {
        const loupe::detail::timeline_event& e = (*events_)[step.event];
        loupe::detail::context_view shown;
        const loupe::detail::context_view* context = nullptr;
        if (step.show_context && e.context != loupe::detail::timeline_event::no_context) {
            shown = contexts_->get(e.context);
            context = &shown;
        }
        std::uint64_t counter_uuid = 0;
        if (step.kind == loupe::detail::timeline_step::counter) counter_uuid = counter_track(e);

        const std::size_t packet = open_packet(sequence_);
        append_time(step.time_ns);
        if (step.kind != loupe::detail::timeline_step::end) intern(e, context);

        const std::size_t event = pb::open(out_, field::track_event);
        switch (step.kind) {
            case loupe::detail::timeline_step::begin: pb::append_uint(out_, field::event_type, slice_begin); break;
            case loupe::detail::timeline_step::end: pb::append_uint(out_, field::event_type, slice_end); break;
            case loupe::detail::timeline_step::instant: pb::append_uint(out_, field::event_type, instant_event); break;
            case loupe::detail::timeline_step::counter:
                pb::append_uint(out_, field::event_type, counter_event);
                pb::append_uint(out_, field::event_track_uuid, counter_uuid);
                pb::append_double(out_, field::event_double_counter_value, e.value());
                break;
        }
        if (step.kind == loupe::detail::timeline_step::begin || step.kind == loupe::detail::timeline_step::instant) {
            pb::append_uint(out_, field::event_name_iid, name_slot(e) + 1);
        }
        if (step.kind == loupe::detail::timeline_step::begin) {
            if (const trace_io_op* op = loupe::detail::io_operation_of(t_, e)) write_io_annotations(*op);
            // A zone's metrics: looked up only on threads that have some.
            if (LOUPE_UNLIKELY(thread_has_metrics_)) write_metric_annotations(step.event);
            if (LOUPE_UNLIKELY(thread_has_calls_)) write_call_annotations(step.event);
            if (LOUPE_UNLIKELY(thread_has_args_)) write_zone_arg_annotations(step.event);
        }
        if (context) {
            for (unsigned f = 0; f < context_field_count; ++f) {
                if (context->fields[f].empty()) continue;
                const std::size_t annotation = pb::open(out_, field::event_annotations);
                pb::append_uint(out_, field::annotation_name_iid, f + 1);
                if (f == request_field) {
                    pb::append_bytes(out_, field::annotation_string_value, printable_text(context->fields[f]));
                } else {
                    pb::append_uint(out_, field::annotation_string_iid, value_iid_[f]);
                }
                pb::close(out_, annotation);
            }
        }
        pb::close(out_, event);
        close_packet(packet);
    }

    void write_io_annotations(const trace_io_op& op) {
        const trace_io_resource* resource = t_.find_io_resource(op.resource_id);
        const std::size_t annotation = pb::open(out_, field::event_annotations);
        pb::append_uint(out_, field::annotation_name_iid, io_annotation_first + 1);
        pb::append_bytes(out_, field::annotation_string_value,
                         printable_text(resource ? std::string_view(resource->name) : std::string_view("(unknown)")));
        pb::close(out_, annotation);
        append_int_annotation(io_annotation_first + 1, op.result);
        append_int_annotation(io_annotation_first + 2, op.fd);
    }

    // The deltas of event `event` of the thread. Cold, as the other metric
    // writers: most traces have no metrics, and keeping these out of line
    // and small keeps the per-event code as fast as without them.
    LOUPE_COLD void write_metric_annotations(std::uint32_t event) {
        const loupe::detail::thread_zone_metrics::span metrics = metrics_->of(event);
        for (std::uint32_t i = 0; i < metrics.count; ++i) {
            const metric_value& v = metrics.values[i];
            if (metric_shown(v)) append_int_annotation(metric_annotation_first + v.id, v.value);
        }
    }

    // The names of the metrics shown, interned for the sequence (in the
    // packet describing its track: trace_processor reads a packet's
    // interned_data whatever else it holds) before any slice uses them.
    // A thread with method calls also interns the calls' annotation names
    // there.
    LOUPE_COLD void write_metric_names() {
        const std::size_t interned = pb::open(out_, field::interned_data);
        for (unsigned id = 0; thread_has_metrics_ && id < max_metrics; ++id) {
            if (metric_names_[id].empty()) continue;
            append_entry(field::interned_annotation_names, metric_annotation_first + id + 1, metric_names_[id]);
        }
        if (thread_has_calls_) {
            append_entry(field::interned_annotation_names, exceptional_annotation + 1, "exceptional");
            append_entry(field::interned_annotation_names, cpu_annotation + 1, "cpu_ns");
            append_entry(field::interned_annotation_names, values_lost_annotation + 1, "values_lost");
            for (std::size_t i = 0; i < param_labels_.size(); ++i) {
                append_entry(field::interned_annotation_names, param_annotation_first + i + 1, param_labels_[i].second);
            }
        }
        pb::close(out_, interned);
    }

    // A method call's values as typed annotations (names interned by
    // write_metric_names, or inline for a further value of one spec).
    LOUPE_COLD void write_call_annotations(std::uint32_t event) {
        loupe::detail::thread_zone_metrics::call call;
        if (!metrics_->call_of(event, call)) return;
        for (std::uint32_t i = 0; i < call.count; ++i) {
            const param_value& v = call.values[i];
            const std::size_t annotation = pb::open(out_, field::event_annotations);
            std::size_t slot = param_labels_.size();
            for (std::size_t k = 0; k < param_labels_.size(); ++k) {
                if (param_labels_[k].first == v.spec) slot = k;
            }
            bool repeated = false;
            for (std::uint32_t j = 0; j < i; ++j) repeated |= call.values[j].spec == v.spec;
            if (slot < param_labels_.size() && !repeated) {
                pb::append_uint(out_, field::annotation_name_iid, param_annotation_first + slot + 1);
            } else {
                pb::append_bytes(out_, field::annotation_name,
                                 printable_text(loupe::detail::param_label_at(param_labels_, call.values, i)));
            }
            append_annotation_value(v);
            pb::close(out_, annotation);
        }
        if (call.exceptional) append_true_annotation(exceptional_annotation);
        if (call.values_lost) append_true_annotation(values_lost_annotation);
        if (call.has_cpu) {
            append_int_annotation(cpu_annotation, static_cast<std::int64_t>(call.cpu_end_ns - call.cpu_begin_ns));
        }
    }

    // A zone's arguments as typed annotations named by their keys.
    LOUPE_COLD void write_zone_arg_annotations(std::uint32_t event) {
        for (const trace_zone_argument& a : metrics_->args_of(event)) {
            const std::size_t annotation = pb::open(out_, field::event_annotations);
            pb::append_bytes(out_, field::annotation_name, printable_text(a.key));
            append_annotation_value(a.value);
            pb::close(out_, annotation);
        }
    }

    // A traced value as an annotation's typed value field.
    void append_annotation_value(const param_value& v) {
        switch (v.kind) {
            case value_kind::boolean:
                pb::append_uint(out_, field::annotation_bool_value, v.as_bool() ? 1 : 0);
                break;
            case value_kind::integer:
                pb::append_int(out_, field::annotation_int_value, v.as_int());
                break;
            case value_kind::unsigned_integer:
                pb::append_uint(out_, field::annotation_uint_value, v.as_uint());
                break;
            case value_kind::floating:
                pb::append_double(out_, field::annotation_double_value, v.as_double());
                break;
            default:
                pb::append_bytes(out_, field::annotation_string_value, printable_text(format_value(v)));
                break;
        }
    }

    // An annotation with the value true, named by iid a + 1 (interned by
    // write_metric_names).
    void append_true_annotation(unsigned a) {
        const std::size_t annotation = pb::open(out_, field::event_annotations);
        pb::append_uint(out_, field::annotation_name_iid, a + 1);
        pb::append_uint(out_, field::annotation_bool_value, 1);
        pb::close(out_, annotation);
    }

    // An annotation with an integer value, named by iid a + 1 (interned by
    // intern or write_metric_names).
    void append_int_annotation(unsigned a, std::int64_t value) {
        const std::size_t annotation = pb::open(out_, field::event_annotations);
        pb::append_uint(out_, field::annotation_name_iid, a + 1);
        pb::append_int(out_, field::annotation_int_value, value);
        pb::close(out_, annotation);
    }

    // Interned data: everything a packet refers to that the sequence has not
    // defined yet, in the same packet (before its track event is read).
    // Also fills value_iid_[f] for the context's values (one hash lookup
    // per value).
    void intern(const loupe::detail::timeline_event& e, const loupe::detail::context_view* context) {
        const std::size_t slot = name_slot(e);
        const bool new_name = e.type() != event_type::counter && !interned_sites_[slot];
        unsigned new_values = 0;  // bit f: value f gets a new iid
        unsigned new_names = 0;   // bit f: annotation name f is first used (context fields, then I/O's)
        if (loupe::detail::io_operation_of(t_, e)) {
            for (unsigned a = 0; a < io_annotation_count; ++a) {
                const unsigned bit = 1u << (io_annotation_first + a);
                if (!(annotation_names_ & bit)) new_names |= bit;
            }
        }
        for (unsigned f = 0; context && f < context_field_count; ++f) {
            const std::string_view value = context->fields[f];
            if (value.empty()) continue;
            if (!(annotation_names_ & (1u << f))) new_names |= 1u << f;
            if (f == request_field) continue;       // written inline (see write_step)
            if (value == last_value_[f]) continue;  // value_iid_[f] still holds its iid (no hashing)
            const auto [it, fresh] = value_iids_.try_emplace(value, value_iids_.size() + 1);
            value_iid_[f] = it->second;
            last_value_[f] = it->first;
            if (fresh) new_values |= 1u << f;
        }
        if (!new_name && !new_values && !new_names) return;
        const std::size_t interned = pb::open(out_, field::interned_data);
        if (new_name) {
            append_entry(field::interned_event_names, slot + 1, name_text(slot));
            interned_sites_[slot] = true;
        }
        for (unsigned f = 0; f < io_annotation_first + io_annotation_count; ++f) {
            if (!(new_names & (1u << f))) continue;
            append_entry(field::interned_annotation_names, f + 1,
                         f < io_annotation_first ? context_field_name(static_cast<context_field>(f))
                                                 : io_annotation_names[f - io_annotation_first]);
            annotation_names_ |= 1u << f;
        }
        for (unsigned f = 0; f < context_field_count; ++f) {
            if (new_values & (1u << f)) append_entry(field::interned_string_values, value_iid_[f], context->fields[f]);
        }
        pb::close(out_, interned);
    }

    void append_entry(std::uint32_t list, std::uint64_t iid, std::string_view text) {
        const std::size_t entry = pb::open(out_, list);
        pb::append_uint(out_, field::entry_iid, iid);
        pb::append_bytes(out_, field::entry_name, printable_text(text));
        pb::close(out_, entry);
    }

    void reset_interning() {
        interned_sites_.assign(interned_sites_.size(), false);
        annotation_names_ = 0;
        value_iids_.clear();
        for (std::string_view& v : last_value_) v = {};
        counter_tracks_.clear();
    }

    // A counter's track under the current thread, described on first use.
    std::uint64_t counter_track(const loupe::detail::timeline_event& e) {
        const std::uint64_t uuid =
            track_uuid(pid_, counter_track_kind, thread_id_ * 0x100000001b3ull ^ t_.sites[e.site()].id);
        if (!counter_tracks_.emplace(e.site(), uuid).second) return uuid;
        const std::size_t packet = open_packet(sequence_);
        const std::size_t track = pb::open(out_, field::track_descriptor);
        pb::append_uint(out_, field::track_uuid, uuid);
        pb::append_uint(out_, field::parent_uuid, thread_uuid_);
        pb::append_bytes(out_, field::track_name, printable_text(t_.sites[e.site()].name));
        const std::size_t counter = pb::open(out_, field::track_counter);
        pb::close(out_, counter);
        pb::close(out_, track);
        close_packet(packet);
        return uuid;
    }

    void write_drops() {
        const std::uint64_t dropped = t_.dropped_total();
        if (dropped == 0) return;
        const std::size_t packet = open_packet(sequence_base_ + process_sequence);
        pb::append_uint(out_, field::timestamp, at(t_.complete ? t_.end.end_ns : t_.session.start_ns));
        const std::size_t event = pb::open(out_, field::track_event);
        pb::append_uint(out_, field::event_type, instant_event);
        pb::append_uint(out_, field::event_track_uuid, track_uuid(pid_, process_track, 0));
        pb::append_bytes(out_, field::event_name, "loupe: events dropped");
        const std::size_t annotation = pb::open(out_, field::event_annotations);
        pb::append_bytes(out_, field::annotation_name, "count");
        pb::append_uint(out_, field::annotation_uint_value, dropped);
        pb::close(out_, annotation);
        pb::close(out_, event);
        close_packet(packet);
    }

    const trace& t_;
    std::string* result_;
    bool compress_;
    const perfetto_options* options_;  // outlives the writer and its workers' writers
    std::int64_t offset_ = 0;          // added to every time (placement)
    std::uint32_t pid_ = 0;            // the pid shown (placement, else the session's)
    std::uint32_t sequence_base_ = 0;  // packet sequences start after it
    bool first_ = true;                // writes the wall-clock tie and the session name
    pb::buffer out_;          // packets not yet moved to result_
    std::string compressed_;  // scratch
    loupe::detail::deflate::match_table deflate_table_;  // scratch of zlib_compress
    std::uint32_t sequence_ = 0;
    std::uint64_t thread_uuid_ = 0;
    std::uint64_t last_time_ = 0;
    const std::vector<loupe::detail::timeline_event>* events_ = nullptr;  // the thread being written
    std::vector<std::uint32_t> begins_;  // scratch for replay_thread
    const loupe::detail::thread_contexts* contexts_ = nullptr;  // of the thread being written
    const loupe::detail::thread_zone_metrics* metrics_ = nullptr;  // of the thread being written
    const loupe::detail::thread_flows* flows_ = nullptr;           // of the trace (begin)
    loupe::detail::thread_drops drops_;                             // of the trace (prepare)
    bool thread_has_metrics_ = false;                              // !metrics_->empty()
    bool thread_has_calls_ = false;                                // metrics_->has_calls()
    bool thread_has_args_ = false;                                 // metrics_->has_args()
    std::vector<std::pair<std::uint32_t, std::string>> param_labels_;  // spec index -> label, interned in this order
    std::uint64_t thread_id_ = 0;
    std::vector<bool> interned_sites_;  // by site index
    unsigned annotation_names_ = 0;  // bit f: name of context field f interned
    std::string_view metric_names_[max_metrics];  // by metric id: the shown ones' names, else empty
    std::unordered_map<std::string_view, std::uint64_t> value_iids_;  // context value -> iid, this sequence
    std::uint64_t value_iid_[context_field_count] = {};              // iids of the context being written
    std::string_view last_value_[context_field_count];               // the values value_iid_ belongs to
    std::unordered_map<std::uint32_t, std::uint64_t> counter_tracks_;  // site index -> track uuid
    std::unordered_map<std::string_view, unsigned> thread_names_;      // name -> threads of the trace with it
    std::map<std::pair<std::string_view, std::uint64_t>, unsigned> thread_name_tids_;  // (name, shown tid) -> threads
};

}  // namespace detail

/// Appends the Perfetto encoding of `t` (a serialized perfetto.protos.Trace)
/// to `out`.
inline void write_perfetto(const trace& t, std::string& out, perfetto_options options = {}) {
    detail::perfetto_writer writer(t, out, options);
    loupe::detail::write_viewer(t, writer);
}

/// The Perfetto encoding of `t`.
inline std::string to_perfetto(const trace& t, perfetto_options options = {}) {
    std::string out;
    write_perfetto(t, out, options);
    return out;
}

/// Writes `t` to `path` as a Perfetto trace (.pftrace). Throws loupe::error
/// naming the path when it cannot be written.
inline void write_perfetto_file(const trace& t, const std::string& path, perfetto_options options = {}) {
    loupe::detail::write_output_file(path, to_perfetto(t, options));
}

/// Writes several traces into one Perfetto trace, one process each (what
/// `loupe merge --to perfetto` writes): each trace's times moved by its
/// placement's offset onto one timeline, its process shown with its
/// placement's pid (give distinct pids), its threads' tracks under it, each
/// on packet sequences of its own. Flow ids shared by the traces link their
/// points across processes. The first trace added ties the timeline to
/// wall-clock time (its clock snapshot) and names the output's session.
/// Add the traces in order; each is written when added, so only one needs
/// to be in memory at a time.
class perfetto_set_writer {
public:
    explicit perfetto_set_writer(std::string& out, perfetto_options options = {})
        : out_(out), options_(std::move(options)) {}
    /// Appends `t`'s packets (see write_perfetto).
    void add(const trace& t, trace_placement placement = {}) {
        detail::perfetto_writer writer(t, out_, options_, placement, sequence_base_, traces_ == 0);
        loupe::detail::write_viewer(t, writer);
        sequence_base_ += static_cast<std::uint32_t>(t.threads.size()) + 1;
        ++traces_;
    }
    std::size_t traces() const noexcept { return traces_; }

private:
    std::string& out_;
    perfetto_options options_;
    std::uint32_t sequence_base_ = 0;
    std::size_t traces_ = 0;
};

/// Appends the Perfetto encoding of several placed traces to `out` (see
/// perfetto_set_writer). One trace with the default placement gives the
/// bytes write_perfetto(t) gives.
inline void write_perfetto(const std::vector<placed_trace>& traces, std::string& out, perfetto_options options = {}) {
    perfetto_set_writer writer(out, std::move(options));
    for (const placed_trace& p : traces) writer.add(*p.t, p.placement);
}

/// Converts the .loupe trace in [data, data + size) to Perfetto, appending to
/// `out`, without building the whole in-memory model (one thread's events at
/// a time): what `loupe convert` and perfetto_sink use. Same output as
/// read_trace + write_perfetto. Throws loupe::trace_error for a bad trace.
inline void convert_to_perfetto(const void* data, std::size_t size, std::string& out, perfetto_options options = {},
                                decode_options decode = {}) {
    trace skeleton;
    detail::perfetto_writer writer(skeleton, out, options);
    loupe::detail::convert_viewer(data, size, skeleton, decode, writer, options.workers);
}

}  // namespace loupe::viewer
