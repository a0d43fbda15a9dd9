// The service's outgoing call: one HTTP/1.1 POST to an http://HOST[:PORT]/PATH
// url, on a connection of its own (`Connection: close`), with a
// Content-Length body and the header lines the caller adds (traceparent,
// tracestate). The reply's status line is read, its headers and body are
// read and dropped (at most 1 MiB), and the connection is closed.
//
//     w3c_service::http_url url;
//     if (std::string problem = w3c_service::parse_http_url(text, url); !problem.empty()) ...
//     w3c_service::post_result r = w3c_service::post(url, "traceparent: ...\r\n", "[]", timeout);
//     if (!r.ok()) ...r.error...   else ...r.status...
//
// Only plain http: https and other schemes are refused by parse_url with a
// message. Blocking sockets with a deadline: the connect (each resolved
// address in turn) and the exchange each give up after `timeout`, so a
// target that never answers costs at most a few timeouts, never a hang.
// The host name is resolved with getaddrinfo (numeric addresses need no
// DNS). Errors are values; nothing throws but std::bad_alloc.
//
// Thread-safety: reentrant (no shared state).
#pragma once

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace w3c_service {

/// A parsed http:// url.
struct http_url {
    std::string host;  ///< a name or an address (IPv6 without its brackets)
    std::uint16_t port = 80;
    std::string target = "/";  ///< the path (and query) sent in the request line
    std::string authority;     ///< the Host header's value: "127.0.0.1:7777", "[::1]:7777"
};

/// Parses `text` as http://HOST[:PORT][/PATH[?QUERY]] into `out`; returns
/// what is wrong with it, or "" when nothing is.
inline std::string parse_http_url(std::string_view text, http_url& out) {
    out = http_url{};
    const auto starts_with_nocase = [&](std::string_view prefix) {
        if (text.size() < prefix.size()) return false;
        for (std::size_t i = 0; i < prefix.size(); ++i) {
            char c = text[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c != prefix[i]) return false;
        }
        return true;
    };
    if (!starts_with_nocase("http://")) {
        const std::size_t colon = text.find("://");
        if (colon != std::string_view::npos && colon > 0) {
            return "scheme '" + std::string(text.substr(0, colon)) +
                   "' is not supported; expected http://HOST:PORT/PATH";
        }
        return "expected a url of the form http://HOST:PORT/PATH";
    }
    std::size_t i = 7;
    if (i < text.size() && text[i] == '[') {
        const std::size_t close = text.find(']', i);
        if (close == std::string_view::npos || close == i + 1) return "a bracketed IPv6 host without its ']' or empty";
        out.host = std::string(text.substr(i + 1, close - i - 1));
        i = close + 1;
    } else {
        const std::size_t begin = i;
        while (i < text.size() && text[i] != ':' && text[i] != '/' && text[i] != '?' && text[i] != '#') {
            const char c = text[i];
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_';
            if (!ok) return std::string("a host name may not contain '") + c + "' (user info is not supported)";
            ++i;
        }
        out.host = std::string(text.substr(begin, i - begin));
        if (out.host.empty()) return "a host after http://";
    }
    if (i < text.size() && text[i] == ':') {
        ++i;
        const std::size_t begin = i;
        std::uint32_t port = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - begin < 6) {
            port = port * 10 + static_cast<std::uint32_t>(text[i] - '0');
            ++i;
        }
        if (i == begin || port == 0 || port > 65535) return "a port from 1 to 65535 after ':'";
        out.port = static_cast<std::uint16_t>(port);
    }
    if (i < text.size() && text[i] != '/' && text[i] != '?') {
        return std::string("unexpected '") + text[i] + "' after the host and port; expected '/PATH'";
    }
    std::string_view target = text.substr(i);
    target = target.substr(0, target.find('#'));  // a fragment is not sent
    for (const char c : target) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f) return "a space, control or non-ASCII character in the path (percent-encode it)";
    }
    out.target = target.empty() ? std::string("/") : target[0] == '?' ? "/" + std::string(target) : std::string(target);
    const bool v6 = out.host.find(':') != std::string::npos;
    out.authority = (v6 ? "[" + out.host + "]" : out.host) + ":" + std::to_string(out.port);
    return {};
}

/// What post() got: the reply's status, or why there is none.
struct post_result {
    int status = 0;      ///< e.g. 200; 0 when no reply was read
    std::string reason;  ///< the status line's reason phrase
    std::string error;   ///< "127.0.0.1:7777: connect: Connection refused"; empty when a reply was read

    bool ok() const noexcept { return error.empty(); }
};

namespace detail {

using clock = std::chrono::steady_clock;

inline int ms_left(clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(left);
}

/// Closes the socket it holds when it goes.
class socket_holder {
public:
    socket_holder() = default;
    socket_holder(const socket_holder&) = delete;
    socket_holder& operator=(const socket_holder&) = delete;
    ~socket_holder() { reset(-1); }
    void reset(int fd) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }
    int get() const noexcept { return fd_; }

private:
    int fd_ = -1;
};

// Waits for `events` on `fd` until `deadline`: 1 ready, 0 timed out, -1 error.
inline int wait_for(int fd, short events, clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int rc = ::poll(&p, 1, ms_left(deadline));
        if (rc < 0 && errno == EINTR) continue;
        return rc < 0 ? -1 : rc;
    }
}

// Connects to one of the host's addresses within `timeout` each; the socket
// is blocking again when returned. -1 and `error` when none accepts.
inline int connect_to(const http_url& url, std::chrono::milliseconds timeout, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const int gai = ::getaddrinfo(url.host.c_str(), std::to_string(url.port).c_str(), &hints, &found);
    if (gai != 0) {
        error = url.authority + ": cannot resolve the host: " + ::gai_strerror(gai);
        return -1;
    }
    std::string last = "no address";
    int connected = -1;
    for (const addrinfo* a = found; a != nullptr && connected < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last = std::strerror(errno);
            continue;
        }
        int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        int err = rc == 0 ? 0 : errno;
        if (rc != 0 && err == EINPROGRESS) {
            const int ready = wait_for(fd, POLLOUT, clock::now() + timeout);
            socklen_t len = sizeof err;
            if (ready == 0) {
                err = ETIMEDOUT;
            } else if (ready < 0) {
                err = errno;
            } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
                err = errno;
            }
        }
        if (err != 0) {
            last =
                err == ETIMEDOUT ? "no answer within " + std::to_string(timeout.count()) + " ms" : std::strerror(err);
            ::close(fd);
            continue;
        }
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        connected = fd;
    }
    ::freeaddrinfo(found);
    if (connected < 0) error = url.authority + ": connect: " + last;
    return connected;
}

inline bool send_all(int fd, std::string_view data, clock::time_point deadline, std::chrono::milliseconds timeout,
                     std::string& error) {
    while (!data.empty()) {
        if (wait_for(fd, POLLOUT, deadline) != 1) {
            error = "the request could not be sent within " + std::to_string(timeout.count()) + " ms";
            return false;
        }
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) {
            error = std::string("send: ") + std::strerror(errno);
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Appends what the peer sends next to `in`: >0 bytes, 0 on close, -1 on an
// error or the deadline (with `error`; `timeout` is what the deadline was).
inline ssize_t receive_some(int fd, std::string& in, clock::time_point deadline, std::chrono::milliseconds timeout,
                            std::string& error) {
    for (;;) {
        const int ready = wait_for(fd, POLLIN, deadline);
        if (ready != 1) {
            error = ready == 0 ? "no whole reply within " + std::to_string(timeout.count()) + " ms"
                               : std::string("poll: ") + std::strerror(errno);
            return -1;
        }
        char chunk[8192];
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n < 0) {
            error = std::string("recv: ") + std::strerror(errno);
            return -1;
        }
        in.append(chunk, static_cast<std::size_t>(n));
        return n;
    }
}

}  // namespace detail

/// POSTs `body` (Content-Type: application/json) to `url`, with
/// `extra_fields` ("Name: value\r\n" lines) after the framing headers.
/// Gives up after `timeout` for the connect and again for the exchange.
inline post_result post(const http_url& url, std::string_view extra_fields, std::string_view body,
                        std::chrono::milliseconds timeout) {
    post_result r;
    detail::socket_holder sock;
    sock.reset(detail::connect_to(url, timeout, r.error));
    if (sock.get() < 0) return r;
    const auto deadline = detail::clock::now() + timeout;

    std::string request = "POST " + url.target + " HTTP/1.1\r\nHost: " + url.authority +
                          "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                          "\r\nConnection: close\r\n";
    request.append(extra_fields).append("\r\n").append(body);
    std::string problem;
    if (!detail::send_all(sock.get(), request, deadline, timeout, problem)) {
        r.error = url.authority + ": " + problem;
        return r;
    }

    // The status line and headers (after any 1xx interim reply), then the
    // body by Content-Length, or up to the close (the request said
    // Connection: close); at most 1 MiB kept.
    constexpr std::size_t max_head = 64 * 1024, max_body = 1024 * 1024;
    std::string in;
    std::size_t head_end;
    std::string_view head, status_line;
    for (;;) {
        while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
            const ssize_t n =
                in.size() > max_head ? -1 : detail::receive_some(sock.get(), in, deadline, timeout, problem);
            if (n <= 0) {
                if (in.size() > max_head) problem = "a reply head over 64 KiB";
                if (n == 0) problem = in.empty() ? "closed without a reply" : "closed inside the reply's head";
                r.error = url.authority + ": " + problem;
                return r;
            }
        }
        head = std::string_view(in.data(), head_end);
        status_line = head.substr(0, head.find("\r\n"));
        // "HTTP/1.1 200 OK"
        if (status_line.size() < 12 || status_line.compare(0, 7, "HTTP/1.") != 0 || status_line[8] != ' ' ||
            status_line[9] < '1' || status_line[9] > '5' || status_line[10] < '0' || status_line[10] > '9' ||
            status_line[11] < '0' || status_line[11] > '9' || (status_line.size() > 12 && status_line[12] != ' ')) {
            r.error = url.authority + ": not an HTTP/1.x status line: '" + std::string(status_line.substr(0, 80)) + "'";
            return r;
        }
        if (status_line[9] != '1') break;
        in.erase(0, head_end + 4);  // an interim reply (100 Continue, 103 Early Hints): the final one follows
    }
    r.status = (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');
    r.reason = std::string(status_line.size() > 13 ? status_line.substr(13) : std::string_view());

    // Drain what the reply says it has (its bytes are not used): none for
    // 204 and 304, Content-Length bytes, a chunked body up to its last
    // chunk, else up to the close.
    std::size_t want = r.status == 204 || r.status == 304 ? 0 : max_body;
    bool chunked = false;
    std::size_t line = head.find("\r\n");
    while (line != std::string_view::npos) {
        const std::size_t next = head.find("\r\n", line + 2);
        const std::string_view field =
            head.substr(line + 2, next == std::string_view::npos ? head.npos : next - line - 2);
        line = next;
        std::string lower(field);
        for (char& c : lower) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        if (lower.compare(0, 18, "transfer-encoding:") == 0 && lower.find("chunked") != std::string::npos) {
            chunked = true;
        }
        constexpr std::string_view name = "content-length:";
        if (want == 0 || lower.compare(0, name.size(), name) != 0) continue;
        std::size_t length = 0, k = name.size();
        while (k < field.size() && (field[k] == ' ' || field[k] == '\t')) ++k;
        while (k < field.size() && field[k] >= '0' && field[k] <= '9' && length <= max_body) {
            length = length * 10 + static_cast<std::size_t>(field[k++] - '0');
        }
        want = length < max_body ? length : max_body;
    }
    const std::size_t body_at = head_end + 4;
    const auto body_done = [&] {
        const std::string_view got = std::string_view(in).substr(body_at);
        if (got.size() >= want) return true;
        if (!chunked) return false;
        constexpr std::string_view last_chunk = "0\r\n\r\n";  // with no trailer fields
        constexpr std::string_view after_data = "\r\n0\r\n\r\n";
        return got == last_chunk ||
               (got.size() >= after_data.size() && got.substr(got.size() - after_data.size()) == after_data);
    };
    while (!body_done()) {
        if (detail::receive_some(sock.get(), in, deadline, timeout, problem) <= 0) break;  // the status is what counts
    }
    return r;
}

}  // namespace w3c_service
