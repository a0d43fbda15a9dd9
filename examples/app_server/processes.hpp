// The demo's other processes: the inventory and payment services
// (services.hpp), the same binary run as `app_server --role NAME`, started
// with posix_spawn. Each child's stdin and stdout are pipes to the front end:
// it prints `listening on 127.0.0.1:PORT` once it serves, and serves until
// its stdin closes (the front end is done, or died: the kernel closes the
// pipe either way) or it gets SIGTERM or SIGINT. Its stderr is the front
// end's.
//
// The front end stops each child by closing its stdin, then, if it has not
// exited within 3 s, SIGTERM, then SIGKILL, and always reaps it: no zombie,
// no child left behind, also when the front end fails half-way (the
// destructor). A child that exits before it said it listens, or says nothing
// for 5 s, is an error naming the child and how it ended.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace app_server {

/// How a wait status ended: "exited with status 1", "was killed by signal 9 (Killed)".
inline std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = ::strsignal(WTERMSIG(status));
        return "was killed by signal " + std::to_string(WTERMSIG(status)) +
               (name ? std::string(" (") + name + ")" : "");
    }
    return "stopped (wait status " + std::to_string(status) + ")";
}

/// This program's executable: /proc/self/exe resolved (the children then
/// show as app_server in `ps`), or the link itself when it cannot be read.
inline std::string own_executable() {
    char path[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return "/proc/self/exe";
    return std::string(path, static_cast<std::size_t>(n));
}

class child_process {
public:
    /// Starts `app_server --role ROLE --dir DIR [extra...]` (its argv[0] is
    /// ROLE, which names it in its traces). Throws std::runtime_error.
    child_process(const std::string& role, const std::string& dir, const std::vector<std::string>& extra = {})
        : role_(role) {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
        if (::pipe2(out, O_CLOEXEC) != 0) {
            const int e = errno;
            ::close(in[0]);
            ::close(in[1]);
            throw std::runtime_error("pipe: " + std::string(std::strerror(e)));
        }
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attributes;
        int rc = posix_spawn_file_actions_init(&actions);
        if (rc == 0) {
            rc = posix_spawnattr_init(&attributes);
            if (rc != 0) posix_spawn_file_actions_destroy(&actions);
        }
        if (rc == 0) {
            // stdin and stdout: the pipes (dup2 clears close-on-exec on the copies).
            rc = posix_spawn_file_actions_adddup2(&actions, in[0], 0);
            if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, out[1], 1);
            // No signal blocked, and the ones the child handles at their defaults
            // (the front end ignores SIGPIPE).
            sigset_t none, defaults;
            sigemptyset(&none);
            sigemptyset(&defaults);
            for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP}) sigaddset(&defaults, s);
            if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
            if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &defaults);
            if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
            if (rc == 0) {
                const std::string exe = own_executable();
                std::vector<std::string> args = {role, "--role", role, "--dir", dir};
                args.insert(args.end(), extra.begin(), extra.end());
                std::vector<char*> argv;
                for (std::string& a : args) argv.push_back(a.data());
                argv.push_back(nullptr);
                rc = ::posix_spawn(&pid_, exe.c_str(), &actions, &attributes, argv.data(), environ);
            }
            posix_spawn_file_actions_destroy(&actions);
            posix_spawnattr_destroy(&attributes);
        }
        ::close(in[0]);
        ::close(out[1]);
        if (rc != 0) {
            pid_ = -1;
            ::close(in[1]);
            ::close(out[0]);
            throw std::runtime_error("cannot start the " + role_ + " process: " + std::strerror(rc));
        }
        to_child_ = in[1];
        from_child_ = out[0];
        started_pid_ = pid_;
    }
    ~child_process() { stop(); }
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    /// Its pid (also after it was reaped).
    pid_t pid() const { return started_pid_; }
    const std::string& role() const { return role_; }

    /// Waits for the child's `listening on 127.0.0.1:PORT` line; returns the
    /// port. Throws std::runtime_error when the child exits first, prints
    /// something else, or says nothing within `timeout`.
    int wait_until_listening(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        std::string line;
        for (;;) {
            const std::size_t nl = line.find('\n');
            if (nl != std::string::npos) {
                line.resize(nl);
                break;
            }
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                throw std::runtime_error("the " + role_ + " process (pid " + std::to_string(started_pid_) +
                                         ") did not say where it listens within " +
                                         std::to_string(timeout.count() / 1000) + " s");
            }
            pollfd p{from_child_, POLLIN, 0};
            const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
            if (ready < 0 && errno != EINTR) throw std::runtime_error("poll: " + std::string(std::strerror(errno)));
            if (ready <= 0) continue;
            char chunk[256];
            const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw std::runtime_error("reading from the " + role_ + " process: " + std::strerror(errno));
            if (n == 0) {  // its stdout closed: it is exiting (or has exited)
                const std::string how = stop_and_describe();
                throw std::runtime_error("the " + role_ + " process (pid " + std::to_string(started_pid_) + ") " + how +
                                         " before it listened");
            }
            line.append(chunk, static_cast<std::size_t>(n));
            if (line.size() > 4096) break;
        }
        const std::string prefix = "listening on 127.0.0.1:";
        const int port = line.compare(0, prefix.size(), prefix) == 0 ? std::atoi(line.c_str() + prefix.size()) : 0;
        if (port <= 0 || port > 65535) {
            throw std::runtime_error("the " + role_ + " process said '" + line.substr(0, 200) +
                                     "', expected 'listening on 127.0.0.1:PORT'");
        }
        return port;
    }

    /// "" while the child runs; how it ended when it has exited on its own
    /// (it is reaped then).
    std::string exited_early() {
        if (pid_ < 0) return ended_;
        int status = 0;
        pid_t r;
        do {
            r = ::waitpid(pid_, &status, WNOHANG);
        } while (r < 0 && errno == EINTR);
        if (r == 0) return {};
        reaped(r == pid_ ? describe_wait_status(status)
                         : "could not be waited for: " + std::string(std::strerror(errno)));
        return ended_;
    }

    /// Stops the child (see the top of this file) and reaps it. Returns ""
    /// when it exited with status 0 after its stdin closed, else what
    /// happened. Idempotent; never throws.
    std::string stop() noexcept {
        try {
            if (pid_ < 0) return ended_ == "exited with status 0" ? std::string() : ended_;
            const std::string how = stop_and_describe();
            return how == "exited with status 0" ? std::string() : how;
        } catch (...) {
            return "could not be stopped";
        }
    }

private:
    // Closes the child's stdin, waits, escalates; returns how it ended.
    std::string stop_and_describe() {
        if (pid_ < 0) return ended_;
        close_fd(to_child_);  // EOF on its stdin: it stops serving and exits
        int status = 0;
        std::string lost;  // waitpid failed: nothing to reap
        std::string forced;
        const auto wait_for = [&](std::chrono::milliseconds limit, bool block) {
            const auto until = std::chrono::steady_clock::now() + limit;
            for (;;) {
                const pid_t r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
                if (r == pid_) return true;
                if (r < 0 && errno != EINTR) {
                    lost = "could not be waited for: " + std::string(std::strerror(errno));
                    return true;
                }
                if (block) continue;  // EINTR
                if (std::chrono::steady_clock::now() >= until) return false;
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        };
        if (!wait_for(std::chrono::seconds(3), false)) {
            forced = " (still running 3 s after its stdin closed: sent SIGTERM)";
            ::kill(pid_, SIGTERM);
            if (!wait_for(std::chrono::seconds(1), false)) {
                forced = " (still running after SIGTERM: sent SIGKILL)";
                ::kill(pid_, SIGKILL);
                wait_for(std::chrono::seconds(0), true);
            }
        }
        reaped(lost.empty() ? describe_wait_status(status) + forced : lost);
        return ended_;
    }
    void reaped(const std::string& how) {
        ended_ = how;
        pid_ = -1;
        close_fd(to_child_);
        close_fd(from_child_);
    }
    static void close_fd(int& fd) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }

    std::string role_;
    pid_t pid_ = -1;  // -1 once reaped
    pid_t started_pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
    std::string ended_;
};

}  // namespace app_server
