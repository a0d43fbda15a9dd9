// Ending sessions cleanly when the process is told to stop (SIGTERM from a
// service manager, SIGINT from a terminal): opt-in, because a library should
// not take a program's signals unasked.
//
// The handler itself does only what a signal handler may: it writes the
// signal's number to a pipe. A watcher thread reads it, stops every running
// session (each drained, its file completed: END record, viewer files
// written), puts back what the signal did before and sends it again, so the
// process ends (or the program's own handler runs) as it would have.
#pragma once

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>

#include "loupe/base/config.hpp"
#include "loupe/base/error.hpp"
#include "loupe/core/detail/runtime.hpp"

namespace loupe {

namespace detail {

struct signal_stop_state {
    std::mutex mutex;  // installs (not taken by the handler)
    int pipe_read = -1;
    int pipe_write = -1;
    pid_t watcher_pid = 0;  // the process whose watcher reads the pipe
    std::atomic<bool> stopping{false};
    bool installed[NSIG] = {};
    struct sigaction previous[NSIG] = {};
};

LOUPE_API inline signal_stop_state& signal_stop() {
    static signal_stop_state* s = new signal_stop_state;  // never destroyed: handlers may run at exit
    return *s;
}

// Async-signal-safe: puts back what `sig` did before loupe's handler and
// sends it to the process again.
inline void resend_with_previous_action(int sig) noexcept {
    signal_stop_state& s = signal_stop();
    ::sigaction(sig, &s.previous[sig], nullptr);
    ::kill(::getpid(), sig);
}

// The handler: hands the signal to the watcher. A second signal while the
// watcher stops sessions, or one in a forked child (which has no watcher),
// acts at once.
inline void on_stop_signal(int sig) noexcept {
    const int saved_errno = errno;
    signal_stop_state& s = signal_stop();
    const unsigned char number = static_cast<unsigned char>(sig);
    if (::getpid() != s.watcher_pid || s.stopping.exchange(true) || ::write(s.pipe_write, &number, 1) != 1) {
        resend_with_previous_action(sig);
    }
    errno = saved_errno;
}

inline void* watch_stop_signals(void*) noexcept {
    signal_stop_state& s = signal_stop();
    for (;;) {
        unsigned char number = 0;
        const ssize_t n = ::read(s.pipe_read, &number, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n != 1) return nullptr;
        if (runtime* r = runtime_pointer().load(std::memory_order_acquire)) r->stop_all();
        {
            std::lock_guard<std::mutex> lock(s.mutex);
            s.installed[number] = false;  // once per signal: a later call installs it again
        }
        resend_with_previous_action(number);
        s.stopping.store(false);
    }
}

}  // namespace detail

/// Makes each of `signals` (e.g. `{SIGTERM, SIGINT}`) end every running
/// session cleanly before it takes effect: the sessions are stopped as by
/// `session::stop` (files complete with their END record, Perfetto and
/// Chrome JSON files written), then the signal's previous disposition is put
/// back and the signal sent again, so the process terminates (or the
/// program's own handler runs) as it would have. Once per signal: after it,
/// the previous disposition stays. A second signal while sessions are being
/// stopped acts at once; so does one in a forked child.
///
/// Opt-in: call once at startup (again to add signals). Cost: one thread,
/// blocked until a signal comes, and a pipe.
/// Thread-safety: any thread. Throws loupe::error naming a signal that
/// cannot be caught (SIGKILL, SIGSTOP, out of range) or when the pipe or the
/// thread cannot be made; signals installed before stay installed.
inline void stop_sessions_on_signal(std::initializer_list<int> signals) {
    detail::signal_stop_state& s = detail::signal_stop();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const int sig : signals) {
        if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
            throw error("stop_sessions_on_signal: signal " + std::to_string(sig) +
                        " cannot be caught (expected e.g. SIGTERM, SIGINT, SIGHUP)");
        }
    }
    if (s.watcher_pid != ::getpid()) {  // first call in this process (a forked child has no watcher)
        if (s.pipe_read >= 0) {  // the parent's, inherited
            ::close(s.pipe_read);
            ::close(s.pipe_write);
            s.pipe_read = s.pipe_write = -1;
        }
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            throw error(std::string("stop_sessions_on_signal: cannot make its pipe: ") + std::strerror(errno));
        }
        s.pipe_read = fds[0];
        s.pipe_write = fds[1];
        pthread_t watcher;
        const int rc = pthread_create(&watcher, nullptr, &detail::watch_stop_signals, nullptr);
        if (rc != 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            s.pipe_read = s.pipe_write = -1;
            throw error(std::string("stop_sessions_on_signal: cannot start its thread: ") + std::strerror(rc));
        }
        pthread_detach(watcher);
        s.watcher_pid = ::getpid();
    }
    for (const int sig : signals) {
        if (s.installed[sig]) continue;
        struct sigaction action {};
        action.sa_handler = &detail::on_stop_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        if (::sigaction(sig, &action, &s.previous[sig]) != 0) {
            throw error("stop_sessions_on_signal: cannot install a handler for signal " + std::to_string(sig) +
                        ": " + std::strerror(errno));
        }
        s.installed[sig] = true;
    }
}

}  // namespace loupe
