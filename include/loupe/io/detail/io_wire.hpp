// How I/O operations and resources are laid out in a thread's ring (the
// wire between the io wrappers and the collector); see io_record.hpp for
// who pushes them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/clock.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/io/handle_registry.hpp"
#include "loupe/core/sink.hpp"

namespace loupe::detail {

/// Identity of I/O header records; never recorded as sites.
LOUPE_API inline constexpr site io_op_marker{"<io>", "", "", 0, site_kind::io};
LOUPE_API inline constexpr site io_resource_marker{"<io resource>", "", "", 0, site_kind::io};

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
static_assert(max_io_resource_payload <= sizeof(ring::pending_payload::data), "collector buffer holds a resource");

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

/// Reads a payload written by encode_io_resource; `name` views `payload`.
inline io_resource decode_io_resource(const unsigned char* payload, std::size_t n,
                                      const tick_clock& clock) noexcept {
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

}  // namespace loupe::detail
