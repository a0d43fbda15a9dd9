// How I/O operations and resources are laid out in a thread's ring (the
// wire between the io wrappers and the collector); see io_record.hpp for
// who pushes them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/record.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/unit_codec.hpp"
#include "loupe/io/handle_registry.hpp"

namespace loupe::detail {

/// Payload of an operation: exactly one ring record.
struct io_op_payload {
    std::uint64_t resource_id;
    std::int64_t result;
    std::int64_t fd;
    std::uint64_t op;
};
static_assert(sizeof(io_op_payload) == sizeof(raw_record), "an operation's payload is one record");

/// Payload of a resource: u64 id, u64 open ticks, u64 opener tid, u8 kind,
/// u8 flags (bit 0 truncated, bit 1 backfilled), u8 name length, name.
inline constexpr std::size_t io_resource_fixed = 27;
inline constexpr std::size_t max_io_resource_payload = io_resource_fixed + io::handle_registry::max_name;
inline constexpr std::size_t max_io_resource_records =
    1 + (max_io_resource_payload + sizeof(raw_record) - 1) / sizeof(raw_record);
static_assert(max_io_resource_payload <= max_unit_payload, "collector buffer holds a resource");

/// Reads a payload written by encode_io_resource; `name` views `payload`.
inline io_resource decode_io_resource(const unsigned char* payload, std::size_t n,
                                      const unit_delivery& clock) noexcept {
    io_resource r;
    if (n < io_resource_fixed) return r;
    std::uint64_t fixed[3];
    std::memcpy(fixed, payload, sizeof fixed);
    r.id = fixed[0];
    r.open_ns = fixed[1] == 0 ? 0 : clock.to_ns(fixed[1]);
    r.opener_os_tid = fixed[2];
    r.kind = payload[24] <= static_cast<unsigned char>(io::resource_kind::other) ? static_cast<io::resource_kind>(payload[24])
                                                                                 : io::resource_kind::unknown;
    r.name_truncated = payload[25] & 1;
    r.backfilled = payload[25] & 2;
    std::size_t name_size = payload[26];
    if (name_size > n - io_resource_fixed) name_size = n - io_resource_fixed;
    r.name = std::string_view(reinterpret_cast<const char*>(payload + io_resource_fixed), name_size);
    return r;
}

namespace io_wire_detail {

inline std::size_t operation_bytes(const raw_record&) noexcept { return sizeof(io_op_payload); }

// One operation: t0/t1 of the header are its begin and end.
inline void deliver_operation(unit_delivery& unit) noexcept {
    io_op_payload p;
    std::memcpy(&p, unit.data, sizeof p);
    io_operation operation;
    operation.op = static_cast<io::op>(p.op < io::op_count ? p.op : 0);
    operation.fd = p.fd;
    operation.result = p.result;
    operation.resource_id = p.resource_id;
    record& rec = *unit.rec;
    rec.kind = record_kind::io;
    rec.begin_ns = unit.to_ns(unit.ticks);
    rec.end_ns = unit.to_ns(unit.end_ticks);
    rec.io = &operation;
    unit.send(true);
}

inline std::size_t resource_bytes(const raw_record& header) noexcept {
    return static_cast<std::size_t>(header.t1 < max_io_resource_payload ? header.t1 : max_io_resource_payload);
}

// What later operations' resource id means: a definition, not an event.
inline void deliver_resource(unit_delivery& unit) noexcept {
    const io_resource resource = decode_io_resource(unit.data, unit.bytes, unit);
    record& rec = *unit.rec;
    rec.kind = record_kind::io_resource;
    rec.begin_ns = rec.end_ns = unit.to_ns(unit.ticks);
    rec.resource = &resource;
    unit.send(false);
}

inline constexpr unit_codec operation_codec{&operation_bytes, nullptr, &deliver_operation};
inline constexpr unit_codec resource_codec{&resource_bytes, nullptr, &deliver_resource};

}  // namespace io_wire_detail

/// Identity of I/O header records; never recorded as sites.
LOUPE_API inline constexpr unit_marker io_op_marker = make_unit_marker("<io>", io_wire_detail::operation_codec);
LOUPE_API inline constexpr unit_marker io_resource_marker = make_unit_marker("<io resource>", io_wire_detail::resource_codec);

inline std::size_t encode_io_resource(const io::handle_info& info, std::uint64_t ticks, std::uint64_t sessions,
                                      raw_record* out) noexcept {
    unsigned char payload[max_io_resource_payload + sizeof(raw_record)];
    const std::uint64_t fixed[3] = {info.resource_id, info.open_ticks, info.opener_thread};
    std::memcpy(payload, fixed, sizeof fixed);
    const std::size_t name_size = info.name.size() < io::handle_registry::max_name ? info.name.size()
                                                                                   : io::handle_registry::max_name;
    payload[24] = static_cast<unsigned char>(info.kind);
    payload[25] = static_cast<unsigned char>((info.name_truncated ? 1 : 0) | (info.backfilled ? 2 : 0));
    payload[26] = static_cast<unsigned char>(name_size);
    std::memcpy(payload + io_resource_fixed, info.name.data(), name_size);
    const std::size_t n = io_resource_fixed + name_size;
    return pack_unit(&io_resource_marker, ticks, sessions, payload, n, out);
}

}  // namespace loupe::detail
