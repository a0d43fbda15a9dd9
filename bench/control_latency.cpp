// How long the control endpoint takes to act (docs/control.md#measured):
// this process listens (loupe::control::listen, its socket in a fresh
// directory) while a thread records a zone every 20 us as user alice; each
// iteration, through loupe::remote::connection as `loupe start/stop` use it,
//   start a session -> the begin of its first recorded event
//                      (start_to_first_event_us; includes up to one zone's
//                      period, 20 us plus the sleep's slack)
//   stop it         -> the reply, sent once the file is complete
//                      (stop_to_complete_file_us)
// timed on CLOCK_REALTIME (the trace maps its times to it through its wall
// anchor). One session is started and stopped before timing: a process's
// first session calibrates the clock (~20 ms).
//
//   ./build/bench/loupe_bench_control [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>

#include <loupe/control/listen.hpp>
#include <loupe/core/context.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/loupe.hpp>
#include <loupe/remote/client.hpp>
#include <loupe/remote/reply.hpp>

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

std::uint64_t wall_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The endpoint, the recording thread and a directory for both, for the run.
class listening_process {
public:
    listening_process() {
        char pattern[] = "/tmp/loupe_control_bench_XXXXXX";
        if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
        loupe::control::listen_options o;
        o.socket_directory = dir_ + "/sockets";
        o.output_directory = dir_;
        std::filesystem::create_directory(o.socket_directory);
        std::filesystem::permissions(o.socket_directory, std::filesystem::perms::owner_all);
        loupe::control::listen(o);
        worker_ = std::thread([this] {
            loupe::field_scope who(loupe::context_field::user, "alice");
            while (!stop_.load(std::memory_order_relaxed)) {
                LOUPE_ZONE("request");
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        });
    }
    ~listening_process() {
        stop_.store(true);
        worker_.join();
        loupe::control::stop_listening();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    std::string ask(const std::string& line) {
        loupe::remote::connection c(::getpid(), dir_ + "/sockets");
        const loupe::remote::json_value reply = loupe::remote::parse_reply(c.exchange(line));
        if (!reply.flag("ok")) throw std::runtime_error(line + ": " + reply.str("error"));
        return reply.str("output");
    }

private:
    std::string dir_;
    std::atomic<bool> stop_{false};
    std::thread worker_;
};

void BM_Control_StartStop(benchmark::State& state) {
    listening_process process;
    process.ask("start name=warm; kinds=zones; output=warm.loupe");
    process.ask("stop warm");
    double start_us = 0, stop_us = 0;
    int n = 0;
    for (auto _ : state) {
        const std::string name = "s" + std::to_string(n++);
        const std::uint64_t sent = wall_ns();
        const std::string output = process.ask("start name=" + name + "; kinds=zones; output=" + name + ".loupe");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const std::uint64_t stop_sent = wall_ns();
        process.ask("stop " + name);
        stop_us += static_cast<double>(wall_ns() - stop_sent) / 1000.0;
        state.PauseTiming();
        const loupe::trace t = loupe::read_trace_file(output);
        if (!t.complete || t.events.empty()) {
            state.SkipWithError("the session's file is incomplete or empty");
            break;
        }
        std::uint64_t earliest = ~std::uint64_t{0};
        for (const loupe::trace_event& e : t.events) earliest = std::min<std::uint64_t>(earliest, e.begin_ns);
        start_us += static_cast<double>(t.session.wall_anchor_ns + (earliest - t.session.start_ns) - sent) / 1000.0;
        std::filesystem::remove(output);
        state.ResumeTiming();
    }
    state.counters["start_to_first_event_us"] = start_us / n;
    state.counters["stop_to_complete_file_us"] = stop_us / n;
}
BENCHMARK(BM_Control_StartStop)->Iterations(50)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
