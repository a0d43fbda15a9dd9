// The id fields W3C Trace Context writes after the version:
// `<32 hex trace-id>-<16 hex span-id>-<2 hex flags>`, 52 characters, shared
// by the traceparent and traceresponse parsers (after `<version>-`) and the
// in-band token (after its marker).
#pragma once

#include <cstddef>
#include <cstdint>

#include "loupe/base/config.hpp"
#include "loupe/tasks/detail/hex.hpp"

namespace loupe::tasks::detail {

inline constexpr std::size_t id_fields_size = 52;

enum class field_error : std::uint8_t {
    none,
    too_short,
    not_hex,
    upper_case_hex,
    expected_dash,
    zero_trace_id,
    zero_span_id
};

struct id_fields {
    std::uint64_t trace_high = 0;
    std::uint64_t trace_low = 0;
    std::uint64_t span = 0;
    std::uint8_t flags = 0;
    field_error error = field_error::none;
    std::size_t position = 0;  ///< of the error, from the start of the fields
};

/// Decodes the `len` hex digits at offset `at` of `p[0, n)`: false with the
/// error set when a character is not a lowercase hex digit or the text ends
/// first (the first such position wins).
LOUPE_NOINLINE inline bool hex_field(const char* p, std::size_t n, std::size_t at, std::size_t len, std::uint64_t& out,
                                     id_fields& r) noexcept {
    const std::size_t avail = n > at ? (n - at < len ? n - at : len) : 0;
    const std::size_t bad = decode_hex(p + at, avail, out);
    if (bad < avail) {
        r.error = hex_class(p[at + bad]) == hex_upper ? field_error::upper_case_hex : field_error::not_hex;
        r.position = at + bad;
        return false;
    }
    if (avail < len) {
        r.error = field_error::too_short;
        r.position = n;
        return false;
    }
    return true;
}

inline bool dash_at(const char* p, std::size_t n, std::size_t at, id_fields& r) noexcept {
    if (at >= n) {
        r.error = field_error::too_short;
        r.position = n;
        return false;
    }
    if (p[at] != '-') {
        r.error = field_error::expected_dash;
        r.position = at;
        return false;
    }
    return true;
}

/// Parses the id fields at the start of `p[0, n)` (characters after them are
/// not looked at). Checks in text order; the first problem is reported.
inline id_fields parse_id_fields(const char* p, std::size_t n) noexcept {
    id_fields r;
    std::uint64_t flags = 0;
    // Well-formed fields, checked and decoded in one go.
    if (LOUPE_LIKELY(n >= id_fields_size && p[32] == '-' && p[49] == '-') && decode_hex(p, 16, r.trace_high) == 16 &&
        decode_hex(p + 16, 16, r.trace_low) == 16 && decode_hex(p + 33, 16, r.span) == 16 &&
        decode_hex(p + 50, 2, flags) == 2 && (r.trace_high | r.trace_low) != 0 && r.span != 0) {
        r.flags = static_cast<std::uint8_t>(flags);
        return r;
    }
    // Otherwise field by field, for the first problem and its position.
    if (!hex_field(p, n, 0, 16, r.trace_high, r) || !hex_field(p, n, 16, 16, r.trace_low, r)) return r;
    if ((r.trace_high | r.trace_low) == 0) {
        r.error = field_error::zero_trace_id;
        r.position = 0;
        return r;
    }
    if (!dash_at(p, n, 32, r) || !hex_field(p, n, 33, 16, r.span, r)) return r;
    if (r.span == 0) {
        r.error = field_error::zero_span_id;
        r.position = 33;
        return r;
    }
    if (!dash_at(p, n, 49, r) || !hex_field(p, n, 50, 2, flags, r)) return r;
    r.flags = static_cast<std::uint8_t>(flags);
    return r;
}

/// Writes the 52 characters of the id fields at `out`.
inline void write_id_fields(std::uint64_t trace_high, std::uint64_t trace_low, std::uint64_t span, std::uint8_t flags,
                            char* out) noexcept {
    encode_hex(trace_high, 16, out);
    encode_hex(trace_low, 16, out + 16);
    out[32] = '-';
    encode_hex(span, 16, out + 33);
    out[49] = '-';
    encode_hex(flags, 2, out + 50);
}

}  // namespace loupe::tasks::detail
