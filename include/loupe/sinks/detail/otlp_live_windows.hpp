// The live OTLP sink's conversion (sinks/otlp_http_sink.hpp): cuts a
// running session into windows and turns each into OTLP requests, so that
// a span reaches the backend a window or two after it ended, with its
// parent when the parent ended soon enough.
//
// Records are kept in the compact .loupe encoding, in two encoders at a
// time: each is started at a cut and lives for two windows. When a cut
// comes, the older one (started two cuts ago) is converted and writes, per
// thread, the spans that ended in its first window; its second window is
// there to see what encloses them. Where the first window ends on a thread
// is chosen by that conversion: the first point at or after the thread's
// last record at the previous cut that no zone it sees runs across (a
// "quiet point"), so a zone and the zones inside it are written by one
// conversion, which gives them one trace. The next conversion starts its
// thread there. Ids are made from what a span is (viewer/detail/
// otlp_window.hpp), so they do not depend on the conversion.
//
// A new encoder is told first what its records refer to: the session (its
// metrics), the parameter specs, each thread's contexts since the previous
// cut, the I/O resources seen, and the zone arguments whose zone has not
// ended yet. Events lost on the way (the session's drop counts) are
// charged to the conversion of the window they were reported in.
//
// What a window cannot give: a zone that runs across more than a window
// (a worker's loop) is written without the zones that ended inside it
// before the window it ends in (those are written as roots, or as
// children of their task's span), and a span keeps only the instants,
// counters and flows recorded since the cut before it ended.
//
// Cost, on the collector thread: each record is encoded into both live
// encoders, and each window decoded and converted once; all told about
// 0.33 µs per span (3.0 M spans/s measured, docs/otlp.md). Memory: three windows of encoded records
// (bounded by max_window_bytes each) and one window pair's decoded model
// during a conversion. Thread-safety: one object, used by the collector.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/base/context.hpp"
#include "loupe/base/record.hpp"
#include "loupe/export/otlp_http.hpp"
#include "loupe/format/encoder.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/viewer/otlp.hpp"

namespace loupe::detail {

class otlp_live_windows {
public:
    /// Receives each request a conversion made and how many spans it holds.
    using request_handler = std::function<void(std::string&& request, std::uint64_t spans)>;

    /// A window is cut early once its encoded records reach `max_window_bytes`.
    otlp_live_windows(viewer::otlp_options conversion, std::size_t max_window_bytes, request_handler out)
        : conversion_(std::move(conversion)), max_window_bytes_(max_window_bytes), out_(std::move(out)) {}

    /// Takes one record of the session (session_begin first). A record
    /// that ends the session converts what is left.
    void write(const record& r) {
        switch (r.kind) {
            case record_kind::session_begin:
                session_.assign(*r.session);
                newer_ = start_window({});
                return;
            case record_kind::session_end: return finish(r);
            case record_kind::dropped:
                if (newer_) newer_->drops += r.count;
                return;
            case record_kind::metric_totals:
            case record_kind::param_apply_error: return;  // not in the OTLP mapping
            default: break;
        }
        if (!newer_) return;  // nothing before session_begin
        thread_state* t = r.thread ? &remember_thread(*r.thread) : nullptr;
        switch (r.kind) {
            case record_kind::param_spec:
                specs_[r.spec->index] = {std::string(r.spec->text), std::string(r.spec->name)};
                break;
            case record_kind::context:
                if (t) t->contexts.push_back({r.begin_ns, *r.context});
                break;
            case record_kind::io_resource: resources_[r.resource->id].assign(*r.resource, cuts_); break;
            case record_kind::zone_arg:
                if (t) t->pending_args.emplace_back(r.begin_ns, *r.arg);
                break;
            case record_kind::zone:
                if (t && !t->pending_args.empty()) {  // its arguments are in every live encoder now
                    auto& args = t->pending_args;
                    args.erase(std::remove_if(args.begin(), args.end(),
                                              [&](const owned_arg& a) { return a.begin_ns == r.begin_ns; }),
                               args.end());
                }
                break;
            case record_kind::io:
                if (auto it = resources_.find(r.io->resource_id); it != resources_.end()) it->second.used_cut = cuts_;
                break;
            default: break;
        }
        if (t && (r.kind == record_kind::zone || r.kind == record_kind::io || r.kind == record_kind::instant)) {
            t->last_end = t->has_end ? std::max(t->last_end, r.end_ns) : r.end_ns;
            t->has_end = true;
            t->touched_cut = cuts_;
        }
        if (older_) older_->encoder.encode(r);
        newer_->encoder.encode(r);
        if (newer_->encoder.bytes().size() >= max_window_bytes_) cut();
    }

    /// Ends the current window: converts the one due and starts the next.
    void cut() {
        if (!newer_) return;
        ++cuts_;
        std::unordered_map<std::uint64_t, std::uint64_t> ends;  // each thread's last record now
        for (const auto& [id, t] : threads_) {
            if (t.has_end) ends[id] = t.last_end;
        }
        if (older_) {
            viewer::otlp_window w;
            w.after = older_->after;
            const trace t = decode(*older_, older_->drops);
            w.up_to = quiet_points(t, newer_->started_at);
            convert(t, w);
            newer_->after = w.up_to;
        }
        older_ = std::move(newer_);
        prune();
        newer_ = start_window(std::move(ends));
    }

    /// Whether a session is being converted.
    bool active() const noexcept { return newer_ != nullptr; }

private:
    // One encoder and what its conversion needs to know.
    struct window {
        trace_encoder encoder;
        std::unordered_map<std::uint64_t, std::uint64_t> started_at;  // each thread's last end at its start
        std::unordered_map<std::uint64_t, std::uint64_t> after;       // where its spans start, per thread
        std::uint64_t drops = 0;  // events lost, reported while it was the newer encoder
    };

    // The session's description, owned.
    struct owned_session {
        std::string name, program, host, boot_id, clock_domain;
        std::deque<std::string> texts;  // the metrics' names, units and reasons
        std::vector<metric_info> metrics;
        session_info info;

        void assign(const session_info& s) {
            name = s.name;
            program = s.program;
            host = s.host;
            boot_id = s.boot_id;
            clock_domain = s.clock_domain;
            texts.clear();
            metrics.assign(s.metrics, s.metrics + s.metric_count);
            for (metric_info& m : metrics) {
                m.name = texts.emplace_back(m.name);
                m.unit = texts.emplace_back(m.unit);
                m.unavailable_reason = texts.emplace_back(m.unavailable_reason);
            }
            info = s;
            info.name = name;
            info.program = program;
            info.host = host;
            info.boot_id = boot_id;
            info.clock_domain = clock_domain;
            info.metrics = metrics.data();
            info.metric_count = metrics.size();
        }
    };

    struct owned_arg {
        owned_arg(std::uint64_t begin, const zone_argument& a)
            : begin_ns(begin), key(a.key), text(a.value.text), value(a.value) {}
        std::uint64_t begin_ns;
        std::string key;
        std::string text;
        param_value value;
        zone_argument view() const {
            zone_argument a{key, value};
            a.value.text = text;
            return a;
        }
    };

    struct owned_resource {
        io_resource resource;
        std::string name;
        std::uint64_t used_cut = 0;
        void assign(const io_resource& r, std::uint64_t cut) {
            resource = r;
            name = r.name;
            used_cut = cut;
        }
        io_resource view() const {
            io_resource r = resource;
            r.name = name;
            return r;
        }
    };

    struct thread_state {
        std::uint64_t os_tid = 0;
        std::string name;
        std::uint32_t name_version = 0;
        bool named = false;  // name, name_version and os_tid were set
        bool has_end = false;
        std::uint64_t last_end = 0;     // of its zones, I/O operations and instants so far
        std::uint64_t touched_cut = 0;  // the cut count at its last such record
        std::vector<std::pair<std::uint64_t, context>> contexts;  // since the cut before the last one
        std::vector<owned_arg> pending_args;                     // arguments of zones not ended yet
    };

    // Bounds of what is kept between windows (prune()). A thread forgotten
    // loses its context: its later spans are written without one.
    static constexpr std::uint64_t forget_after_cuts = 3;
    static constexpr std::size_t resources_kept = 65536;
    static constexpr std::size_t threads_kept = 16384;
    static constexpr std::size_t contexts_kept = 256;

    // The thread's state, its name and OS id brought up to date.
    thread_state& remember_thread(const thread_info& info) {
        thread_state& t = threads_[info.id];
        if (!t.named || t.name_version != info.name_version) {
            t.named = true;
            t.os_tid = info.os_tid;
            t.name = info.name;
            t.name_version = info.name_version;
        }
        return t;
    }

    thread_info thread_view(std::uint64_t id, const thread_state& t) const {
        thread_info info;
        info.id = id;
        info.os_tid = t.os_tid;
        info.name = t.name;
        info.name_version = t.name_version;
        return info;
    }

    // A new encoder, told what the records to come refer to.
    std::unique_ptr<window> start_window(std::unordered_map<std::uint64_t, std::uint64_t> ends) {
        auto w = std::make_unique<window>();
        w->started_at = std::move(ends);
        record r;
        r.session = &session_.info;
        r.kind = record_kind::session_begin;
        w->encoder.encode(r);
        for (const auto& [index, spec] : specs_) {
            const param_spec_info info{index, spec.first, spec.second};
            record s;
            s.kind = record_kind::param_spec;
            s.session = &session_.info;
            s.spec = &info;
            w->encoder.encode(s);
        }
        for (const auto& entry : resources_) {
            const io_resource res = entry.second.view();
            record s;
            s.kind = record_kind::io_resource;
            s.session = &session_.info;
            s.resource = &res;
            w->encoder.encode(s);
        }
        for (const auto& [id, t] : threads_) {
            const thread_info info = thread_view(id, t);
            for (const auto& c : t.contexts) {
                record s;
                s.kind = record_kind::context;
                s.session = &session_.info;
                s.thread = &info;
                s.begin_ns = s.end_ns = c.first;
                s.context = &c.second;
                w->encoder.encode(s);
            }
            for (const owned_arg& a : t.pending_args) {
                const zone_argument arg = a.view();
                record s;
                s.kind = record_kind::zone_arg;
                s.session = &session_.info;
                s.thread = &info;
                s.begin_ns = s.end_ns = a.begin_ns;
                s.arg = &arg;
                w->encoder.encode(s);
            }
        }
        return w;
    }

    // The window's records as a trace, with `drops` events lost (and the
    // session's end, when given).
    trace decode(window& w, std::uint64_t drops, const record* end = nullptr) const {
        if (drops != 0) {
            record d;
            d.kind = record_kind::dropped;
            d.session = &session_.info;
            d.count = drops;
            w.encoder.encode(d);
        }
        if (end) w.encoder.encode(*end);
        w.encoder.close_batch();
        decode_options options;
        options.accept_truncated = true;  // no END: the session goes on
        const std::vector<unsigned char>& bytes = w.encoder.bytes();
        return read_trace(bytes.data(), bytes.size(), options);
    }

    // For each thread the newer encoder started with: the first point at or
    // after its start that no zone of `t` runs across.
    static std::unordered_map<std::uint64_t, std::uint64_t> quiet_points(
        const trace& t, const std::unordered_map<std::uint64_t, std::uint64_t>& starts) {
        std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> zones;
        for (const trace_event& e : t.events) {
            if (e.type != event_type::zone || e.end_ns <= e.begin_ns) continue;
            const auto start = starts.find(e.thread_id);
            if (start != starts.end() && e.end_ns > start->second) zones[e.thread_id].emplace_back(e.begin_ns, e.end_ns);
        }
        std::unordered_map<std::uint64_t, std::uint64_t> points = starts;
        for (auto& [thread, list] : zones) {
            std::sort(list.begin(), list.end());
            std::uint64_t& point = points[thread];
            for (const auto& z : list) {
                if (z.first >= point) break;  // sorted by begin: none later runs across
                if (z.second > point) point = z.second;
            }
        }
        return points;
    }

    void convert(const trace& t, const viewer::otlp_window& w) {
        std::vector<std::string> requests;
        const viewer::otlp_result result = viewer::write_otlp_window(
            t, [&requests](std::string_view batch) { requests.emplace_back(batch); }, conversion_, w);
        // A window without spans is sent only to tell its lost events.
        if (result.spans == 0 && t.dropped_total() == 0) return;
        for (std::string& request : requests) {
            const std::uint64_t spans = exporter::spans_in_request(request);
            out_(std::move(request), spans);
        }
    }

    // The session ended: the older window (or the only one) is converted
    // with no upper bound; the newer holds nothing it does not.
    void finish(const record& end) {
        if (!newer_) return;
        window& last = older_ ? *older_ : *newer_;
        viewer::otlp_window w;
        w.after = last.after;
        w.last = true;
        const trace t = decode(last, (older_ ? older_->drops : 0) + newer_->drops, &end);
        older_.reset();
        newer_.reset();
        convert(t, w);
        threads_.clear();
        resources_.clear();
        specs_.clear();
    }

    // Keeps each thread's contexts from the one in effect at the older
    // encoder's start on (at most contexts_kept); past threads_kept
    // threads, forgets those idle for forget_after_cuts cuts; past
    // resources_kept resources, those unused as long.
    void prune() {
        const auto& at = older_->started_at;
        for (auto& [id, t] : threads_) {
            std::size_t drop = t.contexts.size() > contexts_kept ? t.contexts.size() - contexts_kept : 0;
            if (const auto start = at.find(id); start != at.end()) {
                while (drop + 1 < t.contexts.size() && t.contexts[drop + 1].first <= start->second) ++drop;
            }
            t.contexts.erase(t.contexts.begin(), t.contexts.begin() + static_cast<std::ptrdiff_t>(drop));
        }
        if (threads_.size() > threads_kept) {
            for (auto it = threads_.begin(); it != threads_.end();) {
                const bool idle = cuts_ - it->second.touched_cut > forget_after_cuts && it->second.pending_args.empty();
                it = idle ? threads_.erase(it) : std::next(it);
            }
        }
        if (resources_.size() > resources_kept) {
            for (auto it = resources_.begin(); it != resources_.end();) {
                it = cuts_ - it->second.used_cut > forget_after_cuts ? resources_.erase(it) : std::next(it);
            }
        }
    }

    viewer::otlp_options conversion_;
    std::size_t max_window_bytes_;
    request_handler out_;
    owned_session session_;
    std::unordered_map<std::uint32_t, std::pair<std::string, std::string>> specs_;  // by index: text, name
    std::unordered_map<std::uint64_t, owned_resource> resources_;
    std::unordered_map<std::uint64_t, thread_state> threads_;
    std::unique_ptr<window> older_;  // started two cuts ago: converted at the next cut
    std::unique_ptr<window> newer_;  // started at the last cut
    std::uint64_t cuts_ = 0;
};

}  // namespace loupe::detail
