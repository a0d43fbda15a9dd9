// Drop-in wrappers for the POSIX descriptor calls: call loupe::io::read
// where you called ::read. Same arguments, same result, same errno.
//
//   int fd = loupe::io::open("/var/db/orders", O_RDONLY);   // registered: name, time, thread
//   ...                                                    // hours later a session starts
//   loupe::io::read(fd, buf, n);                           // recorded as a read of /var/db/orders
//
// Every wrapper keeps the handle registry up to date whether or not a session
// records (opens, sockets, accepts, dups and pipes register their descriptors;
// closes forget them), so a session started late still knows what a
// descriptor is. While a session records I/O of the calling thread
// (`kinds::io`, its filter matching), each call also becomes an `io` record:
// begin and end time, the result (bytes, new descriptor, or -errno), the
// descriptor and the resource it refers to.
//
// Cost: not recording, one relaxed load and a branch on top of the system
// call (opens and closes also update the registry: tens of ns). Recording:
// two clock reads, a registry lookup and a 64-byte ring push.
// Thread-safety: as the wrapped calls. loupe's own output never goes through
// these wrappers, so it never shows up as profiled I/O.
#pragma once

#include "loupe/base/config.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/io/detail/socket_names.hpp"
#include "loupe/io/run_op.hpp"

namespace loupe::io {

/// Formats a socket address as a resource name: "127.0.0.1:8080",
/// "[::1]:8080", "unix:/run/app.sock", "unix:@name" (abstract); "" for
/// other families.
inline std::string socket_address_name(const sockaddr* address, socklen_t length) {
    char out[detail::socket_name_capacity];
    const std::size_t n = detail::format_socket_address(address, length, out);
    return std::string(out, n);
}

namespace detail {
// A socket gets its peer's name when it connects or first sends to one.
inline void name_socket(int fd, const sockaddr* address, socklen_t length) noexcept {
    char name[socket_name_capacity];
    const std::size_t n = format_socket_address(address, length, name);
    if (n == 0) return;
    handle_registry& reg = registry();
    std::uint64_t generation = 0, resource = 0;
    if (reg.identify(fd, generation, resource)) reg.note_name(fd, generation, std::string_view(name, n));
}
}  // namespace detail

/// ::open; registers `path` as a file.
inline int open(const char* path, int flags, mode_t mode = 0) noexcept {
    return detail::run_opening(
        op::open, [&] { return ::open(path, flags, mode); },
        [&](std::int64_t fd) { detail::register_open(fd, path ? path : "", resource_kind::file); });
}

/// ::openat; a relative `path` is named after the directory `dirfd` refers
/// to when the registry knows it ("dir/path"), else as given.
inline int openat(int dirfd, const char* path, int flags, mode_t mode = 0) noexcept {
    return detail::run_opening(
        op::openat, [&] { return ::openat(dirfd, path, flags, mode); },
        [&](std::int64_t fd) {
            const char* p = path ? path : "";
            handle_info dir;
            if (p[0] != '/' && dirfd != AT_FDCWD && registry().lookup(dirfd, dir) && !dir.name.empty()) {
                try {
                    detail::register_open(fd, dir.name + "/" + p, resource_kind::file);
                    return;
                } catch (...) {
                }
            }
            detail::register_open(fd, p, resource_kind::file);
        });
}

inline int close(int fd) noexcept {
    return detail::run_closing(op::close, fd, [&] { return ::close(fd); });
}

inline ssize_t read(int fd, void* buffer, std::size_t count) noexcept {
    return detail::run_on(op::read, fd, [&] { return ::read(fd, buffer, count); });
}
inline ssize_t write(int fd, const void* buffer, std::size_t count) noexcept {
    return detail::run_on(op::write, fd, [&] { return ::write(fd, buffer, count); });
}
inline ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) noexcept {
    return detail::run_on(op::pread, fd, [&] { return ::pread(fd, buffer, count, offset); });
}
inline ssize_t pwrite(int fd, const void* buffer, std::size_t count, off_t offset) noexcept {
    return detail::run_on(op::pwrite, fd, [&] { return ::pwrite(fd, buffer, count, offset); });
}
inline ssize_t readv(int fd, const iovec* iov, int iovcnt) noexcept {
    return detail::run_on(op::readv, fd, [&] { return ::readv(fd, iov, iovcnt); });
}
inline ssize_t writev(int fd, const iovec* iov, int iovcnt) noexcept {
    return detail::run_on(op::writev, fd, [&] { return ::writev(fd, iov, iovcnt); });
}
inline int fsync(int fd) noexcept {
    return detail::run_on(op::fsync, fd, [&] { return ::fsync(fd); });
}

/// ::unlink; recorded as a delete of `path` (a resource named by the path).
inline int unlink(const char* path) noexcept {
    return detail::run_on_path(op::unlink, path, [&] { return ::unlink(path); });
}
/// ::rename; recorded on a resource named `from`. Descriptors open on the
/// file keep the name they were opened with.
inline int rename(const char* from, const char* to) noexcept {
    return detail::run_on_path(op::rename, from, [&] { return std::rename(from, to); });
}

/// ::socket; registers an unnamed socket (named at connect, accept or the
/// first sendto).
inline int socket(int domain, int type, int protocol) noexcept {
    return detail::run_opening(
        op::socket, [&] { return ::socket(domain, type, protocol); },
        [](std::int64_t fd) { detail::register_open(fd, "", resource_kind::socket); });
}

/// ::connect; the socket is named after `address` (the peer) before the
/// call, so a failed or in-progress connect is reported against its target.
inline int connect(int fd, const sockaddr* address, socklen_t length) noexcept {
    detail::name_socket(fd, address, length);
    return detail::run_on(op::connect, fd, [&] { return ::connect(fd, address, length); });
}

namespace detail {
// accept and accept4: `call(peer, peer_length)` accepts into loupe's own
// buffer (the caller's may be null or short), and the new socket is
// registered named after its peer (peer_socket_name), then the caller gets
// the address as the plain call would have given it.
template <class Call>
int run_accept(sockaddr* address, socklen_t* length, Call&& call) noexcept {
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof peer;
    const int result = run_opening(
        op::accept, [&] { return call(reinterpret_cast<sockaddr*>(&peer), &peer_length); },
        [&](std::int64_t accepted) {
            char name[socket_name_capacity];
            const std::size_t n = peer_socket_name(static_cast<int>(accepted), reinterpret_cast<const sockaddr*>(&peer),
                                                   peer_length, name);
            register_open(accepted, std::string_view(name, n), resource_kind::socket);
        });
    if (result >= 0 && address != nullptr && length != nullptr) {
        const socklen_t n = *length < peer_length ? *length : peer_length;
        std::memcpy(address, &peer, n);
        *length = peer_length;
    }
    return result;
}
}  // namespace detail

/// ::accept; registers the new socket, named after its peer (the client's
/// address; for a unix socket whose client has none, the path it was
/// accepted on), as connect names the client's end after the server.
inline int accept(int fd, sockaddr* address, socklen_t* length) noexcept {
    return detail::run_accept(address, length,
                              [&](sockaddr* peer, socklen_t* peer_length) { return ::accept(fd, peer, peer_length); });
}

#if defined(__linux__)
/// ::accept4 (Linux); as accept, with `flags` (SOCK_NONBLOCK, SOCK_CLOEXEC).
/// Recorded as an accept.
inline int accept4(int fd, sockaddr* address, socklen_t* length, int flags) noexcept {
    return detail::run_accept(address, length, [&](sockaddr* peer, socklen_t* peer_length) {
        return ::accept4(fd, peer, peer_length, flags);
    });
}
#endif

inline ssize_t send(int fd, const void* buffer, std::size_t count, int flags) noexcept {
    return detail::run_on(op::send, fd, [&] { return ::send(fd, buffer, count, flags); });
}
inline ssize_t recv(int fd, void* buffer, std::size_t count, int flags) noexcept {
    return detail::run_on(op::recv, fd, [&] { return ::recv(fd, buffer, count, flags); });
}
/// ::sendto; an unnamed socket (unconnected UDP) is named after the first
/// destination it sends to. Later datagrams to other peers keep that name.
inline ssize_t sendto(int fd, const void* buffer, std::size_t count, int flags, const sockaddr* address,
                      socklen_t length) noexcept {
    if (address != nullptr && registry().is_unnamed(fd)) detail::name_socket(fd, address, length);
    return detail::run_on(op::sendto, fd, [&] { return ::sendto(fd, buffer, count, flags, address, length); });
}
inline ssize_t recvfrom(int fd, void* buffer, std::size_t count, int flags, sockaddr* address,
                        socklen_t* length) noexcept {
    return detail::run_on(op::recvfrom, fd, [&] { return ::recvfrom(fd, buffer, count, flags, address, length); });
}

/// ::dup; the copy refers to the same resource (same resource id).
inline int dup(int fd) noexcept {
    return detail::run_opening(
        op::dup, [&] { return ::dup(fd); },
        [&](std::int64_t copy) {
            registry().note_dup(fd, copy, detail::open_ticks(), loupe::detail::cached_os_tid());
        });
}
/// ::dup2; whatever `to` referred to before is forgotten.
inline int dup2(int from, int to) noexcept {
    return detail::run_opening(
        op::dup2, [&] { return ::dup2(from, to); },
        [&](std::int64_t copy) {
            if (copy != from) {
                registry().note_dup(from, copy, detail::open_ticks(), loupe::detail::cached_os_tid());
            }
        });
}

/// ::dup3 (Linux); like dup2.
inline int dup3(int from, int to, int flags) noexcept {
    return detail::run_opening(
        op::dup3, [&] { return ::dup3(from, to, flags); },
        [&](std::int64_t copy) { registry().note_dup(from, copy, detail::open_ticks(), loupe::detail::cached_os_tid()); });
}

/// ::fcntl with an integer argument. F_DUPFD and F_DUPFD_CLOEXEC register
/// the copy (as dup) and are recorded; other commands pass straight through.
inline int fcntl(int fd, int cmd, long arg = 0) noexcept {
    if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) return ::fcntl(fd, cmd, arg);
    return detail::run_opening(
        op::fcntl_dupfd, [&] { return ::fcntl(fd, cmd, arg); },
        [&](std::int64_t copy) { registry().note_dup(fd, copy, detail::open_ticks(), loupe::detail::cached_os_tid()); });
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
/// ::close_range (Linux 5.9, glibc 2.34): the registry forgets every
/// descriptor in [first, last] that it closed (with CLOSE_RANGE_CLOEXEC it
/// closes none). Recorded as one operation on `first`.
inline int close_range(unsigned first, unsigned last, int flags) noexcept {
#    if !LOUPE_ENABLED
    return ::close_range(first, last, flags);
#    else
    handle_registry& reg = registry();
    const std::uint64_t sessions = loupe::detail::io_sessions();
    const std::uint64_t t0 = sessions ? loupe::detail::read_ticks() : 0;
    const bool closes = (flags & CLOSE_RANGE_CLOEXEC) == 0;
    const std::vector<close_ticket> tickets =
        closes ? reg.begin_close_range(first, last) : std::vector<close_ticket>{};
    const int r = ::close_range(first, last, flags);
    const int err = errno;
    for (const close_ticket& t : tickets) reg.end_close(t, r == 0);
    if (LOUPE_UNLIKELY(sessions != 0)) {
        loupe::detail::io_push(op::close_range, first, detail::result_of(r, err), 0, t0, loupe::detail::read_ticks(),
                               sessions);
    }
    errno = err;
    return r;
#    endif
}
#endif

/// ::pipe; registers both ends ("pipe (read end)", "pipe (write end)").
inline int pipe(int fds[2]) noexcept {
    return detail::run_opening(
        op::pipe, [&] { return ::pipe(fds) == 0 ? fds[0] : -1; },
        [&](std::int64_t) {
            detail::register_open(fds[0], "pipe (read end)", resource_kind::pipe);
            detail::register_open(fds[1], "pipe (write end)", resource_kind::pipe);
        }) < 0
               ? -1
               : 0;
}
/// ::socketpair; registers both sockets, named "socketpair".
inline int socketpair(int domain, int type, int protocol, int fds[2]) noexcept {
    return detail::run_opening(
        op::socketpair, [&] { return ::socketpair(domain, type, protocol, fds) == 0 ? fds[0] : -1; },
        [&](std::int64_t) {
            detail::register_open(fds[0], "socketpair", resource_kind::socket);
            detail::register_open(fds[1], "socketpair", resource_kind::socket);
        }) < 0
               ? -1
               : 0;
}

}  // namespace loupe::io
