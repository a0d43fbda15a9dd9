// A small, fast zlib-format compressor (RFC 1950 around RFC 1951 deflate),
// for the Perfetto writer's compressed packets; and the same deflate stream
// in gzip framing (RFC 1952) for OTLP/HTTP bodies (gzip_compress). Written for this job rather
// than pulling zlib into a header-only core.
//
// Greedy LZ77 over a 32 KiB window with a one-entry-per-bucket hash of the
// next four bytes (the scheme of LZ4 and zlib's fastest level), coded with
// deflate's fixed Huffman tables in one final block. Trace packets repeat
// the same field tags and interned ids over and over, which this captures;
// what it leaves on the table against zlib -6 is a few tens of percent.
//
// Cost: about 1–3 ns per input byte; output at most in.size() * 9/8 + 16.
// Thread-safety: pure function (the code tables are immutable statics).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace loupe::detail::deflate {

namespace tables {

// Length symbols 257..285: base length and extra bits.
constexpr std::uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                           31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
// Distance codes 0..29: base distance and extra bits.
constexpr std::uint16_t distance_base[30] = {1,   2,   3,   4,   5,    7,    9,    13,   17,   25,
                                             33,  49,  65,  97,  129,  193,  257,  385,  513,  769,
                                             1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::uint8_t distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

inline std::uint32_t reverse_bits(std::uint32_t code, unsigned length) {
    std::uint32_t r = 0;
    for (unsigned i = 0; i < length; ++i) r |= ((code >> i) & 1u) << (length - 1 - i);
    return r;
}

// Everything the encoder looks up, precomputed once: each symbol's fixed
// Huffman code already bit-reversed (deflate sends codes MSB first into an
// LSB-first bit stream), and per length / distance the symbol and extras
// combined into one (bits, count) pair.
struct code_tables {
    std::uint32_t literal_bits[286];
    std::uint8_t literal_count[286];
    std::uint32_t length_bits[259];  // by match length 3..258: symbol code + extra bits
    std::uint8_t length_count[259];
    std::uint8_t distance_code[32769];  // by distance 1..32768
    std::uint32_t distance_bits[30];    // code d, bit-reversed (5 bits)

    code_tables() {
        for (unsigned s = 0; s < 286; ++s) {
            unsigned len, code;
            if (s < 144) len = 8, code = 0x30 + s;
            else if (s < 256) len = 9, code = 0x190 + (s - 144);
            else if (s < 280) len = 7, code = s - 256;
            else len = 8, code = 0xc0 + (s - 280);
            literal_bits[s] = reverse_bits(code, len);
            literal_count[s] = static_cast<std::uint8_t>(len);
        }
        for (unsigned length = 3; length <= 258; ++length) {
            unsigned i = 28;
            while (length_base[i] > length) --i;
            const unsigned symbol = 257 + i;
            length_bits[length] = literal_bits[symbol] | ((length - length_base[i]) << literal_count[symbol]);
            length_count[length] = static_cast<std::uint8_t>(literal_count[symbol] + length_extra[i]);
        }
        for (unsigned d = 1; d <= 32768; ++d) {
            unsigned i = 29;
            while (distance_base[i] > d) --i;
            distance_code[d] = static_cast<std::uint8_t>(i);
        }
        for (unsigned d = 0; d < 30; ++d) distance_bits[d] = reverse_bits(d, 5);
    }
};

inline const code_tables& codes() {
    static const code_tables t;
    return t;
}

}  // namespace tables

// LSB-first bit packing into a buffer the caller sized for the worst case.
class bit_writer {
public:
    explicit bit_writer(unsigned char* out) : out_(out) {}
    void put(std::uint64_t bits, unsigned count) {
        acc_ |= bits << filled_;
        filled_ += count;
        if (filled_ >= 32) {
            const std::uint32_t word = static_cast<std::uint32_t>(acc_);
            for (int i = 0; i < 4; ++i) out_[i] = static_cast<unsigned char>(word >> (8 * i));
            out_ += 4;
            acc_ >>= 32;
            filled_ -= 32;
        }
    }
    /// Pads to a byte boundary, writes what is left; returns the end.
    unsigned char* finish() {
        while (filled_ > 0) {
            *out_++ = static_cast<unsigned char>(acc_);
            acc_ >>= 8;
            filled_ = filled_ >= 8 ? filled_ - 8 : 0;
        }
        return out_;
    }

private:
    unsigned char* out_;
    std::uint64_t acc_ = 0;
    unsigned filled_ = 0;
};

inline std::uint32_t adler32(std::string_view data) {
    std::uint32_t a = 1, b = 0;
    std::size_t i = 0;
    while (i < data.size()) {
        const std::size_t chunk_end = i + 5552 < data.size() ? i + 5552 : data.size();  // no overflow before the modulo
        for (; i < chunk_end; ++i) {
            a += static_cast<unsigned char>(data[i]);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return (b << 16) | a;
}

/// The hash table zlib_compress uses, kept between calls by a caller that
/// compresses many buffers (it is cleared, not reallocated, per call).
using match_table = std::vector<std::uint32_t>;

/// Length of the common prefix of `a` and `b`, up to `limit` bytes.
inline std::size_t common_prefix(const unsigned char* a, const unsigned char* b, std::size_t limit) {
    std::size_t n = 0;
    while (n + 8 <= limit) {
        std::uint64_t x, y;
        std::memcpy(&x, a + n, 8);
        std::memcpy(&y, b + n, 8);
        if (x != y) return n + static_cast<std::size_t>(__builtin_ctzll(x ^ y) / 8);  // little-endian
        n += 8;
    }
    while (n < limit && a[n] == b[n]) ++n;
    return n;
}

/// Appends the raw deflate stream (RFC 1951, no wrapper) of `in` (less
/// than 4 GiB) to `out`, as one final fixed-Huffman block; `head` is
/// scratch space (see match_table). The body of zlib_compress's stream,
/// and of a gzip member's.
inline void deflate_raw(std::string_view in, std::string& out, match_table& head) {
    const tables::code_tables& t = tables::codes();
    constexpr unsigned hash_bits = 15;
    constexpr std::size_t window = 32768, min_match = 4, max_match = 258;
    head.assign(std::size_t{1} << hash_bits, 0);  // position + 1; 0 = empty
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    const std::size_t n = in.size();

    // Worst case: every byte a 9-bit literal, plus block header and end code.
    const std::size_t start = out.size();
    out.resize(start + n + n / 8 + 16);
    auto* o = reinterpret_cast<unsigned char*>(&out[start]);
    bit_writer bits(o);
    bits.put(1, 1);  // BFINAL
    bits.put(1, 2);  // BTYPE 01: fixed Huffman codes

    auto hash_at = [&](std::size_t i) {
        std::uint32_t v;
        std::memcpy(&v, p + i, 4);
        return (v * 2654435761u) >> (32 - hash_bits);
    };
    std::size_t i = 0;
    while (i + min_match <= n) {
        const std::uint32_t h = hash_at(i);
        const std::size_t candidate = head[h];
        head[h] = static_cast<std::uint32_t>(i + 1);
        if (candidate != 0 && i - (candidate - 1) <= window && std::memcmp(p + candidate - 1, p + i, min_match) == 0) {
            const std::size_t from = candidate - 1;
            const std::size_t limit = n - i < max_match ? n - i : max_match;
            const std::size_t length = min_match + common_prefix(p + from + min_match, p + i + min_match, limit - min_match);
            const std::size_t distance = i - from;
            bits.put(t.length_bits[length], t.length_count[length]);
            const unsigned code = t.distance_code[distance];
            bits.put(t.distance_bits[code] | ((distance - tables::distance_base[code]) << 5),
                     5 + tables::distance_extra[code]);
            // Remember the match's last positions too: the next packet's
            // fields often repeat from there.
            if (i + length + min_match <= n) {
                for (std::size_t k = i + length - 2; k < i + length; ++k) head[hash_at(k)] = static_cast<std::uint32_t>(k + 1);
            }
            i += length;
        } else {
            bits.put(t.literal_bits[p[i]], t.literal_count[p[i]]);
            ++i;
        }
    }
    for (; i < n; ++i) bits.put(t.literal_bits[p[i]], t.literal_count[p[i]]);
    bits.put(t.literal_bits[256], t.literal_count[256]);  // end of block
    o = bits.finish();
    out.resize(static_cast<std::size_t>(o - reinterpret_cast<unsigned char*>(&out[0])));
}

/// Appends the zlib stream of `in` (less than 4 GiB) to `out`; `head` is
/// scratch space (see match_table).
inline void zlib_compress(std::string_view in, std::string& out, match_table& head) {
    out.push_back(static_cast<char>(0x78));  // deflate, 32 KiB window
    out.push_back(static_cast<char>(0x01));  // no dictionary, fastest level; (0x7801 % 31 == 0)
    deflate_raw(in, out, head);
    const std::uint32_t check = adler32(in);
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>(static_cast<unsigned char>(check >> s)));
}

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of `data`, as
/// gzip and zlib's crc32() compute it. Slicing by 8 (eight 1 KiB tables,
/// eight bytes per step): under 1 ns per byte.
inline std::uint32_t crc32(std::string_view data) {
    using tables_type = std::array<std::array<std::uint32_t, 256>, 8>;
    static const tables_type table = [] {
        tables_type t{};
        for (std::uint32_t n = 0; n < 256; ++n) {
            std::uint32_t c = n;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[0][n] = c;
        }
        for (std::uint32_t n = 0; n < 256; ++n) {
            for (int k = 1; k < 8; ++k) t[k][n] = (t[k - 1][n] >> 8) ^ t[0][t[k - 1][n] & 0xFFu];
        }
        return t;
    }();
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t n = data.size();
    std::uint32_t c = 0xFFFFFFFFu;
    for (; n >= 8; p += 8, n -= 8) {
        const std::uint32_t lo = c ^ (std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
                                      std::uint32_t{p[3]} << 24);
        c = table[7][lo & 0xFFu] ^ table[6][(lo >> 8) & 0xFFu] ^ table[5][(lo >> 16) & 0xFFu] ^ table[4][lo >> 24] ^
            table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
    }
    for (; n > 0; ++p, --n) c = table[0][(c ^ *p) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/// Appends one gzip member (RFC 1952) holding `in` (less than 4 GiB) to
/// `out`: a 10-byte header, the raw deflate stream, the CRC-32 of `in` and
/// its size, little-endian; `head` is scratch space (see match_table).
inline void gzip_compress(std::string_view in, std::string& out, match_table& head) {
    // ID1 ID2, CM = deflate, FLG = 0, MTIME = 0 (none), XFL = 4 (fastest), OS = 255 (unknown).
    static constexpr unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255};
    out.append(reinterpret_cast<const char*>(header), sizeof header);
    deflate_raw(in, out, head);
    const std::uint32_t crc = crc32(in);
    const auto size = static_cast<std::uint32_t>(in.size());
    for (int s = 0; s < 32; s += 8) out.push_back(static_cast<char>(static_cast<unsigned char>(crc >> s)));
    for (int s = 0; s < 32; s += 8) out.push_back(static_cast<char>(static_cast<unsigned char>(size >> s)));
}

/// Appends the zlib stream of `in` (less than 4 GiB) to `out`.
inline void zlib_compress(std::string_view in, std::string& out) {
    match_table head;
    zlib_compress(in, out, head);
}

}  // namespace loupe::detail::deflate
