// What host threads run when the hot path (core/recorder.hpp) cannot finish
// alone: a thread's first event or a change of the session set (which
// sessions record it, filters evaluated against its context), a full ring
// or no ring yet (waiting under the `block` policy, counting drops), a zone
// that carries metrics, and the thread's exit. install_recorder_hooks hands
// them to the recorder's table when the runtime is made.
#pragma once

#include <pthread.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <thread>

#include "loupe/core/detail/context_record.hpp"
#include "loupe/core/detail/runtime_class.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/zone_metrics.hpp"

namespace loupe::detail {

inline void runtime::on_thread_exit(void* p) noexcept {
    thread_state& ts = t_state;
    // The key holds the thread's first ring; a thread that grew has moved to
    // a successor since (the first one is retired already).
    auto* r = ts.owned_ring != nullptr ? ts.owned_ring : static_cast<ring*>(p);
    ts.owned_ring = nullptr;
    ts.status = thread_exiting;
    t_metric_thread.exiting = true;
    t_metric_thread.thread_id = 0;
    if (ts.values != nullptr) {  // no call of this thread is open any more
        internal_allocation_scope internal;
        delete ts.values;
        ts.values = nullptr;
    }
    r->retired.store(true, std::memory_order_release);
    if (runtime* rtp = runtime_pointer().load(std::memory_order_acquire)) rtp->wake_collector();
}

// The thread's ring full: moves it to the ring's successor, made by the
// collector or, when there is none, by the thread now if the budget has room
// (ring_growth.hpp). Null: neither.
inline ring* move_to_larger_ring(thread_state& ts) noexcept {
    if (ring* next = adopt_successor(ts)) return next;
    if (ts.in_chain != 0 || !rt().grow_full_ring(*ts.owned_ring)) return nullptr;
    return adopt_successor(ts);
}

// Gets the calling thread a ring if it has none and calls `try_push(ring&)`;
// when the ring is full, moves to its successor if the collector made one
// (recorder.hpp: adopt_successor) or the budget has room for one now
// (ring_growth.hpp), and when one of `sessions` has the block policy, waits
// for the collector. What takes more slots (`records`) than the whole ring holds
// can never fit: it is neither tried nor waited for. The caller counts what
// was not pushed.
template <class TryPush>
push_outcome push_waiting(thread_state& ts, std::uint64_t sessions, std::size_t records, TryPush&& try_push) noexcept {
    if (ts.owned_ring == nullptr) {
        if (ts.status == thread_exiting || ts.status == thread_collector) return push_outcome::no_ring;
        if (rt().acquire_ring(ts) == nullptr) return push_outcome::no_ring;
    }
    ring* rg = ts.owned_ring;
    if (rg->capacity() >= records && try_push(*rg)) return push_outcome::pushed;
    if (ring* larger = move_to_larger_ring(ts)) {
        rg = larger;
        if (rg->capacity() >= records && try_push(*rg)) return push_outcome::pushed;
    }
    if (rg->capacity() < records) return push_outcome::full;
    if (sessions & g_hot.block_slots.load(std::memory_order_relaxed)) {
        runtime& owner = rt();
        for (unsigned spin = 0; owner.collector_running(); ++spin) {
            if (ring* larger = move_to_larger_ring(ts)) rg = larger;
            rg->recheck_room();
            if (try_push(*rg)) return push_outcome::pushed;
            if (!(sessions & g_hot.block_slots.load(std::memory_order_relaxed))) break;
            if (spin < 64) {
                std::this_thread::yield();
            } else {
                if (spin == 64) owner.wake_collector();
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        }
    }
    return push_outcome::full;
}

// Counts one event of `sessions` that could not be pushed.
inline void runtime_count_lost(thread_state& ts, push_outcome outcome, std::uint64_t sessions) noexcept {
    if (outcome == push_outcome::no_ring) {
        rt().count_ringless(sessions);
    } else if (outcome == push_outcome::full) {
        ts.owned_ring->count_dropped(sessions);
    }
}

// recorder_hooks::push_records: a unit of `n` records, whole or not at all.
inline push_outcome runtime_push_records(thread_state& ts, std::uint64_t sessions, const raw_record* unit,
                                         std::size_t n) noexcept {
    return push_waiting(ts, sessions, n, [&](ring& r) { return r.try_push_n(unit, n); });
}

// The calling thread's context as filters see it.
// `trace_text` receives the thread's trace id in hex when it serves a task.
inline filter_subject current_subject(const thread_state& ts, std::string_view process, char (&os_name)[64],
                                      char (&trace_text)[32]) noexcept {
    filter_subject subject;
    const context_state& c = t_context;
    for (std::size_t f = 0; f < context_fields; ++f) subject.fields[f] = c.value(f);
    if (c.task.valid()) {
        static constexpr char digits[] = "0123456789abcdef";
        const std::uint64_t halves[2] = {c.task.trace_high, c.task.trace_low};
        for (unsigned i = 0; i < 32; ++i) trace_text[i] = digits[(halves[i / 16] >> (60 - 4 * (i % 16))) & 15];
        subject.trace = std::string_view(trace_text, 32);
    }
    if (ts.pending_name[0] != '\0') {
        subject.thread = ts.pending_name;
    } else {
        os_name[0] = '\0';
#if LOUPE_OS_LINUX
        pthread_getname_np(pthread_self(), os_name, sizeof os_name);
#endif
        subject.thread = os_name;
    }
    subject.process = process;
    return subject;
}

// The sessions among `recording` that lack the calling thread's current
// context (`has_context`: it is not empty), as of `epoch`: a change of the
// context is news to every session, an unchanged one only to sessions that
// started since it was written, and an empty one only to sessions whose last
// context from this thread was not.
inline std::uint64_t sessions_lacking_context(thread_state& ts, std::uint64_t epoch, std::uint64_t recording,
                                              bool has_context) noexcept {
    const std::uint32_t generation = t_context.generation;
    if (generation != ts.context_generation) {
        ts.context_generation = generation;
        ts.context_sent = 0;
    }
    for (std::uint64_t known = ts.context_sent | ts.context_nonempty; known != 0; known &= known - 1) {
        const int slot = __builtin_ctzll(known);
        if (g_hot.slot_start_epoch[slot].load(std::memory_order_relaxed) > ts.context_epoch) {  // a newer session
            ts.context_sent &= ~(std::uint64_t{1} << slot);
            ts.context_nonempty &= ~(std::uint64_t{1} << slot);
        }
    }
    ts.context_epoch = epoch;
    return recording & ~ts.context_sent & (has_context ? ~std::uint64_t{0} : ts.context_nonempty);
}

// Re-evaluates which sessions record this thread (kinds, then filters) after
// the session set or the thread's context changed, and writes the thread's
// context first to those of them that lack it, so every event they receive
// follows the context it belongs to and each change reaches each session
// once. If that context cannot be written (ring full), the event at hand is
// counted as lost and the next event tries again.
inline std::uint64_t runtime_refresh_sessions(thread_state& ts, site_kind kind) noexcept {
    std::uint64_t epoch = g_hot.epoch.load(std::memory_order_acquire);
    std::uint64_t by_kind[site_kind_slots] = {};
    std::uint64_t active = g_hot.active_slots.load(std::memory_order_relaxed);
    if (ts.status == thread_exiting || ts.status == thread_collector) active = 0;
    if (const std::uint64_t filtered = active & g_hot.filtered_slots.load(std::memory_order_relaxed)) {
        const runtime* r = runtime_pointer().load(std::memory_order_acquire);
        char os_name[64];
        char trace_text[32];
        active &= r ? ~r->filtered_out(filtered, current_subject(ts, r->process_name(), os_name, trace_text)) : ~filtered;
    }
    for (; active != 0; active &= active - 1) {
        const int slot = __builtin_ctzll(active);
        // Started after `epoch`: left to this thread's next refresh (its
        // epoch is stale already), which sees the start and writes the
        // context to it once.
        if (g_hot.slot_start_epoch[slot].load(std::memory_order_relaxed) > epoch) continue;
        const std::uint32_t k = g_hot.slot_kinds[slot].load(std::memory_order_relaxed);
        for (unsigned kind_index = 1; kind_index < site_kind_slots; ++kind_index) {
            if (k & (1u << kind_index)) by_kind[kind_index] |= std::uint64_t{1} << slot;
        }
    }
    std::memcpy(ts.sessions_by_kind, by_kind, sizeof by_kind);
    ts.plan = ((by_kind[static_cast<unsigned>(site_kind::zone)] | by_kind[static_cast<unsigned>(site_kind::method)]) &
               g_hot.metric_slots.load(std::memory_order_relaxed))
                  ? g_hot.plan.load(std::memory_order_relaxed)
                  : nullptr;
    ts.epoch = epoch;
    // A ring that was full looks at the collector's progress again before it
    // drops: the sessions changed, and drops it skipped looking for under
    // earlier sessions must not carry over to these (ring::fits).
    if (ts.owned_ring != nullptr) ts.owned_ring->recheck_room();
    const std::uint64_t wanted = by_kind[static_cast<unsigned>(kind)];
    std::uint64_t recording = 0;
    for (const std::uint64_t sessions : by_kind) recording |= sessions;
    if (recording == 0) return wanted;
    const context_state& c = t_context;
    // A task alone (no field set) is a context too: its records carry it.
    const bool has_context =
        (c.length[0] | c.length[1] | c.length[2] | c.length[3] | c.length[4] | c.length[5]) != 0 || c.task.valid();
    const std::uint64_t lacking = sessions_lacking_context(ts, epoch, recording, has_context);
    if (lacking == 0) return wanted;

    raw_record blob[max_context_records];
    const std::size_t n = encode_context(c, read_ticks(), lacking, blob);
    // A context larger than the whole ring (a tiny ring_bytes) is left out
    // as if written, not retried at every event: hence no `records` limit.
    const push_outcome outcome =
        push_waiting(ts, recording, 0, [&](ring& r) { return r.capacity() < n || r.try_push_n(blob, n); });
    if (outcome == push_outcome::pushed) {
        ts.context_sent |= lacking;
        ts.context_nonempty = has_context ? ts.context_nonempty | lacking : ts.context_nonempty & ~lacking;
        return wanted;
    }
    ts.epoch = 0;  // try again at the next event
    if (wanted != 0) runtime_count_lost(ts, outcome, wanted);
    return 0;
}

// Zone exit for a zone that entered with enter_zone_metrics: pops its entry
// values, reads the metrics again and pushes the zone with the deltas.
inline void runtime_push_zone_with_metrics(const site* where, std::uint64_t t0, std::uint64_t sessions,
                                           const metric_plan& plan) noexcept {
    thread_state& ts = t_state;
    thread_metrics& b = *t_metric_thread.block;  // set by enter_zone_metrics
    std::int64_t end[max_zone_metrics];
    read_plan(plan, b, end);  // first thing at exit
    const std::uint64_t t1 = read_ticks();
    b.entry_top -= plan.count;
    raw_record unit[max_zone_metrics_records];
    const std::size_t n = pack_zone_with_metrics(where, t0, t1, sessions, plan, b.entry_values + b.entry_top, end, unit);
    if (LOUPE_LIKELY(ts.owned_ring != nullptr) && LOUPE_LIKELY(ts.owned_ring->try_push_n(unit, n))) return;
    runtime_count_lost(ts, runtime_push_records(ts, sessions, unit, n), sessions);
}

// recorder_hooks::tagging: the runtime's task rules.
inline std::uint64_t runtime_tagging(std::uint64_t sessions, std::string_view peer, std::string_view name) noexcept {
    const runtime* r = runtime_pointer().load(std::memory_order_acquire);
    return r ? r->tagging(sessions, peer, name) : sessions;
}

// Hands the recorder (core/recorder.hpp) the slow paths above. Called when
// the runtime is made, before any session can arm. refresh_sessions goes
// last: only it hands a thread session slots and a metric plan, the way to
// every other hook, and a thread that got it sees the others set
// (core/recorder.hpp tests none of them for null).
inline void install_recorder_hooks() noexcept {
    g_recorder.push_records.store(&runtime_push_records, std::memory_order_release);
    g_recorder.count_lost.store(&runtime_count_lost, std::memory_order_release);
    g_recorder.enter_zone_metrics.store(&read_zone_entry_metrics, std::memory_order_release);
    g_recorder.push_zone_with_metrics.store(&runtime_push_zone_with_metrics, std::memory_order_release);
    g_recorder.tagging.store(&runtime_tagging, std::memory_order_release);
    g_recorder.refresh_sessions.store(&runtime_refresh_sessions, std::memory_order_release);
}

}  // namespace loupe::detail
