// The two shapes every io wrapper has: an operation on a descriptor that
// already exists (read, write, close, ...) and one that makes descriptors
// (open, socket, accept, dup, ...). Shared by posix.hpp and stdio.hpp.
//
// Cost when no session records I/O: one relaxed load and a branch, plus a
// compare of the result (an EBADF failure is counted as an anomaly). An
// operation that makes a descriptor also registers it (handle_registry),
// recording or not. errno is what the real call left.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string_view>

#include "loupe/base/config.hpp"
#include "loupe/io/detail/io_record.hpp"
#include "loupe/io/handle_registry.hpp"
#include "loupe/base/io_types.hpp"

namespace loupe::io::detail {

/// Where an open's metadata comes from: loupe's clock and this thread.
/// Now, in the ticks the collector converts. The process clock is
/// calibrated once (it also tells read_ticks() which ticks to read);
/// afterwards this is a load, a branch and a clock read.
inline std::uint64_t open_ticks() noexcept {
    (void)loupe::detail::process_clock();
    return loupe::detail::read_ticks();
}

// open_ticks calibrates the clock on an I/O thread's first open: fork()
// must wait out a calibration in progress (recorder.hpp).
LOUPE_DETAIL_SHARED_FORK_STEP(io_clock_fork_step_registered, loupe::detail::fork_rank::clock,
                              loupe::detail::clock_fork_step);

inline void register_open(std::int64_t fd, std::string_view name, resource_kind kind) noexcept {
    registry().note_open(fd, name, kind, open_ticks(), loupe::detail::cached_os_tid());
}

inline std::int64_t result_of(std::int64_t r, int err) noexcept { return r < 0 ? -static_cast<std::int64_t>(err) : r; }

template <class Call>
LOUPE_NOINLINE auto run_recorded(op what, std::int64_t fd, std::uint64_t sessions, Call call) noexcept {
    const std::uint64_t resource = loupe::detail::io_announce(fd, sessions);
    const std::uint64_t t0 = loupe::detail::read_ticks();
    const auto r = call();
    const int err = errno;
    const std::uint64_t t1 = loupe::detail::read_ticks();
    if (r < 0 && err == EBADF) registry().note_bad_descriptor();
    loupe::detail::io_push(what, fd, result_of(static_cast<std::int64_t>(r), err), resource, t0, t1, sessions);
    errno = err;
    return r;
}

/// Runs `call()` (returns < 0 with errno on failure) as operation `what` on
/// the existing descriptor `fd`.
template <class Call>
LOUPE_ALWAYS_INLINE auto run_on(op what, std::int64_t fd, Call&& call) noexcept {
#if LOUPE_ENABLED
    const std::uint64_t sessions = loupe::detail::io_sessions();
    if (LOUPE_LIKELY(sessions == 0)) {
        const auto r = call();
        if (LOUPE_UNLIKELY(r < 0) && errno == EBADF) registry().note_bad_descriptor();
        return r;
    }
    return run_recorded(what, fd, sessions, call);
#else
    (void)what;
    (void)fd;
    return call();
#endif
}

/// Runs `call()` (returns the new descriptor, or < 0 with errno) as
/// operation `what`; `note(fd)` registers a descriptor it made, recording
/// or not. The operation is recorded on the new descriptor.
template <class Call, class Note>
auto run_opening(op what, Call&& call, Note&& note) noexcept {
#if LOUPE_ENABLED
    const std::uint64_t sessions = loupe::detail::io_sessions();
    const std::uint64_t t0 = sessions ? loupe::detail::read_ticks() : 0;
    const auto fd = call();
    const int err = errno;
    if (fd >= 0) note(static_cast<std::int64_t>(fd));
    if (LOUPE_UNLIKELY(sessions != 0)) {
        const std::uint64_t t1 = loupe::detail::read_ticks();
        const std::uint64_t resource = fd >= 0 ? loupe::detail::io_announce(fd, sessions) : 0;
        loupe::detail::io_push(what, fd >= 0 ? fd : -1, result_of(fd, err), resource, t0, t1, sessions);
    }
    errno = err;
    return fd;
#else
    (void)what;
    (void)note;
    return call();
#endif
}

/// Closes `fd` through `call()` (returns 0, or < 0 with errno): the registry
/// forgets the descriptor unless another thread reopened it meanwhile.
template <class Call>
auto run_closing(op what, std::int64_t fd, Call&& call) noexcept {
#if LOUPE_ENABLED
    const std::uint64_t sessions = loupe::detail::io_sessions();
    handle_registry& reg = registry();
    // Announced before the close: afterwards the registry no longer knows it.
    const std::uint64_t resource = sessions ? loupe::detail::io_announce(fd, sessions) : 0;
    const close_ticket ticket = reg.begin_close(fd);
    const std::uint64_t t0 = sessions ? loupe::detail::read_ticks() : 0;
    const auto r = call();
    const int err = errno;
    // Linux releases the descriptor even when close fails with EINTR or EIO.
    reg.end_close(ticket, !(r < 0 && err == EBADF));
    if (r < 0 && err == EBADF) reg.note_bad_descriptor();
    if (LOUPE_UNLIKELY(sessions != 0)) {
        const std::uint64_t t1 = loupe::detail::read_ticks();
        loupe::detail::io_push(what, fd, result_of(r, err), resource, t0, t1, sessions);
    }
    errno = err;
    return r;
#else
    (void)what;
    (void)fd;
    return call();
#endif
}

/// Runs `call()` as operation `what` named by a path (unlink, rename): no
/// descriptor, so the session gets a resource named `path` for it.
template <class Call>
auto run_on_path(op what, const char* path, Call&& call) noexcept {
#if LOUPE_ENABLED
    const std::uint64_t sessions = loupe::detail::io_sessions();
    if (LOUPE_LIKELY(sessions == 0)) return call();
    const std::uint64_t resource = loupe::detail::io_announce_path(path, sessions);
    const std::uint64_t t0 = loupe::detail::read_ticks();
    const auto r = call();
    const int err = errno;
    const std::uint64_t t1 = loupe::detail::read_ticks();
    loupe::detail::io_push(what, -1, result_of(r, err), resource, t0, t1, sessions);
    errno = err;
    return r;
#else
    (void)what;
    (void)path;
    return call();
#endif
}

}  // namespace loupe::io::detail
