// Helpers of the control endpoint's tests (integration/control_test.cpp,
// cli/cli_control_test.cpp): temporary folders, threads that record zones
// as users alice and bob, and a forked child process that listens and
// records until told to stop.
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <loupe/control/listen.hpp>
#include <loupe/core/context.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/loupe.hpp>

namespace loupe_test {

/// A fresh folder (mode 0700) removed with everything in it at the end.
class temp_folder {
public:
    explicit temp_folder(const std::string& tag) {
        std::string pattern = "/tmp/loupe_" + tag + "_XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
        path_ = pattern;
    }
    ~temp_folder() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    temp_folder(const temp_folder&) = delete;
    temp_folder& operator=(const temp_folder&) = delete;
    const std::string& path() const noexcept { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

/// Threads that record zones "alice_work" as user alice and "bob_work" as
/// user bob, in turns, until destroyed.
class alice_and_bob {
public:
    explicit alice_and_bob(int threads = 2) {
        for (int i = 0; i < threads; ++i) {
            workers_.emplace_back([this] {
                while (!stop_.load(std::memory_order_relaxed)) {
                    {
                        loupe::field_scope who(loupe::context_field::user, "alice");
                        LOUPE_ZONE("alice_work");
                        std::this_thread::sleep_for(std::chrono::microseconds(200));
                    }
                    {
                        loupe::field_scope who(loupe::context_field::user, "bob");
                        LOUPE_ZONE("bob_work");
                        std::this_thread::sleep_for(std::chrono::microseconds(200));
                    }
                }
            });
        }
    }
    ~alice_and_bob() {
        stop_.store(true);
        for (auto& t : workers_) t.join();
    }
    alice_and_bob(const alice_and_bob&) = delete;
    alice_and_bob& operator=(const alice_and_bob&) = delete;

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> workers_;
};

/// The zones of a trace by name: {begin_ns, end_ns, thread} of each.
struct named_zone {
    std::string name;
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    std::uint64_t thread_id = 0;
};

inline std::vector<named_zone> zones_of(const loupe::trace& t) {
    std::vector<named_zone> out;
    for (const auto& e : t.events) {
        if (e.type != loupe::event_type::zone) continue;
        for (const auto& s : t.sites) {
            if (s.id == e.site_id) out.push_back({s.name, e.begin_ns, e.end_ns, e.thread_id});
        }
    }
    return out;
}

/// A child process (fork) that listens with its socket in `socket_dir` and
/// traces under `output_dir`, and records alice and bob until killed.
/// Waits until its socket exists. Killed (SIGKILL) and reaped when destroyed.
class listening_child {
public:
    listening_child(const std::string& socket_dir, const std::string& output_dir) {
        int ready[2];
        if (::pipe(ready) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::close(ready[0]);
            char status = 'x';
            try {
                loupe::control::listen_options o;
                o.socket_directory = socket_dir;
                o.output_directory = output_dir;
                loupe::control::listen(o);
                status = 'y';
            } catch (...) {
            }
            [[maybe_unused]] const ssize_t n = ::write(ready[1], &status, 1);
            ::close(ready[1]);
            if (status != 'y') ::_exit(3);
            alice_and_bob work;
            for (;;) ::pause();  // until killed
        }
        ::close(ready[1]);
        char status = 0;
        const ssize_t n = ::read(ready[0], &status, 1);
        ::close(ready[0]);
        if (n != 1 || status != 'y') throw std::runtime_error("the child could not listen");
    }
    ~listening_child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
    }
    listening_child(const listening_child&) = delete;
    listening_child& operator=(const listening_child&) = delete;
    pid_t pid() const noexcept { return pid_; }

private:
    pid_t pid_ = -1;
};

}  // namespace loupe_test
