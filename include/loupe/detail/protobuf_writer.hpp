// A minimal protocol-buffers wire-format writer, enough for the Perfetto
// trace writer (viewer/perfetto.hpp): varint, fixed64 and length-delimited
// fields, and nested messages. No schema, no reflection, no allocation beyond
// the growing output string.
//
// Nested messages are built in place: `open` reserves one length byte and
// `close` fills it in, moving the body only when it turned out to be 128
// bytes or longer (rare for trace packets), so lengths are always minimal.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace loupe::detail::protobuf {

enum wire_type : std::uint32_t { varint_wire = 0, fixed64_wire = 1, length_wire = 2 };

inline void append_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>(static_cast<unsigned char>(v) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

inline void append_tag(std::string& out, std::uint32_t field, wire_type type) {
    append_varint(out, (static_cast<std::uint64_t>(field) << 3) | type);
}

/// uint32/uint64/int32/int64 (non-negative)/bool/enum field.
inline void append_uint(std::string& out, std::uint32_t field, std::uint64_t v) {
    append_tag(out, field, varint_wire);
    append_varint(out, v);
}

/// int64 field (two's complement, as protobuf's int64 encodes negatives).
inline void append_int(std::string& out, std::uint32_t field, std::int64_t v) {
    append_uint(out, field, static_cast<std::uint64_t>(v));
}

/// double field.
inline void append_double(std::string& out, std::uint32_t field, double v) {
    append_tag(out, field, fixed64_wire);
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) out += static_cast<char>(static_cast<unsigned char>(bits >> (8 * i)));
}

/// fixed64 field.
inline void append_fixed64(std::string& out, std::uint32_t field, std::uint64_t v) {
    append_tag(out, field, fixed64_wire);
    for (int i = 0; i < 8; ++i) out += static_cast<char>(static_cast<unsigned char>(v >> (8 * i)));
}

/// string/bytes field. The caller makes `s` valid UTF-8 for string fields.
inline void append_bytes(std::string& out, std::uint32_t field, std::string_view s) {
    append_tag(out, field, length_wire);
    append_varint(out, s.size());
    out.append(s.data(), s.size());
}

/// Opens a nested message field; returns the position to pass to `close`.
inline std::size_t open(std::string& out, std::uint32_t field) {
    append_tag(out, field, length_wire);
    const std::size_t at = out.size();
    out += '\0';
    return at;
}

/// Closes the nested message opened at `at`: writes its length there.
inline void close(std::string& out, std::size_t at) {
    const std::size_t n = out.size() - at - 1;
    if (n < 0x80) {
        out[at] = static_cast<char>(n);
        return;
    }
    std::string length;
    append_varint(length, n);
    out[at] = length[0];
    out.insert(at + 1, length, 1, std::string::npos);
}

}  // namespace loupe::detail::protobuf
