// A minimal HTTP/1.1 client for one POST: resolve the host, connect with a
// timeout (non-blocking connect + poll, each address in turn), send the
// request (MSG_NOSIGNAL: a peer that went away is an error value, not a
// SIGPIPE), then read the reply within a deadline: status line, headers
// (Content-Length, Transfer-Encoding: chunked, Retry-After, Content-Type),
// body bounded in size. One connection per request, `Connection: close`:
// an exporter's requests are large and few, so a connection's setup is
// noise next to them, and no state outlives a call.
//
// Errors are values: `response::failure` says which step failed and
// `error` names host:port and the errno text. Nothing throws but
// std::bad_alloc.
//
// Cost: the request's bytes are sent once from the caller's buffers (the
// head is built, the body is not copied); blocking, on the calling thread,
// at most connect_timeout per address plus io_timeout.
// Thread-safety: reentrant (no shared state).
#pragma once

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/base/version.hpp"
#include "loupe/export/detail/url.hpp"
#include "loupe/text/ascii.hpp"

namespace loupe::detail::http {

struct timeouts {
    std::chrono::milliseconds connect{10000};  ///< per address
    std::chrono::milliseconds io{30000};       ///< sending the request and reading the reply, together
};

struct response {
    enum class failure {
        none,     ///< a reply was read: see status
        resolve,  ///< the host name did not resolve
        connect,  ///< no address accepted the connection (refused, unreachable, timed out)
        send,     ///< the connection broke while the request was sent
        receive,  ///< the connection broke, or closed, before a whole reply
        timeout,  ///< no whole reply within io_timeout
        protocol  ///< the reply is not HTTP/1.x, or is malformed
    };
    failure fail = failure::none;
    std::string error;  ///< "127.0.0.1:4318: connect: Connection refused"
    int status = 0;
    std::string reason;
    std::string content_type;
    long retry_after = -1;  ///< Retry-After in seconds; -1: none, or an HTTP-date
    std::string body;       ///< at most max_body bytes (a longer body is cut)
};

/// Headers loupe writes itself; given ones with these names are ignored.
inline bool is_framing_header(std::string_view name) {
    static constexpr std::string_view framing[] = {"host", "content-length", "content-type", "content-encoding",
                                                   "connection", "transfer-encoding"};
    for (const std::string_view f : framing) {
        if (f.size() != name.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < f.size() && same; ++i) {
            char c = name[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            same = c == f[i];
        }
        if (same) return true;
    }
    return false;
}

namespace client_detail {

using clock = std::chrono::steady_clock;

inline int remaining_ms(clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    return left <= 0 ? 0 : left > 1000000 ? 1000000 : static_cast<int>(left);
}

inline std::string errno_text(int e) { return std::strerror(e); }

using loupe::text::iequals;

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

class socket_fd {
public:
    socket_fd() = default;
    socket_fd(const socket_fd&) = delete;
    socket_fd& operator=(const socket_fd&) = delete;
    ~socket_fd() { reset(-1); }
    void reset(int fd) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }
    int get() const noexcept { return fd_; }

private:
    int fd_ = -1;
};

// Connects to one of the host's addresses; -1 and `error` when none accepts.
inline int connect_any(const url& u, std::chrono::milliseconds timeout, response& r) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(u.port);
    const int gai = ::getaddrinfo(u.host.c_str(), port.c_str(), &hints, &found);
    if (gai != 0) {
        r.fail = response::failure::resolve;
        r.error = u.authority() + ": cannot resolve host: " + (gai == EAI_SYSTEM ? errno_text(errno) : ::gai_strerror(gai));
        return -1;
    }
    int last_errno = ECONNREFUSED;
    bool timed_out = false;
    int connected = -1;
    for (const addrinfo* a = found; a != nullptr && connected < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            const auto deadline = clock::now() + timeout;
            do {
                rc = ::poll(&p, 1, remaining_ms(deadline));
            } while (rc < 0 && errno == EINTR);
            if (rc == 0) {
                timed_out = true;
                last_errno = ETIMEDOUT;
                ::close(fd);
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            if (rc < 0) err = errno;
            else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
            rc = err == 0 ? 0 : -1;
            errno = err;
        }
        if (rc != 0) {
            last_errno = errno;
            ::close(fd);
            continue;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        connected = fd;
    }
    ::freeaddrinfo(found);
    if (connected < 0) {
        r.fail = response::failure::connect;
        r.error = u.authority() + ": connect: " +
                  (timed_out && last_errno == ETIMEDOUT
                       ? "no answer within " + std::to_string(timeout.count()) + " ms"
                       : errno_text(last_errno));
    }
    return connected;
}

// Sends all of `data`; false with errno (or ETIMEDOUT) when it cannot.
inline bool send_all(int fd, std::string_view data, clock::time_point deadline) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n > 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd, POLLOUT, 0};
            const int rc = ::poll(&p, 1, remaining_ms(deadline));
            if (rc == 0) {
                errno = ETIMEDOUT;
                return false;
            }
            if (rc < 0 && errno != EINTR) return false;
            continue;
        }
        if (n == 0) errno = EPIPE;
        return false;
    }
    return true;
}

// Appends what the socket has to `in`: >0 bytes read, 0 end of stream, -1
// error (errno; ETIMEDOUT past the deadline).
inline long receive_some(int fd, std::string& in, clock::time_point deadline) {
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n >= 0) {
            in.append(buffer, static_cast<std::size_t>(n));
            return static_cast<long>(n);
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        pollfd p{fd, POLLIN, 0};
        const int rc = ::poll(&p, 1, remaining_ms(deadline));
        if (rc == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (rc < 0 && errno != EINTR) return -1;
    }
}

enum class parse_state { need_more, done, bad };

// Decodes a chunked body from `in` (starting at `at`) into `body`, at most
// `max_body` bytes kept.
inline parse_state parse_chunked(const std::string& in, std::size_t at, std::string& body, std::size_t max_body,
                                 std::string& what) {
    body.clear();
    for (;;) {
        const std::size_t eol = in.find("\r\n", at);
        if (eol == std::string::npos) {
            if (in.size() - at <= 1024) return parse_state::need_more;
            what = "chunk size line longer than 1024 bytes";
            return parse_state::bad;
        }
        std::uint64_t size = 0;
        std::size_t k = at;
        for (; k < eol; ++k) {
            const char c = in[k];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) break;
            if (size > (std::uint64_t{1} << 40)) {
                what = "chunk size too large";
                return parse_state::bad;
            }
            size = size * 16 + static_cast<std::uint64_t>(d);
        }
        if (k == at || (k < eol && in[k] != ';' && in[k] != ' ')) {
            what = "bad chunk size line";
            return parse_state::bad;
        }
        at = eol + 2;
        if (size == 0) {
            // Trailers up to an empty line.
            for (;;) {
                const std::size_t end = in.find("\r\n", at);
                if (end == std::string::npos) return parse_state::need_more;
                if (end == at) return parse_state::done;
                at = end + 2;
            }
        }
        if (in.size() - at < size + 2) {
            // Beyond the body we keep: done once the kept part is there.
            if (body.size() + (in.size() - at) >= max_body) {
                body.append(in, at, max_body - body.size());
                return parse_state::done;
            }
            return parse_state::need_more;
        }
        const std::size_t keep = static_cast<std::size_t>(size) < max_body - body.size()
                                     ? static_cast<std::size_t>(size)
                                     : max_body - body.size();
        body.append(in, at, keep);
        at += static_cast<std::size_t>(size);
        if (in.compare(at, 2, "\r\n") != 0) {
            what = "chunk not followed by CRLF";
            return parse_state::bad;
        }
        at += 2;
        if (body.size() >= max_body) return parse_state::done;
    }
}

// Parses the head at the start of `in` (ending at `head_end`, the index
// after its blank line) into `r`; false with `what` when malformed.
inline bool parse_head(std::string_view head, response& r, std::int64_t& content_length, bool& chunked,
                       std::string& what) {
    const std::size_t eol = head.find("\r\n");
    const std::string_view status_line = head.substr(0, eol);
    if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
        what = "not an HTTP/1.x status line";
        return false;
    }
    int status = 0;
    for (std::size_t i = 9; i < 12; ++i) {
        if (status_line[i] < '0' || status_line[i] > '9') {
            what = "bad status code";
            return false;
        }
        status = status * 10 + (status_line[i] - '0');
    }
    r.status = status;
    r.reason = std::string(trim(status_line.size() > 12 ? status_line.substr(13) : std::string_view()));
    content_length = -1;
    chunked = false;
    for (std::size_t at = eol + 2; at < head.size();) {
        std::size_t end = head.find("\r\n", at);
        if (end == std::string_view::npos) end = head.size();
        const std::string_view line = head.substr(at, end - at);
        at = end + 2;
        if (line.empty()) break;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            what = "header line without ':'";
            return false;
        }
        const std::string_view name = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        if (iequals(name, "content-length")) {
            std::int64_t n = 0;
            if (value.empty()) {
                what = "empty Content-Length";
                return false;
            }
            for (const char c : value) {
                if (c < '0' || c > '9' || n > (std::int64_t{1} << 50)) {
                    what = "bad Content-Length '" + std::string(value) + "'";
                    return false;
                }
                n = n * 10 + (c - '0');
            }
            content_length = n;
        } else if (iequals(name, "transfer-encoding")) {
            chunked = value.size() >= 7 && iequals(value.substr(value.size() - 7), "chunked");
        } else if (iequals(name, "retry-after")) {
            long seconds = 0;
            bool digits = !value.empty();
            for (const char c : value) {
                if (c < '0' || c > '9') digits = false;
                else if (seconds < 1000000) seconds = seconds * 10 + (c - '0');
            }
            r.retry_after = digits ? seconds : -1;  // the HTTP-date form is not read
        } else if (iequals(name, "content-type")) {
            r.content_type = std::string(value);
        }
    }
    return true;
}

}  // namespace client_detail

/// POSTs `body` to `u` with `headers` (a framing header among them is
/// ignored, see is_framing_header) and reads the reply. `content_encoding`
/// ("gzip"), when not empty, is sent as Content-Encoding.
inline response post(const url& u, const std::vector<std::pair<std::string, std::string>>& headers,
                     std::string_view body, std::string_view content_encoding, const timeouts& limits,
                     std::size_t max_body = 1024 * 1024, std::size_t max_head = 64 * 1024) {
    using namespace client_detail;
    response r;
    socket_fd fd;
    fd.reset(connect_any(u, limits.connect, r));
    if (fd.get() < 0) return r;
    const auto deadline = clock::now() + limits.io;

    std::string head = "POST " + u.path + " HTTP/1.1\r\nHost: " + u.host_header() +
                       "\r\nUser-Agent: loupe/" LOUPE_VERSION_STRING "\r\nContent-Type: application/x-protobuf\r\n";
    if (!content_encoding.empty()) head.append("Content-Encoding: ").append(content_encoding).append("\r\n");
    head += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
    for (const auto& h : headers) {
        if (is_framing_header(h.first)) continue;
        head.append(h.first).append(": ").append(h.second).append("\r\n");
    }
    head += "\r\n";
    int send_errno = 0;
    if (!send_all(fd.get(), head, deadline) || !send_all(fd.get(), body, deadline)) send_errno = errno;
    if (send_errno == ETIMEDOUT) {
        r.fail = response::failure::timeout;
        r.error = u.authority() + ": the request was not sent within " + std::to_string(limits.io.count()) + " ms";
        return r;
    }

    // The reply (a server may answer before reading the whole request, then
    // close: a reply already there is still read).
    std::string in;
    std::size_t head_end = 0;
    std::int64_t content_length = -1;
    bool chunked = false;
    std::string what;
    const auto broken = [&](response::failure f, std::string text) {
        r.fail = f;
        r.error = u.authority() + ": " + std::move(text);
        r.status = 0;
        return r;
    };
    const auto read_more = [&]() -> long {
        const long n = receive_some(fd.get(), in, deadline);
        return n;
    };
    for (;;) {
        // The head (skipping interim 1xx replies).
        std::size_t blank = in.find("\r\n\r\n");
        while (blank == std::string::npos) {
            if (in.size() > max_head) return broken(response::failure::protocol, "reply headers longer than " + std::to_string(max_head) + " bytes");
            const long n = read_more();
            if (n <= 0) {
                if (send_errno != 0) return broken(response::failure::send, "send: " + errno_text(send_errno));
                if (n < 0 && errno == ETIMEDOUT) {
                    return broken(response::failure::timeout, "no reply within " + std::to_string(limits.io.count()) + " ms");
                }
                if (n < 0) return broken(response::failure::receive, "receive: " + errno_text(errno));
                return broken(response::failure::receive, in.empty() ? "connection closed without a reply"
                                                                     : "connection closed in the middle of the reply");
            }
            blank = in.find("\r\n\r\n");
        }
        head_end = blank + 4;
        if (!parse_head(std::string_view(in).substr(0, head_end), r, content_length, chunked, what)) {
            return broken(response::failure::protocol, "malformed reply: " + what);
        }
        if (r.status >= 100 && r.status < 200) {
            in.erase(0, head_end);
            r.retry_after = -1;
            continue;
        }
        break;
    }
    // The body.
    if (r.status == 204 || r.status == 304) return r;
    for (;;) {
        if (chunked) {
            const parse_state s = parse_chunked(in, head_end, r.body, max_body, what);
            if (s == parse_state::done) return r;
            if (s == parse_state::bad) return broken(response::failure::protocol, "malformed chunked reply: " + what);
        } else if (content_length >= 0) {
            const std::size_t want = static_cast<std::uint64_t>(content_length) < max_body
                                         ? static_cast<std::size_t>(content_length)
                                         : max_body;
            if (in.size() - head_end >= want) {
                r.body.assign(in, head_end, want);
                return r;
            }
        } else if (in.size() - head_end >= max_body) {
            r.body.assign(in, head_end, max_body);
            return r;
        }
        const long n = read_more();
        if (n == 0 && !chunked && content_length < 0) {
            r.body.assign(in, head_end, std::string::npos);  // the body ends with the connection
            return r;
        }
        if (n == 0) return broken(response::failure::receive, "connection closed in the middle of the reply");
        if (n < 0 && errno == ETIMEDOUT) {
            return broken(response::failure::timeout, "no whole reply within " + std::to_string(limits.io.count()) + " ms");
        }
        if (n < 0) return broken(response::failure::receive, "receive: " + errno_text(errno));
    }
}

}  // namespace loupe::detail::http
