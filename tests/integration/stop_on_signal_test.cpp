// loupe::stop_sessions_on_signal: a process killed with SIGTERM during a
// session still leaves complete files (the .loupe with its END record, the
// Perfetto file written), then dies of the signal as before; a handler of the
// program's own runs after the sessions stopped. Each killed process is a
// forked child of this one (suite StopOnSignalForkedChild: the sanitizer
// runs leave out tests that start threads in a forked child).
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/sinks/perfetto_sink.hpp>
#include <loupe/format/reader.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "support/perfetto_replay.hpp"
#include "support/trace_files.hpp"

namespace {

struct child_exit {
    bool exited = false;
    int code = -1;
    bool signaled = false;
    int signal = 0;
    bool hung = false;
};

// Waits up to 20 s for `pid`; kills it if it has not ended by then.
child_exit await(pid_t pid) {
    child_exit out;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        if (::waitpid(pid, &status, WNOHANG) == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            out.hung = true;
            return out;
        }
        const timespec pause{0, 1000000};
        ::nanosleep(&pause, nullptr);
    }
    out.exited = WIFEXITED(status);
    out.code = out.exited ? WEXITSTATUS(status) : -1;
    out.signaled = WIFSIGNALED(status);
    out.signal = out.signaled ? WTERMSIG(status) : 0;
    return out;
}

std::atomic<bool> own_handler_ran{false};
void own_handler(int) { own_handler_ran = true; }

// In a child: records zones into `native` and `pftrace` under a session,
// tells the parent through `ready` once 100 zones are in, and goes on until
// a signal ends it. With `own`, a handler of the program's own was installed
// before loupe's: the child then exits with 0 when it ran.
[[noreturn]] void recording_child(const std::string& native, const std::string& pftrace, int ready, bool own) {
    try {
        if (own) ::signal(SIGTERM, &own_handler);
        loupe::stop_sessions_on_signal({SIGTERM, SIGINT});
        loupe::session_config cfg;
        cfg.name = "killed";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(native),
                     std::make_shared<loupe::sinks::perfetto_sink>(pftrace)};
        auto session = loupe::start_session(cfg);
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        for (int i = 0; std::chrono::steady_clock::now() < give_up; ++i) {
            {
                LOUPE_ZONE("signal.work");
            }
            if (i == 100 && ::write(ready, "r", 1) != 1) ::_exit(5);
            if (own_handler_ran) ::_exit(session.active() ? 6 : 0);
            const timespec pause{0, 100000};
            ::nanosleep(&pause, nullptr);
        }
        ::_exit(4);  // no signal came
    } catch (...) {
        ::_exit(3);
    }
}

// Forks a child that runs `body(ready)` (it never returns: it writes one
// byte to `ready` when it is ready to be killed, then waits for it), sends
// it `sig` once it said so, and waits for it to end. `ready_said` tells
// whether it did.
template <class Body>
child_exit fork_and_signal(Body body, int sig, bool& ready_said) {
    int ready[2];
    ready_said = false;
    if (::pipe(ready) != 0) return {};
    const pid_t pid = ::fork();
    if (pid < 0) return {};
    if (pid == 0) {
        ::close(ready[0]);
        body(ready[1]);
    }
    ::close(ready[1]);
    char byte = 0;
    ready_said = ::read(ready[0], &byte, 1) == 1;
    ::close(ready[0]);
    if (ready_said) ::kill(pid, sig);
    return await(pid);
}

// The slices a Perfetto file replays to (0 when it does not replay).
std::size_t slices_in(const std::string& pftrace) {
    const loupe_test::perfetto::model m = loupe_test::perfetto::replay(loupe_test::slurp(pftrace));
    if (!m.ok) return 0;
    std::size_t slices = 0;
    for (const auto& thread : m.threads) slices += thread.second.slices.size();
    return slices;
}

struct killed_run {
    std::string native = loupe_test::temp_trace_path("stop_on_signal");
    std::string pftrace = native + ".pftrace";
    child_exit result;
    ~killed_run() {
        std::remove(native.c_str());
        std::remove(pftrace.c_str());
    }
    void run(bool own_handler, int sig) {
        bool started = false;
        result = fork_and_signal([&](int ready) { recording_child(native, pftrace, ready, own_handler); }, sig, started);
        ASSERT_TRUE(started) << "the child did not start recording";
    }
};

TEST(StopOnSignalForkedChild, SigtermEndsTheSessionsWithCompleteFilesThenKillsTheProcess) {
    killed_run k;
    k.run(false, SIGTERM);
    ASSERT_FALSE(k.result.hung);
    EXPECT_TRUE(k.result.signaled) << "exit code " << k.result.code;
    EXPECT_EQ(k.result.signal, SIGTERM);
    // Read without accepting a cut-short file: it has its END record.
    const loupe::trace t = loupe::read_trace_file(k.native);
    EXPECT_TRUE(t.complete);
    EXPECT_EQ(t.session.name, "killed");
    EXPECT_GE(t.events.size(), 100u);
    EXPECT_GE(slices_in(k.pftrace), 100u);
}

TEST(StopOnSignalForkedChild, SigintIsHandledTheSameWay) {
    killed_run k;
    k.run(false, SIGINT);
    ASSERT_FALSE(k.result.hung);
    EXPECT_EQ(k.result.signal, SIGINT);
    EXPECT_TRUE(loupe::read_trace_file(k.native).complete);
}

TEST(StopOnSignalForkedChild, TheProgramsOwnHandlerRunsAfterTheSessionsStopped) {
    killed_run k;
    k.run(true, SIGTERM);
    ASSERT_FALSE(k.result.hung);
    ASSERT_TRUE(k.result.exited) << "signal " << k.result.signal;
    EXPECT_EQ(k.result.code, 0) << "6: the session was still running when the program's handler ran";
    EXPECT_TRUE(loupe::read_trace_file(k.native).complete);
}

// Without stop_sessions_on_signal, a process killed outright (SIGKILL) still
// leaves a Perfetto file that opens: the sink rewrites it while the session
// runs, and each write replaces the file at once.
[[noreturn]] void viewer_recording_child(const std::string& pftrace, int ready) {
    try {
        loupe::session_config cfg;
        cfg.name = "killed-outright";
        cfg.sinks = {std::make_shared<loupe::sinks::perfetto_sink>(pftrace)};
        auto session = loupe::start_session(cfg);
        bool told = false;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (std::chrono::steady_clock::now() < give_up) {
            {
                LOUPE_ZONE("signal.work");
            }
            if (!told && slices_in(pftrace) >= 100) {  // written while the session runs
                told = ::write(ready, "r", 1) == 1;
            }
            const timespec pause{0, 1000000};
            ::nanosleep(&pause, nullptr);
        }
        ::_exit(4);  // never written, or never killed
    } catch (...) {
        ::_exit(3);
    }
}

TEST(StopOnSignalForkedChild, AKilledProcessLeavesAViewerFileUpToItsLastWrite) {
    const std::string pftrace = loupe_test::temp_trace_path("killed_viewer") + ".pftrace";
    bool written = false;
    const child_exit result =
        fork_and_signal([&](int ready) { viewer_recording_child(pftrace, ready); }, SIGKILL, written);
    EXPECT_TRUE(written) << "the file was not written while the session ran (child exit " << result.code << ")";
    EXPECT_EQ(result.signal, written ? SIGKILL : 0);
    EXPECT_GE(slices_in(pftrace), 100u);
    std::remove(pftrace.c_str());
}

TEST(StopOnSignal, ASignalThatCannotBeCaughtIsRefusedByName) {
    try {
        loupe::stop_sessions_on_signal({SIGKILL});
        FAIL() << "expected loupe::error";
    } catch (const loupe::error& e) {
        EXPECT_EQ(std::string(e.what()), "stop_sessions_on_signal: signal " + std::to_string(SIGKILL) +
                                             " cannot be caught (expected e.g. SIGTERM, SIGINT, SIGHUP)");
    }
    EXPECT_THROW(loupe::stop_sessions_on_signal({0}), loupe::error);
    EXPECT_THROW(loupe::stop_sessions_on_signal({SIGTERM, SIGSTOP}), loupe::error);
    // Nothing was installed: SIGTERM still has its default action here.
    struct sigaction now {};
    ::sigaction(SIGTERM, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_DFL);
}

}  // namespace
