// Writes a trace in Perfetto's protobuf trace format, which ui.perfetto.dev
// and Perfetto's trace_processor open directly (schema:
// perfetto_trace.proto, message perfetto.protos.Trace).
//
//   loupe::trace t = loupe::read_trace_file("out.loupe");
//   loupe::viewer::write_perfetto_file(t, "out.pftrace");
//
// What the output holds:
// - a process track (pid and session name) and one thread track per thread
//   (tid and name), each thread on its own packet sequence;
// - zones as slices (TYPE_SLICE_BEGIN/END), properly nested, ns precision;
// - instants as TYPE_INSTANT events, counters as counter tracks under their
//   thread's track ("<name>", double values);
// - context fields (client, user, session, request, app, component) as debug
//   annotations on a slice or instant whose context differs from the slice
//   around it, so nested slices inherit them instead of repeating them;
// - events lost to full rings as one instant "loupe: events dropped" on the
//   process track at the session's end, with the count as an annotation;
// - a clock snapshot tying the timeline to wall-clock time (REALTIME), so
//   traces of several processes line up.
// Event names, annotation names and annotation values are interned per
// sequence, timestamps are deltas on a sequence-scoped incremental clock, as
// Perfetto's own SDK does, and packets are deflate-compressed in groups
// (perfetto_options::compress), as Perfetto's tracing service does. Strings that are not valid UTF-8 show
// their bad bytes as the text \xHH (report::printable).
//
// Cost: O(n log n) in the events of the largest thread; memory for the
// output plus 16 bytes per event of one thread.
// Thread-safety: pure functions over a `trace` value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "loupe/detail/deflate.hpp"
#include "loupe/detail/output_file.hpp"
#include "loupe/detail/protobuf_writer.hpp"
#include "loupe/detail/viewer_timeline.hpp"
#include "loupe/reader.hpp"
#include "loupe/report/text.hpp"

namespace loupe::viewer {

namespace detail {

namespace pb = loupe::detail::protobuf;

// Field numbers from perfetto_trace.proto.
namespace field {
constexpr std::uint32_t trace_packet = 1;
// TracePacket
constexpr std::uint32_t clock_snapshot = 6, compressed_packets = 50, timestamp = 8, sequence_id = 10, track_event = 11, interned_data = 12,
                        sequence_flags = 13, timestamp_clock_id = 58, packet_defaults = 59, track_descriptor = 60,
                        first_packet_on_sequence = 87;
// ClockSnapshot / ClockSnapshot.Clock
constexpr std::uint32_t clocks = 1, clock_id = 1, clock_timestamp = 2, clock_is_incremental = 3;
// TracePacketDefaults / TrackEventDefaults
constexpr std::uint32_t defaults_clock_id = 58, track_event_defaults = 11, default_track_uuid = 11;
// TrackDescriptor, ProcessDescriptor, ThreadDescriptor
constexpr std::uint32_t track_uuid = 1, track_name = 2, track_process = 3, track_thread = 4, parent_uuid = 5,
                        track_counter = 8;
constexpr std::uint32_t process_pid = 1, process_name = 6;
constexpr std::uint32_t thread_pid = 1, thread_tid = 2, thread_name = 5;
// TrackEvent
constexpr std::uint32_t event_annotations = 4, event_type = 9, event_name_iid = 10, event_track_uuid = 11,
                        event_name = 23, event_double_counter_value = 44;
// DebugAnnotation
constexpr std::uint32_t annotation_name_iid = 1, annotation_uint_value = 3, annotation_name = 10,
                        annotation_string_iid = 17;
// InternedData and its entries (EventName, DebugAnnotationName, InternedString)
constexpr std::uint32_t interned_event_names = 2, interned_annotation_names = 3, interned_string_values = 29;
constexpr std::uint32_t entry_iid = 1, entry_name = 2;
}  // namespace field

enum track_event_type : std::uint64_t { slice_begin = 1, slice_end = 2, instant_event = 3, counter_event = 4 };
constexpr std::uint64_t clock_realtime = 1, clock_boottime = 6, clock_incremental = 64;
constexpr std::uint64_t incremental_state_cleared = 1;
constexpr std::uint32_t process_sequence = 1;

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
    perfetto_writer(const trace& t, std::string& out, bool compress)
        : t_(t), result_(out), compress_(compress), out_(compress ? staging_ : out) {}

    void write() {
        if (compress_) {
            staging_.reserve(chunk_bytes + 64 * 1024);
            result_.reserve(result_.size() + 6 * t_.events.size() + 4096);
        } else {
            out_.reserve(out_.size() + 24 * t_.events.size() + 4096);  // about 11 bytes per begin or end packet
        }
        write_process();
        loupe::detail::for_each_thread_timeline(
            t_, [&](const trace_thread& thread, const std::vector<loupe::detail::timeline_step>& steps) {
                write_thread(thread, steps);
            });
        write_drops();
        flush_compressed();
    }

private:
    // Packets are compressed in groups of about this many bytes (Perfetto
    // asks for compressed packets under 512 KiB; deflate output is at most
    // 9/8 of its input).
    static constexpr std::size_t chunk_bytes = 256 * 1024;

    void close_packet(std::size_t at) {
        pb::close(out_, at);
        if (compress_ && staging_.size() >= chunk_bytes) flush_compressed();
    }

    // One TracePacket { compressed_packets: zlib(packets so far) }.
    void flush_compressed() {
        if (!compress_ || staging_.empty()) return;
        const std::size_t packet = pb::open(result_, field::trace_packet);
        pb::append_tag(result_, field::compressed_packets, pb::length_wire);
        compressed_.clear();
        loupe::detail::deflate::zlib_compress(staging_, compressed_);
        pb::append_varint(result_, compressed_.size());
        result_ += compressed_;
        pb::close(result_, packet);
        staging_.clear();
    }

    std::size_t open_packet(std::uint32_t sequence) {
        const std::size_t at = pb::open(out_, field::trace_packet);
        pb::append_uint(out_, field::sequence_id, sequence);
        return at;
    }

    void write_process() {
        std::size_t packet = open_packet(process_sequence);
        pb::append_uint(out_, field::timestamp, t_.session.start_ns);
        std::size_t snapshot = pb::open(out_, field::clock_snapshot);
        append_clock(clock_boottime, t_.session.start_ns, false);
        append_clock(clock_realtime, t_.session.wall_anchor_ns, false);
        pb::close(out_, snapshot);
        close_packet(packet);

        packet = open_packet(process_sequence);
        const std::size_t track = pb::open(out_, field::track_descriptor);
        pb::append_uint(out_, field::track_uuid, track_uuid(t_.session.pid, process_track, 0));
        const std::size_t process = pb::open(out_, field::track_process);
        pb::append_uint(out_, field::process_pid, t_.session.pid);
        pb::append_bytes(out_, field::process_name, report::printable(t_.session.name));
        pb::close(out_, process);
        pb::close(out_, track);
        close_packet(packet);
    }

    void append_clock(std::uint64_t id, std::uint64_t timestamp, bool incremental) {
        const std::size_t clock = pb::open(out_, field::clocks);
        pb::append_uint(out_, field::clock_id, id);
        pb::append_uint(out_, field::clock_timestamp, timestamp);
        if (incremental) pb::append_uint(out_, field::clock_is_incremental, 1);
        pb::close(out_, clock);
    }

    void write_thread(const trace_thread& thread, const std::vector<loupe::detail::timeline_step>& steps) {
        sequence_ = static_cast<std::uint32_t>(process_sequence + 1 + (&thread - t_.threads.data()));
        thread_uuid_ = track_uuid(t_.session.pid, thread_track, thread.id);
        const std::uint64_t tid = thread.os_tid != 0 ? thread.os_tid : thread.id;
        last_time_ = steps.front().time_ns;
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
        pb::append_uint(out_, field::parent_uuid, track_uuid(t_.session.pid, process_track, 0));
        std::size_t descriptor = pb::open(out_, field::track_thread);
        pb::append_uint(out_, field::thread_pid, t_.session.pid);
        pb::append_uint(out_, field::thread_tid, tid);
        if (!thread.name.empty()) pb::append_bytes(out_, field::thread_name, report::printable(thread.name));
        pb::close(out_, descriptor);
        pb::close(out_, track);
        close_packet(packet);

        for (const loupe::detail::timeline_step& step : steps) write_step(step);
    }

    void write_step(const loupe::detail::timeline_step& step) {
        const trace_event& e = t_.events[step.event];
        const trace_context* context = step.show_context ? t_.context_of(e) : nullptr;
        std::uint64_t counter_uuid = 0;
        if (step.kind == loupe::detail::timeline_step::counter) counter_uuid = counter_track(e);

        const std::size_t packet = open_packet(sequence_);
        // Deltas on the incremental clock; a time that goes back (only in a
        // damaged trace) is clamped to the previous one.
        pb::append_uint(out_, field::timestamp, step.time_ns > last_time_ ? step.time_ns - last_time_ : 0);
        if (step.time_ns > last_time_) last_time_ = step.time_ns;
        if (step.kind != loupe::detail::timeline_step::end) intern(e, context);

        const std::size_t event = pb::open(out_, field::track_event);
        switch (step.kind) {
            case loupe::detail::timeline_step::begin: pb::append_uint(out_, field::event_type, slice_begin); break;
            case loupe::detail::timeline_step::end: pb::append_uint(out_, field::event_type, slice_end); break;
            case loupe::detail::timeline_step::instant: pb::append_uint(out_, field::event_type, instant_event); break;
            case loupe::detail::timeline_step::counter:
                pb::append_uint(out_, field::event_type, counter_event);
                pb::append_uint(out_, field::event_track_uuid, counter_uuid);
                pb::append_double(out_, field::event_double_counter_value, e.value);
                break;
        }
        if (step.kind == loupe::detail::timeline_step::begin || step.kind == loupe::detail::timeline_step::instant) {
            pb::append_uint(out_, field::event_name_iid, e.site_id);
        }
        if (context) {
            for (unsigned f = 0; f < context_field_count; ++f) {
                if (context->fields[f].empty()) continue;
                const std::size_t annotation = pb::open(out_, field::event_annotations);
                pb::append_uint(out_, field::annotation_name_iid, f + 1);
                pb::append_uint(out_, field::annotation_string_iid, value_iids_.find(context->fields[f])->second);
                pb::close(out_, annotation);
            }
        }
        pb::close(out_, event);
        close_packet(packet);
    }

    // Interned data: everything a packet refers to that the sequence has not
    // defined yet, in the same packet (before its track event is read).
    void intern(const trace_event& e, const trace_context* context) {
        const bool new_name = e.type != event_type::counter && !site_interned(e.site_id);
        bool new_values = false;
        for (unsigned f = 0; context && f < context_field_count; ++f) {
            const std::string& value = context->fields[f];
            if (!value.empty() && (!(annotation_names_ & (1u << f)) || value_iids_.count(value) == 0)) new_values = true;
        }
        if (!new_name && !new_values) return;
        const std::size_t interned = pb::open(out_, field::interned_data);
        if (new_name) {
            const trace_site* site = t_.find_site(e.site_id);
            append_entry(field::interned_event_names, e.site_id, site ? site->name : std::string_view("?"));
            mark_interned(e.site_id);
        }
        if (context) {
            for (unsigned f = 0; f < context_field_count; ++f) {
                if (context->fields[f].empty() || (annotation_names_ & (1u << f))) continue;
                append_entry(field::interned_annotation_names, f + 1, context_field_name(static_cast<context_field>(f)));
                annotation_names_ |= 1u << f;
            }
            for (unsigned f = 0; f < context_field_count; ++f) {
                const std::string& value = context->fields[f];
                if (value.empty() || value_iids_.count(value)) continue;
                const std::uint64_t iid = value_iids_.size() + 1;
                value_iids_.emplace(value, iid);
                append_entry(field::interned_string_values, iid, value);
            }
        }
        pb::close(out_, interned);
    }

    void append_entry(std::uint32_t list, std::uint64_t iid, std::string_view text) {
        const std::size_t entry = pb::open(out_, list);
        pb::append_uint(out_, field::entry_iid, iid);
        pb::append_bytes(out_, field::entry_name, report::printable(text));
        pb::close(out_, entry);
    }

    // Site ids are small and dense in files loupe writes; a damaged file's
    // huge ids go to a set instead of growing the bitmap.
    bool site_interned(std::uint64_t site_id) {
        if (site_id < 2 * t_.sites.size() + 64) {
            if (site_id >= interned_sites_.size()) interned_sites_.resize(site_id + 1, false);
            return interned_sites_[site_id];
        }
        return !interned_sparse_sites_.insert(site_id).second;
    }
    void mark_interned(std::uint64_t site_id) {
        if (site_id < interned_sites_.size()) interned_sites_[site_id] = true;
    }

    void reset_interning() {
        interned_sites_.assign(interned_sites_.size(), false);
        interned_sparse_sites_.clear();
        annotation_names_ = 0;
        value_iids_.clear();
        counter_tracks_.clear();
    }

    // A counter's track under the current thread, described on first use.
    std::uint64_t counter_track(const trace_event& e) {
        const std::uint64_t uuid =
            track_uuid(t_.session.pid, counter_track_kind, e.thread_id * 0x100000001b3ull ^ e.site_id);
        if (!counter_tracks_.emplace(e.site_id, uuid).second) return uuid;
        const trace_site* site = t_.find_site(e.site_id);
        const std::size_t packet = open_packet(sequence_);
        const std::size_t track = pb::open(out_, field::track_descriptor);
        pb::append_uint(out_, field::track_uuid, uuid);
        pb::append_uint(out_, field::parent_uuid, thread_uuid_);
        pb::append_bytes(out_, field::track_name, report::printable(site ? site->name : std::string_view("?")));
        const std::size_t counter = pb::open(out_, field::track_counter);
        pb::close(out_, counter);
        pb::close(out_, track);
        close_packet(packet);
        return uuid;
    }

    void write_drops() {
        const std::uint64_t dropped = t_.dropped_total();
        if (dropped == 0) return;
        const std::size_t packet = open_packet(process_sequence);
        pb::append_uint(out_, field::timestamp, t_.complete ? t_.end.end_ns : t_.session.start_ns);
        const std::size_t event = pb::open(out_, field::track_event);
        pb::append_uint(out_, field::event_type, instant_event);
        pb::append_uint(out_, field::event_track_uuid, track_uuid(t_.session.pid, process_track, 0));
        pb::append_bytes(out_, field::event_name, "loupe: events dropped");
        const std::size_t annotation = pb::open(out_, field::event_annotations);
        pb::append_bytes(out_, field::annotation_name, "count");
        pb::append_uint(out_, field::annotation_uint_value, dropped);
        pb::close(out_, annotation);
        pb::close(out_, event);
        close_packet(packet);
    }

    const trace& t_;
    std::string& result_;
    bool compress_;
    std::string staging_;     // packets not yet compressed (when compressing)
    std::string compressed_;  // scratch
    std::string& out_;        // where packets are written: staging_ or result_
    std::uint32_t sequence_ = 0;
    std::uint64_t thread_uuid_ = 0;
    std::uint64_t last_time_ = 0;
    std::vector<bool> interned_sites_;
    std::unordered_set<std::uint64_t> interned_sparse_sites_;
    unsigned annotation_names_ = 0;  // bit f: name of context field f interned
    std::unordered_map<std::string_view, std::uint64_t> value_iids_;
    std::unordered_map<std::uint64_t, std::uint64_t> counter_tracks_;  // site id -> track uuid
};

}  // namespace detail

struct perfetto_options {
    /// Deflate-compress the packets (TracePacket.compressed_packets, in
    /// groups of about 256 KiB), as Perfetto's own service does. The file
    /// shrinks 4–25×; ui.perfetto.dev and trace_processor read it as is.
    /// Turn off to inspect the packets with
    /// `protoc --decode=perfetto.protos.Trace`.
    bool compress = true;
};

/// Appends the Perfetto encoding of `t` (a serialized perfetto.protos.Trace)
/// to `out`.
inline void write_perfetto(const trace& t, std::string& out, perfetto_options options = {}) {
    detail::perfetto_writer(t, out, options.compress).write();
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

}  // namespace loupe::viewer
