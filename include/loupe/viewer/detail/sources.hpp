// Where the viewer writers' events come from, one thread at a time:
// - a `trace` already in memory (for_each_thread_events, write_viewer);
// - the bytes of a .loupe file (convert_viewer), without building the whole
//   event model: a first pass reads the definitions and where each thread's
//   EVENTS and CONTEXT records are (events are not decoded); a second pass
//   decodes one thread at a time into reused buffers, validating its events
//   as the reader does, on several worker threads when asked. Memory is 24
//   bytes per event of the largest thread per worker instead of ~60 per event
//   of the whole trace: touching fresh memory is the dominant cost of
//   converting.
// Zones' metric deltas and method calls' parameter values travel beside the
// events (thread_zone_metrics), by event index, so the 24-byte events and the
// threads without metrics or parameters pay nothing. Flow points are few:
// writers take a thread's from the trace (thread_flows, by time) and merge
// them with its events.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/format/flow_order.hpp"
#include "loupe/viewer/detail/timeline.hpp"
#include "loupe/base/error.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/format/decoder.hpp"

namespace loupe::viewer {

/// Where one trace goes in an output that holds several (`loupe merge`):
/// every time of the trace moved by `time_offset_ns` (onto the merged
/// timeline), its process shown as `pid` (0: the trace's own).
struct trace_placement {
    std::int64_t time_offset_ns = 0;
    std::uint32_t pid = 0;
};

/// A trace and its placement (see trace_placement).
struct placed_trace {
    const trace* t = nullptr;
    trace_placement placement = {};
};

}  // namespace loupe::viewer

namespace loupe::detail {

/// `t` moved by `offset`, saturating at 0 and at the largest time.
inline std::uint64_t placed_time(std::uint64_t t, std::int64_t offset) noexcept {
    if (offset >= 0) {
        const auto forward = static_cast<std::uint64_t>(offset);
        return t > UINT64_MAX - forward ? UINT64_MAX : t + forward;
    }
    const std::uint64_t back = 0 - static_cast<std::uint64_t>(offset);  // |offset|, also for INT64_MIN
    return t < back ? 0 : t - back;
}

/// Site id -> index in trace::sites: a direct table for the small dense ids
/// loupe writes, the trace's hash index for anything else.
class site_indexes {
public:
    explicit site_indexes(const trace& t) : t_(t) {
        for (std::uint32_t i = 0; i < t.sites.size(); ++i) {
            const std::uint64_t id = t.sites[i].id;
            if (id < 2 * t.sites.size() + 64) {
                if (id >= dense_.size()) {
                    dense_.resize(id + 1, 0);
                    dense_defined_.resize(id + 1, false);
                }
                dense_[id] = i;
                dense_defined_[id] = true;
            }
        }
    }
    std::uint32_t operator()(std::uint64_t site_id) const {
        if (site_id < dense_.size()) return dense_[site_id];
        const trace_site* s = t_.find_site(site_id);  // defined: checked by defined() or the decoder
        return s ? static_cast<std::uint32_t>(s - t_.sites.data()) : 0;
    }
    bool defined(std::uint64_t site_id) const {
        return site_id < dense_.size() ? dense_defined_[site_id] : t_.find_site(site_id) != nullptr;
    }

private:
    const trace& t_;
    std::vector<std::uint32_t> dense_;
    std::vector<bool> dense_defined_;
};

inline void check_convertible(std::size_t sites, std::uint64_t events) {
    if (sites >= (1u << 30) || events >= 0xffffffffu) {
        throw error("trace too large to convert: " + std::to_string(events) + " events, " + std::to_string(sites) +
                    " sites");
    }
}

/// Indexes of `items` grouped by their thread_id, each group ordered by
/// `time_of(item)` (file order on ties).
template <class T, class TimeOf>
std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> indexes_by_thread(const std::vector<T>& items,
                                                                                 TimeOf&& time_of) {
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_thread;
    for (std::uint32_t i = 0; i < items.size(); ++i) by_thread[items[i].thread_id].push_back(i);
    for (auto& [thread, indexes] : by_thread) {
        std::stable_sort(indexes.begin(), indexes.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return time_of(items[a]) < time_of(items[b]); });
    }
    return by_thread;
}

/// The group of `thread_id` in `groups` (empty when it has none).
inline const std::vector<std::uint32_t>& group_of(
    const std::unordered_map<std::uint64_t, std::vector<std::uint32_t>>& groups, std::uint64_t thread_id) {
    static const std::vector<std::uint32_t> none;
    auto it = groups.find(thread_id);
    return it == groups.end() ? none : it->second;
}

/// The I/O operations of each thread (indexes into trace::io_ops), by end
/// time. Writers draw an operation as a slice: in a thread's timeline
/// events it is a zone whose site index is trace::sites.size() + its index
/// in trace::io_ops (see io_operation_of).
class thread_io_ops {
public:
    explicit thread_io_ops(const trace& t)
        : by_thread_(indexes_by_thread(t.io_ops, [](const trace_io_op& op) { return op.end_ns; })) {}
    const std::vector<std::uint32_t>& of(std::uint64_t thread_id) const { return group_of(by_thread_, thread_id); }

private:
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_thread_;
};

/// Each thread's DROPPED records (indexes into trace::drops, by
/// trace_drop::after_ns): where the viewers mark a gap on the thread's
/// track. Drops of no thread (id 0) have no track: the viewers count them
/// with the process.
class thread_drops {
public:
    thread_drops() = default;
    explicit thread_drops(const trace& t)
        : by_thread_(indexes_by_thread(t.drops, [](const trace_drop& d) { return d.after_ns; })) {}
    const std::vector<std::uint32_t>& of(std::uint64_t thread_id) const { return group_of(by_thread_, thread_id); }

private:
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_thread_;
};

/// The name of a gap marker: "1 event dropped", "N events dropped".
inline std::string drop_marker_name(std::uint64_t count) {
    return std::to_string(count) + (count == 1 ? " event dropped" : " events dropped");
}

/// Each thread's flow points (indexes into trace::flows, by time) and, when
/// asked for (a writer's `needs_flow_starts`: an O(n log n) sort of all
/// points), which points start a flow (format/flow_order.hpp). Built once per
/// conversion, then read by every worker.
class thread_flows {
public:
    thread_flows(const trace& t, bool mark_starts)
        : by_thread_(indexes_by_thread(t.flows, [](const trace_flow& f) { return f.time_ns; })) {
        if (!mark_starts) return;
        starts_.assign(t.flows.size(), false);
        const flow_order order(t);
        for (std::size_t k = 0; k < order.size(); ++k) starts_[order.points[order.first[k]]] = true;
    }
    const std::vector<std::uint32_t>& of(std::uint64_t thread_id) const { return group_of(by_thread_, thread_id); }
    /// Point `index` (into trace::flows) is the first of its flow (built
    /// with mark_starts).
    bool starts(std::uint32_t index) const { return starts_[index]; }

private:
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_thread_;
    std::vector<bool> starts_;
};

/// The I/O operation a timeline event stands for, or nullptr for an event.
inline const trace_io_op* io_operation_of(const trace& t, const timeline_event& e) noexcept {
    return e.site() >= t.sites.size() ? &t.io_ops[e.site() - t.sites.size()] : nullptr;
}

/// Entries keyed by event index (ascending as added), looked up in about
/// event order: the search starts from the previous answer and walks a few
/// steps before falling back to a binary search. Not thread-safe (find keeps
/// a hint). `Entry` has a `std::uint32_t event`.
template <class Entry>
class by_event_index {
public:
    void clear() noexcept {
        items_.clear();
        hint_ = next_ = 0;
    }
    bool empty() const noexcept { return items_.empty(); }
    void add(const Entry& e) { items_.push_back(e); }
    /// The entry of event `event`, or nullptr. Out of line: writers call it
    /// only for threads that have some, and keep their per-event code small.
    LOUPE_NOINLINE const Entry* find(std::uint32_t event) const noexcept {
        const std::size_t n = items_.size();
        if (n == 0) return nullptr;
        std::size_t i = hint_ < n ? hint_ : n - 1;
        for (int steps = 0; steps < 8 && items_[i].event < event && i + 1 < n; ++steps) ++i;
        for (int steps = 0; steps < 8 && items_[i].event > event && i > 0; ++steps) --i;
        if (items_[i].event != event) {
            const auto it = std::lower_bound(items_.begin(), items_.end(), event,
                                             [](const Entry& e, std::uint32_t k) { return e.event < k; });
            if (it == items_.end() || it->event != event) return nullptr;
            i = static_cast<std::size_t>(it - items_.begin());
        }
        hint_ = i;
        return &items_[i];
    }
    /// See thread_zone_metrics::renumber_before.
    void renumber_before(std::uint32_t at, std::uint32_t inserted_so_far) noexcept {
        for (; next_ < items_.size() && items_[next_].event < at; ++next_) items_[next_].event += inserted_so_far;
    }
    void end_renumbering(std::uint32_t inserted) noexcept {
        for (; next_ < items_.size(); ++next_) items_[next_].event += inserted;
        next_ = 0;
    }

private:
    std::vector<Entry> items_;       // by event
    std::size_t next_ = 0;           // renumbering: the first entry not moved yet
    mutable std::size_t hint_ = 0;   // the previous answer of find()
};

/// What one thread's zones carry besides their times, by index in its
/// timeline events: metric deltas, method calls' parameter values and exit
/// details, zone arguments. Values are the trace's (trace::metric_values,
/// param_values, zone_args) or, decoded from the .loupe bytes, the thread's
/// own (values(), params(), args()). Most threads, and all of a trace
/// without them, have none: writers then do not look (empty(), has_calls(),
/// has_args()). Not thread-safe (lookups keep a hint): one per converting thread.
class thread_zone_metrics {
public:
    struct span {
        const metric_value* values = nullptr;
        std::uint32_t count = 0;
    };

    /// A method call's values and exit details (see trace_method_call).
    struct call {
        const param_value* values = nullptr;
        std::uint32_t count = 0;
        bool exceptional = false;
        bool has_cpu = false;
        std::uint64_t cpu_begin_ns = 0;
        std::uint64_t cpu_end_ns = 0;
        bool values_lost = false;
    };

    /// Values from an in-memory trace (add's `first` indexes them).
    explicit thread_zone_metrics(const std::vector<metric_value>& model_values) : values_(&model_values) {}
    /// Values, method calls' parameter values and zone arguments from an
    /// in-memory trace (add's, add_call's and add_args' `first` index them).
    thread_zone_metrics(const std::vector<metric_value>& model_values, const std::vector<param_value>& model_params,
                        const std::vector<trace_zone_argument>& model_args)
        : values_(&model_values), params_(&model_params), args_(&model_args) {}
    /// Values of their own (values(), params(), args()).
    thread_zone_metrics() : values_(&own_) {}
    thread_zone_metrics(const thread_zone_metrics&) = delete;
    thread_zone_metrics& operator=(const thread_zone_metrics&) = delete;

    void clear() {
        entries_.clear();
        own_.clear();
        calls_.clear();
        own_params_.clear();
        arg_runs_.clear();
        own_args_.clear();
    }
    /// No metric deltas (method calls and arguments aside).
    bool empty() const noexcept { return entries_.empty(); }
    bool has_calls() const noexcept { return !calls_.empty(); }
    bool has_args() const noexcept { return !arg_runs_.empty(); }

    /// Where decoded values go (own values only).
    std::vector<metric_value>& values() noexcept { return own_; }
    /// Event `event` (greater than the events added before) carries the
    /// `count` values from index `first` on.
    void add(std::uint32_t event, std::size_t first, std::size_t count) {
        if (count != 0) entries_.add({event, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count)});
    }
    /// The deltas of event `event`, or none. Writers ask in begin order,
    /// which is close to event order (by_event_index).
    span of(std::uint32_t event) const noexcept {
        const entry* e = entries_.find(event);
        return e ? span{values_->data() + e->first, e->count} : span{};
    }

    /// Where decoded parameter values go (own values only).
    std::vector<param_value>& params() noexcept { return own_params_; }
    /// Event `event` (greater than the events given calls before) is a
    /// method call with the `count` parameter values from index `first` on.
    void add_call(std::uint32_t event, std::size_t first, std::size_t count, bool exceptional, bool has_cpu,
                  std::uint64_t cpu_begin_ns, std::uint64_t cpu_end_ns, bool values_lost) {
        calls_.add({event, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count), exceptional, has_cpu,
                    cpu_begin_ns, cpu_end_ns, values_lost});
    }
    /// Whether event `event` is a method call; if so `out` receives it.
    bool call_of(std::uint32_t event, call& out) const noexcept {
        const call_entry* c = calls_.find(event);
        if (c == nullptr) return false;
        const std::vector<param_value>& values = params_ ? *params_ : own_params_;
        out = {values.data() + c->first, c->count, c->exceptional, c->has_cpu, c->cpu_begin_ns, c->cpu_end_ns,
               c->values_lost};
        return true;
    }

    /// Where decoded zone arguments go (own values only).
    std::vector<trace_zone_argument>& args() noexcept { return own_args_; }
    /// Event `event` (greater than the events given arguments before) is a
    /// zone with the `count` arguments from index `first` on.
    void add_args(std::uint32_t event, std::size_t first, std::size_t count) {
        if (count != 0) arg_runs_.add({event, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count)});
    }
    /// The arguments of event `event` (none for most).
    item_span<trace_zone_argument> args_of(std::uint32_t event) const noexcept {
        const entry* run = arg_runs_.find(event);
        const std::vector<trace_zone_argument>& args = args_ ? *args_ : own_args_;
        return run ? item_span<trace_zone_argument>{args.data() + run->first, run->count}
                   : item_span<trace_zone_argument>{};
    }

    /// merge_io inserted an event before the old `at`-th: the events from
    /// there on move one place. Calls come with `at` not decreasing; the
    /// last, end_renumbering(inserted), moves what remains.
    void renumber_before(std::uint32_t at, std::uint32_t inserted_so_far) noexcept {
        entries_.renumber_before(at, inserted_so_far);
        calls_.renumber_before(at, inserted_so_far);
        arg_runs_.renumber_before(at, inserted_so_far);
    }
    void end_renumbering(std::uint32_t inserted) noexcept {
        entries_.end_renumbering(inserted);
        calls_.end_renumbering(inserted);
        arg_runs_.end_renumbering(inserted);
    }

private:
    struct entry {  // a run of values of one event
        std::uint32_t event;
        std::uint32_t first;
        std::uint32_t count;
    };
    struct call_entry {
        std::uint32_t event;
        std::uint32_t first;
        std::uint32_t count;
        bool exceptional;
        bool has_cpu;
        std::uint64_t cpu_begin_ns;
        std::uint64_t cpu_end_ns;
        bool values_lost;
    };
    by_event_index<entry> entries_;
    std::vector<metric_value> own_;
    const std::vector<metric_value>* values_;
    by_event_index<call_entry> calls_;
    std::vector<param_value> own_params_;
    const std::vector<param_value>* params_ = nullptr;  // the model's, else own_params_
    by_event_index<entry> arg_runs_;
    std::vector<trace_zone_argument> own_args_;
    const std::vector<trace_zone_argument>* args_ = nullptr;  // the model's, else own_args_
};

/// What the viewers call each parameter spec's values: its name, or
/// "param<index>" when it has none; a label two specs share gets "#<index>"
/// on the later one, so each spec's label is unique. In the order of
/// trace::param_specs.
inline std::vector<std::pair<std::uint32_t, std::string>> param_labels(const trace& t) {
    std::vector<std::pair<std::uint32_t, std::string>> labels;
    for (const trace_param_spec& s : t.param_specs) {
        std::string label = s.name.empty() ? "param" + std::to_string(s.index) : s.name;
        for (const auto& other : labels) {
            if (other.second == label) {
                label += "#" + std::to_string(s.index);
                break;
            }
        }
        labels.emplace_back(s.index, std::move(label));
    }
    return labels;
}

/// The label of the value at `i` of a call's values: the spec's label
/// (`labels`, from param_labels), followed by "[k]" for the k-th further
/// value of one spec in the call.
inline std::string param_label_at(const std::vector<std::pair<std::uint32_t, std::string>>& labels,
                                  const param_value* values, std::uint32_t i) {
    const std::uint32_t spec = values[i].spec;
    std::string label;
    for (const auto& l : labels) {
        if (l.first == spec) {
            label = l.second;
            break;
        }
    }
    if (label.empty()) label = "param" + std::to_string(spec);
    std::uint32_t repeat = 0;
    for (std::uint32_t j = 0; j < i; ++j) repeat += values[j].spec == spec;
    if (repeat != 0) label += "[" + std::to_string(repeat) + "]";
    return label;
}

/// Merges a thread's I/O operations (`ops`, by end time) into its events
/// (in record order: a zone at its end, others at their time), each as a
/// zone in `context_of(op)`, and renumbers `metrics` to match. At equal
/// times an operation comes first: it ends inside the zone that ends with it.
template <class ContextOf>
void merge_io(const trace& t, const std::vector<std::uint32_t>& ops, std::vector<timeline_event>& events,
              std::vector<timeline_event>& scratch, thread_zone_metrics& metrics, ContextOf&& context_of) {
    if (ops.empty()) return;
    check_convertible(t.sites.size() + t.io_ops.size(), events.size() + ops.size());
    scratch.clear();
    scratch.reserve(events.size() + ops.size());
    const auto record_time = [](const timeline_event& e) {
        return e.type() == event_type::zone ? e.end_or_value : e.begin_ns;
    };
    const bool renumber = !metrics.empty() || metrics.has_calls();
    std::size_t next = 0;
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
        const trace_io_op& op = t.io_ops[ops[i]];
        while (next < events.size() && record_time(events[next]) < op.end_ns) scratch.push_back(events[next++]);
        if (renumber) metrics.renumber_before(static_cast<std::uint32_t>(next), i);
        scratch.push_back(timeline_event::make(event_type::zone, static_cast<std::uint32_t>(t.sites.size() + ops[i]),
                                               op.begin_ns, op.end_ns, 0.0, context_of(op)));
    }
    if (renumber) metrics.end_renumbering(static_cast<std::uint32_t>(ops.size()));
    scratch.insert(scratch.end(), events.begin() + static_cast<std::ptrdiff_t>(next), events.end());
    events.swap(scratch);
}

/// One context's six values, viewing storage that outlives the conversion
/// (the trace's strings, or the .loupe bytes).
struct context_view {
    std::string_view fields[context_field_count];
};

/// The contexts of one thread that its events refer to, by time. Values are
/// read only when a writer asks (get): a thread may have a context per
/// request, and most are never shown.
class thread_contexts {
public:
    /// From an in-memory trace.
    explicit thread_contexts(const trace& model) : model_(&model) {}
    /// From .loupe bytes (offsets of CONTEXT records, validated).
    thread_contexts(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}

    void clear() {
        entries_.clear();
        hint_ = 0;
    }
    /// `where`: index into trace::contexts, or the record's offset.
    void add(std::uint64_t time_ns, std::uint64_t where) { entries_.push_back({time_ns, where}); }
    void sort_by_time() {
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const entry& a, const entry& b) { return a.time_ns < b.time_ns; });
    }
    std::size_t size() const noexcept { return entries_.size(); }
    std::uint64_t time(std::size_t i) const noexcept { return entries_[i].time_ns; }

    /// The latest context at or before `begin`, or timeline_event::no_context.
    /// Events come in file order, so their begins mostly move forward: the
    /// search starts from the previous answer and walks a few steps before
    /// falling back to a binary search. Amortized O(1).
    std::uint32_t at(std::uint64_t begin) {
        const std::size_t n = entries_.size();
        if (n == 0) return timeline_event::no_context;
        std::size_t i = hint_ < n ? hint_ : n - 1;
        if (entries_[i].time_ns <= begin) {
            for (int steps = 0; steps < 8 && i + 1 < n && entries_[i + 1].time_ns <= begin; ++steps) ++i;
            if (i + 1 == n || entries_[i + 1].time_ns > begin) return static_cast<std::uint32_t>(hint_ = i);
        } else {
            for (int steps = 0; steps < 8 && i > 0 && entries_[i].time_ns > begin; ++steps) --i;
            if (entries_[i].time_ns <= begin) return static_cast<std::uint32_t>(hint_ = i);
            if (i == 0) return timeline_event::no_context;
        }
        auto after = std::upper_bound(entries_.begin(), entries_.end(), begin,
                                      [](std::uint64_t t, const entry& e) { return t < e.time_ns; });
        if (after == entries_.begin()) return timeline_event::no_context;
        hint_ = static_cast<std::size_t>(after - entries_.begin() - 1);
        return static_cast<std::uint32_t>(hint_);
    }

    /// Context `i` as the trace holds it, task included, for a
    /// thread_contexts made from a trace; nullptr for one made from bytes.
    const trace_context* model_context(std::size_t i) const noexcept {
        return model_ != nullptr ? &model_->contexts[entries_[i].where] : nullptr;
    }

    context_view get(std::size_t i) const {
        context_view v;
        if (model_) {
            const trace_context& c = model_->contexts[entries_[i].where];
            for (unsigned f = 0; f < context_field_count; ++f) v.fields[f] = c.fields[f];
            return v;
        }
        trace_cursor head(data_, entries_[i].where, size_);
        head.u8("record kind");
        const std::uint64_t length = head.varint("record length");
        trace_cursor c(data_, head.pos(), head.pos() + length);
        c.varint("thread");
        std::uint64_t time;
        std::uint8_t flags;
        decode_context_payload(c, time, flags, [&](unsigned f, std::string_view text) { v.fields[f] = text; });
        return v;
    }

private:
    struct entry {
        std::uint64_t time_ns;
        std::uint64_t where;
    };
    std::vector<entry> entries_;
    std::size_t hint_ = 0;  // the previous answer of at()
    const trace* model_ = nullptr;
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Calls `visit(const trace_thread&, const std::vector<timeline_event>&,
/// const thread_contexts&, const thread_zone_metrics&)` (or, for a visitor that
/// takes three arguments, without the metrics) for every thread of an
/// in-memory trace that has events (or, given `flows`, flow points), in the
/// order of trace::threads.
template <class Visitor>
void for_each_thread_events(const trace& t, Visitor&& visit, const thread_flows* flows = nullptr) {
    check_convertible(t.sites.size(), t.events.size());
    // Event indexes grouped by thread (counted first: one allocation).
    std::vector<std::uint32_t> thread_of(t.events.size());
    std::vector<std::size_t> first(t.threads.size() + 1, 0);
    std::uint64_t cached_id = 0;
    std::uint32_t cached_index = 0xffffffffu;
    for (std::uint32_t i = 0; i < t.events.size(); ++i) {
        if (i == 0 || t.events[i].thread_id != cached_id) {
            const trace_thread* thread = t.find_thread(t.events[i].thread_id);
            cached_id = t.events[i].thread_id;
            cached_index = thread ? static_cast<std::uint32_t>(thread - t.threads.data()) : 0xffffffffu;
        }
        thread_of[i] = cached_index;
        if (cached_index != 0xffffffffu) ++first[cached_index + 1];
    }
    for (std::size_t th = 0; th < t.threads.size(); ++th) first[th + 1] += first[th];
    std::vector<std::uint32_t> grouped(first.back());
    {
        std::vector<std::size_t> fill(first.begin(), first.end() - 1);
        for (std::uint32_t i = 0; i < t.events.size(); ++i) {
            if (thread_of[i] != 0xffffffffu) grouped[fill[thread_of[i]]++] = i;
        }
    }
    thread_of = {};
    // Each context's index within its thread's list (in file order: events
    // keep the reader's attribution).
    std::unordered_map<std::uint64_t, thread_contexts> contexts_of;
    std::vector<std::uint32_t> local_index(t.contexts.size());
    for (std::size_t i = 0; i < t.contexts.size(); ++i) {
        thread_contexts& list = contexts_of.try_emplace(t.contexts[i].thread_id, t).first->second;
        local_index[i] = static_cast<std::uint32_t>(list.size());
        list.add(t.contexts[i].time_ns, i);
    }
    const thread_contexts none(t);
    const site_indexes site_index(t);
    const thread_io_ops io(t);
    std::vector<timeline_event> events, scratch;
    thread_zone_metrics metrics(t.metric_values, t.param_values, t.zone_args);
    for (std::size_t th = 0; th < t.threads.size(); ++th) {
        const std::vector<std::uint32_t>& ops = io.of(t.threads[th].id);
        if (first[th] == first[th + 1] && ops.empty() && (!flows || flows->of(t.threads[th].id).empty())) continue;
        events.clear();
        metrics.clear();
        for (std::size_t k = first[th]; k < first[th + 1]; ++k) {
            const trace_event& e = t.events[grouped[k]];
            const std::uint32_t ctx = e.context == no_context ? timeline_event::no_context : local_index[e.context];
            if (e.metrics_count != 0) {
                metrics.add(static_cast<std::uint32_t>(events.size()), e.metrics_begin, e.metrics_count);
            }
            if (LOUPE_UNLIKELY(e.method != no_method)) {
                const trace_method_call& m = t.method_calls[e.method];
                metrics.add_call(static_cast<std::uint32_t>(events.size()), m.params_begin, m.params_count,
                                 m.exceptional, m.has_cpu, m.cpu_begin_ns, m.cpu_end_ns, m.values_lost);
            }
            metrics.add_args(static_cast<std::uint32_t>(events.size()), e.args_begin, e.args_count);
            events.push_back(timeline_event::make(e.type, site_index(e.site_id), e.begin_ns, e.end_ns, e.value, ctx));
        }
        merge_io(t, ops, events, scratch, metrics, [&](const trace_io_op& op) {
            return op.context == no_context ? timeline_event::no_context : local_index[op.context];
        });
        auto it = contexts_of.find(t.threads[th].id);
        const thread_contexts& contexts = it == contexts_of.end() ? none : it->second;
        if constexpr (std::is_invocable_v<Visitor&, const trace_thread&, const std::vector<timeline_event>&,
                                          const thread_contexts&, const thread_zone_metrics&>) {
            visit(t.threads[th], events, contexts, static_cast<const thread_zone_metrics&>(metrics));
        } else {
            visit(t.threads[th], events, contexts);
        }
    }
}

// First pass over .loupe bytes: everything of a `trace` but its events and
// contexts, plus where each thread's EVENTS and CONTEXT records start (the
// second pass reads them one thread at a time). Events are not decoded here.
class trace_skeleton_builder final : public trace_builder {
public:
    struct thread_records {
        std::vector<std::uint64_t> events_records;   // offsets, in file order
        std::vector<std::pair<std::uint64_t, std::uint64_t>> context_records;  // (time, offset), in file order
        // (index in events_records of the EVENTS record whose last event the
        // deltas belong to, offset of the ZONE_METRICS record), in file order
        std::vector<std::pair<std::size_t, std::uint64_t>> zone_metrics_records;
        // The same for METHOD_CALL records.
        std::vector<std::pair<std::size_t, std::uint64_t>> method_call_records;
        // Zone arguments, decoded (they are few), with the index in
        // events_records of the first EVENTS record after them.
        struct zone_arg {
            std::size_t before_events_record;
            std::uint64_t zone_begin_ns;
            trace_zone_argument arg;  ///< key: arg_keys's; text: the .loupe bytes'
        };
        std::vector<zone_arg> zone_args;
        std::uint64_t event_bytes = 0;               // EVENTS payload bytes (an event takes >= 3)
    };

    trace_skeleton_builder(trace& out, const unsigned char* data, std::size_t size)
        : trace_builder(out), data_(data), size_(size) {}
    void on_events_begin(std::uint64_t offset, std::uint64_t thread_id) override {
        thread_records& r = records[thread_id];
        r.events_records.push_back(offset);
        // Payload size from the record's framing (validated by the decoder).
        trace_cursor head(data_, offset, size_);
        head.u8("record kind");
        const std::uint64_t length = head.varint("record length");
        r.event_bytes += length;
        // The trace's latest event is now this record's last one, unless it
        // holds none (the payload is just the thread id).
        std::size_t id_bytes = 1;
        for (std::uint64_t id = thread_id; id >= 0x80; id >>= 7) ++id_bytes;
        if (length > id_bytes) {
            last_events_ = &r;
            last_events_thread_ = thread_id;
            last_event_has_metrics_ = false;
            last_event_has_call_ = false;
        }
    }
    void on_context(std::uint64_t offset, const trace_context& c) override {
        if (c.thread_id != context_thread_ || !context_records_) {  // a thread's contexts mostly come in runs
            context_thread_ = c.thread_id;
            context_records_ = &records[c.thread_id].context_records;
        }
        context_records_->push_back({c.time_ns, offset});
    }
    // Contexts are decoded in the second pass, from their CONTEXT records
    // alone: the viewers show the six fields, not the task.
    void on_task_context(std::uint64_t, const trace_context&) override {}
    void on_site(std::uint64_t offset, const trace_site& s) override {
        trace_builder::on_site(offset, s);
        site_offsets.push_back(offset);
    }
    // Events are not decoded in this pass: a zone's deltas are noted with
    // the EVENTS record they follow, and the second pass (decode_thread)
    // attaches them to its last event, checking that it is a zone.
    void on_zone_metrics(std::uint64_t offset, const trace_zone_metrics& z) override {
        if (!last_events_ || last_events_thread_ != z.thread_id || last_event_has_metrics_) {
            throw trace_error(offset, "ZONE_METRICS of thread " + std::to_string(z.thread_id) +
                                          " does not follow a zone of that thread");
        }
        last_events_->zone_metrics_records.emplace_back(last_events_->events_records.size() - 1, offset);
        last_event_has_metrics_ = !z.values.empty();
    }
    // Likewise a method call: the second pass (decode_method_call) attaches it.
    void on_method_call(std::uint64_t offset, const trace_method_call_record& m) override {
        if (!last_events_ || last_events_thread_ != m.thread_id || last_event_has_call_) {
            throw trace_error(offset, "METHOD_CALL of thread " + std::to_string(m.thread_id) +
                                          " does not follow a zone of that thread");
        }
        last_events_->method_call_records.emplace_back(last_events_->events_records.size() - 1, offset);
        last_event_has_call_ = true;
    }

    // Decoded here: the second pass attaches them to their zones (decode_thread).
    void on_zone_arg(std::uint64_t, const trace_zone_arg& a) override {
        thread_records& r = records[a.thread_id];
        trace_zone_argument arg = a.arg;
        arg.key = *arg_keys.emplace(a.arg.key).first;
        r.zone_args.push_back({r.events_records.size(), a.zone_begin_ns, arg});
    }

    std::unordered_map<std::uint64_t, thread_records> records;
    std::vector<std::uint64_t> site_offsets;  // where each site (trace::sites order) is defined
    std::unordered_set<std::string> arg_keys;  // what zone arguments' keys view

private:
    const unsigned char* data_;
    std::size_t size_;
    std::uint64_t context_thread_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>>* context_records_ = nullptr;  // of context_thread_
    thread_records* last_events_ = nullptr;  // of the EVENTS record holding the trace's latest event
    std::uint64_t last_events_thread_ = 0;
    bool last_event_has_metrics_ = false;  // a ZONE_METRICS with values followed that event
    bool last_event_has_call_ = false;     // a METHOD_CALL followed that event
};

// The payload of the record at `offset` (validated by the first pass),
// after its leading thread id.
inline trace_cursor record_after_thread(const unsigned char* data, std::size_t size, std::uint64_t offset) {
    trace_cursor head(data, offset, size);
    head.u8("record kind");
    const std::uint64_t length = head.varint("record length");
    trace_cursor c(data, head.pos(), head.pos() + length);
    c.varint("thread");
    return c;
}

/// Where the first pass found each thread's records and each site's definition.
struct skeleton_index {
    std::unordered_map<std::uint64_t, trace_skeleton_builder::thread_records> records;
    std::vector<std::uint64_t> site_offsets;  // by index in trace::sites
    std::unordered_set<std::string> arg_keys;  // what zone arguments' keys view (nodes keep their place)
};

/// The first pass over .loupe bytes: `skeleton` receives the session, sites,
/// threads, drops and end (everything but events and contexts). Throws
/// loupe::trace_error.
inline skeleton_index read_skeleton(const unsigned char* data, std::size_t size, trace& skeleton,
                                    decode_options options) {
    trace_skeleton_builder builder(skeleton, data, size);
    trace_decoder first_pass(data, size, builder);
    first_pass.decode_events = false;  // the second pass decodes (and checks) them
    skeleton.complete = first_pass.run(options).complete;
    check_convertible(skeleton.sites.size(), 0);
    return {std::move(builder.records), std::move(builder.site_offsets), std::move(builder.arg_keys)};
}

// Per-worker buffers of the second pass, reused from thread to thread.
struct thread_buffers {
    thread_buffers(const unsigned char* data, std::size_t size) : contexts(data, size) {}
    std::vector<timeline_event> events;
    std::vector<timeline_event> scratch;
    thread_contexts contexts;
    thread_zone_metrics metrics;    ///< of `events`, decoded from ZONE_METRICS and METHOD_CALL records
    trace_method_call_record call;  ///< scratch of decode_method_call
    zone_arg_matcher args;          ///< zone arguments waiting for their zone
    std::size_t trace_events = 0;  ///< of `events`, those from EVENTS records (not I/O)
};

/// Decodes the ZONE_METRICS record at `offset` (validated by the first
/// pass) as the deltas of the thread's latest event, which must be a zone.
inline void decode_zone_metrics(const unsigned char* data, std::size_t size, std::uint64_t offset,
                                const trace_thread& thread, thread_buffers& b) {
    if (b.events.empty() || b.events.back().type() != event_type::zone) {
        throw trace_error(offset, "ZONE_METRICS of thread " + std::to_string(thread.id) +
                                      " does not follow a zone of that thread");
    }
    trace_cursor c = record_after_thread(data, size, offset);
    std::vector<metric_value>& values = b.metrics.values();
    const std::size_t first = values.size();
    for (std::uint64_t n = c.varint("ZONE_METRICS count"); n > 0; --n) {
        metric_value v;
        v.id = static_cast<metric_id>(c.varint("metric id"));
        v.value = format::unzigzag(c.varint("metric value"));
        values.push_back(v);
    }
    b.metrics.add(static_cast<std::uint32_t>(b.events.size() - 1), first, values.size() - first);
}

/// Decodes the METHOD_CALL record at `offset` (validated by the first pass)
/// as the values of the thread's latest event, which must be a zone. The
/// values' text views the .loupe bytes.
inline void decode_method_call(const unsigned char* data, std::size_t size, std::uint64_t offset,
                               const trace_thread& thread, thread_buffers& b) {
    if (b.events.empty() || b.events.back().type() != event_type::zone) {
        throw trace_error(
            offset, "METHOD_CALL of thread " + std::to_string(thread.id) + " does not follow a zone of that thread");
    }
    trace_cursor c = record_after_thread(data, size, offset);
    c.bounded_by_record = true;
    trace_method_call_record& m = b.call;
    decode_method_call_payload(c, m, [](std::uint64_t, std::uint64_t) { return true; });
    std::vector<param_value>& values = b.metrics.params();
    const std::size_t first = values.size();
    values.insert(values.end(), m.values.begin(), m.values.end());
    b.metrics.add_call(static_cast<std::uint32_t>(b.events.size() - 1), first, m.values.size(), m.exceptional,
                       m.has_cpu, m.cpu_begin_ns, m.cpu_end_ns, m.values_lost);
}

/// The second pass for one thread: decodes its contexts, events and zones'
/// metrics into `b` and merges its I/O operations (`ops`, from the first
/// pass) in.
/// Throws loupe::trace_error for a bad event (the first pass does not look
/// inside EVENTS records).
inline void decode_thread(const unsigned char* data, std::size_t size, const trace& skeleton,
                          const site_indexes& site_index, const std::vector<std::uint64_t>& site_offsets,
                          const trace_thread& thread, const trace_skeleton_builder::thread_records& records,
                          const std::vector<std::uint32_t>& ops, thread_buffers& b) {
    // The thread's contexts, by time (stable: file order on ties).
    b.contexts.clear();
    for (const auto& [time, offset] : records.context_records) b.contexts.add(time, offset);
    b.contexts.sort_by_time();
    thread_contexts& contexts = b.contexts;

    b.events.clear();
    b.events.reserve(static_cast<std::size_t>(records.event_bytes / 3));
    b.metrics.clear();
    std::uint64_t base_ns = skeleton.session.start_ns;
    auto zone_metrics = records.zone_metrics_records.begin();
    auto method_calls = records.method_call_records.begin();
    auto zone_args = records.zone_args.begin();
    b.args.clear();
    for (std::size_t r = 0; r < records.events_records.size(); ++r) {
        const std::uint64_t offset = records.events_records[r];
        for (; zone_args != records.zone_args.end() && zone_args->before_events_record <= r; ++zone_args) {
            b.args.hold(zone_args->zone_begin_ns, zone_args->arg);
        }
        trace_cursor c = record_after_thread(data, size, offset);
        c.bounded_by_record = true;
        decode_event_list(
            c, thread.id, base_ns,
            // Defined, and before this event (definitions precede first use).
            [&](std::uint64_t id, std::uint64_t at) { return site_index.defined(id) && site_offsets[site_index(id)] < at; },
            [&](std::uint64_t, const trace_event& e) {
                if (LOUPE_UNLIKELY(b.args.held() != 0) && e.type == event_type::zone) {
                    std::vector<trace_zone_argument>& args = b.metrics.args();
                    const std::size_t first = args.size();
                    b.metrics.add_args(static_cast<std::uint32_t>(b.events.size()), first,
                                       b.args.take(e.begin_ns, args));
                }
                b.events.push_back(timeline_event::make(e.type, site_index(e.site_id), e.begin_ns, e.end_ns, e.value,
                                                        contexts.at(e.begin_ns)));
            });
        for (; zone_metrics != records.zone_metrics_records.end() && zone_metrics->first == r; ++zone_metrics) {
            decode_zone_metrics(data, size, zone_metrics->second, thread, b);
        }
        for (; method_calls != records.method_call_records.end() && method_calls->first == r; ++method_calls) {
            decode_method_call(data, size, method_calls->second, thread, b);
        }
    }
    check_convertible(skeleton.sites.size(), b.events.size());  // indexes within a thread are 32-bit
    b.trace_events = b.events.size();
    merge_io(skeleton, ops, b.events, b.scratch, b.metrics,
             [&](const trace_io_op& op) { return contexts.at(op.begin_ns); });
}

/// Runs a viewer writer (begin(expected_events, flows), thread(thread,
/// events, ...), finish(); `Writer::needs_flow_starts` says whether it asks
/// thread_flows::starts) over an in-memory trace. Every thread with
/// events or flow points is written.
template <class Writer>
void write_viewer(const trace& t, Writer& writer) {
    const thread_flows flows(t, Writer::needs_flow_starts);
    writer.begin(t.events.size(), flows);
    for_each_thread_events(
        t,
        [&](const trace_thread& thread, const std::vector<timeline_event>& events, const thread_contexts& contexts,
            const thread_zone_metrics& metrics) { writer.thread(thread, events, contexts, metrics); },
        &flows);
    writer.finish();
}

/// Runs a viewer writer over .loupe bytes, one thread at a time (every thread
/// with events or flow points), on up to
/// `workers` threads (0: one per core, at most 8); `skeleton` (which the
/// writer refers to) receives everything but events and contexts. Threads
/// are written in the order of skeleton.threads whatever the parallelism:
/// each worker has its own Writer (constructed from the main one), output
/// string and buffers, and the outputs are appended in order. A bad event
/// throws the loupe::trace_error of the first thread (in that order) that
/// has one.
template <class Writer>
void convert_viewer(const void* data, std::size_t size, trace& skeleton, decode_options options, Writer& writer,
                    unsigned workers = 0) {
    static const unsigned char empty = 0;
    const auto* bytes = size == 0 ? &empty : static_cast<const unsigned char*>(data);
    const skeleton_index index = read_skeleton(bytes, size, skeleton, options);
    const auto& records = index.records;
    const site_indexes site_index(skeleton);

    const thread_io_ops io(skeleton);
    const thread_flows flows(skeleton, Writer::needs_flow_starts);
    static const trace_skeleton_builder::thread_records no_records;
    std::vector<std::pair<const trace_thread*, const trace_skeleton_builder::thread_records*>> work;
    for (const trace_thread& thread : skeleton.threads) {
        auto it = records.find(thread.id);
        const bool has_events = it != records.end() && it->second.event_bytes != 0;
        if (has_events || !io.of(thread.id).empty() || !flows.of(thread.id).empty()) {
            work.emplace_back(&thread, it != records.end() ? &it->second : &no_records);
        }
    }
    if (workers == 0) workers = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    workers = static_cast<unsigned>(std::min<std::size_t>(workers, work.size()));

    writer.begin(size / 4, flows);
    std::uint64_t total_events = 0;
    if (workers <= 1) {
        thread_buffers b(bytes, size);
        for (const auto& [thread, thread_records] : work) {
            decode_thread(bytes, size, skeleton, site_index, index.site_offsets, *thread, *thread_records,
                          io.of(thread->id), b);
            total_events += b.trace_events;
            writer.thread(*thread, b.events, b.contexts, b.metrics);
        }
    } else {
        std::vector<std::string> outputs(work.size());
        std::vector<std::exception_ptr> errors(work.size());
        std::vector<std::uint64_t> counts(work.size(), 0);
        std::atomic<std::size_t> next{0};
        auto run = [&] {
            thread_buffers b(bytes, size);
            std::string unused;
            Writer local(writer, unused);
            for (std::size_t k; (k = next.fetch_add(1)) < work.size();) {
                try {
                    decode_thread(bytes, size, skeleton, site_index, index.site_offsets, *work[k].first,
                                  *work[k].second, io.of(work[k].first->id), b);
                    counts[k] = b.trace_events;
                    local.retarget(outputs[k]);
                    local.thread(*work[k].first, b.events, b.contexts, b.metrics);
                } catch (...) {
                    errors[k] = std::current_exception();
                }
            }
        };
        std::vector<std::thread> pool;
        try {
            for (unsigned w = 1; w < workers; ++w) pool.emplace_back(run);
        } catch (const std::system_error&) {  // no more threads: the ones started and this one do the work
        }
        run();
        for (std::thread& t : pool) t.join();
        for (const std::exception_ptr& e : errors) {
            if (e) std::rethrow_exception(e);
        }
        std::string& out = writer.target();
        for (std::size_t k = 0; k < work.size(); ++k) {
            total_events += counts[k];
            out += outputs[k];
            outputs[k] = std::string();
        }
    }
    if (skeleton.complete && total_events != skeleton.end.events_written) {
        throw trace_error(0, "END says " + std::to_string(skeleton.end.events_written) + " events were written but " +
                                 std::to_string(total_events) + " are in the trace");
    }
    writer.finish();
}

}  // namespace loupe::detail
