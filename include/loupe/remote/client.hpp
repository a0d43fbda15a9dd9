// The client side of a process's control endpoint (docs/control.md):
// connect to `<socket dir>/<pid>.sock`, send request lines, read one reply
// line each. Used by `loupe ps|start|set|stop|status`; any program of the
// same user may use it.
//
//   loupe::remote::connection c(4242);                  // throws loupe::error
//   loupe::remote::json_value r = loupe::remote::parse_reply(c.exchange("info"));
//
// Every failure throws loupe::error naming the process and the reason
// ("process 4242: no loupe endpoint (no socket /run/user/1000/loupe/4242.sock)").
// Each send and each reply must complete within the timeout given.
// Thread-safety: a connection is used by one thread at a time.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include "loupe/base/error.hpp"
#include "loupe/remote/socket_dir.hpp"

namespace loupe::remote {

/// Longest reply line a client reads.
inline constexpr std::size_t max_reply_bytes = 4 * 1024 * 1024;

/// One connection to the endpoint of process `pid`. Move-only; closes on
/// destruction.
class connection {
public:
    /// Connects to `pid`'s socket in `dir` (default: socket_directory(), which
    /// is checked first). The endpoint's owner must be this user (or root).
    explicit connection(pid_t pid, std::string dir = {}, std::chrono::milliseconds timeout = std::chrono::seconds(5))
        : pid_(pid), timeout_(timeout) {
        if (dir.empty()) dir = socket_directory();
        try {
            check_socket_directory(dir);
            path_ = socket_path(dir, pid);
        } catch (const error& e) {
            fail(e.what());
        }
        struct stat st {};
        if (::lstat(path_.c_str(), &st) != 0) {
            fail(errno == ENOENT
                     ? "no loupe endpoint (no socket " + path_ + "; the process must call loupe::control::listen)"
                     : path_ + ": " + std::strerror(errno));
        }
        if (!S_ISSOCK(st.st_mode)) fail(path_ + " is not a socket");
        if (process_gone(pid)) fail("no such process (stale socket " + path_ + ")");
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd_ < 0) fail(std::string("socket: ") + std::strerror(errno));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
        if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            if (errno != EINPROGRESS && errno != EAGAIN) {
                const int e = errno;
                close_fd();
                fail("cannot connect to " + path_ + ": " + std::strerror(e) +
                     (e == ECONNREFUSED ? " (nothing listens: the process stopped its endpoint or died)" : ""));
            }
            wait_for(POLLOUT, "connecting");
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                close_fd();
                fail("cannot connect to " + path_ + ": " + std::strerror(err));
            }
        }
        ucred peer{};
        socklen_t len = sizeof peer;
        if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.uid != ::geteuid() && peer.uid != 0) {
            close_fd();
            fail("the endpoint at " + path_ + " belongs to uid " + std::to_string(peer.uid) + ", not to you; refused");
        }
    }
    connection(connection&& o) noexcept
        : pid_(o.pid_), timeout_(o.timeout_), fd_(o.fd_), path_(std::move(o.path_)), buffer_(std::move(o.buffer_)) {
        o.fd_ = -1;
    }
    connection& operator=(connection&&) = delete;
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    ~connection() { close_fd(); }

    /// Sends `line` (a newline is added) and returns the reply line, without
    /// its newline. Throws loupe::error when the endpoint closes the
    /// connection, does not answer within the timeout, or the reply is
    /// longer than max_reply_bytes.
    std::string exchange(std::string_view line) {
        send_line(line);
        return read_line();
    }

    /// Sends `line` and a newline (no reply read).
    void send_line(std::string_view line) {
        std::string out(line);
        out += '\n';
        std::size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = ::send(fd_, out.data() + done, out.size() - done, MSG_NOSIGNAL);
            if (n > 0) {
                done += static_cast<std::size_t>(n);
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                wait_for(POLLOUT, "sending the request");
            } else {
                fail(std::string("sending the request: ") + std::strerror(errno));
            }
        }
    }

    /// Reads one reply line (without its newline).
    std::string read_line() {
        for (;;) {
            const std::size_t nl = buffer_.find('\n');
            if (nl != std::string::npos) {
                std::string line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return line;
            }
            if (buffer_.size() > max_reply_bytes)
                fail("reply longer than " + std::to_string(max_reply_bytes) + " bytes");
            char chunk[16384];
            const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
            if (n > 0) {
                buffer_.append(chunk, static_cast<std::size_t>(n));
            } else if (n == 0) {
                fail("the endpoint closed the connection without a reply");
            } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                wait_for(POLLIN, "waiting for the reply");
            } else {
                fail(std::string("reading the reply: ") + std::strerror(errno));
            }
        }
    }

    /// The connection's descriptor (e.g. to shut down one direction).
    int fd() const noexcept { return fd_; }
    const std::string& path() const noexcept { return path_; }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw error("process " + std::to_string(static_cast<long>(pid_)) + ": " + what);
    }
    void close_fd() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    void wait_for(short events, const char* doing) {
        pollfd p{fd_, events, 0};
        const auto deadline = std::chrono::steady_clock::now() + timeout_;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            const int r = ::poll(&p, 1, static_cast<int>(left.count()));
            if (r > 0) return;
            if (r < 0 && errno != EINTR) fail(std::string("poll: ") + std::strerror(errno));
        }
        fail(std::string("no answer within ") + std::to_string(timeout_.count()) + " ms while " + doing);
    }

    pid_t pid_;
    std::chrono::milliseconds timeout_;
    int fd_ = -1;
    std::string path_;
    std::string buffer_;
};

}  // namespace loupe::remote
