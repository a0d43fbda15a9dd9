// overflow_policy::block under stress: a block session loses nothing while
// sessions start and stop around it, and a unit that can never fit the ring
// is dropped and counted at once under either policy, never waited for.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <loupe/params.hpp>

#include "support/recording.hpp"

using namespace loupe_test;

namespace {

// Rings of 128 records: full most of the time, drained in microseconds.
constexpr std::size_t small_ring = 4096;

/// Threads that record counters and zones until told to stop.
class busy_threads {
public:
    explicit busy_threads(int n) {
        for (int t = 0; t < n; ++t) {
            workers_.emplace_back([this] {
                std::uint64_t i = 0;
                while (!stop_.load(std::memory_order_relaxed)) {
                    LOUPE_ZONE("block_policy.work");
                    LOUPE_COUNTER("block_policy.i", i++);
                }
            });
        }
    }
    ~busy_threads() {
        stop_.store(true);
        for (auto& w : workers_) w.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> workers_;
};

loupe::session_config block_config(const std::shared_ptr<loupe::sinks::memory_sink>& mem, const char* name,
                                   std::uint32_t kinds) {
    auto cfg = memory_config(mem, name);
    cfg.kinds = kinds;
    cfg.overflow = loupe::overflow_policy::block;
    cfg.ring_bytes = small_ring;
    cfg.memory_budget = 0;  // rings stay small: full most of the time
    return cfg;
}

}  // namespace

// Block sessions started and stopped over and over while four threads record
// into full rings, with a drop-policy session beside them, report no drop: a
// thread that has not yet seen a block session's stop waits for room for its
// event instead of counting it as that session's drop.
TEST(BlockPolicy, SessionsStartedAndStoppedUnderLoadDropNothing) {
    busy_threads load(4);
    auto beside_sink = std::make_shared<loupe::sinks::memory_sink>();
    auto beside_cfg = memory_config(beside_sink, "beside");
    beside_cfg.overflow = loupe::overflow_policy::drop;
    beside_cfg.ring_bytes = small_ring;
    beside_cfg.memory_budget = 0;
    auto beside = loupe::start_session(beside_cfg);
    // A fixed number of rounds, not a time budget: under a sanitizer on a
    // loaded machine a round takes a quarter second, and the test must ask
    // the same question there as on a fast machine.
    for (int rounds = 0; rounds < 24; ++rounds) {
        auto counters_sink = std::make_shared<loupe::sinks::memory_sink>();
        auto zones_sink = std::make_shared<loupe::sinks::memory_sink>();
        auto counters = loupe::start_session(block_config(counters_sink, "block-counters", loupe::kinds::counters));
        auto zones = loupe::start_session(block_config(zones_sink, "block-zones", loupe::kinds::zones));
        std::this_thread::sleep_for(std::chrono::milliseconds(rounds % 3));
        const loupe::session_stats zs = zones.stop();
        const loupe::session_stats cs = counters.stop();
        ASSERT_EQ(cs.dropped, 0u) << "round " << rounds << ": a block session recording counters dropped";
        ASSERT_EQ(zs.dropped, 0u) << "round " << rounds << ": a block session recording zones dropped";
        EXPECT_EQ(cs.delivered, of_kind(counters_sink->events(), record_kind::counter).size());
        EXPECT_EQ(zs.delivered, of_kind(zones_sink->events(), record_kind::zone).size());
    }
    beside.stop();
}
