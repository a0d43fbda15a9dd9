// How a task point (tasks/call_scopes.hpp) travels through the thread's ring
// to the collector: one unit, a header record (marker, t0 = ticks, t1 =
// payload bytes, sessions) and the payload: a u64 whose low bytes are the
// kind, tagged, peer length and name length, then u64 trace high, trace low,
// call id, span id, echoed id, i64 status, then the peer and name bytes
// (each cut to max_task_text bytes at a character boundary; return points
// carry none: their call's first point has them). 3 or 4 ring records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/record.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/unit_codec.hpp"

namespace loupe::detail {

/// Longest peer or call name kept with a task point, in bytes.
inline constexpr std::size_t max_task_text = 128;
inline constexpr std::size_t task_point_fixed = 8 + 6 * sizeof(std::uint64_t);
inline constexpr std::size_t max_task_point_payload = task_point_fixed + 2 * max_task_text;
inline constexpr std::size_t max_task_point_records =
    1 + (max_task_point_payload + sizeof(raw_record) - 1) / sizeof(raw_record);
static_assert(max_task_point_payload <= max_unit_payload, "collector buffer holds a task point");

/// How many bytes of `text` a task point keeps (never half a UTF-8 sequence).
inline std::size_t task_text_kept(std::string_view text) noexcept {
    if (text.size() <= max_task_text) return text.size();
    std::size_t kept = max_task_text;
    while (kept != 0 && (static_cast<unsigned char>(text[kept]) & 0xC0) == 0x80) --kept;
    return kept;
}

namespace task_point_wire_detail {
inline std::size_t announced_bytes(const raw_record& header) noexcept {
    return static_cast<std::size_t>(header.t1 < max_task_point_payload ? header.t1 : max_task_point_payload);
}
inline void deliver(unit_delivery& unit) noexcept {
    if (unit.bytes < task_point_fixed) return;
    const unsigned char* p = unit.data;
    std::uint64_t words[7];
    std::memcpy(words, p, sizeof words);
    const unsigned kind = words[0] & 0xff;
    task_point t;
    t.kind = kind >= 1 && kind <= 4 ? static_cast<task_point_kind>(kind) : task_point_kind::call_out;
    t.tagged = ((words[0] >> 8) & 0xff) != 0;
    std::size_t peer = (words[0] >> 16) & 0xff, name = (words[0] >> 24) & 0xff;
    t.trace_high = words[1];
    t.trace_low = words[2];
    t.call_id = words[3];
    t.span_id = words[4];
    t.echoed_id = words[5];
    t.status = static_cast<std::int64_t>(words[6]);
    const std::size_t room = unit.bytes - task_point_fixed;
    if (peer > room) peer = room;
    if (name > room - peer) name = room - peer;
    t.peer = std::string_view(reinterpret_cast<const char*>(p + task_point_fixed), peer);
    t.name = std::string_view(reinterpret_cast<const char*>(p + task_point_fixed + peer), name);
    record& rec = *unit.rec;
    rec.kind = record_kind::task_point;
    rec.begin_ns = rec.end_ns = unit.to_ns(unit.ticks);
    rec.task = &t;
    unit.send(true);
    rec.task = nullptr;
}
inline constexpr unit_codec codec{&announced_bytes, nullptr, &deliver};
}  // namespace task_point_wire_detail

/// Identity of task point header records; never recorded as a site.
LOUPE_API inline constexpr unit_marker task_point_marker = make_unit_marker("<task point>", task_point_wire_detail::codec);

/// Pushes `t` (taken now) to `sessions` as one unit, written straight into
/// the ring when it has room without wrapping (else through push_or_count,
/// which waits for a `block` session or counts the point lost).
LOUPE_NOINLINE inline void push_task_point(const task_point& t, std::uint64_t sessions) noexcept {
    const std::uint64_t ticks = read_ticks();
    const std::size_t peer = task_text_kept(t.peer), name = task_text_kept(t.name);
    const std::size_t bytes = task_point_fixed + peer + name;
    const std::size_t records = 1 + (bytes + sizeof(raw_record) - 1) / sizeof(raw_record);
    thread_state& ts = t_state;
    raw_record local[max_task_point_records];
    ring* rg = ts.owned_ring;
    raw_record* slots = rg != nullptr ? rg->try_reserve(records) : nullptr;
    raw_record* out = slots != nullptr ? slots : local;
    out[0] = raw_record{&task_point_marker, ticks, bytes, sessions};
    auto* payload = reinterpret_cast<unsigned char*>(out + 1);
    std::memset(payload + (records - 2) * sizeof(raw_record), 0, sizeof(raw_record));  // the last record's tail
    // The four bytes kind, tagged, peer length, name length, little-endian.
    const std::uint64_t head = static_cast<std::uint64_t>(t.kind) | std::uint64_t{t.tagged} << 8 | peer << 16 | name << 24;
    const std::uint64_t words[7] = {head, t.trace_high, t.trace_low, t.call_id, t.span_id, t.echoed_id,
                                    static_cast<std::uint64_t>(t.status)};
    std::memcpy(payload, words, sizeof words);
    copy_payload_bytes(payload + task_point_fixed, t.peer.data(), peer);
    copy_payload_bytes(payload + task_point_fixed + peer, t.name.data(), name);
    if (LOUPE_LIKELY(slots != nullptr)) {
        rg->commit(records);
        return;
    }
    push_or_count(ts, sessions, local, records);
}

}  // namespace loupe::detail
