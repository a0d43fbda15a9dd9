// The marker side of the recorder's plug-in point (core/unit_codec.hpp):
// what a capability's producer code needs to write a unit into a ring (its
// marker, the codec the marker names, the payload copier), without the
// collector's side (unit_delivery, the record vocabulary).
//
// Thread-safety: constants and a pure function. Cost: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "loupe/base/site.hpp"

namespace loupe::detail {

struct raw_record;  // core/detail/ring.hpp
class unit_delivery;  // core/unit_codec.hpp

/// The largest payload of one unit, in bytes.
inline constexpr std::size_t max_unit_payload = 4096;
/// How the collector reads one kind of unit.
struct unit_codec {
    /// Payload bytes the header record announces (usually its `t1`). The
    /// collector never reads more than its 4 KiB unit buffer.
    std::size_t (*announced_bytes)(const raw_record& header) noexcept;
    /// Null, or the payload's real size read from its first payload record,
    /// for units whose header record has no room to say it.
    std::size_t (*bytes_from_first)(const raw_record& first) noexcept;
    /// The payload is complete: decode it and send what it says.
    void (*deliver)(unit_delivery& unit) noexcept;
    /// The payload is passed over unread and `deliver` is not called: slots
    /// that the producer published as a unit but may still be writing.
    bool unread = false;
};

/// What a unit's header record points at instead of a call site. Never
/// recorded as a site; constant-initialized with static storage duration.
struct unit_marker : site {
    const unit_codec* codec;
};

/// Copies `n` bytes (a name, a peer) into a unit's payload with fixed-size
/// moves that overlap at the ends. For the few bytes a name has, an inlined
/// variable-length std::memcpy becomes `rep movs`, slow to start. Writes
/// exactly [out, out + n).
inline void copy_payload_bytes(unsigned char* out, const char* in, std::size_t n) noexcept {
    if (n >= 16) {
        for (std::size_t i = 0; i + 16 < n; i += 16) std::memcpy(out + i, in + i, 16);
        std::memcpy(out + n - 16, in + n - 16, 16);
    } else if (n >= 8) {
        std::memcpy(out, in, 8);
        std::memcpy(out + n - 8, in + n - 8, 8);
    } else if (n >= 4) {
        std::memcpy(out, in, 4);
        std::memcpy(out + n - 4, in + n - 4, 4);
    } else if (n != 0) {
        out[0] = static_cast<unsigned char>(in[0]);
        out[n / 2] = static_cast<unsigned char>(in[n / 2]);
        out[n - 1] = static_cast<unsigned char>(in[n - 1]);
    }
}

/// Makes a marker: `name` shows in diagnostics only.
constexpr unit_marker make_unit_marker(const char* name, const unit_codec& codec) noexcept {
    return unit_marker{{name, "", "", 0, site_kind::unit}, &codec};
}

}  // namespace loupe::detail
