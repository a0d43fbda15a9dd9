// Flows: arrows between the points where one piece of work passes from a
// thread to another (an acceptor handing a request to a worker, a task queued
// for a pool, a reply posted back), drawn by ui.perfetto.dev and
// chrome://tracing between the points' slices.
//
//     const std::uint64_t id = loupe::new_flow_id();   // on the acceptor
//     LOUPE_FLOW("queued", id);                        // starts the flow
//     queue.push({request, id});
//     ...
//     auto [request, id] = queue.pop();                // on a worker
//     LOUPE_FLOW_END("dequeued", id);                  // ends it (LOUPE_FLOW continues it)
//
// A flow is its id: every point with the same id belongs to it, in time
// order, on any thread. Ids from new_flow_id() are unique within the process
// and random across processes (64 bits), so a flow id sent along with a
// request to another process links the two processes' traces when they are
// opened together: the same width and role as a W3C trace context's parent
// id (flow_id_text and parse_flow_id carry one in a header). Id 0 is "no
// flow": points with it record nothing.
//
// Cost: as an instant (zone.hpp): one load and a branch when no session
// records flows from this thread; one timestamp and one 32-byte ring write
// when one does. new_flow_id() is a thread-local increment and a few
// multiplies, whether or not anything records.
#pragma once

#include <atomic>
#include <cstdint>

#include "loupe/base/clock.hpp"
#include "loupe/base/config.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/base/flow_id_text.hpp"
#include "loupe/base/site.hpp"

#if LOUPE_OS_POSIX
#    include <pthread.h>
#    include <unistd.h>
#endif

namespace loupe {

namespace detail {

/// splitmix64's finalizer: a bijection on 64-bit words that spreads every
/// input bit over the output.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct flow_id_state {
    std::atomic<std::uint64_t> salt{0};  ///< 0 until first use; differs between processes
    std::atomic<std::uint64_t> next{0};  ///< the first counter of the next block a thread takes
};
LOUPE_API inline flow_id_state g_flow_ids;

/// A thread's counters [next, end): taken from g_flow_ids a block at a
/// time, so threads making ids do not share a cache line.
struct flow_id_block {
    std::uint64_t next = 0;
    std::uint64_t end = 0;
};
LOUPE_API inline thread_local flow_id_block t_flow_ids;
inline constexpr std::uint64_t flow_id_block_size = 4096;

/// A salt for this process: its pid, both clocks and an address (ASLR),
/// mixed. Never 0. Out of line: it runs once per process and per fork.
LOUPE_COLD inline std::uint64_t make_flow_salt() noexcept {
    std::uint64_t x = mix64(wall_ns());
    x = mix64(x ^ steady_ns());
    x = mix64(x ^ reinterpret_cast<std::uintptr_t>(&g_flow_ids));
#if LOUPE_OS_POSIX
    x = mix64(x ^ static_cast<std::uint64_t>(::getpid()));
#endif
    return x | 1;
}

#if LOUPE_OS_POSIX
/// A forked child draws its ids from a salt of its own (its pid differs).
/// The counters go on: blocks the child's threads hold stay disjoint from
/// the blocks it takes later.
inline void reseed_flow_ids_in_child() noexcept {
    g_flow_ids.salt.store(make_flow_salt(), std::memory_order_relaxed);
}
#endif

/// Whether reseed_flow_ids_in_child is registered with pthread_atfork: by the
/// process's first seed, so that files that only instrument (or are compiled
/// out) carry no static initialiser. No loupe lock is held there, and an
/// atomic flag, unlike a function-local static or pthread_once, cannot be
/// left half done by a fork.
LOUPE_API inline std::atomic<bool> g_flow_reseed_registered{false};

inline void register_flow_reseed() noexcept {
#if LOUPE_OS_POSIX
    if (!g_flow_reseed_registered.exchange(true, std::memory_order_acq_rel)) {
        pthread_atfork(nullptr, nullptr, &reseed_flow_ids_in_child);
    }
#endif
}

/// Takes a new block of counters for the calling thread; the first call in
/// the process also seeds the salt (threads that race agree on one: the
/// first compare-exchange wins).
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART void refill_flow_ids(flow_id_block& block) noexcept {
    if (LOUPE_UNLIKELY(g_flow_ids.salt.load(std::memory_order_relaxed) == 0)) {
        std::uint64_t expected = 0;
        g_flow_ids.salt.compare_exchange_strong(expected, make_flow_salt(), std::memory_order_relaxed);
        register_flow_reseed();
    }
    block.next = g_flow_ids.next.fetch_add(flow_id_block_size, std::memory_order_relaxed);
    block.end = block.next + flow_id_block_size;
}
#else
// Compiled by the implementation file alone (base/config.hpp).
void refill_flow_ids(flow_id_block& block) noexcept;
#endif

}  // namespace detail

/// A new flow id: never 0, unique within the process (2^64 ids before one
/// repeats), and from a random-looking sequence that differs between
/// processes (and between a process and its forked children), so ids made by
/// several processes do not collide.
///
/// Cost: a thread-local increment and a bijective 64-bit mix (a few ns);
/// every 4096th call on a thread takes a new block of counters (one relaxed
/// atomic add), the first call in the process also seeds the salt.
/// Thread-safety: any thread.
inline std::uint64_t new_flow_id() noexcept {
    detail::flow_id_block& block = detail::t_flow_ids;
    for (;;) {
        if (LOUPE_UNLIKELY(block.next == block.end)) detail::refill_flow_ids(block);
        // mix64 is a bijection: distinct counters give distinct ids. The one
        // counter that maps to 0 is skipped.
        const std::uint64_t id = detail::mix64(detail::g_flow_ids.salt.load(std::memory_order_relaxed) + block.next++);
        if (LOUPE_LIKELY(id != 0)) return id;
    }
}

/// Records a point of the flow `id` at `where` (a site of kind `flow`: starts
/// or continues the flow; `flow_end`: ends it) on the calling thread, for
/// every session that records flows from it. Id 0, and a site of another
/// kind, record nothing.
///
/// `where` must have static storage duration (see `site`). The macros
/// LOUPE_FLOW and LOUPE_FLOW_END make one.
/// Cost: as `instant`. Thread-safety: any thread.
LOUPE_ALWAYS_INLINE void flow(const site& where, std::uint64_t id) noexcept {
    if (LOUPE_UNLIKELY(detail::g_hot.armed.load(std::memory_order_relaxed) & kinds::flows) &&
        (kind_bit(where.kind) & kinds::flows) != 0 && id != 0) {
        const std::uint64_t sessions = detail::sessions_for(where.kind);
        if (sessions != 0) detail::push(&where, detail::read_ticks(), id, sessions);
    }
}

}  // namespace loupe
