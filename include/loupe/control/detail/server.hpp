// The control endpoint's thread (docs/control.md): accepts connections on
// the process's Unix socket one at a time, checks each peer's credentials,
// reads request lines (bounded, with timeouts), answers each with one JSON
// line from the session table, and stops sessions whose duration ran out.
//
// Everything it owns (the session table, the connection) is touched by this
// thread only. Host threads reach it through atomics and a wake-up pipe:
// there is no lock a forked child could inherit held.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/control/detail/session_table.hpp"
#include "loupe/remote/protocol.hpp"

namespace loupe::control::detail {

/// What the endpoint's thread needs to know (from listen_options).
struct server_limits {
    std::chrono::milliseconds io_timeout{1000};       ///< per request line and per reply
    std::chrono::milliseconds connection_time{3000};  ///< a connection's whole life
    std::size_t requests_per_connection = 100;
    bool allow_root = false;
};

class server {
public:
    server(std::string socket_path, std::string output_root, std::vector<std::string> names, int listen_fd,
           int wake_read, int wake_write, server_limits limits)
        : socket_path_(std::move(socket_path)),
          output_root_(std::move(output_root)),
          names_(std::move(names)),
          limits_(limits),
          listen_fd_(listen_fd),
          wake_read_(wake_read),
          wake_write_(wake_write),
          owner_pid_(::getpid()),
          table_(output_root_) {}
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// Closes the descriptors and removes the socket (in the process that
    /// made it). Call after join().
    ~server() {
        table_.stop_all();
        close_all();
        if (::getpid() == owner_pid_) ::unlink(socket_path_.c_str());
    }

    /// Starts the thread. Throws std::system_error when it cannot.
    void start() {
        thread_ = std::thread([this] { run(); });
    }

    /// Asks the thread to stop (any thread; async-signal-safe).
    void request_stop() noexcept {
        stopping_.store(true, std::memory_order_release);
        const char byte = 1;
        [[maybe_unused]] const ssize_t n = ::write(wake_write_, &byte, 1);
    }

    void join() {
        if (thread_.joinable()) thread_.join();
    }

    /// In a forked child: the thread does not exist there. Closes the
    /// descriptors (the socket file stays: it is the parent's) and leaves
    /// everything else as it is; the object is never destroyed.
    void abandon_in_child() noexcept { close_all(); }

    const std::string& socket_path() const noexcept { return socket_path_; }
    const std::string& output_root() const noexcept { return output_root_; }
    std::uint64_t refusals() const noexcept { return refusals_.load(std::memory_order_relaxed); }

private:
    using clock = std::chrono::steady_clock;

    void close_all() noexcept {
        for (std::atomic<int>* fd : {&listen_fd_, &wake_read_, &wake_write_, &conn_fd_}) {
            const int old = fd->exchange(-1);
            if (old >= 0) ::close(old);
        }
    }

    // The thread's loop. Never lets an exception out: a failure closes the
    // connection at hand, is reported once, and the loop goes on.
    void run() noexcept {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, nullptr);  // host signals go to host threads
        pthread_setname_np(pthread_self(), "loupe-control");
        bool reported = false;
        while (!stopping_.load(std::memory_order_acquire)) {
            try {
                step();
            } catch (const std::exception& e) {
                close_connection();
                if (!reported) loupe::detail::report_error(std::string("control endpoint: ") + e.what());
                reported = true;
            }
        }
        close_connection();
        table_.stop_all();
    }

    // One poll and what it found.
    void step() {
        const clock::time_point now = clock::now();
        table_.stop_expired(now);
        clock::time_point wake_at{};
        bool timed = table_.next_deadline(wake_at);
        const int conn = conn_fd_.load(std::memory_order_relaxed);
        if (conn >= 0 && (!timed || conn_deadline_ < wake_at)) {
            wake_at = conn_deadline_;
            timed = true;
        }
        int timeout_ms = -1;
        if (timed) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wake_at - now).count() + 1;
            timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, 60000));
        }
        pollfd fds[2] = {{wake_read_.load(std::memory_order_relaxed), POLLIN, 0},
                         {conn >= 0 ? conn : listen_fd_.load(std::memory_order_relaxed), POLLIN, 0}};
        const int ready = ::poll(fds, 2, timeout_ms);
        if (ready < 0) return;  // EINTR: go round
        if ((fds[0].revents & POLLIN) != 0) {
            char drain[64];
            while (::read(fds[0].fd, drain, sizeof drain) > 0) {
            }
        }
        if (stopping_.load(std::memory_order_acquire)) return;
        if (conn < 0) {
            if ((fds[1].revents & POLLIN) != 0) accept_one();
            return;
        }
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_connection();
        if (conn_fd_.load(std::memory_order_relaxed) >= 0 && clock::now() >= conn_deadline_) {
            reply_and_close(error_reply({},
                                        "no complete request line within " +
                                            std::to_string(limits_.io_timeout.count()) + " ms (or the connection's " +
                                            std::to_string(limits_.connection_time.count()) + " ms); connection closed",
                                        0, buffer_));
        }
    }

    void accept_one() {
        const int fd =
            ::accept4(listen_fd_.load(std::memory_order_relaxed), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            // Out of descriptors or memory: the socket stays readable, so
            // pause rather than spin (the peer waits in the backlog).
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                pollfd wake{wake_read_.load(std::memory_order_relaxed), POLLIN, 0};
                ::poll(&wake, 1, 100);
            }
            return;  // else the peer left already: go round
        }
        ucred peer{};
        socklen_t len = sizeof peer;
        const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0;
        const uid_t me = ::geteuid();
        if (!known || !(peer.uid == me || (peer.uid == 0 && limits_.allow_root))) {
            refusals_.fetch_add(1, std::memory_order_relaxed);
            std::string reply =
                error_reply({},
                            known ? "refused: uid " + std::to_string(peer.uid) + " is not the owner (uid " +
                                        std::to_string(me) + ") of process " + std::to_string(::getpid())
                                  : std::string("refused: the peer's credentials are unknown"),
                            0, {});
            reply += '\n';
            [[maybe_unused]] const ssize_t n = ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            ::close(fd);
            return;
        }
        conn_fd_.store(fd, std::memory_order_relaxed);
        buffer_.clear();
        requests_on_connection_ = 0;
        const clock::time_point now = clock::now();
        conn_end_ = now + limits_.connection_time;
        conn_deadline_ = std::min(now + limits_.io_timeout, conn_end_);
    }

    void close_connection() noexcept {
        const int fd = conn_fd_.exchange(-1);
        if (fd >= 0) ::close(fd);
        buffer_.clear();
        buffer_.shrink_to_fit();
    }

    // Reads what is there; answers each complete line.
    void read_connection() {
        const int fd = conn_fd_.load(std::memory_order_relaxed);
        char chunk[16384];
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) close_connection();
            return;
        }
        if (n == 0) {  // the peer closed (or shut down) its side
            if (!buffer_.empty()) {
                reply_and_close(error_reply({},
                                            "request ended after " + std::to_string(buffer_.size()) +
                                                " bytes without a newline (the connection was half-closed)",
                                            0, buffer_));
            } else {
                close_connection();
            }
            return;
        }
        buffer_.append(chunk, static_cast<std::size_t>(n));
        std::size_t from = 0;
        for (std::size_t nl; (nl = buffer_.find('\n', from)) != std::string::npos; from = nl + 1) {
            const std::string_view line(buffer_.data() + from, nl - from);
            ++requests_;
            const endpoint_facts facts{socket_path_, output_root_, &names_, &refusals_, requests_};
            std::string reply = table_.handle(line, facts);
            reply += '\n';
            if (!write_reply(reply)) {
                close_connection();
                return;
            }
            if (++requests_on_connection_ >= limits_.requests_per_connection) {
                close_connection();
                return;
            }
            conn_deadline_ = std::min(clock::now() + limits_.io_timeout, conn_end_);
        }
        buffer_.erase(0, from);
        if (buffer_.size() > remote::max_request_bytes) {
            reply_and_close(error_reply(
                {},
                "request line longer than " + std::to_string(remote::max_request_bytes) + " bytes; connection closed",
                0, buffer_));
        }
    }

    // Writes all of `reply` within the I/O timeout; false when it cannot.
    bool write_reply(const std::string& reply) {
        const int fd = conn_fd_.load(std::memory_order_relaxed);
        const clock::time_point deadline = clock::now() + limits_.io_timeout;
        std::size_t done = 0;
        while (done < reply.size()) {
            const ssize_t n = ::send(fd, reply.data() + done, reply.size() - done, MSG_NOSIGNAL);
            if (n > 0) {
                done += static_cast<std::size_t>(n);
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
            if (left <= 0) return false;
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, static_cast<int>(left)) == 0) return false;
        }
        return true;
    }

    void reply_and_close(std::string reply) {
        reply += '\n';
        write_reply(reply);
        close_connection();
    }

    std::string socket_path_;
    std::string output_root_;
    std::vector<std::string> names_;  // the names peers call this process by (listen_options::names)
    server_limits limits_;
    std::atomic<int> listen_fd_;
    std::atomic<int> wake_read_;
    std::atomic<int> wake_write_;
    std::atomic<int> conn_fd_{-1};
    pid_t owner_pid_;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> refusals_{0};
    std::uint64_t requests_ = 0;
    session_table table_;
    std::string buffer_;  // the connection's unanswered bytes
    std::size_t requests_on_connection_ = 0;
    clock::time_point conn_deadline_{};
    clock::time_point conn_end_{};
    std::thread thread_;
};

}  // namespace loupe::control::detail
