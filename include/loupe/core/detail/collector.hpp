// The collector thread: drains every ring, converts ticks to nanoseconds,
// routes each record to the sessions it was captured for, turns drop counters
// into `dropped` records, and runs session begin/end. All sink calls happen
// here, so sinks never see two threads.
//
// Included at the end of runtime.hpp; not a header to include on its own.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "loupe/io/detail/io_wire.hpp"
#include "loupe/core/detail/runtime.hpp"

namespace loupe::detail {

namespace collector_detail {

inline thread_info describe(const ring& r) noexcept {
    thread_info ti;
    ti.id = r.thread_id;
    ti.os_tid = r.os_tid;
    ti.name = r.collector_name;
    ti.name_version = r.collector_name_version;
    return ti;
}

// Pacing. A collector that drains a ring as fast as its thread fills it
// reads each record's cache line while the producer is still writing the
// line next to it, and the producer pays for every line it takes back: in a
// tight recording loop that costs more than the recording itself, and with
// the collector busy re-reading a few records at a time, the ring overflows
// sooner under a burst. So after a pass that found every ring holding less
// than 1/backlog_share of its capacity, the collector waits pass_pause (or
// until woken: a session starting or stopping, a producer blocked on a full
// ring) before the next pass; a pass that found more goes on at once. A
// 1 MiB ring takes over 650 µs to fill even at one event per 20 ns.
inline constexpr std::size_t backlog_share = 8;
inline constexpr std::chrono::microseconds pass_pause{100};

// Collector-only counters are single-writer: a plain load+store publishes them
// without a locked read-modify-write per record.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_release);
}

// The deltas of `plan` that session metrics `mask` asked for, into `out`.
inline std::size_t select_metrics(const metric_plan& plan, const std::int64_t* deltas, std::uint64_t mask,
                                  metric_value* out) noexcept {
    std::size_t n = 0;
    for (std::uint32_t i = 0; i < plan.count; ++i) {
        if (mask >> plan.ids[i] & 1) out[n++] = metric_value{plan.ids[i], deltas[i]};
    }
    return n;
}

}  // namespace collector_detail

inline void runtime::collector_main() noexcept {
    using namespace std::chrono;
    t_state.status = thread_collector;
#if LOUPE_OS_LINUX
    pthread_setname_np(pthread_self(), "loupe-collector");
#endif
    std::vector<ring*> rings;
    std::vector<ring*> retired;
    std::vector<std::shared_ptr<session_state>> starting, finishing;
    std::shared_ptr<session_state> live[max_sessions];
    auto last_flush = steady_clock::now();

    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        // Snapshot under the lock: sessions, their phase, the rings.
        starting.clear();
        finishing.clear();
        std::uint64_t live_mask = 0;
        for (int i = 0; i < max_sessions; ++i) {
            live[i] = slots_[i];
            if (!live[i]) continue;
            live_mask |= std::uint64_t{1} << i;
            if (!live[i]->begun) starting.push_back(live[i]);
            if (live[i]->phase == session_phase::stopping) finishing.push_back(live[i]);
        }
        rings = live_rings_;
        const bool exiting = shutting_down_;
        wake_ = false;
        lock.unlock();

        // Work without the lock: hosts can acquire rings and start sessions.
        for (auto& s : starting) begin_session(*s);
        for (std::uint64_t m = live_mask; m != 0; m &= m - 1) {
            session_state& s = *live[__builtin_ctzll(m)];
            if (s.begun) send_param_news(s);
        }
        std::size_t moved = 0;
        bool complete = true;  // every ring drained to its head in this pass
        bool backlog = false;  // some ring held at least collector_detail::backlog_share of its capacity
        retired.clear();
        for (ring* r : rings) {
            // A retired ring's last push happened before `retired` was set,
            // so draining after reading the flag empties it for good.
            const bool was_retired = r->retired.load(std::memory_order_acquire);
            const drain_result d = drain_ring(*r, live, live_mask);
            moved += d.consumed;
            backlog = backlog || d.consumed * collector_detail::backlog_share >= r->capacity();
            complete = complete && d.complete;
            for (std::uint64_t m = live_mask; m != 0; m &= m - 1) report_drops(r, *live[__builtin_ctzll(m)]);
            if (was_retired && d.complete) retired.push_back(r);
        }
        for (std::uint64_t m = live_mask; m != 0; m &= m - 1) report_ringless_drops(*live[__builtin_ctzll(m)]);
        for (std::uint64_t m = live_mask; m != 0; m &= m - 1) {
            const auto& s = live[__builtin_ctzll(m)];
            if (std::find(finishing.begin(), finishing.end(), s) == finishing.end()) report_metric_totals_if_due(*s, rings);
        }
        // A session ends only after a pass that emptied every ring; otherwise
        // it stays `stopping` and the next pass (with a fresh snapshot) ends it.
        if (!complete) finishing.clear();
        for (auto& s : finishing) finish_session(*s, rings);
        if (steady_clock::now() - last_flush > seconds(1)) {
            last_flush = steady_clock::now();
            for (std::uint64_t m = live_mask; m != 0; m &= m - 1) live[__builtin_ctzll(m)]->flush_sinks();
        }

        lock.lock();
        for (auto& s : starting) {
            if (s->phase == session_phase::starting) s->phase = session_phase::active;
        }
        for (auto& s : finishing) {
            s->phase = session_phase::stopped;
            slots_[s->slot].reset();
            occupied_slots_.fetch_and(~(std::uint64_t{1} << s->slot), std::memory_order_release);
        }
        for (ring* r : retired) {
            live_rings_.erase(std::find(live_rings_.begin(), live_rings_.end(), r));
            if (pool_.size() < max_pooled_rings) {
                r->reset_for_reuse();
                pool_.push_back(r);
            } else {
                delete r;
            }
        }
        for (auto& s : live) s.reset();
        starting.clear();
        if (!finishing.empty()) {
            finishing.clear();
            done_cv_.notify_all();
        }
        if (exiting) {
            collector_running_.store(false, std::memory_order_release);
            return;
        }
        if (complete && !wake_) {
            if (moved != 0) {
                // Little in every ring: let them fill a while rather than
                // follow each producer a record behind (see pass_pause).
                if (!backlog) wake_cv_.wait_for(lock, collector_detail::pass_pause, [this] { return wake_; });
            } else if (live_mask != 0) {
                wake_cv_.wait_for(lock, milliseconds(1), [this] { return wake_; });
            } else {
                wake_cv_.wait(lock, [this] { return wake_; });
            }
        }
    }
}

inline runtime::drain_result runtime::drain_ring(ring& r, const std::shared_ptr<session_state>* live,
                                                 std::uint64_t live_mask) noexcept {
    const std::uint32_t version = r.name_version();
    if (version != r.collector_name_version) {
        try {
            r.collector_name = r.name();
            r.collector_name_version = version;
        } catch (...) {  // out of memory: keep the old name, try again next pass
        }
    }
    const thread_info thread = collector_detail::describe(r);
    record rec;
    rec.thread = &thread;
    drain_result result;
    result.consumed = r.drain([&](const raw_record& raw) {
        ring::pending_payload& pending = r.collector_payload;
        if (pending.received < pending.bytes) {  // payload of a multi-record unit: raw bytes
            if (pending.marker == &method_call_marker && pending.received == 0) {
                method_payload_header h;
                std::memcpy(&h, &raw, sizeof h);
                pending.bytes = method_payload_size(h);
            }
            const std::size_t n = std::min(sizeof raw, pending.bytes - pending.received);
            std::memcpy(pending.data + pending.received, &raw, n);
            pending.received += n;
            if (pending.received == pending.bytes) {
                if (pending.marker == &zone_metrics_marker) {  // held for the zone record that follows
                    std::memcpy(r.collector_zone_metrics.delta + 1, pending.data, pending.bytes);
                    pending.bytes = pending.received = 0;
                } else if (pending.marker == &method_call_marker) {
                    deliver_method_call(r, live, live_mask, rec);
                } else {
                    deliver_payload(pending, live, live_mask, thread);
                }
            }
            return true;
        }
        // A session that started after this pass took its snapshot (it may
        // even be stopping already): leave the record for the next pass, which
        // will know the session. Bits of free slots are stale: ignored.
        const std::uint64_t unknown = raw.sessions & ~live_mask;
        if (unknown != 0 && (unknown & occupied_slots_.load(std::memory_order_acquire)) != 0) {
            result.complete = false;
            return false;
        }
        if (raw.where == &io_op_marker || raw.where == &io_resource_marker || raw.where == &context_marker ||
            raw.where == &method_call_marker || raw.where == &skipped_unit_marker) {
            // A header: its payload follows in the next records.
            pending.marker = raw.where;
            pending.sessions = raw.sessions;
            pending.ticks = raw.t0;
            pending.received = 0;
            if (raw.where == &io_op_marker) {
                pending.end_ticks = raw.t1;
                pending.bytes = sizeof(io_op_payload);
            } else if (raw.where == &method_call_marker) {
                pending.end_ticks = raw.t1;
                pending.bytes = sizeof(method_payload_header);  // the real size comes with the first payload record
            } else {
                const std::size_t limit = raw.where == &context_marker       ? max_context_payload
                                          : raw.where == &skipped_unit_marker ? sizeof pending.data
                                                                              : max_io_resource_payload;
                pending.bytes = static_cast<std::size_t>(std::min<std::uint64_t>(raw.t1, limit));
            }
            if (pending.bytes == 0) deliver_payload(pending, live, live_mask, thread);
            return true;
        }
        if (raw.where == &zone_metrics_marker) {  // deltas, then the zone they belong to
            const auto* plan = reinterpret_cast<const metric_plan*>(static_cast<std::uintptr_t>(raw.t0));
            r.collector_zone_metrics.plan = plan;
            r.collector_zone_metrics.delta[0] = static_cast<std::int64_t>(raw.t1);
            pending.marker = raw.where;
            pending.received = 0;
            pending.bytes = (plan->count - 1) * sizeof(std::int64_t);  // the other deltas
            return true;
        }
        // Deltas held for this record (a zone's), taken whether or not it is delivered.
        const metric_plan* plan = std::exchange(r.collector_zone_metrics.plan, nullptr);
        std::uint64_t targets = raw.sessions & live_mask;
        if (targets == 0) return true;
        rec.where = raw.where;
        rec.flow_id = 0;
        switch (raw.where->kind) {
            case site_kind::zone:
                rec.kind = record_kind::zone;
                rec.begin_ns = clock_.to_ns(raw.t0);
                rec.end_ns = clock_.to_ns(raw.t1);
                rec.value = 0.0;
                break;
            case site_kind::instant:
                rec.kind = record_kind::instant;
                rec.begin_ns = rec.end_ns = clock_.to_ns(raw.t0);
                rec.value = 0.0;
                break;
            case site_kind::counter:
                rec.kind = record_kind::counter;
                rec.begin_ns = rec.end_ns = clock_.to_ns(raw.t0);
                std::memcpy(&rec.value, &raw.t1, sizeof rec.value);
                break;
            case site_kind::flow:
            case site_kind::flow_end:
                rec.kind = record_kind::flow;
                rec.begin_ns = rec.end_ns = clock_.to_ns(raw.t0);
                rec.flow_id = raw.t1;
                break;
            case site_kind::io:  // not a call-site kind (I/O comes as marker + payload): ignored
            case site_kind::method:  // likewise (method calls come as marker + payload)
                return true;
        }
        for (; targets != 0; targets &= targets - 1) {
            session_state& s = *live[__builtin_ctzll(targets)];
            // A slot's bit may be stale: an event that began before this
            // session started was captured for an earlier one in the slot.
            if (static_cast<std::int64_t>(raw.t0 - s.start_ticks) < 0) continue;
            rec.session = &s.info;
            rec.metric_count = plan ? collector_detail::select_metrics(*plan, r.collector_zone_metrics.delta,
                                                                       s.metrics.zone_mask(), selected_metrics_)
                                    : 0;
            rec.metrics = selected_metrics_;
            collector_detail::bump(s.delivered, 1);
            s.send(rec);
        }
        return true;
    });
    return result;
}

inline void runtime::deliver_payload(ring::pending_payload& unit, const std::shared_ptr<session_state>* live,
                                     std::uint64_t live_mask, const thread_info& thread) noexcept {
    if (unit.marker == &skipped_unit_marker) {  // slots a method call left behind (ring::open_frame): nothing
        unit.bytes = unit.received = 0;
        return;
    }
    // Decoded views live on this frame while the sinks are called.
    context values;
    io_operation operation;
    io_resource resource;
    record rec;
    rec.thread = &thread;
    rec.begin_ns = rec.end_ns = clock_.to_ns(unit.ticks);
    bool is_event = false;
    if (unit.marker == &io_op_marker) {
        io_op_payload p;
        std::memcpy(&p, unit.data, sizeof p);
        operation.op = static_cast<io::op>(p.op < io::op_count ? p.op : 0);
        operation.fd = p.fd;
        operation.result = p.result;
        operation.resource_id = p.resource_id;
        rec.kind = record_kind::io;
        rec.end_ns = clock_.to_ns(unit.end_ticks);
        rec.io = &operation;
        is_event = true;
    } else if (unit.marker == &io_resource_marker) {
        resource = decode_io_resource(unit.data, unit.bytes, clock_);
        rec.kind = record_kind::io_resource;
        rec.resource = &resource;
    } else {
        values = decode_context(unit.data, unit.bytes);
        rec.kind = record_kind::context;
        rec.context = &values;
    }
    for (std::uint64_t targets = unit.sessions & live_mask; targets != 0; targets &= targets - 1) {
        session_state& s = *live[__builtin_ctzll(targets)];
        if (static_cast<std::int64_t>(unit.ticks - s.start_ticks) < 0) continue;  // for the slot's previous session
        rec.session = &s.info;
        if (is_event) collector_detail::bump(s.delivered, 1);
        s.send(rec);
    }
    unit.bytes = unit.received = 0;
}

// A method-call unit (method_wire.hpp) is complete in `r.collector_payload`:
// one zone record per session, carrying that session's values. `rec` is the
// drain's record (its thread set): reused rather than a new one zeroed for
// every call.
inline void runtime::deliver_method_call(ring& r, const std::shared_ptr<session_state>* live, std::uint64_t live_mask,
                                         record& rec) noexcept {
    ring::pending_payload& unit = r.collector_payload;
    const metric_plan* plan = std::exchange(r.collector_zone_metrics.plan, nullptr);  // deltas held for this call
    method_payload_header h;
    if (unit.bytes < sizeof h) {  // cannot happen with loupe's own producer; never read past the payload
        unit.bytes = unit.received = 0;
        return;
    }
    std::memcpy(&h, unit.data, sizeof h);
    method_cpu_times cpu{0, 0};
    std::size_t values_at = sizeof h;
    if ((h.flags & method_has_cpu) && unit.bytes >= sizeof h + sizeof cpu) {
        std::memcpy(&cpu, unit.data + sizeof h, sizeof cpu);
        values_at += sizeof cpu;
    }
    constexpr std::size_t max_values = max_method_payload / sizeof(encoded_value_header);
    // Scratch of the collector, made once (no per-call construction), on the
    // heap: in static storage it would share cache lines with data the hosts
    // read on every call.
    if (!method_scratch_) {
        try {
            method_scratch_.reset(new param_value[2 * max_values]);
        } catch (...) {  // out of memory: the call is not delivered
            unit.bytes = unit.received = 0;
            return;
        }
    }
    param_value* const values = method_scratch_.get();
    param_value* const mine = values + max_values;
    std::uint8_t value_slot[max_values];
    std::size_t count = 0;
    std::uint32_t max_spec = 0;
    const unsigned char* at = unit.data + values_at;
    std::size_t left = std::min<std::size_t>(h.values_bytes, unit.bytes - values_at);
    while (count < h.value_count && count < max_values) {
        const std::size_t used = decode_value(at, left, values[count], value_slot[count]);
        if (used == 0) break;
        max_spec = std::max(max_spec, values[count].spec + 1);
        at += used;
        left -= used;
        ++count;
    }
    method_call call;
    call.exceptional = (h.flags & method_exceptional) != 0;
    call.values_lost = (h.flags & method_values_lost) != 0;
    call.has_cpu = (h.flags & method_has_cpu) != 0;
    call.cpu_begin_ns = cpu.begin_ns;
    call.cpu_end_ns = cpu.end_ns;
    rec.kind = record_kind::zone;
    rec.where = &h.site->zone;
    rec.value = 0.0;
    rec.flow_id = 0;
    rec.begin_ns = clock_.to_ns(unit.ticks);
    rec.end_ns = clock_.to_ns(unit.end_ticks);
    rec.method = &call;
    for (std::uint64_t targets = unit.sessions & live_mask; targets != 0; targets &= targets - 1) {
        session_state& s = *live[__builtin_ctzll(targets)];
        if (static_cast<std::int64_t>(unit.ticks - s.start_ticks) < 0) continue;  // for the slot's previous session
        if (max_spec > s.param_specs_sent) send_param_news(s);  // definitions before their first value
        std::size_t n = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (value_slot[i] == s.slot) mine[n++] = values[i];
        }
        call.values = mine;
        call.value_count = n;
        rec.metric_count = plan ? collector_detail::select_metrics(*plan, r.collector_zone_metrics.delta,
                                                                   s.metrics.zone_mask(), selected_metrics_)
                                : 0;
        rec.metrics = selected_metrics_;
        rec.session = &s.info;
        collector_detail::bump(s.delivered, 1);
        s.send(rec);
    }
    rec.method = nullptr;
    unit.bytes = unit.received = 0;
}

// New spec definitions and apply errors of `s`, to its sinks.
inline void runtime::send_param_news(session_state& s) noexcept {
    if (!s.param_log) return;
    session_param_log& log = *s.param_log;
    std::lock_guard<std::mutex> lock(log.mutex);
    record rec;
    rec.session = &s.info;
    rec.begin_ns = rec.end_ns = clock_.to_ns(clock_.now_ticks());
    for (; log.sent < log.specs.size(); ++log.sent) {
        param_spec_info info;
        info.index = static_cast<std::uint32_t>(log.sent);
        info.text = log.specs[log.sent].text;
        info.name = log.specs[log.sent].name;
        rec.kind = record_kind::param_spec;
        rec.spec = &info;
        s.send(rec);
    }
    s.param_specs_sent = log.sent;
    rec.spec = nullptr;
    for (const auto& e : log.pending_errors) {
        param_apply_error info;
        info.spec = e.spec;
        info.reason = e.reason;
        rec.kind = record_kind::param_apply_error;
        rec.where = &e.site->zone;
        rec.apply_error = &info;
        s.send(rec);
    }
    log.pending_errors.clear();
}

inline void runtime::report_drops(ring* r, session_state& s) noexcept {
    const std::uint64_t now = r->dropped(s.slot);
    const std::uint64_t lost = now - r->seen_dropped[s.slot];
    if (lost == 0) return;
    r->seen_dropped[s.slot] = now;
    collector_detail::bump(s.dropped, lost);
    const thread_info thread = collector_detail::describe(*r);
    record rec;
    rec.kind = record_kind::dropped;
    rec.session = &s.info;
    rec.thread = &thread;
    rec.count = lost;
    s.send(rec);
}

inline void runtime::report_ringless_drops(session_state& s) noexcept {
    const std::uint64_t now = ringless_dropped_[s.slot].load(std::memory_order_relaxed);
    const std::uint64_t lost = now - ringless_seen_[s.slot];
    if (lost == 0) return;
    ringless_seen_[s.slot] = now;
    collector_detail::bump(s.dropped, lost);
    record rec;
    rec.kind = record_kind::dropped;
    rec.session = &s.info;
    rec.count = lost;
    s.send(rec);
}

inline void runtime::begin_session(session_state& s) noexcept {
    s.begun = true;
    record rec;
    rec.kind = record_kind::session_begin;
    rec.session = &s.info;
    rec.begin_ns = s.info.start_ns;
    s.send(rec);
}

// A running (not stopping) session's totals so far, every metric_totals_interval.
inline void runtime::report_metric_totals_if_due(session_state& s, const std::vector<ring*>& rings) noexcept {
    if (s.metrics.empty() || s.metric_totals_interval.count() == 0 || !s.begun) return;
    const auto now = std::chrono::steady_clock::now();
    if (s.next_metric_totals.time_since_epoch().count() == 0) s.next_metric_totals = now + s.metric_totals_interval;
    if (now < s.next_metric_totals) return;
    s.next_metric_totals = now + s.metric_totals_interval;
    report_metric_totals(s, rings);
}

inline void runtime::report_metric_totals(session_state& s, const std::vector<ring*>& rings) noexcept {
    if (s.metrics.empty()) return;
    metric_registry& registry = metrics_registry();
    try {
        record rec;
        rec.kind = record_kind::metric_totals;
        rec.session = &s.info;
        rec.begin_ns = rec.end_ns = clock_.to_ns(clock_.now_ticks());
        s.metrics.totals(
            registry,
            [&](thread_metrics& block, const std::vector<metric_value>& values) {
                thread_info thread;
                std::uint64_t id = block.thread_id.load(std::memory_order_relaxed);
                const auto known = std::find_if(rings.begin(), rings.end(), [&](const ring* r) { return r->thread_id == id; });
                if (id != 0 && known != rings.end()) {
                    thread = collector_detail::describe(**known);
                } else {
                    if (id == 0) {  // a thread that never recorded an event: give it an id now
                        std::lock_guard<std::mutex> lock(mutex_);
                        id = block.thread_id.load(std::memory_order_relaxed);
                        if (id == 0) block.thread_id.store(id = ++next_thread_id_, std::memory_order_relaxed);
                    }
                    thread.id = id;
                    thread.os_tid = block.os_tid;
                }
                rec.thread = &thread;
                rec.metrics = values.data();
                rec.metric_count = values.size();
                s.send(rec);
            },
            [&](std::uint32_t cpu, const std::vector<metric_value>& values) {
                rec.thread = nullptr;
                rec.cpu = cpu;
                rec.metrics = values.data();
                rec.metric_count = values.size();
                s.send(rec);
            });
    } catch (...) {  // out of memory: the trace has no totals
    }
}

inline void runtime::finish_session(session_state& s, const std::vector<ring*>& rings) noexcept {
    for (ring* r : rings) report_drops(r, s);
    report_ringless_drops(s);
    if (!s.metrics.empty()) {
        report_metric_totals(s, rings);
        metric_registry& registry = metrics_registry();
        std::lock_guard<std::mutex> lock(registry.mutex());
        registry.metric_session_finished_locked();
    }
    record rec;
    rec.kind = record_kind::session_end;
    rec.session = &s.info;
    rec.begin_ns = s.info.start_ns;
    rec.end_ns = clock_.to_ns(s.stop_ticks);
    rec.count = s.delivered.load(std::memory_order_relaxed);
    rec.dropped_total = s.dropped.load(std::memory_order_relaxed);
    s.send(rec);
    s.flush_sinks();
    s.close_sinks();
}

}  // namespace loupe::detail
