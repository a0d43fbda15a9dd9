// Start, change and stop sessions from outside the process (docs/control.md).
//
//     loupe::control::listen();   // once, e.g. at the start of main
//
// or, without a change to the program, LOUPE_CONTROL=1 in its environment
// (read when the program starts, in any program that includes this header;
// LOUPE_CONTROL_OUTPUT=DIR sets where traces go, else the working
// directory; an explicit listen() later replaces that endpoint) makes this
// process's control endpoint: a Unix domain socket
// `<dir>/<pid>.sock` in the user's socket directory (remote/socket_dir.hpp),
// served by a thread of loupe's own. Then, from a shell of the same user:
//
//     loupe ps
//     loupe start 4242 --name alice --filter 'user == "alice"' --for 30s -o alice.loupe
//     loupe stop 4242 alice
//
// Only processes of the same user (and root, when allow_root is set) are
// served; every other peer is refused and counted. Traces are written inside
// the output directory only. Nothing on the recording path changes: the
// endpoint starts sessions as start_session does.
//
// fork(): the endpoint's thread does not exist in a child. The child closes
// its copies of the endpoint's descriptors (the socket file stays the
// parent's) and may call listen() to get its own endpoint, `<child pid>.sock`.
// The endpoint takes no lock a host thread could hold.
//
// exit: listen() registers an atexit hook that stops the endpoint (sessions
// it started are stopped, their files complete) and removes the socket.
#pragma once

#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <dirent.h>

#include "loupe/base/config.hpp"
#include "loupe/base/error.hpp"
#include "loupe/control/detail/output_path.hpp"
#include "loupe/control/detail/server.hpp"
#include "loupe/remote/socket_dir.hpp"

namespace loupe::control {

/// How the endpoint is made. Plain data.
struct listen_options {
    /// Where sessions started through the endpoint may write their traces:
    /// relative output paths are taken from here, absolute ones must be
    /// inside it. Empty: the working directory at the listen() call.
    std::string output_directory;
    /// Where the socket goes. Empty: remote::socket_directory()
    /// ($XDG_RUNTIME_DIR/loupe, else /tmp/loupe-<uid>). Made 0700 when
    /// missing; refused unless a directory of this user's, mode 0700.
    std::string socket_directory;
    /// Also serve root (uid 0). Off: only this process's effective user.
    bool allow_root = false;
    /// How long a request line and each reply may take; a connection lives
    /// at most three times this long. Served one connection at a time, so a
    /// slow client delays others by at most that much.
    std::chrono::milliseconds io_timeout{1000};
    /// The names other processes call this one by: what their
    /// tasks::outgoing_call gives as its peer (a service name, host:port).
    /// `info` reports them, and `loupe record` gives every process it
    /// records the names of all of them, so that their task rules tag the
    /// calls to profiled peers only (`profiled …; tag profiled`, task_rules.hpp).
    /// Empty: $OTEL_SERVICE_NAME when set, else none. At most 16 names of
    /// 1 to 255 printable bytes each.
    std::vector<std::string> names;
};

/// Where the endpoint listens.
struct endpoint {
    std::string socket_path;       ///< `<dir>/<pid>.sock`
    std::string output_directory;  ///< the real path traces go under
};

namespace detail {

LOUPE_API inline std::atomic<server*> g_server{nullptr};
// A listen() or stop_listening() in progress (they do not run at once).
LOUPE_API inline std::atomic<bool> g_busy{false};
LOUPE_API inline std::atomic<bool> g_hooks_installed{false};
// The endpoint was made because of LOUPE_CONTROL=1: a listen() replaces it.
LOUPE_API inline std::atomic<bool> g_listening_from_environment{false};
// Endpoints a forked child inherited: kept reachable, never destroyed.
LOUPE_API inline std::atomic<server*> g_abandoned{nullptr};

inline void after_fork_in_child() noexcept {
    if (server* s = g_server.exchange(nullptr)) {
        s->abandon_in_child();
        g_abandoned.store(s);
    }
    g_busy.store(false);
}

inline bool stop_endpoint() noexcept {
    // Another thread inside listen()/stop_listening(): wait for it (bounded).
    for (int i = 0; g_busy.exchange(true, std::memory_order_acquire); ++i) {
        if (i == 2000) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    server* s = g_server.exchange(nullptr);
    if (s != nullptr) {
        s->request_stop();
        s->join();
        delete s;
    }
    g_busy.store(false, std::memory_order_release);
    return s != nullptr;
}

inline void at_exit() noexcept { stop_endpoint(); }

// Removes the sockets of processes that no longer exist, and this pid's own
// (left by an earlier process with the same pid). Only sockets; bounded.
inline void remove_stale_sockets(const std::string& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    std::size_t seen = 0;
    while (const dirent* e = ::readdir(d)) {
        if (++seen > 4096) break;
        pid_t pid = 0;
        if (!remote::parse_socket_name(e->d_name, pid)) continue;
        if (pid != ::getpid() && !remote::process_gone(pid)) continue;
        const std::string path = dir + "/" + e->d_name;
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());
    }
    ::closedir(d);
}

struct fd_guard {
    int fd = -1;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
    int release() noexcept {
        const int f = fd;
        fd = -1;
        return f;
    }
};

// Throws loupe::error naming the first name that is not 1 to 255 printable
// bytes (listen_options::names), or when there are more than 16.
inline void check_names(const std::vector<std::string>& names) {
    if (names.size() > 16) {
        throw error("listen_options::names: expected at most 16 names, found " + std::to_string(names.size()));
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string& n = names[i];
        bool printable = !n.empty() && n.size() <= 255;
        for (const char c : n) printable = printable && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
        if (!printable) {
            throw error("listen_options::names[" + std::to_string(i) + "] ('" + n.substr(0, 40) +
                        "'): expected 1 to 255 printable bytes");
        }
    }
}

inline endpoint start_endpoint(const listen_options& options) {
    if (options.io_timeout.count() < 1 || options.io_timeout.count() > 600000) {
        throw error("listen_options::io_timeout of " + std::to_string(options.io_timeout.count()) +
                    " ms: expected 1 to 600000 ms");
    }
    std::vector<std::string> names = options.names;
    if (names.empty()) {
        const char* service = std::getenv("OTEL_SERVICE_NAME");
        if (service != nullptr && *service != '\0') names.emplace_back(service);
    }
    check_names(names);
    if (server* s = g_server.load()) {
        throw error("loupe::control::listen: this process already listens on " + s->socket_path() +
                    " (call loupe::control::stop_listening first)");
    }
    std::string output_root;
    if (options.output_directory.empty()) {
        char* cwd = ::getcwd(nullptr, 0);
        if (cwd == nullptr)
            throw error(std::string("listen: cannot read the working directory: ") + std::strerror(errno));
        output_root = cwd;
        std::free(cwd);
    } else {
        output_root = options.output_directory;
    }
    output_root = real_directory(output_root);
    const std::string dir = options.socket_directory.empty() ? remote::socket_directory() : options.socket_directory;
    remote::make_socket_directory(dir);
    const std::string path = remote::socket_path(dir, ::getpid());
    remove_stale_sockets(dir);

    fd_guard listener{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
    if (listener.fd < 0) throw error(std::string("listen: socket: ") + std::strerror(errno));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::bind(listener.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        throw error("listen: cannot bind " + path + ": " + std::strerror(errno));
    }
    if (::chmod(path.c_str(), 0600) != 0 || ::listen(listener.fd, 16) != 0) {
        const int e = errno;
        ::unlink(path.c_str());
        throw error("listen: " + path + ": " + std::strerror(e));
    }
    int wake[2];
    if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        const int e = errno;
        ::unlink(path.c_str());
        throw error(std::string("listen: pipe: ") + std::strerror(e));
    }
    server_limits limits;
    limits.io_timeout = options.io_timeout;
    limits.connection_time = options.io_timeout * 3;
    limits.allow_root = options.allow_root;
    std::unique_ptr<server> s;
    try {
        s = std::make_unique<server>(path, output_root, std::move(names), listener.fd, wake[0], wake[1], limits);
    } catch (...) {
        ::close(wake[0]);
        ::close(wake[1]);
        ::unlink(path.c_str());
        throw;
    }
    listener.release();  // the server owns the descriptors now (and removes the socket)
    if (!g_hooks_installed.exchange(true)) {
        pthread_atfork(nullptr, nullptr, &after_fork_in_child);
        std::atexit(&at_exit);
    }
    try {
        s->start();
    } catch (const std::system_error& e) {
        throw error(std::string("listen: cannot start the endpoint's thread: ") + e.what());
    }
    endpoint result{path, output_root};
    g_server.store(s.release(), std::memory_order_release);
    return result;
}

}  // namespace detail

/// Makes this process's control endpoint and starts its thread. Throws
/// loupe::error with the path and the reason when the socket directory is
/// unsafe (a symlink, another owner, open to others) or cannot be made, the
/// output directory does not exist, the socket cannot be bound, or this
/// process already listens.
/// Cost: a few system calls and one thread; nothing per recorded event.
/// Thread-safety: any thread; a listen() and a stop_listening() on two
/// threads at once: the later waits for the earlier, and a listen() that
/// finds the endpoint being made throws.
inline endpoint listen(const listen_options& options = {}) {
    if (detail::g_listening_from_environment.exchange(false)) detail::stop_endpoint();
    if (detail::g_busy.exchange(true, std::memory_order_acquire)) {
        throw error("loupe::control::listen: another thread is making or stopping the endpoint");
    }
    try {
        endpoint e = detail::start_endpoint(options);
        detail::g_busy.store(false, std::memory_order_release);
        return e;
    } catch (...) {
        detail::g_busy.store(false, std::memory_order_release);
        throw;
    }
}

/// Stops the endpoint: its thread ends, sessions started through it are
/// stopped (their files complete) and the socket is removed. False when
/// there was none. Runs at exit by itself.
/// Cost: joins the thread (bounded by the I/O timeout) and stops sessions
/// (about a millisecond each). Thread-safety: any thread but the endpoint's.
inline bool stop_listening() noexcept {
    detail::g_listening_from_environment.store(false);
    return detail::stop_endpoint();
}

/// The socket this process listens on; empty when it does not.
/// Thread-safety: not while another thread calls stop_listening().
inline std::string listening_on() {
    detail::server* s = detail::g_server.load(std::memory_order_acquire);
    return s != nullptr ? s->socket_path() : std::string();
}

/// Connections refused so far (peers of another user); 0 when not listening.
/// Thread-safety: not while another thread calls stop_listening().
inline std::uint64_t refusals() noexcept {
    detail::server* s = detail::g_server.load(std::memory_order_acquire);
    return s != nullptr ? s->refusals() : 0;
}

namespace detail {

// LOUPE_CONTROL=1 in the environment: listen() with the defaults when the
// program starts (traces under $LOUPE_CONTROL_OUTPUT when set, else the
// working directory). "0" or empty: nothing. Never throws: what went wrong
// goes to stderr and the program runs on without an endpoint.
inline bool listen_from_environment() noexcept {
    const char* value = std::getenv("LOUPE_CONTROL");
    if (value == nullptr || *value == '\0' || std::strcmp(value, "0") == 0) return false;
    if (std::strcmp(value, "1") != 0) {
        std::fprintf(stderr, "loupe: LOUPE_CONTROL='%.40s': expected 1 (listen) or 0; not listening\n", value);
        return false;
    }
    try {
        listen_options options;
        const char* output = std::getenv("LOUPE_CONTROL_OUTPUT");
        if (output != nullptr && *output != '\0') options.output_directory = output;
        listen(options);
        g_listening_from_environment.store(true);
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "loupe: LOUPE_CONTROL=1: %s; not listening\n", e.what());
        return false;
    }
}

// Read once, while the program starts (the dynamic initialization of the
// first file that includes this header): a program that contains the
// endpoint can be made to listen without a change to its code.
LOUPE_API inline const bool g_listens_from_environment = listen_from_environment();

}  // namespace detail

}  // namespace loupe::control
