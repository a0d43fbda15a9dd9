// The exit of a recorded method call (params/method.hpp): the call's metric
// deltas, its header record and the frame its entry left on the value
// stack, pushed as one ring unit.
//
// Shared parts (base/config.hpp): with the separate implementation only the
// implementation file compiles, or even reads, the definitions below and
// what they need (the metric reads, the ring's slow paths); a file with
// method sites sees the declarations.
#pragma once

#include <cstdint>

#include "loupe/base/config.hpp"
#include "loupe/params/method_site.hpp"

namespace loupe::detail {

struct metric_plan;  // core/zone_metrics.hpp

/// A call without a frame on the value stack (call_entry::frame).
inline constexpr std::uint32_t no_frame = ~std::uint32_t{0};

/// Exit of a recorded call that carries values or flags (`frame`: where its
/// entry's frame starts on the value stack, or no_frame).
template <int = 0>
LOUPE_NOINLINE void push_method_call(const method_site* where, std::uint64_t t0, std::uint64_t sessions,
                                     const metric_plan* plan, std::uint32_t frame, std::uint8_t flags) noexcept;
template <int = 0>
LOUPE_NOINLINE void push_method_unit(const method_site* where, std::uint64_t t0, std::uint64_t sessions,
                                     const metric_plan* plan, std::uint32_t frame, std::uint8_t flags) noexcept;
template <int = 0>
LOUPE_NOINLINE void push_method_set_aside(const method_site* where, std::uint64_t t0, std::uint64_t sessions,
                                          const metric_plan* plan, std::uint32_t frame, std::uint8_t flags) noexcept;

}  // namespace loupe::detail

#if !LOUPE_DETAIL_DEFINES_SHARED_PARTS
namespace loupe::detail {
// Compiled by the implementation file alone (base/config.hpp).
std::uint64_t thread_cpu_ns() noexcept;
}  // namespace loupe::detail
#else

#    include <cstddef>
#    include <cstring>

#    include "loupe/core/recorder.hpp"
#    include "loupe/core/zone_metrics.hpp"
#    include "loupe/params/detail/method_wire.hpp"

namespace loupe::detail {

/// The calling thread's CPU time (ns): a call's entry reads it when a spec
/// asks for data=cpu.
LOUPE_DETAIL_SHARED_PART std::uint64_t thread_cpu_ns() noexcept {
    return static_cast<std::uint64_t>(read_cpu_clock(CLOCK_THREAD_CPUTIME_ID));
}

// What a recorded call's exit packs into its ring unit.
struct method_exit {
    std::uint64_t t0, t1, sessions;
    const metric_plan* plan;  ///< with metric_end: the call's deltas (null: none)
    const std::int64_t* metric_end;
    const unsigned char* payload;  ///< the call's frame (or a bare header)
    std::size_t payload_bytes;
    std::uint8_t flags;            ///< the flags at exit, patched into the payload's header
    std::uint64_t cpu_end;         ///< with method_has_cpu, patched into its CPU times
    std::size_t delta_records;
    std::size_t records() const noexcept {
        return delta_records + 1 + (payload_bytes + sizeof(raw_record) - 1) / sizeof(raw_record);
    }
};

// Writes the unit of `x` (its metric deltas, the header record, the payload)
// at `out`, which has room for x.records().
LOUPE_ALWAYS_INLINE void pack_method_unit(const method_exit& x, raw_record* out) noexcept {
    if (x.plan != nullptr) {
        const thread_metrics& b = *t_metric_thread.block;
        pack_metric_deltas(x.sessions, *x.plan, b.entry_values + b.entry_top - x.plan->count, x.metric_end, out);
    }
    out[x.delta_records] = raw_record{&method_call_marker, x.t0, x.t1, x.sessions};
    auto* bytes = reinterpret_cast<unsigned char*>(out + x.delta_records + 1);
    // The payload's last record is zeroed first, so its padding reads as zeros.
    const std::size_t payload_records = (x.payload_bytes + sizeof(raw_record) - 1) / sizeof(raw_record);
    out[x.delta_records + payload_records] = raw_record{};
    std::memcpy(bytes, x.payload, x.payload_bytes);
    bytes[offsetof(method_payload_header, flags)] = x.flags;
    if (x.flags & method_has_cpu) {
        std::memcpy(bytes + sizeof(method_payload_header) + offsetof(method_cpu_times, end_ns), &x.cpu_end,
                    sizeof x.cpu_end);
    }
}

// The unit of `x` when it does not fit in place (no ring yet, the ring
// wraps here, or it is full): packed on the stack, pushed or counted lost.
// `x` by value: the caller's copy then stays in registers on the fast path.
template <int = 0>
LOUPE_NOINLINE void push_method_unit_slow(const method_exit x, thread_state& ts) noexcept {
    constexpr std::size_t max_records =
        max_zone_metrics_records + 1 + (max_method_payload + sizeof(raw_record) - 1) / sizeof(raw_record);
    raw_record unit[max_records];
    pack_method_unit(x, unit);
    const std::size_t n = x.records();
    push_or_count(ts, x.sessions, unit, n);
}

// Exit of a recorded call whose frame its entry opened in the ring but that
// something pushed since (or a fork, which leaves the ring behind) set
// aside, or that carries zone metrics: packed from the value stack.
template <int>
LOUPE_NOINLINE void push_method_set_aside(const method_site* where, std::uint64_t t0, std::uint64_t sessions,
                                          const metric_plan* plan, std::uint32_t frame, std::uint8_t flags) noexcept {
    if (ring* rg = t_state.owned_ring) rg->set_aside_waiting_frame();  // onto the value stack (a no-op if it was)
    push_method_unit(where, t0, sessions, plan, frame, flags);
}

// Exit of a recorded call that carries values or flags. A frame its entry
// opened in the ring that still waits there (nothing was pushed since) only
// gets its header record, in front, and is published: a few stores in a
// small function. Any other call goes on to push_method_unit. (A call that carries nothing but its timing never comes
// here: method_scope pushes it as a plain zone, one record.)
template <int>
LOUPE_NOINLINE void push_method_call(const method_site* where, std::uint64_t t0, std::uint64_t sessions,
                                     const metric_plan* plan, std::uint32_t frame, std::uint8_t flags) noexcept {
    if (!(flags & method_frame_in_ring)) return push_method_unit(where, t0, sessions, plan, frame, flags);
    flags = static_cast<std::uint8_t>(flags & ~method_frame_in_ring);
    thread_state& ts = t_state;
    ring* const rg = ts.owned_ring;
    if (LOUPE_UNLIKELY(plan != nullptr || rg == nullptr || !rg->frame_waits())) {
        return push_method_set_aside(where, t0, sessions, plan, frame, flags);
    }
    raw_record* const unit = rg->waiting_frame();
    unit[0] = raw_record{&method_call_marker, t0, read_ticks(), sessions};
    reinterpret_cast<unsigned char*>(unit + 1)[offsetof(method_payload_header, flags)] = flags;
    rg->commit_frame();
    ts.values->top = frame;
}

// Exit of a recorded call: reads the metrics, the exit ticks and the CPU
// clock first, then pushes the call as one unit — its metric deltas if any,
// the header record, and the frame its entry left on the value stack with
// the exit's flags and CPU time patched in — in place in the ring when it
// fits, and pops the frame.
template <int>
LOUPE_NOINLINE void push_method_unit(const method_site* where, std::uint64_t t0, std::uint64_t sessions,
                                     const metric_plan* plan, std::uint32_t frame, std::uint8_t flags) noexcept {
    thread_state& ts = t_state;
    std::int64_t metric_end[max_zone_metrics];
    if (plan != nullptr) read_plan(*plan, *t_metric_thread.block, metric_end);
    method_exit x;
    x.t1 = read_ticks();
    x.cpu_end = (flags & method_has_cpu) ? thread_cpu_ns() : 0;
    x.t0 = t0;
    x.sessions = sessions;
    x.plan = plan;
    x.metric_end = metric_end;
    x.flags = flags;
    x.delta_records = plan != nullptr ? metric_delta_records(*plan) : 0;
    value_stack* const stack = ts.values;
    method_payload_header bare;  // the payload of a call without a frame
    if (LOUPE_LIKELY(frame != no_frame)) {
        x.payload = stack->bytes + frame;
        x.payload_bytes = stack->top - frame;
    } else {
        bare = {where, 0, 0, flags, 0};
        x.payload = reinterpret_cast<const unsigned char*>(&bare);
        x.payload_bytes = sizeof bare;
    }
    const std::size_t n = x.records();
    ring* rg = ts.owned_ring;
    raw_record* slots = LOUPE_LIKELY(rg != nullptr) ? rg->try_reserve(n) : nullptr;
    if (LOUPE_UNLIKELY(slots == nullptr) && rg != nullptr) {
        if (ring* larger = adopt_successor(ts)) {  // full, and the collector made it a larger one
            rg = larger;
            slots = rg->try_reserve(n);
        }
    }
    if (LOUPE_LIKELY(slots != nullptr)) {  // in place: no copy
        pack_method_unit(x, slots);
        rg->commit(n);
    } else if (rg != nullptr && !rg->would_wrap(n) && !(sessions & g_hot.block_slots.load(std::memory_order_relaxed))) {
        rg->count_dropped(sessions);  // full, and no session waits for room: lost without packing it
    } else {
        push_method_unit_slow(x, ts);
    }
    if (plan != nullptr) t_metric_thread.block->entry_top -= plan->count;
    if (frame != no_frame) stack->top = frame;
}

}  // namespace loupe::detail

#endif  // LOUPE_DETAIL_DEFINES_SHARED_PARTS

namespace loupe::detail {
LOUPE_DETAIL_SHARED_INSTANCE(void push_method_unit<0>(const method_site*, std::uint64_t, std::uint64_t,
                                                      const metric_plan*, std::uint32_t, std::uint8_t) noexcept);
LOUPE_DETAIL_SHARED_INSTANCE(void push_method_set_aside<0>(const method_site*, std::uint64_t, std::uint64_t,
                                                           const metric_plan*, std::uint32_t, std::uint8_t) noexcept);
LOUPE_DETAIL_SHARED_INSTANCE(void push_method_call<0>(const method_site*, std::uint64_t, std::uint64_t,
                                                      const metric_plan*, std::uint32_t, std::uint8_t) noexcept);
}  // namespace loupe::detail
