// How a task point (tasks/call_scopes.hpp) travels through the thread's ring
// to the collector: one unit. The header record is (marker, t0 = ticks,
// t1 = head, sessions), the head holding the payload's size (bits 0-15), the
// kind (16-23), tagged (24), and the peer's and name's lengths (32-39,
// 40-47). The payload starts with u64 trace high, trace low, call id, span
// id; then
//  - a call's first point (call_out, request_in): the peer and name bytes,
//    each cut to max_task_text bytes at a character boundary (3 ring records
//    while they take at most 32 bytes together);
//  - a return point (return_in, return_out): its call's first point has
//    the peer and name. The common return (no echo, or the span id echoed
//    as every return_out's is, and a status that fits 16 bits: an HTTP
//    status, -1) is short: the ids alone (2 ring records), the head saying
//    "short" (bit 25) with the status in bits 48-63 and "the echo is the
//    span id" in bit 26 (else none). Any other is long: u64 echoed id and
//    i64 status after the ids (3 ring records): a record less for the
//    producer to write and for the collector to read.
// The wire is the ring's alone: sinks and the .loupe file see task_point
// records (base/record.hpp).
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
/// The ids every point carries: trace high, trace low, call id, span id.
inline constexpr std::size_t task_point_ids_bytes = 4 * sizeof(std::uint64_t);
/// A long return point's payload: the ids, the echoed id and the status.
inline constexpr std::size_t long_return_payload = task_point_ids_bytes + 2 * sizeof(std::uint64_t);
inline constexpr std::size_t max_task_point_payload = task_point_ids_bytes + 2 * max_task_text;
inline constexpr std::size_t max_task_point_records =
    1 + (max_task_point_payload + sizeof(raw_record) - 1) / sizeof(raw_record);
/// Ring records of a return point: the header and the ids (short), and
/// the echoed id and the status in a third (long).
inline constexpr std::size_t short_return_records = 2;
inline constexpr std::size_t long_return_records =
    1 + (long_return_payload + sizeof(raw_record) - 1) / sizeof(raw_record);
/// Return point head bits (see the top of this file).
inline constexpr std::uint64_t short_return = std::uint64_t{1} << 25;
inline constexpr std::uint64_t echo_is_span = std::uint64_t{1} << 26;
static_assert(max_task_point_payload <= max_unit_payload, "collector buffer holds a task point");
static_assert(max_task_point_payload < 0x10000 && max_task_text < 0x100, "sizes fit the head's fields");

/// How many bytes of `text` a task point keeps (never half a UTF-8 sequence).
inline std::size_t task_text_kept(std::string_view text) noexcept {
    if (text.size() <= max_task_text) return text.size();
    std::size_t kept = max_task_text;
    while (kept != 0 && (static_cast<unsigned char>(text[kept]) & 0xC0) == 0x80) --kept;
    return kept;
}

/// What every point of a call names: its task and the two calls it joins.
struct task_point_ids {
    std::uint64_t trace_high;
    std::uint64_t trace_low;
    std::uint64_t call_id;
    std::uint64_t span_id;
};
static_assert(sizeof(task_point_ids) == task_point_ids_bytes &&
                  (short_return_records - 1) * sizeof(raw_record) == sizeof(task_point_ids),
              "the ids fill the first payload record: a short return is the header and them");

/// The header's t1 of a point (see the top of this file).
constexpr std::uint64_t task_point_head(std::size_t bytes, task_point_kind kind, bool tagged, std::size_t peer = 0,
                                        std::size_t name = 0) noexcept {
    return bytes | std::uint64_t{static_cast<std::uint8_t>(kind)} << 16 | std::uint64_t{tagged} << 24 |
           std::uint64_t{peer} << 32 | std::uint64_t{name} << 40;
}

constexpr bool is_return_point(task_point_kind kind) noexcept {
    return kind == task_point_kind::return_in || kind == task_point_kind::return_out;
}

namespace task_point_wire_detail {
inline std::size_t announced_bytes(const raw_record& header) noexcept {
    const std::size_t bytes = header.t1 & 0xffff;
    return bytes < max_task_point_payload ? bytes : max_task_point_payload;
}
inline void deliver(unit_delivery& unit) noexcept {
    if (unit.bytes < task_point_ids_bytes) return;
    const std::uint64_t head = unit.end_ticks;  // the header's t1
    const unsigned kind = (head >> 16) & 0xff;
    if (kind < 1 || kind > 4) return;  // not written by push_task_*: nothing to trust
    const unsigned char* p = unit.data;
    const auto point_kind = static_cast<task_point_kind>(kind);
    std::uint64_t ids[4];
    std::memcpy(ids, p, sizeof ids);
    std::uint64_t echoed = 0, status = 0;
    std::string_view peer_text, name_text;
    if (is_return_point(point_kind)) {
        if (head & short_return) {
            echoed = head & echo_is_span ? ids[3] : 0;
            status = static_cast<std::uint64_t>(std::int64_t{static_cast<std::int16_t>(head >> 48)});
        } else {
            if (unit.bytes < long_return_payload) return;
            std::memcpy(&echoed, p + task_point_ids_bytes, sizeof echoed);
            std::memcpy(&status, p + task_point_ids_bytes + sizeof echoed, sizeof status);
        }
    } else {
        std::size_t peer = (head >> 32) & 0xff, name = (head >> 40) & 0xff;
        const std::size_t room = unit.bytes - task_point_ids_bytes;
        if (peer > room) peer = room;
        if (name > room - peer) name = room - peer;
        peer_text = std::string_view(reinterpret_cast<const char*>(p + task_point_ids_bytes), peer);
        name_text = std::string_view(reinterpret_cast<const char*>(p + task_point_ids_bytes + peer), name);
    }
    const task_point t{point_kind, ids[0], ids[1], ids[2], ids[3], echoed, static_cast<std::int64_t>(status),
                       ((head >> 24) & 1) != 0, peer_text, name_text};
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

/// Pushes a call's first point (call_out, request_in), taken now, to
/// `sessions` as one unit (see write_unit for the full ring).
LOUPE_NOINLINE inline void push_task_first_point(std::uint64_t sessions, task_point_kind kind, bool tagged,
                                                 const task_point_ids& ids, std::string_view peer,
                                                 std::string_view name) noexcept {
    const std::uint64_t ticks = read_ticks();
    const std::size_t peer_kept = task_text_kept(peer), name_kept = task_text_kept(name);
    const std::size_t bytes = task_point_ids_bytes + peer_kept + name_kept;
    const std::size_t records = 1 + (bytes + sizeof(raw_record) - 1) / sizeof(raw_record);
    // A call writes 2.5 cache lines of records: the hint keeps a host that
    // moves lines between cores slowly from holding the caller up.
    write_unit<max_task_point_records, true>(sessions, records, [&](raw_record* out) {
        out[0] = raw_record{&task_point_marker, ticks, task_point_head(bytes, kind, tagged, peer_kept, name_kept),
                            sessions};
        auto* payload = reinterpret_cast<unsigned char*>(out + 1);
        std::memset(payload + (records - 2) * sizeof(raw_record), 0, sizeof(raw_record));  // the last record's tail
        std::memcpy(payload, &ids, sizeof ids);
        copy_payload_bytes(payload + task_point_ids_bytes, peer.data(), peer_kept);
        copy_payload_bytes(payload + task_point_ids_bytes + peer_kept, name.data(), name_kept);
    });
}

/// Pushes a return point (return_in, return_out), taken now, to `sessions`
/// as one unit: short (2 ring records) when the head can say the echo and
/// the status, else long (3; see the top of this file).
LOUPE_NOINLINE inline void push_task_return_point(std::uint64_t sessions, task_point_kind kind, bool tagged,
                                                  const task_point_ids& ids, std::uint64_t echoed,
                                                  std::int64_t status) noexcept {
    const std::uint64_t ticks = read_ticks();
    if (LOUPE_LIKELY(status == std::int64_t{static_cast<std::int16_t>(status)} &&
                     (echoed == 0 || echoed == ids.span_id))) {
        const std::uint64_t head = task_point_head(task_point_ids_bytes, kind, tagged) | short_return |
                                   (echoed != 0 ? echo_is_span : 0) |
                                   std::uint64_t{static_cast<std::uint16_t>(status)} << 48;
        write_unit<short_return_records>(sessions, short_return_records, [&](raw_record* out) {
            out[0] = raw_record{&task_point_marker, ticks, head, sessions};
            std::memcpy(out + 1, &ids, sizeof ids);
        });
        return;
    }
    // Each word goes straight from a register into the ring: a copy of an
    // array just built on the stack would read it back 16 bytes at a time,
    // and such a load waits for the 8-byte stores it spans (no forwarding).
    const std::uint64_t status_word = static_cast<std::uint64_t>(status), zero = 0;
    write_unit<long_return_records>(sessions, long_return_records, [&](raw_record* out) {
        out[0] = raw_record{&task_point_marker, ticks, task_point_head(long_return_payload, kind, tagged), sessions};
        std::memcpy(out + 1, &ids, sizeof ids);
        auto* tail = reinterpret_cast<unsigned char*>(out + 2);
        std::memcpy(tail, &echoed, sizeof echoed);
        std::memcpy(tail + 8, &status_word, sizeof status_word);
        std::memcpy(tail + 16, &zero, sizeof zero);
        std::memcpy(tail + 24, &zero, sizeof zero);
    });
}

}  // namespace loupe::detail
