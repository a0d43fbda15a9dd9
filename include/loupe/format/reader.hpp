// Reads a .loupe trace (written by loupe::sinks::file_sink) into memory.
//
//   loupe::trace t = loupe::read_trace_file("out.loupe");
//   for (const loupe::trace_event& e : t.events)
//       std::cout << t.find_site(e.site_id)->name << ' ' << e.end_ns - e.begin_ns << '\n';
//
// A truncated or corrupted file throws loupe::trace_error naming the byte
// offset (see format/decoder.hpp for the guarantees and for streaming use).
// Cost: O(file size); the model holds every event (72 bytes each).
// Thread-safety: reading uses only its own state; a `trace` is a plain value.
#pragma once

#include "loupe/base/config.hpp"

#if LOUPE_OS_POSIX
#    include <sys/stat.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/format/decoder.hpp"
#include "loupe/format/wire.hpp"
#include "loupe/format/zone_arg_matcher.hpp"

namespace loupe {

namespace detail {
class trace_builder;
}

/// What a method call's zone carries besides its times (a METHOD_CALL
/// record): its parameter values are trace::param_values[params_begin,
/// +params_count), in spec order.
struct trace_method_call {
    bool exceptional = false;        ///< the call left by an exception
    bool values_lost = false;        ///< some values are missing (method_call::values_lost)
    bool has_cpu = false;            ///< cpu_begin_ns/cpu_end_ns are set (a spec asked for data=cpu)
    std::uint64_t cpu_begin_ns = 0;  ///< thread CPU time at entry
    std::uint64_t cpu_end_ns = 0;    ///< thread CPU time at exit
    std::uint32_t params_begin = 0;
    std::uint32_t params_count = 0;
};

/// A run of items of a trace: a method call's values (trace::params_of), a
/// zone's arguments (trace::args_of).
template <class T>
struct item_span {
    const T* first = nullptr;
    std::size_t count = 0;
    const T* begin() const noexcept { return first; }
    const T* end() const noexcept { return first + count; }
    std::size_t size() const noexcept { return count; }
    bool empty() const noexcept { return count == 0; }
    const T& operator[](std::size_t i) const noexcept { return first[i]; }
};
using param_span = item_span<param_value>;

/// Everything one .loupe file holds.
struct trace {
    trace_session_info session;       ///< header and SESSION record
    std::vector<trace_site> sites;     ///< in definition order
    std::vector<trace_thread> threads; ///< in definition order, with their latest names
    std::vector<trace_event> events;   ///< in file order: per thread, the order it produced them
    std::vector<trace_drop> drops;     ///< DROPPED records in file order
    std::vector<trace_context> contexts; ///< CONTEXT records in file order
    std::vector<trace_io_resource> io_resources;  ///< IO_RESOURCE records in file order
    std::vector<trace_io_op> io_ops;              ///< IO records in file order
    std::vector<trace_metric> metrics;            ///< METRIC records: what the session measured
    std::vector<metric_value> metric_values;      ///< zones' deltas (see trace_event::metrics_begin)
    /// Per-thread and per-CPU totals of the push metrics: one per thread
    /// and per CPU, the latest written (the one at session end when complete).
    std::vector<trace_metric_totals> metric_totals;
    /// The session's parameter specs (PARAM_SPEC records), one per index in
    /// order of first definition; a redefinition replaces the spec in place.
    std::vector<trace_param_spec> param_specs;
    std::vector<trace_apply_error> apply_errors;  ///< APPLY_ERROR records in file order
    std::vector<trace_method_call> method_calls;  ///< see trace_event::method
    /// Method calls' values (see trace_method_call::params_begin). Their
    /// text views storage the trace owns and shares with its copies.
    std::vector<param_value> param_values;
    std::vector<trace_flow> flows;  ///< FLOW records in file order (per thread, by time)
    std::vector<trace_task_point> task_points;  ///< TASK records in file order (per thread, by time)
    /// Zones' arguments, per zone in the order they were recorded (see
    /// trace_event::args_begin).
    std::vector<trace_zone_argument> zone_args;
    /// ZONE_ARG records whose zone is not in the trace (it was dropped, or
    /// the trace was cut short before it ended).
    std::uint64_t zone_args_without_zone = 0;
    trace_end_info end;                ///< END record (zero when !complete)
    bool complete = false;             ///< false only for a cut-short trace read with accept_truncated

    /// Sum of all DROPPED counts.
    std::uint64_t dropped_total() const noexcept {
        std::uint64_t n = 0;
        for (const auto& d : drops) n += d.count;
        return n;
    }
    /// The context `e` ran in (its thread's latest context record at or
    /// before the event's begin), or nullptr when none was recorded.
    const trace_context* context_of(const trace_event& e) const noexcept {
        return e.context == no_context ? nullptr : &contexts[e.context];
    }
    const trace_context* context_of(const trace_io_op& op) const noexcept {
        return op.context == no_context ? nullptr : &contexts[op.context];
    }
    /// The resource an I/O operation was done on, or nullptr (id 0). O(1).
    const trace_io_resource* find_io_resource(std::uint64_t id) const noexcept {
        return find(io_resources, io_resource_index_, id);
    }
    /// The metric with that name or id, or nullptr.
    const trace_metric* find_metric(std::string_view name) const noexcept {
        for (const trace_metric& m : metrics) {
            if (m.name == name) return &m;
        }
        return nullptr;
    }
    const trace_metric* find_metric(metric_id id) const noexcept {
        for (const trace_metric& m : metrics) {
            if (m.id == id) return &m;
        }
        return nullptr;
    }
    /// The delta of metric `id` a zone carries; false when it carries none.
    bool metric_of(const trace_event& e, metric_id id, std::int64_t& value) const noexcept {
        for (std::uint32_t i = 0; i < e.metrics_count; ++i) {
            const metric_value& v = metric_values[e.metrics_begin + i];
            if (v.id == id) {
                value = v.value;
                return true;
            }
        }
        return false;
    }
    /// The method call an event is (its values and exit details), or nullptr.
    const trace_method_call* method_of(const trace_event& e) const noexcept {
        return e.method == no_method ? nullptr : &method_calls[e.method];
    }
    /// A method call's parameter values (none for other events).
    param_span params_of(const trace_event& e) const noexcept {
        const trace_method_call* m = method_of(e);
        return m ? param_span{param_values.data() + m->params_begin, m->params_count} : param_span{};
    }
    /// A zone's arguments, in the order they were recorded (none for other
    /// events). O(1).
    item_span<trace_zone_argument> args_of(const trace_event& e) const noexcept {
        return {zone_args.data() + e.args_begin, e.args_count};
    }
    /// The spec with that index, or nullptr. O(specs).
    const trace_param_spec* find_param_spec(std::uint32_t index) const noexcept {
        for (const trace_param_spec& s : param_specs) {
            if (s.index == index) return &s;
        }
        return nullptr;
    }
    /// What a spec's values are called: its name, or "param<index>" when it
    /// has none (or is not defined).
    std::string param_label(std::uint32_t index) const {
        const trace_param_spec* s = find_param_spec(index);
        return s && !s->name.empty() ? s->name : "param" + std::to_string(index);
    }
    /// The site or thread with that id, or nullptr. O(1).
    const trace_site* find_site(std::uint64_t id) const noexcept { return find(sites, site_index_, id); }
    const trace_thread* find_thread(std::uint64_t id) const noexcept { return find(threads, thread_index_, id); }

private:
    friend class detail::trace_builder;
    template <class T>
    static const T* find(const std::vector<T>& items, const std::unordered_map<std::uint64_t, std::size_t>& index,
                         std::uint64_t id) noexcept {
        auto it = index.find(id);
        return it == index.end() ? nullptr : &items[it->second];
    }
    std::unordered_map<std::uint64_t, std::size_t> site_index_;
    std::unordered_map<std::uint64_t, std::size_t> thread_index_;
    std::unordered_map<std::uint64_t, std::size_t> io_resource_index_;
    std::shared_ptr<const std::string> param_text_;  // what param_values' text views
};

namespace detail {
// Builds a `trace` from decoder callbacks.
class trace_builder : public trace_visitor {
public:
    explicit trace_builder(trace& out) : out_(out) {}
    void on_session(std::uint64_t, const trace_session_info& s) override { out_.session = s; }
    void on_process(std::uint64_t, std::string_view program) override { out_.session.program = std::string(program); }
    void on_site(std::uint64_t, const trace_site& s) override {
        out_.site_index_.emplace(s.id, out_.sites.size());
        out_.sites.push_back(s);
    }
    void on_thread(std::uint64_t, const trace_thread& t) override {
        auto [it, fresh] = out_.thread_index_.emplace(t.id, out_.threads.size());
        if (fresh) {
            out_.threads.push_back(t);
        } else {
            out_.threads[it->second].name = t.name;
        }
    }
    void on_event(std::uint64_t, const trace_event& e) override {
        out_.events.push_back(e);
        if (events_thread_last_end_ != nullptr && e.end_ns > *events_thread_last_end_) *events_thread_last_end_ = e.end_ns;
        if (LOUPE_UNLIKELY(held_args_ != 0) && e.type == event_type::zone) attach_args(out_.events.back());
    }
    // A ZONE_ARG comes before its zone's event: held per thread until it
    // arrives (format/zone_arg_matcher.hpp).
    void on_zone_arg(std::uint64_t offset, const trace_zone_arg& a) override {
        if (out_.zone_args.size() + held_args_ >= UINT32_MAX) {
            throw trace_error(offset, "too many zone arguments for one trace");
        }
        args_by_thread_[a.thread_id].hold(a.zone_begin_ns, {intern_key(a.arg.key), a.arg.value});
        ++held_args_;
        param_text_bytes_ += a.arg.value.text.size();
    }
    /// Counts the arguments whose zone never came. Call once decoding is done.
    void finish_args() {
        for (auto& [thread, matcher] : args_by_thread_) {
            matcher.finish();
            out_.zone_args_without_zone += matcher.without_zone();
        }
        args_by_thread_.clear();
        held_args_ = 0;
    }
    void on_metric(std::uint64_t, const trace_metric& m) override { out_.metrics.push_back(m); }
    // The writer puts ZONE_METRICS right after the EVENTS record whose last
    // event is the zone it belongs to.
    void on_zone_metrics(std::uint64_t offset, const trace_zone_metrics& z) override {
        if (out_.events.empty() || out_.events.back().thread_id != z.thread_id ||
            out_.events.back().type != event_type::zone || out_.events.back().metrics_count != 0) {
            throw trace_error(offset, "ZONE_METRICS of thread " + std::to_string(z.thread_id) +
                                          " does not follow a zone of that thread");
        }
        trace_event& e = out_.events.back();
        e.metrics_begin = static_cast<std::uint32_t>(out_.metric_values.size());
        e.metrics_count = static_cast<std::uint32_t>(z.values.size());
        out_.metric_values.insert(out_.metric_values.end(), z.values.begin(), z.values.end());
    }
    // Totals are snapshots since the session start: the latest per thread
    // (or CPU) replaces earlier ones.
    void on_metric_totals(std::uint64_t, const trace_metric_totals& t) override {
        const std::uint64_t key = t.per_cpu ? ~std::uint64_t{t.cpu} : t.thread_id;
        auto [it, fresh] = totals_index_.emplace(key, out_.metric_totals.size());
        if (fresh) {
            out_.metric_totals.push_back(t);
        } else {
            out_.metric_totals[it->second] = t;
        }
    }
    void on_param_spec(std::uint64_t, const trace_param_spec& s) override {
        for (trace_param_spec& known : out_.param_specs) {
            if (known.index == s.index) {
                known = s;
                return;
            }
        }
        out_.param_specs.push_back(s);
    }
    void on_apply_error(std::uint64_t, const trace_apply_error& e) override { out_.apply_errors.push_back(e); }
    void on_flow(std::uint64_t, const trace_flow& f) override { out_.flows.push_back(f); }
    void on_host(std::uint64_t, const trace_session_info& s) override {
        out_.session.host = s.host;
        out_.session.boot_id = s.boot_id;
        out_.session.clock_domain = s.clock_domain;
        out_.session.process_start_ns = s.process_start_ns;
    }
    // The decoder checked that `c` amends the CONTEXT record just before
    // (which a builder that keeps contexts holds last).
    void on_task_context(std::uint64_t, const trace_context& c) override {
        if (!out_.contexts.empty()) out_.contexts.back() = c;
    }
    void on_task_point(std::uint64_t, const trace_task_point& t) override { out_.task_points.push_back(t); }
    // As ZONE_METRICS, METHOD_CALL follows the EVENTS record whose last
    // event is the call's zone. Values' text views the input until
    // finish_params copies it into the trace.
    void on_method_call(std::uint64_t offset, const trace_method_call_record& m) override {
        if (out_.events.empty() || out_.events.back().thread_id != m.thread_id ||
            out_.events.back().type != event_type::zone || out_.events.back().method != no_method) {
            throw trace_error(offset, "METHOD_CALL of thread " + std::to_string(m.thread_id) +
                                          " does not follow a zone of that thread");
        }
        if (out_.method_calls.size() >= no_method || out_.param_values.size() + m.values.size() > UINT32_MAX) {
            throw trace_error(offset, "too many method calls or parameter values for one trace");
        }
        trace_method_call call;
        call.exceptional = m.exceptional;
        call.values_lost = m.values_lost;
        call.has_cpu = m.has_cpu;
        call.cpu_begin_ns = m.cpu_begin_ns;
        call.cpu_end_ns = m.cpu_end_ns;
        call.params_begin = static_cast<std::uint32_t>(out_.param_values.size());
        call.params_count = static_cast<std::uint32_t>(m.values.size());
        out_.events.back().method = static_cast<std::uint32_t>(out_.method_calls.size());
        out_.method_calls.push_back(call);
        out_.param_values.insert(out_.param_values.end(), m.values.begin(), m.values.end());
        for (const param_value& v : m.values) param_text_bytes_ += v.text.size();
    }
    /// Copies the values' text (viewing the input) and the zone arguments'
    /// keys into storage the trace owns. Call once decoding is done, while
    /// the input is still there.
    void finish_params() {
        std::size_t key_bytes = 0;
        for (const std::string& k : keys_) key_bytes += k.size();
        auto text = std::make_shared<std::string>();
        text->reserve(param_text_bytes_ + key_bytes);
        auto keep = [&](std::string_view& view) {
            const std::size_t at = text->size();
            text->append(view.data(), view.size());
            view = std::string_view(text->data() + at, view.size());  // no reallocation: reserved
        };
        for (param_value& v : out_.param_values) keep(v.text);
        for (trace_zone_argument& a : out_.zone_args) keep(a.value.text);
        std::unordered_map<std::string_view, std::string_view> kept_keys;  // builder's key → trace's copy
        for (const std::string& k : keys_) {
            std::string_view view = k;
            keep(view);
            kept_keys.emplace(k, view);
        }
        for (trace_zone_argument& a : out_.zone_args) a.key = kept_keys[a.key];
        out_.param_text_ = std::move(text);
        param_text_bytes_ = 0;
    }
    // A loss is placed after the thread's last event before it (trace_drop::after_ns).
    void on_dropped(std::uint64_t, const trace_drop& d) override {
        out_.drops.push_back(d);
        const auto last = last_end_by_thread_.find(d.thread_id);
        out_.drops.back().after_ns = last != last_end_by_thread_.end() ? last->second : out_.session.start_ns;
    }
    void on_events_begin(std::uint64_t, std::uint64_t thread_id) override {
        events_thread_last_end_ = &last_end_by_thread_[thread_id];
    }
    void on_end(std::uint64_t, const trace_end_info& e) override { out_.end = e; }
    void on_context(std::uint64_t, const trace_context& c) override { out_.contexts.push_back(c); }
    void on_io_resource(std::uint64_t, const trace_io_resource& r) override {
        out_.io_resource_index_.emplace(r.id, out_.io_resources.size());
        out_.io_resources.push_back(r);
    }
    void on_io(std::uint64_t, const trace_io_op& op) override { out_.io_ops.push_back(op); }

    /// Sets every event's context: per thread, the latest context record
    /// whose time is at or before the event's begin.
    void attribute_contexts() {
        if (out_.contexts.empty()) return;
        std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_thread;  // indexes, by time
        for (std::size_t i = 0; i < out_.contexts.size(); ++i) by_thread[out_.contexts[i].thread_id].push_back(i);
        for (auto& [thread, indexes] : by_thread) {
            std::stable_sort(indexes.begin(), indexes.end(), [&](std::size_t a, std::size_t b) {
                return out_.contexts[a].time_ns < out_.contexts[b].time_ns;
            });
        }
        auto attribute = [&](auto& item) {
            auto it = by_thread.find(item.thread_id);
            if (it == by_thread.end()) return;
            const auto& indexes = it->second;
            auto after = std::upper_bound(indexes.begin(), indexes.end(), item.begin_ns, [&](std::uint64_t t, std::size_t i) {
                return t < out_.contexts[i].time_ns;
            });
            if (after != indexes.begin()) item.context = *(after - 1);
        };
        for (trace_event& e : out_.events) attribute(e);
        for (trace_io_op& op : out_.io_ops) attribute(op);
    }

private:
    void attach_args(trace_event& e) {
        auto it = args_by_thread_.find(e.thread_id);
        if (it == args_by_thread_.end()) return;
        zone_arg_matcher& matcher = it->second;
        const std::size_t before = matcher.held();
        e.args_begin = static_cast<std::uint32_t>(out_.zone_args.size());
        e.args_count = static_cast<std::uint32_t>(matcher.take(e.begin_ns, out_.zone_args));
        held_args_ -= before - matcher.held();
    }
    // Keys view the decoder's string table, which goes with the decoder:
    // one copy per distinct key until finish_params.
    std::string_view intern_key(std::string_view key) { return *keys_.emplace(key).first; }

    trace& out_;
    std::unordered_map<std::uint64_t, zone_arg_matcher> args_by_thread_;
    std::unordered_map<std::uint64_t, std::uint64_t> last_end_by_thread_;  // a thread's latest event end so far
    std::uint64_t* events_thread_last_end_ = nullptr;  // of the EVENTS record being read (node: stays put)
    std::size_t held_args_ = 0;  // by all matchers
    std::unordered_set<std::string> keys_;
    std::size_t param_text_bytes_ = 0;                             // text of param_values still viewing the input
    std::unordered_map<std::uint64_t, std::size_t> totals_index_;  // thread id, or ~cpu → metric_totals
};
}  // namespace detail

/// Reads a whole trace from memory. Throws loupe::trace_error.
inline trace read_trace(const void* data, std::size_t size, decode_options options = {}) {
    trace t;
    // A zone takes at least 4 bytes in the file: reserving for that many
    // events avoids regrowing (and re-faulting) a model of hundreds of MB.
    // Pages never touched cost no memory.
    t.events.reserve(size / 4);
    t.contexts.reserve(static_cast<std::size_t>(count_records(data, size, detail::format::rec_context)));
    detail::trace_builder builder(t);
    t.complete = decode_trace(data, size, builder, options).complete;
    builder.attribute_contexts();
    builder.finish_args();
    builder.finish_params();
    return t;
}

namespace detail {

// Reads `path` into memory: a regular file into a buffer of its size (one
// copy), anything else that reads as a stream (a pipe, a character device)
// in 64 KiB pieces. A directory, or anything that cannot be opened or read,
// is a loupe::error naming the path. With `check_magic`, the first bytes are
// checked to be a .loupe header before anything else is read, so that
// /dev/zero or a huge file of something else fails at once (a trace_error
// at byte 0) instead of being read whole.
inline std::vector<unsigned char> read_input(const std::string& path, bool check_magic) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw error("cannot open '" + path + "': " + std::strerror(errno));
    struct closer {
        std::FILE* f;
        ~closer() { std::fclose(f); }
    } close_at_exit{f};
    std::uint64_t expected = 0;  // the size of a regular file; 0: unknown
#if LOUPE_OS_POSIX
    struct stat st {};
    if (::fstat(::fileno(f), &st) != 0) throw error("cannot read '" + path + "': " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw error("cannot read '" + path + "': is a directory");
    if (S_ISREG(st.st_mode)) expected = static_cast<std::uint64_t>(st.st_size);
#endif
    std::vector<unsigned char> bytes;
    auto fill = [&](std::size_t up_to) {  // reads until `up_to` bytes are in, or the input ends
        unsigned char chunk[64 * 1024];
        while (bytes.size() < up_to) {
            const std::size_t want = up_to - bytes.size() < sizeof chunk ? up_to - bytes.size() : sizeof chunk;
            const std::size_t n = std::fread(chunk, 1, want, f);
            if (n == 0) break;
            bytes.insert(bytes.end(), chunk, chunk + n);
        }
        if (std::ferror(f)) throw error("cannot read '" + path + "': " + std::strerror(errno));
    };
    if (check_magic) {
        fill(sizeof format::magic);
        if (bytes.size() < sizeof format::magic || std::memcmp(bytes.data(), format::magic, sizeof format::magic) != 0) {
            throw trace_error(0, "not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A", false, path);
        }
    }
    try {
        if (expected > bytes.size()) bytes.reserve(static_cast<std::size_t>(expected));
        fill(static_cast<std::size_t>(-1));
    } catch (const std::bad_alloc&) {
        throw error("cannot read '" + path + "': out of memory after " + std::to_string(bytes.size()) + " bytes" +
                    (expected != 0 ? " of " + std::to_string(expected) : std::string()));
    }
    return bytes;
}

}  // namespace detail

/// Reads a whole file into memory. Throws loupe::error naming the path when
/// it cannot be read (a directory: "is a directory").
inline std::vector<unsigned char> read_file_bytes(const std::string& path) { return detail::read_input(path, false); }

/// Reads a whole .loupe file into memory, checking its magic bytes first:
/// anything else fails with a trace_error at byte 0 before it is read.
inline std::vector<unsigned char> read_trace_bytes(const std::string& path) { return detail::read_input(path, true); }

/// Reads a .loupe file. Throws loupe::error when the file cannot be read and
/// loupe::trace_error (message prefixed with the path) when it is not a
/// valid trace.
inline trace read_trace_file(const std::string& path, decode_options options = {}) {
    const std::vector<unsigned char> bytes = read_trace_bytes(path);
    try {
        return read_trace(bytes.data(), bytes.size(), options);
    } catch (const trace_error& e) {
        throw trace_error(e.offset(), e.detail(), e.truncated(), path);
    }
}

}  // namespace loupe
