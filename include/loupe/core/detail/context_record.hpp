// How a thread's context travels through its ring to the collector: one
// header record (site pointer = &context_marker, t0 = ticks, t1 = payload
// bytes, sessions = the sessions it is for) followed by the payload packed
// into whole records. Pushed as one unit, so the collector never sees half.
// Payload: for each of the six fields, u8 (length | truncated flag) then the
// bytes; then, when the thread serves a task, its trace id (u64 high, u64
// low), span id (u64), flags (u8), tracestate length (u16) and text.
#pragma once

#include <cstdint>
#include <cstring>

#include "loupe/base/context.hpp"
#include "loupe/core/detail/context_state.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/core/unit_codec.hpp"

namespace loupe::detail {

inline constexpr std::size_t context_task_fixed = 3 * sizeof(std::uint64_t) + 1 + sizeof(std::uint16_t);
inline constexpr std::size_t max_context_payload =
    context_fields * (1 + max_context_value) + context_task_fixed + tasks::tracestate_text::capacity;
inline constexpr std::size_t max_context_records = 1 + (max_context_payload + sizeof(raw_record) - 1) / sizeof(raw_record);
static_assert(max_context_payload <= sizeof(ring::pending_payload::data), "collector buffer holds a payload");

/// Reads a payload written by encode_context.
inline context decode_context(const unsigned char* payload, std::size_t n) noexcept {
    context out;
    std::size_t at = 0;
    for (unsigned f = 0; f < context_fields && at < n; ++f) {
        const std::uint8_t length = payload[at++];
        std::size_t size = length & ~value_truncated;
        if (size > n - at) size = n - at;
        out.set(static_cast<context_field>(f), {reinterpret_cast<const char*>(payload + at), size},
                (length & value_truncated) != 0);
        at += size;
    }
    if (n >= at + context_task_fixed) {
        tasks::task_context task;
        std::uint64_t ids[3];
        std::memcpy(ids, payload + at, sizeof ids);
        task.trace = {ids[0], ids[1]};
        task.span = ids[2];
        task.flags = payload[at + sizeof ids];
        std::uint16_t state_size;
        std::memcpy(&state_size, payload + at + sizeof ids + 1, sizeof state_size);
        at += context_task_fixed;
        if (state_size <= n - at) task.state.assign({reinterpret_cast<const char*>(payload + at), state_size});
        out.set_task(task);
    }
    return out;
}

namespace context_record_detail {
inline std::size_t announced_bytes(const raw_record& header) noexcept {
    return static_cast<std::size_t>(header.t1 < max_context_payload ? header.t1 : max_context_payload);
}
inline void deliver(unit_delivery& unit) noexcept {
    const context values = decode_context(unit.data, unit.bytes);
    record& rec = *unit.rec;
    rec.kind = record_kind::context;
    rec.begin_ns = rec.end_ns = unit.to_ns(unit.ticks);
    rec.context = &values;
    unit.send(false);
    rec.context = nullptr;
}
inline constexpr unit_codec codec{&announced_bytes, nullptr, &deliver};
}  // namespace context_record_detail

/// Identity of a context header record; never recorded as a site.
LOUPE_API inline constexpr unit_marker context_marker = make_unit_marker("<context>", context_record_detail::codec);

/// Writes the records for the calling thread's context into `out` (room for
/// max_context_records); returns how many.
inline std::size_t encode_context(const context_state& c, std::uint64_t ticks, std::uint64_t sessions,
                                  raw_record* out) noexcept {
    unsigned char payload[max_context_payload + sizeof(raw_record)];
    std::size_t n = 0;
    for (std::size_t f = 0; f < context_fields; ++f) {
        const std::string_view v = c.value(f);
        payload[n++] = c.length[f];
        std::memcpy(payload + n, v.data(), v.size());
        n += v.size();
    }
    if (c.task.valid()) {
        const std::uint64_t ids[3] = {c.task.trace_high, c.task.trace_low, c.task.span};
        std::memcpy(payload + n, ids, sizeof ids);
        payload[n + sizeof ids] = c.task.flags;
        std::memcpy(payload + n + sizeof ids + 1, &c.task.state_length, sizeof c.task.state_length);
        n += context_task_fixed;
        std::memcpy(payload + n, c.arena + c.task.state_offset, c.task.state_length);
        n += c.task.state_length;
    }
    return pack_unit(&context_marker, ticks, sessions, payload, n, out);
}

}  // namespace loupe::detail
