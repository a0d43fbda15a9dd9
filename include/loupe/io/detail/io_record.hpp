// The slow paths the io wrappers call when a session records them.
//
// An operation is two records pushed as one unit: a header (site pointer =
// &io_op_marker, t0/t1 = begin/end ticks, sessions) and one payload record
// (resource id, result, descriptor, op). Before the first operation on a
// resource that a session receives, the thread announces the resource: a
// header (&io_resource_marker, t0 = now, t1 = payload bytes) and its
// metadata copied from the handle registry. A per-thread cache remembers
// which resources it announced to which sessions, so a read costs a registry
// identify() and a compare, not a name copy. The file encoder writes each
// resource once per trace however often threads announce it.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/io/detail/io_wire.hpp"
#include "loupe/io/handle_registry.hpp"
#include "loupe/core/os_thread_id.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/zone.hpp"

namespace loupe::detail {

/// Returned by io_announce when the resource could not be announced (ring
/// full): the operation must be counted as lost, not written unnamed.
inline constexpr std::uint64_t io_unannounced = ~std::uint64_t{0};

/// The calling thread's OS id, cached (reset in a forked child).
inline std::uint64_t cached_os_tid() noexcept {
    thread_state& ts = t_state;
    if (LOUPE_UNLIKELY(ts.os_tid == 0)) ts.os_tid = current_os_tid();
    return ts.os_tid;
}

/// Sessions that record I/O of the calling thread now (0: none). One relaxed
/// load and a branch when nothing records I/O.
LOUPE_ALWAYS_INLINE std::uint64_t io_sessions() noexcept {
    if (LOUPE_LIKELY(!(armed() & kinds::io))) return 0;
    return sessions_for(site_kind::io);
}

struct announced_resource {
    std::uint64_t resource_id;
    std::uint64_t epoch;     ///< hot_state::epoch when announced
    std::uint64_t sessions;  ///< session slots it was announced to
};
inline constexpr std::size_t announced_cache_size = 64;
LOUPE_API inline thread_local announced_resource t_announced[announced_cache_size];

// Pushes the announcement of `info` to `sessions`; false when it did not fit.
inline bool push_io_resource(const io::handle_info& info, std::uint64_t sessions) noexcept {
    raw_record blob[max_io_resource_records];
    const std::size_t n = encode_io_resource(info, read_ticks(), sessions, blob);
    return push_records(t_state, sessions, blob, n) == push_outcome::pushed;
}

/// Recording path, before an operation on `fd`: makes sure every session in
/// `sessions` knows what `fd` refers to (announcing it once per thread,
/// resource and session set) and returns its resource id; 0 when the
/// registry knows nothing of `fd` (and /proc/self/fd neither);
/// io_unannounced when the announcement did not fit in the ring.
template <int = 0>
LOUPE_NOINLINE std::uint64_t io_announce(std::int64_t fd, std::uint64_t sessions) noexcept {
    if (fd < 0) return 0;
    io::handle_registry& registry = io::registry();
    const std::uint64_t epoch = g_hot.epoch.load(std::memory_order_relaxed);
    std::uint64_t generation = 0, resource = 0;
    if (registry.identify(fd, generation, resource)) {
        const announced_resource& a = t_announced[resource % announced_cache_size];
        if (a.resource_id == resource && a.epoch == epoch && (sessions & ~a.sessions) == 0) return resource;
    }
    internal_allocation_scope internal;  // the name copied below is loupe's, not the host's
    io::handle_info info;
    if (!registry.lookup_or_backfill(fd, info)) return 0;
    if (!push_io_resource(info, sessions)) return io_unannounced;
    announced_resource& a = t_announced[info.resource_id % announced_cache_size];
    const std::uint64_t before = (a.resource_id == info.resource_id && a.epoch == epoch) ? a.sessions : 0;
    a = {info.resource_id, epoch, before | sessions};
    return info.resource_id;
}
LOUPE_DETAIL_SHARED_INSTANCE(std::uint64_t io_announce<0>(std::int64_t, std::uint64_t) noexcept);

/// Recording path for operations named by a path, not a descriptor (unlink,
/// rename): announces a resource for `path` (a new id each time) and
/// returns its id, or io_unannounced.
template <int = 0>
LOUPE_NOINLINE std::uint64_t io_announce_path(const char* path, std::uint64_t sessions) noexcept {
    io::handle_info info;
    try {
        info.name.assign(path ? path : "", path ? std::strlen(path) : 0);
    } catch (...) {
        return io_unannounced;
    }
    if (info.name.size() > io::handle_registry::max_name) info.name_truncated = true;
    info.kind = io::resource_kind::file;
    info.resource_id = io::handle_registry::new_resource_id();
    return push_io_resource(info, sessions) ? info.resource_id : io_unannounced;
}
LOUPE_DETAIL_SHARED_INSTANCE(std::uint64_t io_announce_path<0>(const char*, std::uint64_t) noexcept);

/// Recording path, after the operation: pushes it (or counts it lost).
template <int = 0>
LOUPE_NOINLINE void io_push(io::op what, std::int64_t fd, std::int64_t result, std::uint64_t resource,
                            std::uint64_t t0, std::uint64_t t1, std::uint64_t sessions) noexcept {
    thread_state& ts = t_state;
    if (resource == io_unannounced) {
        count_lost(ts, ts.owned_ring ? push_outcome::full : push_outcome::no_ring, sessions);
        return;
    }
    raw_record pair[2];
    pair[0] = {&io_op_marker, t0, t1, sessions};
    const io_op_payload payload{resource, result, fd, static_cast<std::uint64_t>(what)};
    std::memcpy(static_cast<void*>(&pair[1]), &payload, sizeof payload);
    if (LOUPE_LIKELY(ts.owned_ring != nullptr) && LOUPE_LIKELY(ts.owned_ring->try_push_n(pair, 2))) return;
    push_or_count(ts, sessions, pair, 2);
}
LOUPE_DETAIL_SHARED_INSTANCE(void io_push<0>(io::op, std::int64_t, std::int64_t, std::uint64_t, std::uint64_t,
                                             std::uint64_t, std::uint64_t) noexcept);

}  // namespace loupe::detail
