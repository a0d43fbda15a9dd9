// Pieces the compile-time chains (params/chain.hpp) and the runtime chains
// (runtime_chain_steps.hpp, runtime_chain_binder.hpp) share, so both give
// the same value for the same input: type names, the keyed hash of `hash`,
// and the index rule of `at(i)`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <typeinfo>

#include "loupe/base/clock.hpp"
#include "loupe/base/config.hpp"

#if LOUPE_OS_LINUX
#    include <sys/random.h>
#    include <sys/types.h>
#endif

#if __has_include(<cxxabi.h>)
#    include <cxxabi.h>
#    define LOUPE_HAS_CXXABI 1
#else
#    define LOUPE_HAS_CXXABI 0
#endif

namespace loupe::detail {

/// The readable name of a type ("shop::Item"), demangled where the ABI
/// allows, else the implementation's name. Slow (allocates): bind time or
/// behind a per-type cache only.
inline std::string demangle(const std::type_info& t) {
#if LOUPE_HAS_CXXABI
    int status = 0;
    char* s = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
    if (status == 0 && s != nullptr) {
        std::string out(s);
        std::free(s);
        return out;
    }
    std::free(s);
#endif
    return t.name();
}

/// The process's 128-bit key for `hash` values: random per process, so a
/// hashed secret can be compared within one trace but not looked up in a
/// table built elsewhere.
struct hash_key {
    std::uint64_t k0, k1;
};

/// The key's two halves once made (0: not yet). Not a function-local
/// static: a fork() while another thread is inside its initialisation would
/// leave the guard taken in the child.
LOUPE_API inline std::atomic<std::uint64_t> g_process_hash_key[2] = {};

LOUPE_NOINLINE inline hash_key make_process_hash_key() noexcept {
    hash_key k{0, 0};
#if LOUPE_OS_LINUX
    // The kernel's random bytes (what std::random_device reads here),
    // without <random>'s 10,000 lines in every file with a method site.
    if (getrandom(&k, sizeof k, 0) != static_cast<ssize_t>(sizeof k)) k = hash_key{0, 0};
#endif
    // Mixed with the clocks and an address either way: never a fixed key.
    const std::uint64_t t = steady_ns() ^ wall_ns() ^ reinterpret_cast<std::uintptr_t>(&k);
    const std::uint64_t mine[2] = {(k.k0 ^ t) | 1, (k.k1 ^ (t * 0x9E3779B97F4A7C15ull)) | 1};
    // Threads that race here each made a key; per half, the first one
    // published stands, so every thread ends with the same key.
    for (int i = 0; i < 2; ++i) {
        std::uint64_t none = 0;
        g_process_hash_key[i].compare_exchange_strong(none, mine[i], std::memory_order_relaxed);
    }
    return hash_key{g_process_hash_key[0].load(std::memory_order_relaxed),
                    g_process_hash_key[1].load(std::memory_order_relaxed)};
}

/// The process's key, made on first use. Any thread; never blocks.
inline hash_key process_hash_key() noexcept {
    const hash_key k{g_process_hash_key[0].load(std::memory_order_relaxed),
                     g_process_hash_key[1].load(std::memory_order_relaxed)};
    if (LOUPE_LIKELY(k.k0 != 0 && k.k1 != 0)) return k;
    return make_process_hash_key();
}

/// SipHash-2-4 of `n` bytes at `data` under `key`.
inline std::uint64_t siphash24(const void* data, std::size_t n, const hash_key& key) noexcept {
    auto rotl = [](std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); };
    std::uint64_t v0 = 0x736f6d6570736575ull ^ key.k0, v1 = 0x646f72616e646f6dull ^ key.k1;
    std::uint64_t v2 = 0x6c7967656e657261ull ^ key.k0, v3 = 0x7465646279746573ull ^ key.k1;
    auto round = [&] {
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
    };
    const auto* p = static_cast<const unsigned char*>(data);
    const std::size_t whole = n & ~std::size_t{7};
    for (std::size_t i = 0; i < whole; i += 8) {
        std::uint64_t m;
        std::memcpy(&m, p + i, 8);  // little-endian hosts (x86-64, aarch64): the reference byte order
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
    std::uint64_t last = static_cast<std::uint64_t>(n) << 56;
    for (std::size_t i = 0; i < (n & 7); ++i) last |= std::uint64_t{p[whole + i]} << (8 * i);
    v3 ^= last;
    round();
    round();
    v0 ^= last;
    v2 ^= 0xff;
    round();
    round();
    round();
    round();
    return v0 ^ v1 ^ v2 ^ v3;
}

/// The keyed hash `hash` records for `n` bytes.
inline std::uint64_t keyed_hash(const void* data, std::size_t n) noexcept {
    return siphash24(data, n, process_hash_key());
}

/// The position `at(index)` reads in a sequence of `size` elements: index
/// ≥ 0 counts from the front, < 0 from the back (−1 is the last). False when
/// out of range (including INT64_MIN, without overflow).
constexpr bool resolve_index(std::int64_t index, std::size_t size, std::size_t& position) noexcept {
    if (index >= 0) {
        if (static_cast<std::uint64_t>(index) >= size) return false;
        position = static_cast<std::size_t>(index);
        return true;
    }
    // -index without overflow: -(index + 1) + 1
    const std::uint64_t back = static_cast<std::uint64_t>(-(index + 1)) + 1;
    if (back > size) return false;
    position = size - static_cast<std::size_t>(back);
    return true;
}

}  // namespace loupe::detail
