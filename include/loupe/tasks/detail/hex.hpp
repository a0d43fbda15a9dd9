// Lowercase hex as W3C Trace Context writes it: the table the parsers decode
// with and the writer the formatters use. Shared by traceparent.hpp and
// in_band_token.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace loupe::tasks::detail {

/// What one byte is as a hex digit: its value (0..15) for 0-9 and a-f,
/// `hex_upper` for A-F (a hex digit the spec does not allow), `hex_other`
/// for anything else.
inline constexpr std::uint8_t hex_upper = 0x40;
inline constexpr std::uint8_t hex_other = 0x80;

inline constexpr std::array<std::uint8_t, 256> hex_table = [] {
    std::array<std::uint8_t, 256> t{};
    for (auto& v : t) v = hex_other;
    for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
    for (int c = 'A'; c <= 'F'; ++c) t[static_cast<std::size_t>(c)] = hex_upper;
    return t;
}();

constexpr std::uint8_t hex_class(char c) noexcept { return hex_table[static_cast<unsigned char>(c)]; }

/// Eight characters at a time, as one 64-bit word (SWAR), where the byte
/// order is known: the ids are 16 and 32 digits, and a byte at a time is a
/// chain of 50 dependent shifts.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LOUPE_TASKS_SWAR_HEX 1
#else
#define LOUPE_TASKS_SWAR_HEX 0
#endif

#if LOUPE_TASKS_SWAR_HEX
inline constexpr std::uint64_t bytes_01 = 0x0101010101010101ull;
inline constexpr std::uint64_t bytes_80 = 0x8080808080808080ull;

/// The high bit of each byte of `x` (all below 0x80) set where the byte is
/// at least `c` (at most 0x80).
constexpr std::uint64_t bytes_at_least(std::uint64_t x, std::uint64_t c) noexcept {
    return ((x | bytes_80) - c * bytes_01) & bytes_80;
}

/// The 8 characters at `p` as 32 bits, first character highest; false when
/// one is not a lowercase hex digit.
inline bool decode_hex8(const char* p, std::uint32_t& out) noexcept {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    x = __builtin_bswap64(x);  // the first character in the top byte
    const std::uint64_t digit = bytes_at_least(x, 0x30) & ~bytes_at_least(x, 0x3a);
    const std::uint64_t lower = bytes_at_least(x, 0x61) & ~bytes_at_least(x, 0x67);
    if (((digit | lower) & ~x & bytes_80) != bytes_80) return false;
    const std::uint64_t v = (x & 0x0f0f0f0f0f0f0f0full) + 9 * ((x >> 6) & bytes_01);  // one nibble a byte
    const std::uint64_t pairs = (v | (v >> 4)) & 0x00ff00ff00ff00ffull;
    const std::uint64_t quads = (pairs | (pairs >> 8)) & 0x0000ffff0000ffffull;
    out = static_cast<std::uint32_t>(quads | (quads >> 16));
    return true;
}

/// `v` as 8 lowercase hex digits at `out`.
inline void encode_hex8(std::uint32_t v, char* out) noexcept {
    const std::uint64_t x = v;
    const std::uint64_t quads = (x | (x << 16)) & 0x0000ffff0000ffffull;
    const std::uint64_t pairs = (quads | (quads << 8)) & 0x00ff00ff00ff00ffull;
    const std::uint64_t nibbles = (pairs | (pairs << 4)) & 0x0f0f0f0f0f0f0f0full;
    const std::uint64_t letters = ((nibbles + 0x0606060606060606ull) >> 4) & bytes_01;  // nibbles of 10 and more
    const std::uint64_t text = __builtin_bswap64(nibbles + 0x3030303030303030ull + letters * 0x27);
    std::memcpy(out, &text, 8);
}
#endif

/// Decodes the `n` (1..16) hex digits at `p` into `out`. Returns the index
/// (0..n-1) of the first character that is not a lowercase hex digit, or
/// `n` when all are. `p` must hold `n` readable characters.
inline std::size_t decode_hex(const char* p, std::size_t n, std::uint64_t& out) noexcept {
#if LOUPE_TASKS_SWAR_HEX
    std::uint32_t hi, lo;
    if (n == 16 && decode_hex8(p, hi) && decode_hex8(p + 8, lo)) {
        out = static_cast<std::uint64_t>(hi) << 32 | lo;
        return n;
    }
#endif
    std::uint64_t v = 0;
    std::uint8_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t d = hex_class(p[i]);
        bad = static_cast<std::uint8_t>(bad | d);
        v = v << 4 | (d & 15u);
    }
    out = v;
    if (bad < 16) return n;
    for (std::size_t i = 0; i < n; ++i) {
        if (hex_class(p[i]) >= 16) return i;
    }
    return n;  // unreachable: some digit was bad
}

/// Sixteen characters at once in a 128-bit vector (GCC ≥ 12 and clang have
/// __builtin_shufflevector; no intrinsics header needed): each byte of `v`
/// spread over two lanes, a nibble each, then turned into its digit.
#if LOUPE_TASKS_SWAR_HEX && (defined(__clang__) || __GNUC__ >= 12) && (defined(__SSE2__) || defined(__ARM_NEON))
#define LOUPE_TASKS_VECTOR_HEX 1
typedef unsigned char hex_lanes __attribute__((vector_size(16)));
typedef unsigned long long hex_words __attribute__((vector_size(16)));

/// `v` as 16 lowercase hex digits at `out`.
inline void encode_hex16(std::uint64_t v, char* out) noexcept {
    const hex_words first_high = {__builtin_bswap64(v), 0};  // the first digit's byte first
    const hex_lanes bytes = reinterpret_cast<hex_lanes>(first_high);
    const hex_lanes twice = __builtin_shufflevector(bytes, bytes, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    const hex_lanes even = {0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0};
    const hex_lanes nibbles = ((twice >> 4) & even) | (twice & 15 & ~even);
    const hex_lanes digits = nibbles + '0' + ((nibbles > 9) & ('a' - '0' - 10));
    std::memcpy(out, &digits, 16);
}
#else
#define LOUPE_TASKS_VECTOR_HEX 0
#endif

/// Writes `v` as `n` (1..16) lowercase hex digits at `out`.
inline void encode_hex(std::uint64_t v, std::size_t n, char* out) noexcept {
#if LOUPE_TASKS_VECTOR_HEX
    if (n == 16) {
        encode_hex16(v, out);
        return;
    }
#elif LOUPE_TASKS_SWAR_HEX
    if (n == 16) {
        encode_hex8(static_cast<std::uint32_t>(v >> 32), out);
        encode_hex8(static_cast<std::uint32_t>(v), out + 8);
        return;
    }
#endif
    constexpr char digits[] = "0123456789abcdef";
    for (std::size_t i = n; i-- > 0; v >>= 4) out[i] = digits[v & 15u];
}

}  // namespace loupe::tasks::detail
