// std::memmove for the short runs of bytes the method path copies on every
// recorded call (a parameter's text, a call's encoded values): up to 64
// bytes inline, without the call into the C library and its size dispatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "loupe/base/config.hpp"

namespace loupe::detail {

/// Copies `n` bytes, sizeof(Chunk) <= n <= 2 * sizeof(Chunk), as a first and
/// a last chunk (they overlap when n is below twice the chunk); both loads
/// come before the stores, so the ranges may overlap.
template <class Chunk>
LOUPE_ALWAYS_INLINE void move_ends(unsigned char* d, const unsigned char* s, std::size_t n) noexcept {
    Chunk a, b;
    std::memcpy(&a, s, sizeof a);
    std::memcpy(&b, s + n - sizeof b, sizeof b);
    std::memcpy(d, &a, sizeof a);
    std::memcpy(d + n - sizeof b, &b, sizeof b);
}

/// Copies `n` bytes from `src` to `dst`; the ranges may overlap (every load
/// happens before the first store). Longer runs go to std::memmove.
LOUPE_ALWAYS_INLINE void short_move(void* dst, const void* src, std::size_t n) noexcept {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    struct chunk16 {
        std::uint64_t w[2];
    };
    struct chunk32 {
        chunk16 h[2];
    };
    if (n > 64) {
        std::memmove(d, s, n);
    } else if (n > 32) {
        move_ends<chunk32>(d, s, n);
    } else if (n > 16) {
        move_ends<chunk16>(d, s, n);
    } else if (n >= 8) {
        move_ends<std::uint64_t>(d, s, n);
    } else if (n >= 4) {
        move_ends<std::uint32_t>(d, s, n);
    } else if (n != 0) {
        const unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

}  // namespace loupe::detail
