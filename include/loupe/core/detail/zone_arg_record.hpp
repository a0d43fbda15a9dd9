// How a zone argument travels through the thread's ring to the collector.
//
// A number is one plain record: {site pointer = its zone_arg_site, t0 = the
// zone's begin ticks, t1 = the value's 64 bits, sessions = the zone's}; the
// collector reads the kind from the key (collector.hpp). Text is a unit:
// one header record (site pointer = &zone_text_arg_marker, t0 = the zone's
// begin ticks, t1 = payload bytes, sessions) and the payload in whole
// records: u64 key pointer, u32 original size, then the bytes, at most
// max_zone_arg_text of them.
//
// Sets detail::g_zone_text_arg_marker at static initialisation of every
// translation unit that includes it (the runtime does); the host writes the
// units (core/zone_arg.hpp, push_zone_text_arg).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/record.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/unit_codec.hpp"
#include "loupe/core/zone_arg.hpp"

namespace loupe::detail {

inline constexpr std::size_t max_zone_text_arg_payload = zone_text_arg_fixed + max_zone_arg_text;
static_assert(max_zone_text_arg_payload <= sizeof(ring::pending_payload::data), "collector buffer holds a payload");

namespace zone_arg_record_detail {
inline std::size_t announced_bytes(const raw_record& header) noexcept {
    return static_cast<std::size_t>(header.t1 < max_zone_text_arg_payload ? header.t1 : max_zone_text_arg_payload);
}
inline void deliver(unit_delivery& unit) noexcept {
    if (unit.bytes < zone_text_arg_fixed) return;  // never written so
    std::uint64_t key_address;
    std::uint32_t original_size;
    std::memcpy(&key_address, unit.data, sizeof key_address);
    std::memcpy(&original_size, unit.data + sizeof key_address, sizeof original_size);
    const auto* key = reinterpret_cast<const zone_arg_site*>(static_cast<std::uintptr_t>(key_address));
    zone_argument arg;
    arg.key = key->name;
    arg.value.kind = value_kind::string;
    arg.value.text = {reinterpret_cast<const char*>(unit.data + zone_text_arg_fixed), unit.bytes - zone_text_arg_fixed};
    arg.value.original_size = original_size;
    arg.value.truncated = original_size > arg.value.text.size();
    record& rec = *unit.rec;
    rec.kind = record_kind::zone_arg;
    rec.where = key;
    rec.begin_ns = rec.end_ns = unit.to_ns(unit.ticks);
    rec.arg = &arg;
    unit.send(true);
    rec.arg = nullptr;
}
inline constexpr unit_codec codec{&announced_bytes, nullptr, &deliver};
}  // namespace zone_arg_record_detail

/// Identity of a text argument's header record; never recorded as a site.
LOUPE_API inline constexpr unit_marker zone_text_arg_marker =
    make_unit_marker("<zone text arg>", zone_arg_record_detail::codec);

LOUPE_API inline const bool zone_text_arg_marker_installed = [] {
    g_zone_text_arg_marker.store(&zone_text_arg_marker, std::memory_order_release);
    return true;
}();

}  // namespace loupe::detail
