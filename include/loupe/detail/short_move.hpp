// std::memmove for the short runs of bytes the method path copies on every
// recorded call (a parameter's text, a call's encoded values): up to 64
// bytes inline, without the call into the C library and its size dispatch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "loupe/config.hpp"

namespace loupe::detail {

/// Copies `n` bytes from `src` to `dst`; the ranges may overlap (every load
/// happens before the first store). Longer runs go to std::memmove.
LOUPE_ALWAYS_INLINE void short_move(void* dst, const void* src, std::size_t n) noexcept {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    struct chunk {
        std::uint64_t w[2];
    };
    if (n > 64) {
        std::memmove(d, s, n);
    } else if (n > 32) {  // four 16-byte chunks, the last two aligned to the end
        chunk a, b, c, e;
        std::memcpy(&a, s, 16);
        std::memcpy(&b, s + 16, 16);
        std::memcpy(&c, s + n - 32, 16);
        std::memcpy(&e, s + n - 16, 16);
        std::memcpy(d, &a, 16);
        std::memcpy(d + 16, &b, 16);
        std::memcpy(d + n - 32, &c, 16);
        std::memcpy(d + n - 16, &e, 16);
    } else if (n > 16) {
        chunk a, b;
        std::memcpy(&a, s, 16);
        std::memcpy(&b, s + n - 16, 16);
        std::memcpy(d, &a, 16);
        std::memcpy(d + n - 16, &b, 16);
    } else if (n >= 8) {
        std::uint64_t a, b;
        std::memcpy(&a, s, 8);
        std::memcpy(&b, s + n - 8, 8);
        std::memcpy(d, &a, 8);
        std::memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        std::uint32_t a, b;
        std::memcpy(&a, s, 4);
        std::memcpy(&b, s + n - 4, 4);
        std::memcpy(d, &a, 4);
        std::memcpy(d + n - 4, &b, 4);
    } else if (n != 0) {
        const unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

}  // namespace loupe::detail
