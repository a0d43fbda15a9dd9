// Test helper: a program run as its user would run it (posix_spawn, no
// fork of the test process), with extra environment variables, its stdin a
// pipe the test closes, its stdout read line by line and its stderr kept in
// a file. Killed (SIGKILL) and reaped when destroyed, unless waited for.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_process.hpp"

extern char** environ;

namespace loupe_test {

class spawned_program {
public:
    /// Runs `path args...` with the test's environment plus `env`
    /// ("NAME=value" each; a NAME given here replaces the inherited one).
    spawned_program(const std::string& path, std::vector<std::string> args, const std::vector<std::string>& env)
        : stderr_path_(temp_trace_path("spawned_stderr") + ".txt") {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
        std::vector<std::string> environment = env;
        for (char** e = environ; *e != nullptr; ++e) {
            const std::string entry = *e;
            const std::string name = entry.substr(0, entry.find('='));
            bool replaced = false;
            for (const std::string& mine : env) replaced = replaced || mine.compare(0, name.size() + 1, name + "=") == 0;
            if (!replaced) environment.push_back(entry);
        }
        std::vector<char*> envp;
        for (std::string& e : environment) envp.push_back(e.data());
        envp.push_back(nullptr);
        args.insert(args.begin(), path);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in[0], 0);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int rc = ::posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        ::close(in[0]);
        ::close(out[1]);
        stdin_ = in[1];
        stdout_ = out[0];
        if (rc != 0) {
            pid_ = -1;
            throw std::runtime_error("posix_spawn " + path + ": " + std::strerror(rc));
        }
    }
    ~spawned_program() {
        close_stdin();
        if (stdout_ >= 0) ::close(stdout_);
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
        std::remove(stderr_path_.c_str());
    }
    spawned_program(const spawned_program&) = delete;
    spawned_program& operator=(const spawned_program&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// The next line of its stdout (without the newline); throws when none
    /// comes within `timeout`.
    std::string read_line(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const std::size_t newline = pending_.find('\n');
            if (newline != std::string::npos) {
                std::string line = pending_.substr(0, newline);
                pending_.erase(0, newline + 1);
                return line;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{stdout_, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
                throw std::runtime_error("no line from the program within the timeout; stderr: " + error_output());
            }
            char buf[4096];
            const ssize_t n = ::read(stdout_, buf, sizeof buf);
            if (n <= 0) throw std::runtime_error("the program closed its stdout; stderr: " + error_output());
            pending_.append(buf, static_cast<std::size_t>(n));
        }
    }

    void close_stdin() {
        if (stdin_ >= 0) ::close(stdin_);
        stdin_ = -1;
    }

    /// Waits for it to exit; its exit status, or -1 when a signal ended it
    /// or it did not end within `timeout` (then it is killed).
    int wait(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) return -1;  // the destructor kills it
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    /// What it wrote to stderr so far.
    std::string error_output() const { return slurp(stderr_path_); }

private:
    pid_t pid_ = -1;
    int stdin_ = -1;
    int stdout_ = -1;
    std::string pending_;
    std::string stderr_path_;
};

}  // namespace loupe_test
