// Constants and primitive codecs of the native .loupe trace format, shared by
// the file sink (writer) and loupe/reader.hpp. docs/format.md is the prose
// specification; a change here is a change there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace loupe::detail::format {

/// File magic: 0x89 'L' 'O' 'U' 'P' 'E' '\r' '\n' (a high byte and CR LF catch
/// text-mode transfers, as PNG does).
inline constexpr unsigned char magic[8] = {0x89, 'L', 'O', 'U', 'P', 'E', '\r', '\n'};
inline constexpr std::size_t header_size = 16;  // magic, u16 major, u16 minor, u32 flags
inline constexpr std::uint16_t version_major = 1;
inline constexpr std::uint16_t version_minor = 9;

/// Top-level record kinds. Every record is `u8 kind, varint length, payload`;
/// a reader skips kinds it does not know.
enum record_kind : std::uint8_t {
    rec_session = 0x01,
    rec_string = 0x02,
    rec_site = 0x03,
    rec_thread = 0x04,
    rec_events = 0x05,
    rec_dropped = 0x06,
    rec_end = 0x07,
    rec_context = 0x08,        // since 1.1
    rec_io_resource = 0x09,    // since 1.2
    rec_io = 0x0A,             // since 1.2
    rec_metric = 0x0B,         // since 1.3
    rec_zone_metrics = 0x0C,   // since 1.3
    rec_metric_totals = 0x0D,  // since 1.3
    rec_param_spec = 0x0E,     // since 1.4
    rec_method_call = 0x0F,    // since 1.4
    rec_apply_error = 0x10,    // since 1.4
    rec_flow = 0x11,           // since 1.6
    rec_process = 0x12,        // since 1.7
    rec_zone_arg = 0x13,       // since 1.8
    rec_host = 0x14,           // since 1.9
    rec_task_context = 0x15,   // since 1.9
    rec_task = 0x16,           // since 1.9
};

/// Event tags inside an EVENTS record. The set is closed for a format
/// version: new event kinds arrive as new record kinds.
enum event_tag : std::uint8_t {
    ev_zone = 0x01,
    ev_instant = 0x02,
    ev_counter = 0x03,
};

/// METHOD_CALL flags.
enum method_call_flag : std::uint8_t { call_exceptional = 1, call_has_cpu = 2, call_values_lost = 4 /* since 1.5 */ };
/// TASK flags.
enum task_flag : std::uint8_t { task_tagged = 1 };
/// FLOW flags.
enum flow_flag : std::uint8_t { flow_terminates = 1 };
/// METHOD_CALL value flags (strings and type names).
enum value_flag : std::uint8_t { value_truncated = 1 };

/// Clock that produced the timestamps (informational; all are ns).
enum clock_source : std::uint8_t { clock_tsc = 0, clock_steady = 1 };

inline constexpr std::size_t max_varint_bytes = 10;

/// Appends an unsigned LEB128 varint; returns the new end.
inline unsigned char* put_varint(unsigned char* out, std::uint64_t v) noexcept {
    while (v >= 0x80) {
        *out++ = static_cast<unsigned char>(v | 0x80);
        v >>= 7;
    }
    *out++ = static_cast<unsigned char>(v);
    return out;
}

inline std::uint64_t zigzag(std::int64_t v) noexcept {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) noexcept {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

inline unsigned char* put_u16(unsigned char* out, std::uint16_t v) noexcept {
    out[0] = static_cast<unsigned char>(v);
    out[1] = static_cast<unsigned char>(v >> 8);
    return out + 2;
}
inline unsigned char* put_u32(unsigned char* out, std::uint32_t v) noexcept {
    for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
    return out + 4;
}
inline unsigned char* put_u64(unsigned char* out, std::uint64_t v) noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(out, &v, sizeof v);  // one store (compilers keep the loop below byte by byte)
#else
    for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
#endif
    return out + 8;
}
inline unsigned char* put_f64(unsigned char* out, double v) noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return put_u64(out, bits);
}

}  // namespace loupe::detail::format
