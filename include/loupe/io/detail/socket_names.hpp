// How a socket is named in the handle registry: after the address at the
// other end ("127.0.0.1:8080", "[::1]:443", "unix:/run/app.sock"), whether
// the socket connected (posix.hpp's connect), was accepted (accept, accept4)
// or was first seen in use (handle_registry's backfill, for sockets made
// without the wrappers). A unix socket whose peer has no address (the client
// end of most unix connections, seen from the server) is named after its own
// address, the path it was accepted on, which is the name its client gave
// the same connection.
//
// Cost: formatting into a caller's buffer, no allocation; the descriptor
// forms make one or two getpeername/getsockname calls. Called when a
// descriptor is created or first seen, never per operation.
// Thread-safety: pure functions.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace loupe::io::detail {

/// Room for any name below, with its terminating NUL ("unix:@" + 107 bytes).
inline constexpr std::size_t socket_name_capacity = 128;

/// Writes the name of `address` into `out` (NUL-terminated) and returns its
/// length: "127.0.0.1:8080", "[::1]:8080", "unix:/run/app.sock",
/// "unix:@name" (abstract), "unix:(unnamed)"; 0 for other families or a
/// truncated address.
inline std::size_t format_socket_address(const sockaddr* address, socklen_t length,
                                         char (&out)[socket_name_capacity]) noexcept {
    out[0] = '\0';
    if (address == nullptr || length < static_cast<socklen_t>(sizeof(sa_family_t))) return 0;
    char host[INET6_ADDRSTRLEN] = {};
    int n = 0;
    switch (address->sa_family) {
        case AF_INET: {
            if (length < static_cast<socklen_t>(sizeof(sockaddr_in))) return 0;
            const auto* in = reinterpret_cast<const sockaddr_in*>(address);
            ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
            n = std::snprintf(out, socket_name_capacity, "%s:%u", host, static_cast<unsigned>(ntohs(in->sin_port)));
            break;
        }
        case AF_INET6: {
            if (length < static_cast<socklen_t>(sizeof(sockaddr_in6))) return 0;
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
            ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
            n = std::snprintf(out, socket_name_capacity, "[%s]:%u", host, static_cast<unsigned>(ntohs(in6->sin6_port)));
            break;
        }
        case AF_UNIX: {
            // A copy of the bytes given: the caller's buffer may be shorter
            // than a sockaddr_un (a sockaddr_in's size).
            sockaddr_un un{};
            const std::size_t copied = static_cast<std::size_t>(length) < sizeof un ? static_cast<std::size_t>(length)
                                                                                     : sizeof un;
            std::memcpy(&un, address, copied);
            const std::size_t max = copied > offsetof(sockaddr_un, sun_path) ? copied - offsetof(sockaddr_un, sun_path) : 0;
            if (max > 1 && un.sun_path[0] == '\0') {  // abstract: the bytes after the NUL, all of them
                std::memcpy(out, "unix:@", 6);
                std::memcpy(out + 6, un.sun_path + 1, max - 1);
                out[5 + max] = '\0';
                return 5 + max;
            }
            const std::size_t path = strnlen(un.sun_path, max);
            if (path == 0) {
                n = std::snprintf(out, socket_name_capacity, "unix:(unnamed)");
                break;
            }
            std::memcpy(out, "unix:", 5);
            std::memcpy(out + 5, un.sun_path, path);
            out[5 + path] = '\0';
            return 5 + path;
        }
        default:
            return 0;
    }
    return n > 0 ? static_cast<std::size_t>(n) : 0;
}

/// True when `address` is a unix address without a name (an unbound client).
inline bool unnamed_unix_address(const sockaddr* address, socklen_t length) noexcept {
    if (address == nullptr || length < static_cast<socklen_t>(sizeof(sa_family_t)) || address->sa_family != AF_UNIX) {
        return false;
    }
    const std::size_t n = static_cast<std::size_t>(length);
    if (n <= offsetof(sockaddr_un, sun_path)) return true;  // the family alone: how Linux gives an unbound socket
    char first = '\0';
    std::memcpy(&first, reinterpret_cast<const char*>(address) + offsetof(sockaddr_un, sun_path), 1);
    if (first != '\0') return false;
    return n <= offsetof(sockaddr_un, sun_path) + 1;  // a lone NUL: no abstract name either
}

/// The name of connected socket `fd` whose peer is `peer` (as accept gave
/// it): the peer's address, or for a unix peer without one, the socket's own
/// address. Returns the length written to `out`; 0 when neither has a name
/// loupe formats.
inline std::size_t peer_socket_name(int fd, const sockaddr* peer, socklen_t peer_length,
                                    char (&out)[socket_name_capacity]) noexcept {
    if (unnamed_unix_address(peer, peer_length)) {
        sockaddr_storage local{};
        socklen_t local_length = sizeof local;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0 &&
            !unnamed_unix_address(reinterpret_cast<const sockaddr*>(&local), local_length)) {
            return format_socket_address(reinterpret_cast<const sockaddr*>(&local), local_length, out);
        }
    }
    return format_socket_address(peer, peer_length, out);
}

/// The name of socket `fd` from its peer (getpeername), as peer_socket_name;
/// 0 when it has no peer (not connected, a listener, an unconnected UDP
/// socket) or is not a socket.
inline std::size_t connected_socket_name(int fd, char (&out)[socket_name_capacity]) noexcept {
    out[0] = '\0';
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0) return 0;
    return peer_socket_name(fd, reinterpret_cast<const sockaddr*>(&peer), peer_length, out);
}

}  // namespace loupe::io::detail
