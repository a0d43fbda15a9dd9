// A program of the CLI tests (cli_listening_test.cpp) that never calls
// loupe::control::listen(): it contains the endpoint (it includes
// <loupe/control/listen.hpp>), so LOUPE_CONTROL=1 in its environment makes
// it listen. It prints one line, the socket it listens on or "not
// listening", then serves load until its stdin closes: two threads, each
// recording zones "work" as user alice with an argument "seq" that counts
// the thread's zones (0, 1, 2, ...), so a trace shows every zone a thread
// produced while a session ran: delivered, or lost and counted as dropped.
#include <loupe/control/listen.hpp>
#include <loupe/core/context.hpp>
#include <loupe/loupe.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

int main() {
    const std::string socket = loupe::control::listening_on();
    std::printf("%s\n", socket.empty() ? "not listening" : socket.c_str());
    std::fflush(stdout);
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int w = 0; w < 2; ++w) {
        workers.emplace_back([&stop] {
            loupe::field_scope who(loupe::context_field::user, "alice");
            for (std::int64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
                LOUPE_ZONE_AS(zone, "work");
                LOUPE_ZONE_ARG(zone, "seq", seq);
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        });
    }
    char c;
    while (::read(0, &c, 1) > 0) {
    }
    stop.store(true);
    for (auto& t : workers) t.join();
    return 0;
}
