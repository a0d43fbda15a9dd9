// The collector thread: drains every ring, converts ticks to nanoseconds,
// routes each record to the sessions it was captured for, turns drop counters
// into `dropped` records, and runs session begin/end. All sink calls happen
// here, so sinks never see two threads.
//
// Members of `runtime` (runtime_class.hpp) that run on the collector thread.
// Include runtime.hpp, which has the class and these.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "loupe/core/detail/runtime_class.hpp"
#include "loupe/core/unit_codec.hpp"
#include "loupe/core/zone_arg.hpp"

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
// ring, a ring passing half full) before the next pass; a pass that found
// more goes on at once. A zone with a push metric writes a record every
// 9 ns (two in 18 ns), which fills a 1 MiB ring in about 290 µs; an
// outgoing call writes one every 4.4 ns (five in about 22 ns), about
// 145 µs, less than a pause: so a producer whose ring passes half full
// ends the pause (ring::fits_slow, pause_locked), and the collector drains
// the ring and gives it a larger successor before it is full.
// Each pass costs its own (the session snapshot, the lock, a timed wait),
// so the longer the pause, the less the collector spends per event
// (bench/throughput.cpp: 200 µs takes about a tenth less CPU per zone into
// the null sink than 100 µs, a sixth less into a file).
inline constexpr std::size_t backlog_share = 8;
inline constexpr std::chrono::microseconds pass_pause{200};

// Collector-only counters are single-writer: a plain load+store publishes them
// without a locked read-modify-write per record.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_release);
}

// The record kind of a plain event's site kind (a zone, an instant, a
// counter, a flow point): the records a sink may take in batches. Any
// other site kind gives not_plain. A table: one load per record.
inline constexpr record_kind not_plain = record_kind::session_begin;
struct plain_kinds {
    record_kind of[256]{};  // not_plain unless set below
    constexpr plain_kinds() {
        of[static_cast<std::uint8_t>(site_kind::zone)] = record_kind::zone;
        of[static_cast<std::uint8_t>(site_kind::instant)] = record_kind::instant;
        of[static_cast<std::uint8_t>(site_kind::counter)] = record_kind::counter;
        of[static_cast<std::uint8_t>(site_kind::flow)] = record_kind::flow;
        of[static_cast<std::uint8_t>(site_kind::flow_end)] = record_kind::flow;
    }
};
static_assert(static_cast<int>(not_plain) == 0, "a zero-filled table entry means not_plain");
inline constexpr plain_kinds plain_kind_table{};
constexpr record_kind plain_event_kind(site_kind k) noexcept {
    return plain_kind_table.of[static_cast<std::uint8_t>(k)];
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
    ++t_metric_thread.quiet;  // the collector's allocations are loupe's own
#if LOUPE_OS_LINUX
    pthread_setname_np(pthread_self(), "loupe-collector");
#endif
    std::vector<ring*> rings;
    std::vector<ring*> retired;
    std::vector<ring*> busy;  // at least half full when drained: given a larger successor
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
        busy.clear();
        for (ring* r : rings) {
            // A grown thread's successor waits until the ring before it is
            // drained to its end (recycled already, or emptied in this pass).
            if (r->predecessor != nullptr &&
                std::find(retired.begin(), retired.end(), r->predecessor) == retired.end()) {
                complete = complete && r->empty();
                continue;
            }
            // A retired ring's last push happened before `retired` was set,
            // so draining after reading the flag empties it for good.
            const bool was_retired = r->retired.load(std::memory_order_acquire);
            const drain_result d = drain_ring(*r, live, live_mask);
            moved += d.consumed;
            backlog = backlog || d.consumed * collector_detail::backlog_share >= r->capacity();
            complete = complete && d.complete;
            for (std::uint64_t m = live_mask; m != 0; m &= m - 1) report_drops(r, *live[__builtin_ctzll(m)]);
            if (was_retired && d.complete) retired.push_back(r);
            if (!was_retired && d.consumed * 2 >= r->capacity() && r->successor.load(std::memory_order_relaxed) == nullptr) {
                busy.push_back(r);
            }
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
        if (!finishing.empty()) publish_locked();  // their block bits go
        for (ring* r : retired) recycle_locked(r);
        grow_rings_locked(busy);
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
                if (!backlog) pause_locked(lock, collector_detail::pass_pause);
            } else if (live_mask != 0) {
                pause_locked(lock, milliseconds(1));
            } else {
                wake_cv_.wait(lock, [this] { return wake_; });
            }
        }
    }
}

// Waits `how_long`, or less: until a session starts or stops, a producer
// waits for room, or a producer's ring passes half full (ring::fits_slow
// calls wake_paused_collector, published here for the length of the pause).
inline void runtime::pause_locked(std::unique_lock<std::mutex>& lock, std::chrono::microseconds how_long) noexcept {
    hurried_.store(false, std::memory_order_relaxed);
    g_hot.paused_collector_wake.store(&runtime::wake_paused_collector, std::memory_order_release);
    wake_cv_.wait_for(lock, how_long, [this] { return wake_ || hurried_.load(std::memory_order_acquire); });
    g_hot.paused_collector_wake.store(nullptr, std::memory_order_relaxed);
    if (hurried_.load(std::memory_order_relaxed)) ++counters_.pauses_cut;
}

// A drained retired ring leaves the live list: kept for the next thread if
// it has the size new threads get now, else freed. Its successor now drains
// (its thread moved there), or goes with it (the thread exited first).
inline void runtime::recycle_locked(ring* r) noexcept {
    live_rings_.erase(std::find(live_rings_.begin(), live_rings_.end(), r));
    if (ring* next = r->successor.load(std::memory_order_acquire)) {
        if (next->adopted.load(std::memory_order_acquire)) {
            next->predecessor = nullptr;
        } else {
            live_rings_.erase(std::find(live_rings_.begin(), live_rings_.end(), next));
            delete_ring_locked(next);
        }
    }
    const std::size_t base = ring::capacity_for(ring::records_for_bytes(g_hot.ring_bytes.load(std::memory_order_relaxed)));
    if (pool_.size() < max_pooled_rings && r->capacity() <= base) {
        r->reset_for_reuse();
        pool_.push_back(r);
    } else {
        delete_ring_locked(r);
    }
}

// The collector's side of unit_delivery: routes a codec's record to the
// unit's live sessions. One per drained ring, aimed at each of its units in
// turn (deliver).
class runtime::unit_router final : public unit_delivery, private unit_session {
public:
    unit_router(runtime& rt, ring& r, const std::shared_ptr<session_state>* live, std::uint64_t live_mask,
                record& drain_record) noexcept
        : rt_(rt), ring_(r), live_(live), live_mask_(live_mask), deltas_(r.collector_zone_metrics.delta) {
        rec = &drain_record;
        clock = &rt.clock_;
    }

    // The unit of `sessions` whose header had `t0` and `t1`, its `n` bytes
    // of payload at `payload` (the collector's copy, or the ring itself):
    // `codec` decodes and sends it. `rec` is the drain's record (its thread
    // set), reused rather than a new one zeroed for every unit: the fields
    // a plain record sets are cleared before the codec runs, the views a
    // codec may point it at after.
    void deliver(const unit_codec& codec, std::uint64_t sessions, std::uint64_t t0, std::uint64_t t1, std::size_t n,
                 const unsigned char* payload) noexcept {
        data = payload;
        bytes = n;
        ticks = t0;
        end_ticks = t1;
        sessions_ = sessions;
        plan_ = std::exchange(ring_.collector_zone_metrics.plan, nullptr);  // deltas held for this unit (a method call's)
        record& out = *rec;
        out.where = nullptr;  // what the drain sets for every plain record: a codec sets what it uses
        out.begin_ns = out.end_ns = 0;
        out.value = 0.0;
        out.flow_id = 0;
        codec.deliver(*this);
        out.context = nullptr;
        out.io = nullptr;
        out.resource = nullptr;
        out.method = nullptr;
        out.spec = nullptr;
        out.apply_error = nullptr;
        out.count = out.dropped_total = 0;
    }

private:
    int slot() const noexcept override { return current_->slot; }
    void send_param_specs(std::uint32_t count) noexcept override {
        if (count > current_->param_specs_sent) rt_.send_param_news(*current_);
    }
    void send_each(bool event, void (*each)(void*, unit_session&) noexcept, void* context) noexcept override {
        for (std::uint64_t targets = sessions_ & live_mask_; targets != 0; targets &= targets - 1) {
            session_state& s = *live_[__builtin_ctzll(targets)];
            if (static_cast<std::int64_t>(ticks - s.start_ticks) < 0) continue;  // for the slot's previous session
            current_ = &s;
            if (each != nullptr) each(context, *this);
            rec->metric_count = plan_ ? collector_detail::select_metrics(*plan_, deltas_, s.metrics.zone_mask(),
                                                                         rt_.selected_metrics_)
                                      : 0;
            rec->metrics = rt_.selected_metrics_;
            rec->session = &s.info;
            if (event) collector_detail::bump(s.delivered, 1);
            s.send(*rec);
        }
    }

    runtime& rt_;
    ring& ring_;
    const std::shared_ptr<session_state>* live_;
    std::uint64_t live_mask_;
    const std::int64_t* deltas_;
    std::uint64_t sessions_ = 0;
    const metric_plan* plan_ = nullptr;
    session_state* current_ = nullptr;
};

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
    zone_argument arg;  // a numeric zone argument's view (rec.arg while it is sent)
    drain_result result;
    unit_router units(*this, r, live, live_mask, rec);
    // The unit r.collector_payload has reassembled (or whose header said it has no payload).
    const auto deliver_pending = [&] {
        ring::pending_payload& unit = r.collector_payload;
        units.deliver(*unit.codec, unit.sessions, unit.ticks, unit.end_ticks, unit.bytes, unit.data);
        unit.bytes = unit.received = 0;
    };
    // Hands `rec` to each session of `targets` that started before `t0`, with
    // the deltas held for it when `plan` is set.
    const auto send_to_sessions = [&](std::uint64_t targets, std::uint64_t t0, const metric_plan* plan) {
        for (; targets != 0; targets &= targets - 1) {
            session_state& s = *live[__builtin_ctzll(targets)];
            // A slot's bit may be stale: an event that began before this
            // session started was captured for an earlier one in the slot.
            if (static_cast<std::int64_t>(t0 - s.start_ticks) < 0) continue;
            rec.session = &s.info;
            rec.metric_count = plan ? collector_detail::select_metrics(*plan, r.collector_zone_metrics.delta,
                                                                       s.metrics.zone_mask(), selected_metrics_)
                                    : 0;
            rec.metrics = selected_metrics_;
            collector_detail::bump(s.delivered, 1);
            s.send(rec);
        }
    };
    // Fills `out` with the plain event `raw`, whose record kind is `plain`,
    // converting its ticks with `clock` (a local copy in a loop: the records
    // it writes could alias clock_, whose fields would be reloaded each time).
    const auto fill_plain = [](record& out, const raw_record& raw, record_kind plain, const tick_clock& clock) {
        out.kind = plain;
        out.where = raw.where;
        out.begin_ns = clock.to_ns(raw.t0);
        const std::uint64_t end_ns = clock.to_ns(raw.t1);
        out.end_ns = plain == record_kind::zone ? end_ns : out.begin_ns;
        double value;
        std::memcpy(&value, &raw.t1, sizeof value);
        out.value = plain == record_kind::counter ? value : 0.0;
        out.flow_id = plain == record_kind::flow ? raw.t1 : 0;
    };
    // The plain events (zones, instants, counters, flow points) of known
    // sessions at the start of `run` (most records of a busy ring), up to a
    // batch: each session gets its share as one sink batch, or event by
    // event when some of them are not its own (a stale slot bit: begun
    // before the session started). Returns the events taken.
    std::size_t thread_filled = 0;  // leading batch entries that name this ring's thread
    const auto event_run = [&](const raw_record* first, std::size_t run) -> std::size_t {
        const std::size_t limit = std::min(run, sink::max_batch_records);
        for (; thread_filled < limit; ++thread_filled) event_batch_[thread_filled].thread = &thread;
        std::uint64_t every = ~std::uint64_t{0};  // sessions of all events of the batch
        std::uint64_t some = 0;                   // sessions of any of them
        std::uint64_t oldest = first[0].t0;
        const tick_clock clock = clock_;
        std::size_t n = 0;
        for (; n < limit; ++n) {
            const raw_record& raw = first[n];
            // Metric deltas (zone_metrics_marker) and unit headers are not plain.
            const record_kind plain = collector_detail::plain_event_kind(raw.where->kind);
            if (plain == collector_detail::not_plain || (raw.sessions & ~live_mask) != 0) break;
            fill_plain(event_batch_[n], raw, plain, clock);
            every &= raw.sessions;
            some |= raw.sessions;
            if (static_cast<std::int64_t>(raw.t0 - oldest) < 0) oldest = raw.t0;
        }
        for (std::uint64_t targets = some; targets != 0; targets &= targets - 1) {
            const int slot = __builtin_ctzll(targets);
            const std::uint64_t bit = std::uint64_t{1} << slot;
            session_state& s = *live[slot];
            if ((every & bit) != 0 && static_cast<std::int64_t>(oldest - s.start_ticks) >= 0) {
                if (batch_session_ != &s.info) {
                    batch_session_ = &s.info;
                    batch_session_filled_ = 0;
                }
                for (; batch_session_filled_ < n; ++batch_session_filled_) {
                    event_batch_[batch_session_filled_].session = &s.info;
                }
                collector_detail::bump(s.delivered, n);
                s.send_batch(event_batch_, n);
                continue;
            }
            batch_session_ = nullptr;  // entries of other sessions get written below
            for (std::size_t k = 0; k < n; ++k) {
                if ((first[k].sessions & bit) == 0 || static_cast<std::int64_t>(first[k].t0 - s.start_ticks) < 0) {
                    continue;
                }
                event_batch_[k].session = &s.info;
                collector_detail::bump(s.delivered, 1);
                s.send(event_batch_[k]);
            }
        }
        return n;
    };
    // Every record but a plain event of known sessions: unit headers and
    // payloads, metric deltas and the zone they belong to, zone arguments,
    // records of a session newer than the snapshot or with a free slot's
    // stale bit. Out of line, so the drain loop keeps a plain event's path
    // short.
    auto general = [&](const raw_record& raw) LOUPE_NOINLINE -> bool {
        ring::pending_payload& pending = r.collector_payload;
        if (pending.received < pending.bytes) {  // payload of a multi-record unit: raw bytes
            if (pending.codec != nullptr && pending.codec->unread) {  // passed over without a look
                pending.received += std::min(sizeof raw, pending.bytes - pending.received);
                if (pending.received == pending.bytes) pending.bytes = pending.received = 0;
                return true;
            }
            if (!pending.sized) pending.size_from_first(raw);
            const std::size_t n = std::min(sizeof raw, pending.bytes - pending.received);
            if (n == sizeof raw) {
                std::memcpy(pending.data + pending.received, &raw, sizeof raw);  // fixed size: a few moves
            } else {
                std::memcpy(pending.data + pending.received, &raw, n);
            }
            pending.received += n;
            if (pending.received == pending.bytes) {
                if (pending.codec == nullptr) {  // zone metric deltas: held for the zone record that follows
                    std::memcpy(r.collector_zone_metrics.delta + 1, pending.data, pending.bytes);
                    pending.bytes = pending.received = 0;
                } else {
                    deliver_pending();
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
        if (raw.where->kind == site_kind::unit) {  // a unit's header: its payload follows
            const unit_codec& codec = *static_cast<const unit_marker*>(raw.where)->codec;
            pending.start(raw, codec);
            if (pending.bytes == 0 && !codec.unread) deliver_pending();
            return true;
        }
        if (raw.where == &zone_metrics_marker) {  // deltas, then the zone they belong to
            const auto* plan = reinterpret_cast<const metric_plan*>(static_cast<std::uintptr_t>(raw.t0));
            r.collector_zone_metrics.plan = plan;
            r.collector_zone_metrics.delta[0] = static_cast<std::int64_t>(raw.t1);
            pending.marker = raw.where;
            pending.codec = nullptr;
            pending.sized = true;
            pending.received = 0;
            pending.bytes = (plan->count - 1) * sizeof(std::int64_t);  // the other deltas
            return true;
        }
        // Deltas held for this record (a zone's), taken whether or not it is delivered.
        const metric_plan* plan = std::exchange(r.collector_zone_metrics.plan, nullptr);
        std::uint64_t targets = raw.sessions & live_mask;
        if (targets == 0) return true;
        const record_kind plain = collector_detail::plain_event_kind(raw.where->kind);
        if (plain != collector_detail::not_plain) {  // a zone carrying deltas, or of stale slot bits
            fill_plain(rec, raw, plain, clock_);
        } else if (raw.where->kind == site_kind::zone_arg) {  // a number; text comes as a unit (zone_arg_record.hpp)
            rec.kind = record_kind::zone_arg;
            rec.where = raw.where;
            rec.flow_id = 0;
            rec.begin_ns = rec.end_ns = clock_.to_ns(raw.t0);
            arg.key = raw.where->name;
            arg.value.kind = static_cast<const zone_arg_site*>(raw.where)->type;
            arg.value.bits = raw.t1;
            rec.arg = &arg;
        } else {  // I/O, method calls and task points come as units, handled above: ignored
            return true;
        }
        send_to_sessions(targets, raw.t0, plan);
        rec.arg = nullptr;
        return true;
    };
    // No unit payload under way and no metric deltas held: the two paths
    // below may take the next record.
    const auto between_units = [&] {
        return r.collector_payload.received >= r.collector_payload.bytes && r.collector_zone_metrics.plan == nullptr;
    };
    // The units one after the other from `first[0]`, of known sessions,
    // each decoded from the ring where it lies when its payload follows in
    // `run`. Returns the records they took: 0 leaves the first to the
    // general path; a unit whose payload wraps round the ring's end is
    // begun as the general path begins one, and its header taken (the
    // general path reads the payload record by record).
    const auto units_from_ring = [&](const raw_record* first, std::size_t run) -> std::size_t {
        std::size_t k = 0;
        do {
            const raw_record& header = first[k];
            const unit_codec& codec = *static_cast<const unit_marker*>(header.where)->codec;
            if ((header.sessions & ~live_mask) != 0 || codec.unread) return k;
            std::size_t bytes = ring::pending_payload::announced_bytes(header, codec);
            std::size_t payload_records = (bytes + sizeof(raw_record) - 1) / sizeof(raw_record);
            if (codec.bytes_from_first != nullptr && bytes != 0 && k + 1 < run) {  // the first payload record says the size
                bytes = ring::pending_payload::bytes_from_first(first[k + 1], codec);
                payload_records = std::max<std::size_t>(1, (bytes + sizeof(raw_record) - 1) / sizeof(raw_record));
            }
            if (k + 1 + payload_records > run) {
                r.collector_payload.start(header, codec);
                return k + 1;
            }
            units.deliver(codec, header.sessions, header.t0, header.t1, bytes,
                          reinterpret_cast<const unsigned char*>(first + k + 1));
            k += 1 + payload_records;
        } while (k < run && first[k].where->kind == site_kind::unit);
        return k;
    };
    result.consumed = r.drain_runs([&](const raw_record* first, std::size_t run) -> std::size_t {
        // A batch of plain events, or a unit read where it lies. Anything
        // else: the general way, one record at a time.
        if (LOUPE_LIKELY(between_units())) {
            if (first[0].where->kind == site_kind::unit) {
                if (const std::size_t taken = units_from_ring(first, run)) return taken;
            } else if (const std::size_t events = event_run(first, run)) {
                return events;
            }
        }
        // Until a plain event or a unit can take one of the paths above again.
        std::size_t k = 0;
        do {
            if (!general(first[k])) return k;
            ++k;
        } while (k < run && !(between_units() && (first[k].where->kind == site_kind::unit ||
                                                  collector_detail::plain_event_kind(first[k].where->kind) !=
                                                      collector_detail::not_plain)));
        return k;
    });
    return result;
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
        rec.where = e.method;
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
