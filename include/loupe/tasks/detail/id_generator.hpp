// The generator behind new_trace_id() and new_span_id() (task_context.hpp):
// a keyed bijection of a counter. The counter is unique in the process
// (threads take disjoint blocks of 4096 from one atomic), so two ids of the
// process never repeat; the 128-bit key comes from the kernel's random bytes
// (getrandom, mixed with the pid, both clocks and an address), so ids of
// different processes look independent. A forked child forgets the key
// (pthread_atfork) and draws a new one at its next id: parent and child
// continue from the same counters under different keys.
//
// Not a cryptographic generator: ids are unguessable only as far as 128
// random key bits mixed by splitmix64's finalizer make them. That is what
// W3C Trace Context asks of ids (unique, random-looking), not what a secret
// needs.
#pragma once

#include <atomic>
#include <cstdint>

#include "loupe/base/clock.hpp"
#include "loupe/base/config.hpp"

#if LOUPE_OS_POSIX
#include <pthread.h>
#include <unistd.h>
#endif
#if LOUPE_OS_LINUX
#include <sys/random.h>
#include <sys/types.h>
#endif

namespace loupe::tasks::detail {

/// splitmix64's finalizer: a bijection on 64-bit words that spreads every
/// input bit over the output.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// The process's key, both halves non-zero once made (0: not made yet, or
/// forgotten by a forked child). Plain atomics, not a function-local static:
/// a fork() during a static's initialisation would leave its guard taken in
/// the child.
LOUPE_API inline std::atomic<std::uint64_t> g_id_key[2] = {};

/// The first counter of the next block a thread takes.
LOUPE_API inline std::atomic<std::uint64_t> g_id_next{0};

/// A thread's counters [next, end).
struct id_block {
    std::uint64_t next = 0;
    std::uint64_t end = 0;
};
LOUPE_API inline thread_local id_block t_id_block;
inline constexpr std::uint64_t id_block_size = 4096;

#if LOUPE_OS_POSIX
/// The child's fork handler: the next id draws a new key.
inline void forget_id_key_in_child() noexcept {
    g_id_key[0].store(0, std::memory_order_relaxed);
    g_id_key[1].store(0, std::memory_order_relaxed);
}
#endif

/// Whether forget_id_key_in_child is registered with pthread_atfork: by the
/// process's first key, so a program that makes no id registers nothing. An
/// atomic flag, unlike pthread_once, cannot be left half done by a fork.
LOUPE_API inline std::atomic<bool> g_id_fork_handler_registered{false};

struct id_key {
    std::uint64_t k0, k1;
};

/// Makes the process's key (threads that race agree: per half, the first
/// published stands) and returns it.
LOUPE_NOINLINE inline id_key make_id_key() noexcept {
#if LOUPE_OS_POSIX
    if (!g_id_fork_handler_registered.exchange(true, std::memory_order_acq_rel)) {
        pthread_atfork(nullptr, nullptr, &forget_id_key_in_child);
    }
#endif
    std::uint64_t k[2] = {0, 0};
#if LOUPE_OS_LINUX
    // Never blocks (GRND_NONBLOCK): early in boot the clocks below stand in.
    if (getrandom(k, sizeof k, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof k)) k[0] = k[1] = 0;
#endif
    std::uint64_t t = mix64(loupe::detail::steady_ns() ^ reinterpret_cast<std::uintptr_t>(&k));
    t = mix64(t ^ loupe::detail::wall_ns());
#if LOUPE_OS_POSIX
    t = mix64(t ^ static_cast<std::uint64_t>(::getpid()));
#endif
    const std::uint64_t mine[2] = {(k[0] ^ t) | 1, (k[1] ^ mix64(t + 0x9E3779B97F4A7C15ull)) | 1};
    for (int i = 0; i < 2; ++i) {
        std::uint64_t none = 0;
        g_id_key[i].compare_exchange_strong(none, mine[i], std::memory_order_relaxed);
    }
    return id_key{g_id_key[0].load(std::memory_order_relaxed), g_id_key[1].load(std::memory_order_relaxed)};
}

inline id_key current_id_key() noexcept {
    const id_key k{g_id_key[0].load(std::memory_order_relaxed), g_id_key[1].load(std::memory_order_relaxed)};
    if (LOUPE_LIKELY(k.k0 != 0 && k.k1 != 0)) return k;
    return make_id_key();
}

LOUPE_NOINLINE inline void refill_id_block(id_block& block) noexcept {
    block.next = g_id_next.fetch_add(id_block_size, std::memory_order_relaxed);
    block.end = block.next + id_block_size;
}

/// A counter no other call in this process has had (2^64 before one repeats).
inline std::uint64_t next_id_counter() noexcept {
    id_block& block = t_id_block;
    if (LOUPE_UNLIKELY(block.next == block.end)) refill_id_block(block);
    return block.next++;
}

/// Three bijections of the counter under the key (each composed of
/// bijections: xor or add of a constant, mix64), so within one key distinct
/// counters give distinct words for each.
constexpr std::uint64_t span_word(std::uint64_t c, const id_key& k) noexcept { return mix64(mix64(c ^ k.k0) + k.k1); }
constexpr std::uint64_t trace_high_word(std::uint64_t c, const id_key& k) noexcept {
    return mix64(mix64(c + k.k1) ^ k.k0);
}
constexpr std::uint64_t trace_low_word(std::uint64_t c, const id_key& k) noexcept {
    return mix64(mix64(c ^ (k.k0 + k.k1)) + 0x9E3779B97F4A7C15ull);
}

}  // namespace loupe::tasks::detail
