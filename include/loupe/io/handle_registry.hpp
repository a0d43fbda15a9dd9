// The always-on handle registry: what every open descriptor refers to (name
// or path, kind, when and by which thread it was opened), kept whether or
// not a session records, so that a session started late still knows which
// file or socket a read belongs to.
//
// Layout: descriptors 0..capacity-1 live in a two-level array of chunks
// allocated on first use (growth never moves a slot); other values go to a
// small locked overflow map. Each slot has a generation, bumped by every
// open: a close that began before a newer open of the same descriptor (the
// kernel reused it) can never wipe the newer file's metadata, and readers
// copy a slot under a seqlock, so they never see half of an update.
//
// Cost: note_open/close: a few atomic stores and a copy of the name (no
// allocation after the chunk exists); lookup: a copy of the slot.
// Thread-safety: every member may be called from any thread at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#if defined(__linux__)
#    include <unistd.h>
#endif

#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/base/io_types.hpp"
#include "loupe/io/detail/fd_table.hpp"
#if defined(__linux__)
#    include "loupe/io/detail/socket_names.hpp"
#endif

namespace loupe::io {

namespace detail {
/// One counter per process, also across shared libraries (LOUPE_API).
LOUPE_API inline std::atomic<std::uint64_t>& resource_id_counter() noexcept {
    static std::atomic<std::uint64_t> next{0};
    return next;
}
/// Ids a thread hands out without touching the shared counter.
struct resource_id_block {
    static constexpr std::uint64_t size = 4096;
    std::uint64_t next;
    std::uint64_t end;
};
LOUPE_API inline thread_local resource_id_block t_resource_ids;
}  // namespace detail

/// What the registry knows about one open descriptor.
struct handle_info {
    std::string name;                   ///< path, socket peer, "pipe", ...; cut to max_name bytes
    resource_kind kind = resource_kind::unknown;
    std::uint64_t resource_id = 0;      ///< unique per open; kept by dup
    std::uint64_t generation = 0;       ///< bumps on every (re)use of the descriptor
    std::uint64_t open_ticks = 0;       ///< loupe clock ticks at open (0 when backfilled)
    std::uint64_t opener_thread = 0;    ///< OS thread id of the opener (0 when backfilled)
    bool name_truncated = false;
    bool backfilled = false;            ///< learned from /proc/self/fd, not seen opened
};

/// A close in progress: begin_close's view of the slot, given to end_close.
struct close_ticket {
    std::int64_t fd = -1;
    std::uint64_t generation = 0;   ///< 0: the descriptor was not known
    std::uint64_t resource_id = 0;
};

/// Misuse the wrappers saw (never fatal; each is also an error result in
/// the trace when a session records it).
struct registry_anomalies {
    std::uint64_t bad_descriptor = 0;   ///< an op on a negative, closed or never-opened descriptor failed with EBADF
    std::uint64_t overflow_opens = 0;   ///< descriptors at or beyond capacity(), kept in the overflow map
};

class handle_registry {
public:
    static constexpr std::size_t max_name = 247;  ///< bytes of name kept per descriptor
    static constexpr std::size_t chunk_slots = 256;

    /// `capacity` descriptors (rounded up to whole chunks) use the direct array.
    explicit handle_registry(std::size_t capacity = 32768)
        : chunks_count_((capacity + chunk_slots - 1) / chunk_slots), chunks_(new std::atomic<chunk*>[chunks_count_]) {
        for (std::size_t i = 0; i < chunks_count_; ++i) chunks_[i].store(nullptr, std::memory_order_relaxed);
    }
    ~handle_registry() {
        for (std::size_t i = 0; i < chunks_count_; ++i) delete chunks_[i].load(std::memory_order_relaxed);
        delete[] chunks_;
    }
    handle_registry(const handle_registry&) = delete;
    handle_registry& operator=(const handle_registry&) = delete;

    std::size_t capacity() const noexcept { return chunks_count_ * chunk_slots; }

    /// A resource id never handed out before in this process (ids are >= 1).
    /// Cost: a thread-local increment; one shared atomic add per 4096 ids.
    static std::uint64_t new_resource_id() noexcept {
        detail::resource_id_block& block = detail::t_resource_ids;
        if (LOUPE_UNLIKELY(block.next == block.end)) {
            block.next = detail::resource_id_counter().fetch_add(detail::resource_id_block::size) + 1;
            block.end = block.next + detail::resource_id_block::size;
        }
        return block.next++;
    }

    /// `fd` was just opened (the kernel gave it to us, so whatever was there
    /// before is gone): records it and returns its new generation.
    std::uint64_t note_open(std::int64_t fd, std::string_view name, resource_kind kind, std::uint64_t open_ticks,
                            std::uint64_t opener_thread) noexcept {
        return store(fd, name, kind, open_ticks, opener_thread, new_resource_id(), false, nullptr);
    }

    /// `to` now refers to what `from` refers to (dup, dup2, dup3, F_DUPFD).
    /// Unknown `from`: `to` is registered as unknown.
    std::uint64_t note_dup(std::int64_t from, std::int64_t to, std::uint64_t ticks, std::uint64_t thread) noexcept {
        handle_info source;
        // A descriptor opened outside the wrappers is named at this first
        // sight (backfilled), so the copy and the original share its name.
        if (!lookup_or_backfill(from, source)) {
            return store(to, "", resource_kind::unknown, ticks, thread, new_resource_id(), false, nullptr);
        }
        return store(to, source.name, source.kind, source.open_ticks, source.opener_thread, source.resource_id,
                     source.backfilled, nullptr);
    }

    /// Replaces the name of an open descriptor (a socket learns its peer at
    /// connect). The descriptor gets a new resource id, so a session that
    /// was told the old name is told the new one before the next operation.
    /// Ignored when `fd` was reopened since `generation`.
    void note_name(std::int64_t fd, std::uint64_t generation, std::string_view name) noexcept {
        handle_info current;
        if (!lookup(fd, current) || current.generation != generation) return;
        store(fd, name, current.kind, current.open_ticks, current.opener_thread, new_resource_id(),
              current.backfilled, &generation);
    }

    /// Call before the real close(): remembers which generation is closing.
    /// Copies no name.
    close_ticket begin_close(std::int64_t fd) const noexcept {
        close_ticket t;
        t.fd = fd;
        identify(fd, t.generation, t.resource_id);
        return t;
    }

    /// begin_close for every registered descriptor in [first, last] (for
    /// close_range): give each ticket to end_close after the real call.
    std::vector<close_ticket> begin_close_range(std::int64_t first, std::int64_t last) const noexcept {
        std::vector<close_ticket> tickets;
        if (first < 0 || last < first) return tickets;
        try {
            const std::uint64_t end =
                static_cast<std::uint64_t>(last) < capacity() - 1 ? static_cast<std::uint64_t>(last) : capacity() - 1;
            for (std::uint64_t c = static_cast<std::uint64_t>(first) / chunk_slots; c * chunk_slots <= end; ++c) {
                if (chunks_[c].load(std::memory_order_acquire) == nullptr) continue;  // nothing registered there
                const std::uint64_t chunk_first = c * chunk_slots;
                const std::uint64_t chunk_last = chunk_first + chunk_slots - 1;
                const std::uint64_t from = chunk_first > static_cast<std::uint64_t>(first) ? chunk_first
                                                                                         : static_cast<std::uint64_t>(first);
                const std::uint64_t to = chunk_last < end ? chunk_last : end;
                for (std::uint64_t fd = from; fd <= to; ++fd) {
                    close_ticket t = begin_close(static_cast<std::int64_t>(fd));
                    if (t.generation != 0) tickets.push_back(t);
                }
            }
            std::lock_guard<std::mutex> lock(overflow_mutex_);
            for (const auto& [fd, info] : overflow_) {
                if (fd >= first && fd <= last) tickets.push_back({fd, info.generation, info.resource_id});
            }
        } catch (...) {  // out of memory: the rest stay registered (stale names, no crash)
        }
        return tickets;
    }

    /// The generation and resource id `fd` has now, without copying its
    /// name; false (both 0) when the descriptor is unknown. The cheap
    /// lookup that a recorded read or write does.
    bool identify(std::int64_t fd, std::uint64_t& generation, std::uint64_t& resource_id) const noexcept {
        generation = resource_id = 0;
        if (const slot* s = direct(fd, false)) {
            return peek(*s, [&](std::uint64_t state) {
                generation = state >> 2;
                resource_id = s->resource_id.load(std::memory_order_relaxed);
            });
        }
        handle_info info;
        if (!lookup(fd, info)) return false;
        generation = info.generation;
        resource_id = info.resource_id;
        return true;
    }

    /// True when `fd` is registered without a name (a socket before its
    /// peer is known). Copies no name.
    bool is_unnamed(std::int64_t fd) const noexcept {
        if (const slot* s = direct(fd, false)) {
            std::uint64_t flags = 0;
            return peek(*s, [&](std::uint64_t) { flags = s->flags.load(std::memory_order_relaxed); }) &&
                   ((flags >> 16) & 0xffff) == 0;
        }
        handle_info info;
        return lookup(fd, info) && info.name.empty();
    }

    /// Counts an operation that failed with EBADF (see registry_anomalies).
    void note_bad_descriptor() noexcept { bad_descriptor_.fetch_add(1, std::memory_order_relaxed); }
    registry_anomalies anomalies() const noexcept {
        return {bad_descriptor_.load(std::memory_order_relaxed), overflow_opens_.load(std::memory_order_relaxed)};
    }

    /// Call after the real close(): forgets the descriptor unless it was
    /// reopened in between (then the newer metadata stays). Returns whether
    /// the slot was cleared. A failed close (EBADF) clears nothing.
    bool end_close(const close_ticket& t, bool closed) noexcept {
        if (!closed || t.generation == 0) return false;
        if (slot* s = direct(t.fd, false)) {
            std::uint64_t expected = live(t.generation);
            return s->state.compare_exchange_strong(expected, free_state(t.generation), std::memory_order_acq_rel);
        }
        std::lock_guard<std::mutex> lock(overflow_mutex_);
        const handle_info* known = overflow_.find(t.fd);
        if (known == nullptr || known->generation != t.generation) return false;
        return overflow_.erase(t.fd);
    }

    /// Copies what is known about `fd` into `out`; false when nothing is.
    bool lookup(std::int64_t fd, handle_info& out) const noexcept {
        if (const slot* s = direct(fd, false)) return read(*s, out);
        std::lock_guard<std::mutex> lock(overflow_mutex_);
        const handle_info* known = overflow_.find(fd);
        if (known == nullptr) return false;
        try {
            out = *known;
        } catch (...) {
            return false;
        }
        return true;
    }

    /// lookup(), and when `fd` is unknown, learns it from /proc/self/fd
    /// (Linux): descriptors opened before loupe saw them, inherited ones,
    /// or ones opened by code that does not use the wrappers. A connected
    /// socket is named after its peer (io/detail/socket_names.hpp).
    bool lookup_or_backfill(std::int64_t fd, handle_info& out) noexcept {
        if (lookup(fd, out)) return true;
#if defined(__linux__)
        if (fd < 0) return false;
        char link[64];
        std::snprintf(link, sizeof link, "/proc/self/fd/%lld", static_cast<long long>(fd));
        char target[max_name + 1];
        const ssize_t n = ::readlink(link, target, sizeof target - 1);
        if (n <= 0) return false;
        std::string_view name(target, static_cast<std::size_t>(n));
        resource_kind kind = resource_kind::file;
        // A connected socket is named after its peer, as if loupe had seen
        // it connect or be accepted (the kernel's "socket:[inode]" tells a
        // reader nothing); one without a peer keeps the kernel's name.
        char peer[detail::socket_name_capacity];
        if (name.rfind("socket:", 0) == 0) {
            kind = resource_kind::socket;
            const std::size_t named = detail::connected_socket_name(static_cast<int>(fd), peer);
            if (named != 0) name = std::string_view(peer, named);
        }
        if (name.rfind("pipe:", 0) == 0) kind = resource_kind::pipe;
        if (name.rfind("anon_inode:", 0) == 0) kind = resource_kind::other;
        // Only into a free slot: a concurrent real open wins.
        store(fd, name, kind, 0, 0, new_resource_id(), true, nullptr, /*only_if_free=*/true);
        return lookup(fd, out);
#else
        return false;
#endif
    }

    /// fork() (registry_fork_step below): the overflow lock is held across
    /// the fork. In the child, where only the forking thread runs, a slot
    /// that a thread of the parent was writing would stay `writing` for
    /// good (readers and writers of that descriptor would spin): it is
    /// freed, so the child sees that descriptor as unknown (and names it
    /// from /proc/self/fd at its next use).
    void before_fork() noexcept { overflow_mutex_.lock(); }
    void after_fork_in_parent() noexcept { overflow_mutex_.unlock(); }
    void after_fork_in_child() noexcept {
        for (std::size_t c = 0; c < chunks_count_; ++c) {
            chunk* p = chunks_[c].load(std::memory_order_relaxed);
            if (p == nullptr) continue;
            for (slot& s : p->slots) {
                const std::uint64_t state = s.state.load(std::memory_order_relaxed);
                if ((state & 3) == st_writing) s.state.store(free_state(state >> 2), std::memory_order_relaxed);
            }
        }
        overflow_mutex_.unlock();
    }

private:
    // state = generation << 2 | status
    static constexpr std::uint64_t st_free = 0, st_writing = 1, st_live = 2;
    static std::uint64_t live(std::uint64_t g) noexcept { return g << 2 | st_live; }
    static std::uint64_t free_state(std::uint64_t g) noexcept { return g << 2 | st_free; }

    struct slot {
        std::atomic<std::uint64_t> state{0};
        std::atomic<std::uint64_t> resource_id{0};
        std::atomic<std::uint64_t> open_ticks{0};
        std::atomic<std::uint64_t> opener_thread{0};
        std::atomic<std::uint64_t> flags{0};  // kind | truncated << 8 | backfilled << 9 | name length << 16
        std::atomic<std::uint64_t> name_words[(max_name + 7) / 8];
    };
    struct chunk {
        slot slots[chunk_slots];
    };


    slot* direct(std::int64_t fd, bool create) const noexcept {
        if (fd < 0 || static_cast<std::uint64_t>(fd) >= capacity()) return nullptr;
        std::atomic<chunk*>& c = chunks_[static_cast<std::size_t>(fd) / chunk_slots];
        chunk* p = c.load(std::memory_order_acquire);
        if (p == nullptr && create) {
            loupe::detail::internal_allocation_scope internal;  // loupe's memory, not the host's
            chunk* fresh = new (std::nothrow) chunk;
            if (fresh == nullptr) return nullptr;
            if (c.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) {
                p = fresh;
            } else {
                delete fresh;  // another thread won; p holds its chunk
            }
        }
        return p ? &p->slots[static_cast<std::size_t>(fd) % chunk_slots] : nullptr;
    }

    // Writes a slot: free/live(g) -> writing(g+1) -> live(g+1). With
    // `expect_generation`, only if the slot is still live at that generation
    // (or, with only_if_free, free). Returns the new generation (0: skipped).
    std::uint64_t store(std::int64_t fd, std::string_view name, resource_kind kind, std::uint64_t ticks,
                        std::uint64_t thread, std::uint64_t resource, bool backfilled,
                        const std::uint64_t* expect_generation, bool only_if_free = false) noexcept {
        const bool truncated = name.size() > max_name;
        if (truncated) name = name.substr(0, max_name);
        slot* s = direct(fd, true);
        if (s == nullptr) {
            if (fd >= 0 && static_cast<std::uint64_t>(fd) < capacity()) return 0;  // out of memory
            return store_overflow(fd, name, kind, ticks, thread, resource, backfilled, truncated, expect_generation,
                                  only_if_free);
        }
        std::uint64_t old = s->state.load(std::memory_order_relaxed);
        std::uint64_t generation;
        for (;;) {
            if ((old & 3) == st_writing) {  // another writer: wait for it
                old = s->state.load(std::memory_order_relaxed);
                continue;
            }
            if (only_if_free && (old & 3) != st_free) return 0;
            if (!only_if_free && expect_generation && old != live(*expect_generation)) return 0;
            generation = (old >> 2) + 1;
            if (s->state.compare_exchange_weak(old, generation << 2 | st_writing, std::memory_order_acquire)) break;
        }
        s->resource_id.store(resource, std::memory_order_relaxed);
        s->open_ticks.store(ticks, std::memory_order_relaxed);
        s->opener_thread.store(thread, std::memory_order_relaxed);
        s->flags.store(static_cast<std::uint64_t>(kind) | std::uint64_t{truncated} << 8 |
                           std::uint64_t{backfilled} << 9 | std::uint64_t{name.size()} << 16,
                       std::memory_order_relaxed);
        // One copy into a zero-padded buffer, then whole words (fixed-size
        // copies compile to plain moves; a variable tail copy per word would
        // call memcpy each time).
        char padded[max_name + 8];
        std::memcpy(padded, name.data(), name.size());
        std::memset(padded + name.size(), 0, 8);
        for (std::size_t w = 0; w * 8 < name.size(); ++w) {
            std::uint64_t word;
            std::memcpy(&word, padded + w * 8, 8);
            s->name_words[w].store(word, std::memory_order_relaxed);
        }
        s->state.store(live(generation), std::memory_order_release);
        return generation;
    }

    std::uint64_t store_overflow(std::int64_t fd, std::string_view name, resource_kind kind, std::uint64_t ticks,
                                 std::uint64_t thread, std::uint64_t resource, bool backfilled, bool truncated,
                                 const std::uint64_t* expect_generation, bool only_if_free) noexcept {
        loupe::detail::internal_allocation_scope internal;
        try {
            std::lock_guard<std::mutex> lock(overflow_mutex_);
            if (!expect_generation && !only_if_free) overflow_opens_.fetch_add(1, std::memory_order_relaxed);
            const handle_info* known = overflow_.find(fd);
            if (only_if_free && known != nullptr) return 0;
            if (!only_if_free && expect_generation && (known == nullptr || known->generation != *expect_generation)) {
                return 0;
            }
            handle_info& info = overflow_.get_or_add(fd);
            const std::uint64_t generation = ++overflow_generation_;
            info.name.assign(name.data(), name.size());
            info.kind = kind;
            info.resource_id = resource;
            info.generation = generation;
            info.open_ticks = ticks;
            info.opener_thread = thread;
            info.name_truncated = truncated;
            info.backfilled = backfilled;
            return generation;
        } catch (...) {
            return 0;
        }
    }

    // Runs `copy(state)` (relaxed loads of the slot's fields) until it saw
    // one consistent version of a live slot (seqlock); false when free.
    template <class Copy>
    static bool peek(const slot& s, Copy&& copy) noexcept {
        for (;;) {
            const std::uint64_t before = s.state.load(std::memory_order_acquire);
            if ((before & 3) == st_free) return false;
            if ((before & 3) == st_writing) continue;
            copy(before);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (s.state.load(std::memory_order_relaxed) == before) return true;
        }
    }

    static bool read(const slot& s, handle_info& out) noexcept {
        char name[max_name + 8];
        std::uint64_t state = 0, flags = 0, resource = 0, ticks = 0, thread = 0;
        std::size_t length = 0;
        const bool live = peek(s, [&](std::uint64_t seen) {
            state = seen;
            flags = s.flags.load(std::memory_order_relaxed);
            // A torn length is caught by the version check; never copy past the buffer.
            length = static_cast<std::size_t>(flags >> 16) & 0xffff;
            if (length > max_name) length = max_name;
            for (std::size_t w = 0; w * 8 < length; ++w) {
                const std::uint64_t word = s.name_words[w].load(std::memory_order_relaxed);
                std::memcpy(name + w * 8, &word, 8);
            }
            resource = s.resource_id.load(std::memory_order_relaxed);
            ticks = s.open_ticks.load(std::memory_order_relaxed);
            thread = s.opener_thread.load(std::memory_order_relaxed);
        });
        if (!live) return false;
        try {
            out.name.assign(name, length);
        } catch (...) {
            return false;
        }
        out.kind = static_cast<resource_kind>(flags & 0xff);
        out.name_truncated = (flags >> 8) & 1;
        out.backfilled = (flags >> 9) & 1;
        out.resource_id = resource;
        out.generation = state >> 2;
        out.open_ticks = ticks;
        out.opener_thread = thread;
        return true;
    }

    const std::size_t chunks_count_;
    std::atomic<chunk*>* const chunks_;
    mutable std::mutex overflow_mutex_;
    detail::fd_table<handle_info> overflow_;
    std::uint64_t overflow_generation_ = 0;
    std::atomic<std::uint64_t> bad_descriptor_{0};
    std::atomic<std::uint64_t> overflow_opens_{0};
};

namespace detail {
LOUPE_API inline std::atomic<std::size_t>& registry_capacity_setting() noexcept {
    static std::atomic<std::size_t> capacity{32768};
    return capacity;
}
LOUPE_API inline std::atomic<bool>& registry_created() noexcept {
    static std::atomic<bool> created{false};
    return created;
}
}  // namespace detail

namespace detail {
/// The registry once made (null before), and the lock it is made under. Not
/// a function-local static: fork() must be able to wait for a creation in
/// progress (base/fork_hooks.hpp).
LOUPE_API inline std::atomic<handle_registry*> g_registry{nullptr};
LOUPE_API inline std::mutex& registry_creation_mutex() {
    static std::mutex* m = [] {  // never destroyed: used at exit and in fork handlers
        loupe::detail::internal_allocation_scope internal;
        return new std::mutex;
    }();
    return *m;
}
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART handle_registry& create_registry() {
    loupe::detail::internal_allocation_scope internal;
    std::lock_guard<std::mutex> lock(registry_creation_mutex());
    handle_registry* r = g_registry.load(std::memory_order_relaxed);
    if (r == nullptr) {
        registry_created().store(true);
        r = new handle_registry(registry_capacity_setting().load());
        g_registry.store(r, std::memory_order_release);
    }
    return *r;
}
#else
// Compiled by the implementation file alone (base/config.hpp).
handle_registry& create_registry();
#endif
}  // namespace detail

/// The process's handle registry, created on first use and never destroyed
/// (I/O in static destructors still finds it). One instance per process,
/// also across shared libraries (LOUPE_API). Thread-safe.
LOUPE_API inline handle_registry& registry() {
    handle_registry* r = detail::g_registry.load(std::memory_order_acquire);
    if (LOUPE_LIKELY(r != nullptr)) return *r;
    return detail::create_registry();
}

namespace detail {
// fork() (base/fork_hooks.hpp, rank io_registry: after the runtime's and the
// clock's locks, before the metric registry's, which an allocation under the
// overflow lock may take): the creation lock, then the overflow lock.
inline void registry_fork_prepare() noexcept {
    registry_creation_mutex().lock();
    if (handle_registry* r = g_registry.load(std::memory_order_acquire)) r->before_fork();
}
inline void registry_fork_parent() noexcept {
    if (handle_registry* r = g_registry.load(std::memory_order_acquire)) r->after_fork_in_parent();
    registry_creation_mutex().unlock();
}
inline void registry_fork_child() noexcept {
    if (handle_registry* r = g_registry.load(std::memory_order_acquire)) r->after_fork_in_child();
    registry_creation_mutex().unlock();
}
inline constexpr loupe::detail::fork_step registry_fork_step{&registry_fork_prepare, &registry_fork_parent,
                                                             &registry_fork_child};
LOUPE_DETAIL_SHARED_FORK_STEP(registry_fork_step_registered, loupe::detail::fork_rank::io_registry,
                              registry_fork_step);
}  // namespace detail

/// Sets how many descriptors (0..capacity-1) the registry keeps in its
/// direct array; larger ones go to its overflow map. Takes effect only
/// before the registry's first use (the first wrapped open): returns false,
/// and changes nothing, afterwards. Default 32,768. Call early in main().
inline bool set_registry_capacity(std::size_t capacity) noexcept {
    if (detail::registry_created().load()) return false;
    detail::registry_capacity_setting().store(capacity < handle_registry::chunk_slots ? handle_registry::chunk_slots
                                                                                    : capacity);
    return !detail::registry_created().load();
}

}  // namespace loupe::io
