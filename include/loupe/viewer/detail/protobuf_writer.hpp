// A minimal protocol-buffers wire-format writer, enough for the Perfetto
// trace writer (viewer/perfetto.hpp): varint, fixed64 and length-delimited
// fields, and nested messages. No schema, no reflection, no allocation beyond
// the growing output string.
//
// The functions write to any `Out` with push_back(char), append(const char*,
// n), size(), operator[] and insert(pos, const char*, n): std::string, or
// `buffer` below, whose push_back is inline (std::string's is an
// out-of-line library call, which showed at 7% of a conversion profile).
//
// Nested messages are built in place: `open` reserves one length byte and
// `close` fills it in, moving the body only when it turned out to be 128
// bytes or longer (rare for trace packets), so lengths are always minimal.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace loupe::detail::protobuf {

/// A growable byte buffer with inline appends.
class buffer {
public:
    void push_back(char c) {
        if (size_ == bytes_.size()) grow(1);
        bytes_[size_++] = c;
    }
    void append(const char* p, std::size_t n) {
        if (bytes_.size() - size_ < n) grow(n);
        std::memcpy(bytes_.data() + size_, p, n);
        size_ += n;
    }
    void insert(std::size_t pos, const char* p, std::size_t n) {
        if (bytes_.size() - size_ < n) grow(n);
        std::memmove(bytes_.data() + pos + n, bytes_.data() + pos, size_ - pos);
        std::memcpy(bytes_.data() + pos, p, n);
        size_ += n;
    }
    char& operator[](std::size_t i) { return bytes_[i]; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    void clear() noexcept { size_ = 0; }
    void reserve(std::size_t n) {
        if (n > bytes_.size()) bytes_.resize(n);
    }
    std::string_view view() const noexcept { return {bytes_.data(), size_}; }

private:
    void grow(std::size_t n) { bytes_.resize(std::max(2 * bytes_.size(), size_ + n + 256)); }
    std::vector<char> bytes_;
    std::size_t size_ = 0;
};

enum wire_type : std::uint32_t { varint_wire = 0, fixed64_wire = 1, length_wire = 2 };

template <class Out>
void append_varint(Out& out, std::uint64_t v) {
    if (v < 0x80) {  // tags, small ids and most deltas: one byte
        out.push_back(static_cast<char>(v));
        return;
    }
    char buf[10];
    std::size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = static_cast<char>(static_cast<unsigned char>(v) | 0x80);
        v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out.append(buf, n);
}

template <class Out>
void append_tag(Out& out, std::uint32_t field, wire_type type) {
    append_varint(out, (static_cast<std::uint64_t>(field) << 3) | type);
}

/// uint32/uint64/int32/int64 (non-negative)/bool/enum field.
template <class Out>
void append_uint(Out& out, std::uint32_t field, std::uint64_t v) {
    append_tag(out, field, varint_wire);
    append_varint(out, v);
}

/// int64 field (two's complement, as protobuf's int64 encodes negatives).
template <class Out>
void append_int(Out& out, std::uint32_t field, std::int64_t v) {
    append_uint(out, field, static_cast<std::uint64_t>(v));
}

/// fixed64 field.
template <class Out>
void append_fixed64(Out& out, std::uint32_t field, std::uint64_t v) {
    append_tag(out, field, fixed64_wire);
    char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<char>(static_cast<unsigned char>(v >> (8 * i)));
    out.append(le, 8);
}

/// double field.
template <class Out>
void append_double(Out& out, std::uint32_t field, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    append_fixed64(out, field, bits);
}

/// string/bytes field. The caller makes `s` valid UTF-8 for string fields.
template <class Out>
void append_bytes(Out& out, std::uint32_t field, std::string_view s) {
    append_tag(out, field, length_wire);
    append_varint(out, s.size());
    out.append(s.data(), s.size());
}

/// Opens a nested message field; returns the position to pass to `close`.
template <class Out>
std::size_t open(Out& out, std::uint32_t field) {
    append_tag(out, field, length_wire);
    const std::size_t at = out.size();
    out.push_back('\0');
    return at;
}

/// Closes the nested message opened at `at`: writes its length there.
template <class Out>
void close(Out& out, std::size_t at) {
    const std::size_t n = out.size() - at - 1;
    if (n < 0x80) {
        out[at] = static_cast<char>(n);
        return;
    }
    std::string length;
    append_varint(length, n);
    out[at] = length[0];
    out.insert(at + 1, length.data() + 1, length.size() - 1);
}

}  // namespace loupe::detail::protobuf
