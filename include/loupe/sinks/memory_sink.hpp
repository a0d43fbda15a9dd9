// A sink that keeps owned copies of every record in memory: for tests, and for
// hosts that want to inspect a short session without a file.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loupe/core/context.hpp"
#include "loupe/core/sink.hpp"

namespace loupe::sinks {

/// One record, copied.
struct memory_event {
    record_kind kind = record_kind::zone;
    std::string session;        ///< session name
    const site* where = nullptr;
    std::string name;           ///< site name ("" for non-site records)
    std::uint64_t thread_id = 0;
    std::uint64_t os_tid = 0;
    std::string thread_name;
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    double value = 0.0;
    std::uint64_t count = 0;
    std::uint64_t dropped_total = 0;
    std::uint64_t flow_id = 0;  ///< for record_kind::flow (`where->kind` says whether it ends the flow)
    loupe::context context;  ///< for record_kind::context
    io_operation io;         ///< for record_kind::io
    /// For record_kind::io_resource: the resource, its name copied into
    /// `resource_name` (`resource.name` is left empty).
    io_resource resource;
    std::string resource_name;
    /// zone: its metric deltas; metric_totals: the totals (of `thread_id`,
    /// or of CPU `cpu` when thread_id is 0).
    std::vector<metric_value> metrics;
    std::uint32_t cpu = 0;
    /// zone of a method site: true when the record carried a method call;
    /// its values (text owned, see `param_text`) and exit details follow.
    /// zone_arg: `name` is the key, `params` holds the one value.
    bool has_method = false;
    std::vector<param_value> params;
    bool exceptional = false;
    bool values_lost = false;
    bool has_cpu = false;
    std::uint64_t cpu_begin_ns = 0;
    std::uint64_t cpu_end_ns = 0;
    /// param_spec: the spec's index, text and name; param_apply_error: the
    /// spec's index (`where`/`name`: the method) and the reason.
    std::uint32_t spec = 0;
    std::string spec_text;
    std::string spec_name;
    std::string reason;
    /// task_point: the point, its peer and name copied into `task_peer` and
    /// `task_name` (`task.peer` and `task.name` are left empty).
    task_point task;
    std::string task_peer;
    std::string task_name;
    /// What `params`' text views; shared by copies of the event (immutable).
    std::shared_ptr<const std::string> param_text;

    /// The value of metric `id` in `metrics`, or `otherwise`.
    std::int64_t metric(metric_id id, std::int64_t otherwise = 0) const noexcept {
        for (const metric_value& m : metrics) {
            if (m.id == id) return m.value;
        }
        return otherwise;
    }
};

/// Stores every record. Memory grows with the session: for bounded use, stop
/// the session or call `take()` now and then.
/// Thread-safety: loupe writes from its collector thread; `events`, `take`,
/// `closed` may be called from any thread at any time.
class memory_sink final : public sink {
public:
    void write(const record& r) override {
        memory_event e = copy(r);
        std::lock_guard<std::mutex> lock(mutex_);
        events_.push_back(std::move(e));
    }
    bool write_batch(const record* records, std::size_t count) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::size_t i = 0; i < count; ++i) events_.push_back(copy(records[i]));
        return true;
    }
    void flush() override {}
    void close() override {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }

    /// A copy of everything received so far, in arrival order.
    std::vector<memory_event> events() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return events_;
    }
    /// Everything received so far; the sink forgets it.
    std::vector<memory_event> take() {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<memory_event> out;
        out.swap(events_);
        return out;
    }
    /// True once the session that used the sink has stopped.
    bool closed() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return closed_;
    }

private:
    // The record as an event that owns its text.
    static memory_event copy(const record& r) {
        memory_event e;
        e.kind = r.kind;
        e.session = std::string(r.session ? r.session->name : std::string_view{});
        e.where = r.where;
        if (r.where) e.name = r.where->name;
        if (r.thread) {
            e.thread_id = r.thread->id;
            e.os_tid = r.thread->os_tid;
            e.thread_name = std::string(r.thread->name);
        }
        e.begin_ns = r.begin_ns;
        e.end_ns = r.end_ns;
        e.value = r.value;
        e.count = r.count;
        e.dropped_total = r.dropped_total;
        e.flow_id = r.flow_id;
        if (r.context) e.context = *r.context;
        if (r.io) e.io = *r.io;
        if (r.resource) {
            e.resource = *r.resource;
            e.resource.name = {};
            e.resource_name = std::string(r.resource->name);
        }
        e.metrics.assign(r.metrics, r.metrics + r.metric_count);
        e.cpu = r.cpu;
        if (r.method) copy_method(*r.method, e);
        if (r.arg) copy_values(&r.arg->value, 1, e);
        if (r.spec) {
            e.spec = r.spec->index;
            e.spec_text = std::string(r.spec->text);
            e.spec_name = std::string(r.spec->name);
        }
        if (r.apply_error) {
            e.spec = r.apply_error->spec;
            e.reason = std::string(r.apply_error->reason);
        }
        if (r.task) {
            e.task = *r.task;
            e.task_peer = std::string(r.task->peer);
            e.task_name = std::string(r.task->name);
            e.task.peer = e.task.name = {};
        }
        return e;
    }
    static void copy_method(const method_call& m, memory_event& e) {
        e.has_method = true;
        e.exceptional = m.exceptional;
        e.values_lost = m.values_lost;
        e.has_cpu = m.has_cpu;
        e.cpu_begin_ns = m.cpu_begin_ns;
        e.cpu_end_ns = m.cpu_end_ns;
        copy_values(m.values, m.value_count, e);
    }
    // The values, with their text copied into one shared string.
    static void copy_values(const param_value* values, std::size_t count, memory_event& e) {
        e.params.assign(values, values + count);
        std::size_t bytes = 0;
        for (const param_value& v : e.params) bytes += v.text.size();
        if (bytes == 0) {
            for (param_value& v : e.params) v.text = {};
            return;
        }
        auto text = std::make_shared<std::string>();
        text->reserve(bytes);
        for (const param_value& v : e.params) text->append(v.text.data(), v.text.size());
        std::size_t at = 0;
        for (param_value& v : e.params) {
            const std::size_t n = v.text.size();
            v.text = std::string_view(text->data() + at, n);
            at += n;
        }
        e.param_text = std::move(text);
    }

    mutable std::mutex mutex_;
    std::vector<memory_event> events_;
    bool closed_ = false;
};

}  // namespace loupe::sinks
