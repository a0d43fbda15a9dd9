// The service's side of HTTP/1.1: a listening socket on 127.0.0.1, reading
// one request from an accepted connection and writing one response to it.
// One request per connection (every response says `Connection: close`),
// which is all a test harness needs and keeps a serial server simple.
//
//     w3c_service::listener l(5000);                 // throws std::runtime_error with the reason
//     int fd = l.accept_connection();
//     w3c_service::http_request req;
//     w3c_service::read_outcome got = w3c_service::read_request(fd, req, limits);
//     if (got.kind == w3c_service::read_outcome::ok) ...req.method, req.path(), req.fields, req.body...
//     w3c_service::write_response(fd, 200, "", "", limits);
//
// The request's header fields are kept as received (`fields`, the raw
// "Name: value\r\n" lines after the request line), so that a repeated
// traceparent or tracestate, and the casing of every name, reach the trace
// context carrier (loupe::tasks::extract_header_block) untouched. The body
// comes by Content-Length or chunked transfer coding; `Expect: 100-continue`
// is answered. Bounded: the head, the body and the time a client may take
// (server_limits); a client that breaks them gets 431, 413 or 408.
//
// Thread-safety: the functions are reentrant; a listener is one thread's.
#pragma once

#include <arpa/inet.h>
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
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace w3c_service {

struct server_limits {
    std::size_t max_head = 64 * 1024;         ///< request line and header fields
    std::size_t max_body = 1024 * 1024;       ///< decoded body
    std::chrono::milliseconds timeout{5000};  ///< for a client to send its whole request, and again to take the reply
};

struct http_request {
    std::string method;
    std::string target;  ///< as in the request line: "/test", "/test?x=1"
    std::string fields;  ///< the header lines after the request line, as received, each ending "\r\n"
    std::string body;

    std::string path() const { return target.substr(0, target.find('?')); }
};

/// What read_request got.
struct read_outcome {
    enum kind_type {
        ok,      ///< a whole request
        closed,  ///< the client closed (or broke) before a request: nothing to answer
        bad      ///< answer `status` with `message`
    } kind = ok;
    int status = 0;
    std::string message;
};

namespace detail {

using server_clock = std::chrono::steady_clock;

constexpr char lower_ascii(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool equals_nocase(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
    }
    return true;
}

inline std::string_view trim_ows(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// Bytes from a client, read as they are needed, until a deadline.
class request_stream {
public:
    request_stream(int fd, server_clock::time_point deadline) : fd_(fd), deadline_(deadline) {}

    enum status_type { more, eof, late, failed };

    /// Reads more bytes into `in`: `more` when some came.
    status_type fill() {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - server_clock::now());
            if (left.count() <= 0) return late;
            pollfd p{fd_, POLLIN, 0};
            const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
            if (rc < 0 && errno == EINTR) continue;
            if (rc < 0) return failed;
            if (rc == 0) return late;
            char chunk[16384];
            const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
            if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
            if (n < 0) return failed;
            if (n == 0) return eof;
            in.append(chunk, static_cast<std::size_t>(n));
            return more;
        }
    }

    std::string in;  ///< what has been read

private:
    int fd_;
    server_clock::time_point deadline_;
};

inline read_outcome bad(int status, std::string message) {
    read_outcome r;
    r.kind = read_outcome::bad;
    r.status = status;
    r.message = std::move(message);
    return r;
}

inline read_outcome stream_problem(request_stream::status_type s, const char* where) {
    if (s == request_stream::late) return bad(408, std::string("the request did not arrive in time (") + where + ")");
    read_outcome r;
    r.kind = read_outcome::closed;
    return r;
}

inline bool send_text(int fd, std::string_view data, server_clock::time_point deadline) {
    while (!data.empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - server_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLOUT, 0};
        const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) return false;
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Decodes the chunked body that starts at `at` in `s.in` into `body`.
inline read_outcome read_chunked(request_stream& s, std::size_t at, std::string& body, const server_limits& limits) {
    // The next line from `at` (without its CRLF); false when the stream ends first.
    const auto next_line = [&](std::string_view& line, read_outcome& problem) {
        std::size_t eol;
        while ((eol = s.in.find("\r\n", at)) == std::string::npos) {
            if (s.in.size() - at > 1024) {
                problem = bad(400, "a chunk-size line over 1024 bytes");
                return false;
            }
            const auto st = s.fill();
            if (st != request_stream::more) {
                problem = stream_problem(st, "inside a chunked body");
                return false;
            }
        }
        line = std::string_view(s.in).substr(at, eol - at);
        at = eol + 2;
        return true;
    };
    read_outcome problem;
    for (;;) {
        std::string_view line;
        if (!next_line(line, problem)) return problem;
        std::size_t size = 0, k = 0;
        for (; k < line.size(); ++k) {
            const char c = lower_ascii(line[k]);
            const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (digit < 0) break;
            size = size * 16 + static_cast<std::size_t>(digit);
            if (size > limits.max_body) return bad(413, "a body over " + std::to_string(limits.max_body) + " bytes");
        }
        if (k == 0 || (k < line.size() && line[k] != ';' && line[k] != ' ' && line[k] != '\t')) {
            return bad(400, "a malformed chunk size line: expected hex digits");
        }
        if (size == 0) break;
        if (body.size() + size > limits.max_body) {
            return bad(413, "a body over " + std::to_string(limits.max_body) + " bytes");
        }
        while (s.in.size() < at + size + 2) {
            const auto st = s.fill();
            if (st != request_stream::more) return stream_problem(st, "inside a chunk");
        }
        body.append(s.in, at, size);
        if (s.in.compare(at + size, 2, "\r\n") != 0) return bad(400, "a chunk not followed by CRLF");
        at += size + 2;
    }
    for (;;) {  // trailer fields (ignored) up to the empty line
        std::string_view line;
        if (!next_line(line, problem)) return problem;
        if (line.empty()) return {};
    }
}

}  // namespace detail

/// Reads one request from `fd` into `out` within limits.timeout.
inline read_outcome read_request(int fd, http_request& out, const server_limits& limits) {
    out = http_request{};
    detail::request_stream s(fd, detail::server_clock::now() + limits.timeout);
    std::size_t head_end;
    while ((head_end = s.in.find("\r\n\r\n")) == std::string::npos) {
        if (s.in.size() > limits.max_head) {
            return detail::bad(
                431, "the request line and header fields are over " + std::to_string(limits.max_head) + " bytes");
        }
        const auto st = s.fill();
        if (st != detail::request_stream::more) {
            if (st == detail::request_stream::eof && s.in.empty()) return {read_outcome::closed, 0, {}};
            return detail::stream_problem(st, "the header fields");
        }
    }
    if (head_end > limits.max_head) {
        return detail::bad(431,
                           "the request line and header fields are over " + std::to_string(limits.max_head) + " bytes");
    }
    const std::string_view head(s.in.data(), head_end);
    const std::size_t line_end = head.find("\r\n");
    const std::string_view request_line = head.substr(0, line_end);
    const std::size_t sp1 = request_line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
    if (sp1 == std::string_view::npos || sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1 ||
        (request_line.compare(sp2 + 1, std::string_view::npos, "HTTP/1.1") != 0 &&
         request_line.compare(sp2 + 1, std::string_view::npos, "HTTP/1.0") != 0)) {
        return detail::bad(400, "a malformed request line: expected 'METHOD TARGET HTTP/1.1'");
    }
    out.method = std::string(request_line.substr(0, sp1));
    out.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
    if (line_end != std::string_view::npos) out.fields = std::string(head.substr(line_end + 2)) + "\r\n";

    // The framing fields.
    std::optional<std::size_t> content_length;
    bool chunked = false, expect_continue = false;
    for (std::size_t pos = 0; pos < out.fields.size();) {
        const std::size_t eol = out.fields.find("\r\n", pos);
        const std::string_view line = std::string_view(out.fields).substr(pos, eol - pos);
        pos = eol + 2;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = detail::trim_ows(line.substr(colon + 1));
        if (detail::equals_nocase(name, "content-length")) {
            std::size_t n = 0;
            if (value.empty()) return detail::bad(400, "an empty Content-Length");
            for (const char c : value) {
                if (c < '0' || c > '9') return detail::bad(400, "a Content-Length that is not a number");
                n = n * 10 + static_cast<std::size_t>(c - '0');
                if (n > limits.max_body) {
                    return detail::bad(413, "a body over " + std::to_string(limits.max_body) + " bytes");
                }
            }
            if (content_length && *content_length != n) return detail::bad(400, "two different Content-Lengths");
            content_length = n;
        } else if (detail::equals_nocase(name, "transfer-encoding")) {
            if (!detail::equals_nocase(value, "chunked")) {
                return detail::bad(501, "Transfer-Encoding '" + std::string(value) +
                                            "' is not supported; send Content-Length or chunked");
            }
            chunked = true;
        } else if (detail::equals_nocase(name, "expect") && detail::equals_nocase(value, "100-continue")) {
            expect_continue = true;
        }
    }
    if (chunked && content_length) return detail::bad(400, "both Content-Length and Transfer-Encoding");

    const std::size_t body_at = head_end + 4;
    if (expect_continue && s.in.size() == body_at && (chunked || content_length.value_or(0) > 0)) {
        detail::send_text(fd, "HTTP/1.1 100 Continue\r\n\r\n", detail::server_clock::now() + limits.timeout);
    }
    if (chunked) {
        const read_outcome r = detail::read_chunked(s, body_at, out.body, limits);
        if (r.kind != read_outcome::ok) return r;
        return {};
    }
    const std::size_t length = content_length.value_or(0);
    while (s.in.size() < body_at + length) {
        const auto st = s.fill();
        if (st != detail::request_stream::more) return detail::stream_problem(st, "the body");
    }
    out.body = s.in.substr(body_at, length);
    return {};
}

inline const char* reason_phrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 413:
            return "Content Too Large";
        case 431:
            return "Request Header Fields Too Large";
        case 501:
            return "Not Implemented";
        default:
            return status < 300 ? "OK" : status < 500 ? "Client Error" : "Server Error";
    }
}

/// Writes one response: `extra_fields` ("Name: value\r\n" lines) after the
/// framing fields; a body is sent as text/plain. False when the client
/// went away or did not take it within limits.timeout.
inline bool write_response(int fd, int status, std::string_view extra_fields, std::string_view body,
                           const server_limits& limits) {
    std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
    if (!body.empty()) out += "Content-Type: text/plain; charset=utf-8\r\n";
    out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
    out.append(extra_fields).append("\r\n").append(body);
    return detail::send_text(fd, out, detail::server_clock::now() + limits.timeout);
}

/// Closes a connection. With `unread_input` (a request refused before it was
/// all read) the rest is read and dropped for up to a second first: closing
/// a socket with unread bytes resets the connection, and the client could
/// lose the response.
inline void close_connection(int fd, bool unread_input) {
    if (unread_input) {
        ::shutdown(fd, SHUT_WR);
        const auto until = detail::server_clock::now() + std::chrono::seconds(1);
        std::size_t dropped = 0;
        while (dropped < 4 * 1024 * 1024) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(until - detail::server_clock::now());
            pollfd p{fd, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
            char chunk[16384];
            const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
            if (n <= 0) break;
            dropped += static_cast<std::size_t>(n);
        }
    }
    ::close(fd);
}

/// A listening TCP socket on 127.0.0.1.
class listener {
public:
    /// Listens on 127.0.0.1:`port` (0: a free port the system picks).
    /// Throws std::runtime_error naming the address and the reason.
    explicit listener(std::uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
        const int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port);
        socklen_t len = sizeof addr;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            const int err = errno;
            ::close(fd_);
            throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(err));
        }
        port_ = ntohs(addr.sin_port);
    }
    listener(const listener&) = delete;
    listener& operator=(const listener&) = delete;
    ~listener() { ::close(fd_); }

    std::uint16_t port() const noexcept { return port_; }

    /// The next connection, or -1 (errno says why; EINTR and the like:
    /// call again).
    int accept_connection() {
        const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        return fd;
    }

private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

}  // namespace w3c_service
