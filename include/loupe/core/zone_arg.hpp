// Zone arguments: key/value pairs on a recorded zone, shown with it in every
// report and viewer (LOUPE_ZONE_ARG in loupe.hpp; zone_scope::arg here).
//
//     LOUPE_ZONE_AS(zone, "query");
//     LOUPE_ZONE_ARG(zone, "table", table_name);   // text, cut to 256 bytes
//     LOUPE_ZONE_ARG(zone, "rows", rows.size());   // integers, doubles, bools, enums
//
// An argument is recorded only when its zone is, for exactly the sessions
// that record the zone; the value is not evaluated otherwise (by the macro).
// It travels through the thread's ring stamped with its zone's begin time,
// ahead of the zone's own record, and readers attach it to the zone that
// began at that time on that thread (docs/format.md, ZONE_ARG).
//
// Cost: a zone that is not recorded, one branch (no load: the zone knows).
// Recorded, a number is one 32-byte store into the thread's ring (as a zone
// is, without the clock reads); text is one call that writes up to
// `max_zone_arg_text` bytes straight into the ring as one unit.
// Thread-safety: on the zone's own thread, while the zone is alive.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "loupe/base/config.hpp"
#include "loupe/base/site.hpp"
#include "loupe/base/value_kind.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/zone.hpp"

namespace loupe {

/// The key of a zone argument: a call site of kind site_kind::zone_arg (its
/// name is the key) and the kind of value recorded there. Static storage
/// duration, as every site; LOUPE_ZONE_ARG makes one per use.
struct zone_arg_site : site {
    value_kind type;
};

/// Text arguments longer than this many bytes are cut (and marked so).
inline constexpr std::size_t max_zone_arg_text = 256;

namespace detail {

template <class>
inline constexpr bool unsupported_zone_arg = false;

/// The value kind a C++ type is recorded as: bool; signed integers and enums
/// (by their underlying type) as integer or unsigned_integer; floating point
/// as floating (double); anything convertible to std::string_view as string.
template <class T>
constexpr value_kind zone_arg_kind_of() noexcept {
    using U = std::remove_cv_t<std::remove_reference_t<T>>;
    if constexpr (std::is_same_v<U, bool>) {
        return value_kind::boolean;
    } else if constexpr (std::is_enum_v<U>) {
        return std::is_signed_v<std::underlying_type_t<U>> ? value_kind::integer : value_kind::unsigned_integer;
    } else if constexpr (std::is_integral_v<U>) {
        return std::is_signed_v<U> ? value_kind::integer : value_kind::unsigned_integer;
    } else if constexpr (std::is_floating_point_v<U>) {
        return value_kind::floating;
    } else if constexpr (std::is_convertible_v<const U&, std::string_view>) {
        return value_kind::string;
    } else {
        static_assert(unsupported_zone_arg<U>,
                      "a zone argument is a bool, an integer, an enum, a floating-point number or text "
                      "(anything convertible to std::string_view)");
        return value_kind::unknown;
    }
}

/// A number's 64 bits as a ring record carries them (param_value::bits).
template <class T>
LOUPE_ALWAYS_INLINE std::uint64_t zone_arg_bits(const T& value) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
        const double d = static_cast<double>(value);
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        return bits;
    } else if constexpr (std::is_enum_v<T>) {
        return static_cast<std::uint64_t>(static_cast<std::underlying_type_t<T>>(value));
    } else {
        return static_cast<std::uint64_t>(value);  // bool: 0 or 1; signed: two's complement
    }
}

/// The marker of a text argument's unit (core/detail/zone_arg_record.hpp,
/// which the runtime includes and which sets it at static initialisation):
/// a recorded zone implies a runtime, so it is set whenever it is read.
LOUPE_API inline std::atomic<const site*> g_zone_text_arg_marker{nullptr};

/// Bytes of a text argument's payload before its text: the key's address
/// and the text's original size.
inline constexpr std::size_t zone_text_arg_fixed = sizeof(std::uint64_t) + sizeof(std::uint32_t);
/// Records of the largest text argument's unit (header included).
inline constexpr std::size_t max_zone_text_arg_records =
    1 + (zone_text_arg_fixed + max_zone_arg_text + sizeof(raw_record) - 1) / sizeof(raw_record);

/// How many bytes of `text` an argument keeps: all, or max_zone_arg_text cut
/// back to a character boundary (never half a UTF-8 sequence).
inline std::size_t zone_arg_text_kept(std::string_view text) noexcept {
    if (text.size() <= max_zone_arg_text) return text.size();
    std::size_t kept = max_zone_arg_text;
    while (kept != 0 && (static_cast<unsigned char>(text[kept]) & 0xC0) == 0x80) --kept;
    return kept;
}

/// Pushes a text argument as one unit: a header record (site pointer =
/// the marker, t0 = the zone's begin ticks, t1 = payload bytes, sessions)
/// and the payload (u64 key address, u32 original size, the kept bytes),
/// written straight into the ring when it has room without wrapping, else
/// through the runtime's push (which waits for a `block` session or counts
/// the argument lost).
LOUPE_NOINLINE inline void push_zone_text_arg(const zone_arg_site& key, std::uint64_t zone_ticks,
                                              std::uint64_t sessions, std::string_view text) noexcept {
    const site* marker = g_zone_text_arg_marker.load(std::memory_order_acquire);
    thread_state& ts = t_state;
    if (LOUPE_UNLIKELY(marker == nullptr)) {
        count_lost(ts, push_outcome::no_ring, sessions);
        return;
    }
    const std::size_t kept = zone_arg_text_kept(text);
    const std::size_t bytes = zone_text_arg_fixed + kept;
    const std::size_t records = 1 + (bytes + sizeof(raw_record) - 1) / sizeof(raw_record);
    const std::uint64_t key_address = reinterpret_cast<std::uintptr_t>(&key);
    const std::uint32_t original_size =
        text.size() > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(text.size());
    write_unit<max_zone_text_arg_records>(sessions, records, [&](raw_record* out) {
        out[0] = raw_record{marker, zone_ticks, bytes, sessions};
        auto* payload = reinterpret_cast<unsigned char*>(out + 1);
        std::memset(payload + (records - 2) * sizeof(raw_record), 0, sizeof(raw_record));  // the last record's tail
        std::memcpy(payload, &key_address, sizeof key_address);
        std::memcpy(payload + sizeof key_address, &original_size, sizeof original_size);
        if (kept != 0) std::memcpy(payload + zone_text_arg_fixed, text.data(), kept);
    });
}

}  // namespace detail

/// Records `value` under `key` for this zone (see the top of this file).
/// `key.type` must be the kind `value`'s type is recorded as
/// (detail::zone_arg_kind_of; LOUPE_ZONE_ARG makes such a key); with another
/// key nothing is recorded. Never throws, never blocks unless a session has
/// the `block` policy.
template <class T>
LOUPE_ALWAYS_INLINE void zone_scope::arg(const zone_arg_site& key, const T& value) noexcept {
    constexpr value_kind kind = detail::zone_arg_kind_of<T>();
    if (LOUPE_LIKELY(sessions_ == 0) || key.type != kind) return;
    if constexpr (kind == value_kind::string) {
        detail::push_zone_text_arg(key, t0_, sessions_, std::string_view(value));
    } else {
        detail::push(&key, t0_, detail::zone_arg_bits(value), sessions_);
    }
}

}  // namespace loupe
