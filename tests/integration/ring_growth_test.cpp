// Rings that grow (core/recorder.hpp: adopt_successor): a thread that fills its ring
// moves to the larger successor the collector made for it, or makes one itself
// while the collector is held up (core/detail/ring_growth.hpp) and drops
// rather than wait when the runtime's lock is taken, its records keep their
// order across the move, method values written in place survive
// it, growth stays within the sessions' memory_budget, and a successor its
// thread never reached is freed with the thread's ring.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <loupe/params.hpp>

#include "support/recording.hpp"

using namespace loupe_test;

namespace {

constexpr std::size_t small_ring = 4096;  // 128 records: full within microseconds

loupe::session_config growing_config(const std::shared_ptr<loupe::sinks::memory_sink>& mem, std::size_t budget) {
    auto cfg = memory_config(mem, "growth");
    cfg.ring_bytes = small_ring;
    cfg.memory_budget = budget;
    cfg.overflow = loupe::overflow_policy::block;  // nothing lost: the order is checked whole
    return cfg;
}

// The values of the "growth.sequence" counters in the order they arrived.
std::vector<std::int64_t> sequence(const std::vector<memory_event>& events) {
    std::vector<std::int64_t> values;
    for (const auto& e : named(events, "growth.sequence")) values.push_back(static_cast<std::int64_t>(e.value));
    return values;
}

void count_to(std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) LOUPE_COUNTER("growth.sequence", i);
}

// Holds the collector in its first counter until released, then passes
// every record on to a memory sink: while it waits, no ring is drained and
// the collector makes no successor.
class holding_sink final : public loupe::sink {
public:
    explicit holding_sink(std::shared_ptr<loupe::sinks::memory_sink> inner) : inner_(std::move(inner)) {}
    void write(const loupe::record& r) override {
        if (r.kind == loupe::record_kind::counter) {
            std::unique_lock<std::mutex> lock(mutex_);
            holding_ = true;
            changed_.notify_all();
            changed_.wait(lock, [this] { return released_; });
        }
        inner_->write(r);
    }
    void flush() override { inner_->flush(); }
    void close() override { inner_->close(); }
    // Returns once the collector waits inside write(), away from the
    // runtime's lock.
    void wait_until_holding() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return holding_; });
    }
    void release() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            released_ = true;
        }
        changed_.notify_all();
    }

private:
    std::shared_ptr<loupe::sinks::memory_sink> inner_;
    std::mutex mutex_;
    std::condition_variable changed_;
    bool holding_ = false;
    bool released_ = false;
};

// A session of counters into a 4 KiB ring that drops when full, its
// collector held by `holder` until the thread has counted to `n`.
//
// The thread counts only once the collector waits in the sink. A collector
// caught between passes holds the runtime's lock, and a thread that finds
// its ring full then drops rather than wait (grow_full_ring): on a loaded
// machine that lock can be held for milliseconds.
loupe::session_stats count_while_collector_is_held(const std::shared_ptr<holding_sink>& holder, std::size_t budget,
                                                   std::int64_t n) {
    loupe::session_config cfg;
    cfg.name = "held";
    cfg.sinks = {holder};
    cfg.ring_bytes = small_ring;
    cfg.memory_budget = budget;
    cfg.overflow = loupe::overflow_policy::drop;
    auto s = loupe::start_session(cfg);
    LOUPE_COUNTER("growth.hold", 1);  // the collector stops here
    holder->wait_until_holding();
    std::thread(count_to, n).join();
    holder->release();
    return s.stop();
}

}  // namespace

namespace growth {
void step(int n) {
    LOUPE_FUNCTION_PARAMS("growth::step(int)", n);
    if (n % 64 == 0) LOUPE_COUNTER("growth.inside", n);  // a push while the call's values wait in the ring
}
}  // namespace growth

// A thread recording flat out into a 4 KiB ring moves to larger rings, and
// every event arrives once, in the order it was recorded.
TEST(RingGrowth, AFullRingMovesToALargerOneAndTheOrderHolds) {
    const auto before = loupe::detail::rt().counters();
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(growing_config(mem, std::size_t{4} << 20));
    constexpr std::int64_t n = 200000;
    std::thread(count_to, n).join();
    const loupe::session_stats stats = s.stop();
    const auto after = loupe::detail::rt().counters();
    EXPECT_EQ(stats.dropped, 0u);
    const std::vector<std::int64_t> got = sequence(mem->events());
    ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i) << "event " << i;
    EXPECT_GE(after.rings_grown - before.rings_grown, 1u);
    EXPECT_LE(after.ring_bytes_peak, std::max<std::uint64_t>(before.ring_bytes_peak, std::uint64_t{4} << 20) + small_ring);
    // The grown rings went with the thread: only rings of the size new
    // threads get are kept.
    EXPECT_LE(after.ring_bytes, before.ring_bytes + 64 * small_ring);
}

// Several threads grow at once: each one's events stay in its order, and the
// rings together never pass the budget (every thread's first ring aside; the
// budget leaves room for a ring the test's own thread may hold).
TEST(RingGrowth, ThreadsGrowTogetherWithinTheBudget) {
    const auto before = loupe::detail::rt().counters();
    constexpr std::size_t budget = std::size_t{8} << 20;
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(growing_config(mem, budget));
    constexpr int threads = 4;
    constexpr std::int64_t n = 50000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) workers.emplace_back(count_to, n);
    for (auto& w : workers) w.join();
    const loupe::session_stats stats = s.stop();
    const auto after = loupe::detail::rt().counters();
    EXPECT_EQ(stats.dropped, 0u);
    std::map<std::uint64_t, std::vector<std::int64_t>> by_thread;
    for (const auto& e : named(mem->events(), "growth.sequence")) {
        by_thread[e.thread_id].push_back(static_cast<std::int64_t>(e.value));
    }
    ASSERT_EQ(by_thread.size(), static_cast<std::size_t>(threads));
    for (const auto& [thread, values] : by_thread) {
        ASSERT_EQ(values.size(), static_cast<std::size_t>(n)) << "thread " << thread;
        for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(values[static_cast<std::size_t>(i)], i) << "thread " << thread;
    }
    EXPECT_GE(after.rings_grown - before.rings_grown, 1u);
    EXPECT_LE(after.ring_bytes_peak, std::max<std::uint64_t>(before.ring_bytes_peak, budget) + threads * small_ring);
}

// The collector kept away (a busy machine's scheduler can leave it waiting
// for milliseconds): the thread grows its own ring instead of dropping, and
// every event arrives in order.
TEST(RingGrowth, AThreadWhoseCollectorIsHeldUpGrowsItsOwnRing) {
    const auto before = loupe::detail::rt().counters();
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    constexpr std::int64_t n = 20000;  // 156 times the first ring
    const loupe::session_stats stats =
        count_while_collector_is_held(std::make_shared<holding_sink>(mem), std::size_t{4} << 20, n);
    const auto after = loupe::detail::rt().counters();
    EXPECT_EQ(stats.dropped, 0u);
    const std::vector<std::int64_t> got = sequence(mem->events());
    ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i) << "event " << i;
    EXPECT_GE(after.rings_grown_by_thread - before.rings_grown_by_thread, 1u);
}

// The thread grows its own ring only within the budget: past it, events are
// dropped and counted, and what arrived is the beginning, in order.
TEST(RingGrowth, AThreadGrowsItsOwnRingOnlyWithinTheBudget) {
    const auto before = loupe::detail::rt().counters();
    constexpr std::size_t budget = std::size_t{4} << 20;
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    constexpr std::int64_t n = 400000;  // 12.8 MB of counters: three times the budget
    const loupe::session_stats stats = count_while_collector_is_held(std::make_shared<holding_sink>(mem), budget, n);
    const auto after = loupe::detail::rt().counters();
    const std::vector<std::int64_t> got = sequence(mem->events());
    EXPECT_GT(stats.dropped, 0u);
    EXPECT_EQ(got.size() + stats.dropped, static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<std::int64_t>(i)) << "event " << i;
    EXPECT_GT(got.size(), small_ring / 32) << "the thread never grew its ring";
    EXPECT_GE(after.rings_grown_by_thread - before.rings_grown_by_thread, 1u);
    EXPECT_LE(after.ring_bytes_peak, std::max<std::uint64_t>(before.ring_bytes_peak, budget) + small_ring);
}

// A thread whose ring fills while the runtime's lock is taken (the
// collector between passes, a thread starting) never waits for it: what the
// full ring cannot take is dropped and counted, and what arrived keeps its
// order.
TEST(RingGrowth, AFullRingWhileTheRuntimeIsLockedDropsAndCountsWithoutWaiting) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg = growing_config(mem, std::size_t{4} << 20);
    cfg.overflow = loupe::overflow_policy::drop;  // what the ring cannot take is counted, never waited for
    auto s = loupe::start_session(cfg);
    constexpr std::int64_t n = 20000;  // 156 times the ring
    std::promise<void> has_ring, go, counted;
    std::thread counter([&] {
        LOUPE_COUNTER("growth.ready", 1);  // the thread takes its ring before the lock is held
        has_ring.set_value();
        go.get_future().wait();
        count_to(n);
        counted.set_value();
    });
    has_ring.get_future().wait();
    std::future_status finished{};
    {
        std::lock_guard<std::mutex> lock(loupe::detail::rt().mutex());
        go.set_value();
        finished = counted.get_future().wait_for(std::chrono::seconds(60));  // a liveness bound, not a timing
    }
    counter.join();
    const loupe::session_stats stats = s.stop();
    ASSERT_EQ(finished, std::future_status::ready) << "the thread waited for the runtime's lock";
    const std::vector<std::int64_t> got = sequence(mem->events());
    EXPECT_GT(stats.dropped, 0u);
    EXPECT_EQ(got.size() + stats.dropped, static_cast<std::size_t>(n));
    for (std::size_t i = 1; i < got.size(); ++i) ASSERT_LT(got[i - 1], got[i]) << "event " << i;
}

// memory_budget = 0: rings keep the size they were given.
TEST(RingGrowth, AZeroBudgetNeverGrows) {
    const auto before = loupe::detail::rt().counters();
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(growing_config(mem, 0));
    std::thread(count_to, 50000).join();
    const loupe::session_stats stats = s.stop();
    EXPECT_EQ(stats.delivered, 50000u);
    EXPECT_EQ(loupe::detail::rt().counters().rings_grown, before.rings_grown);
}

// A method call whose values wait in place in the full ring: the thread moves
// to the successor with them set aside, and every call arrives with its value.
TEST(RingGrowth, MethodValuesWaitingInTheFullRingArriveWithTheirCall) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = growing_config(mem, std::size_t{4} << 20);
    cfg.kinds = loupe::kinds::methods | loupe::kinds::counters;
    cfg.params = "method=growth::step(int); param=1";
    auto s = loupe::start_session(cfg);
    constexpr int n = 20000;
    std::thread([] {
        for (int i = 0; i < n; ++i) growth::step(i);
    }).join();
    const loupe::session_stats stats = s.stop();
    EXPECT_EQ(stats.dropped, 0u);
    std::vector<memory_event> calls;
    for (const auto& e : mem->events()) {
        if (e.has_method) calls.push_back(e);
    }
    ASSERT_EQ(calls.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const memory_event& c = calls[static_cast<std::size_t>(i)];
        ASSERT_FALSE(c.values_lost) << "call " << i;
        ASSERT_EQ(c.params.size(), 1u) << "call " << i;
        ASSERT_EQ(c.params[0].as_int(), i) << "call " << i;
    }
    EXPECT_EQ(named(mem->events(), "growth.inside").size(), static_cast<std::size_t>((n + 63) / 64));
}

// A thread that exits before it moves to the successor made for it: the
// successor is freed with its ring, and the next session starts from rings of
// the base size.
TEST(RingGrowth, ASuccessorItsThreadNeverReachedIsFreed) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = growing_config(mem, std::size_t{4} << 20);
    cfg.overflow = loupe::overflow_policy::drop;
    auto s = loupe::start_session(cfg);
    const auto before = loupe::detail::rt().counters();
    // Half a ring, a pause for the collector to see it (and make a successor),
    // then the thread ends without filling its ring.
    std::thread([] {
        for (int round = 0; round < 50; ++round) {
            for (int i = 0; i < 70; ++i) LOUPE_COUNTER("growth.half", i);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }).join();
    const loupe::session_stats stats = s.stop();
    const auto after = loupe::detail::rt().counters();
    EXPECT_EQ(stats.delivered + stats.dropped, 50u * 70u);
    EXPECT_GT(after.rings_grown, before.rings_grown) << "the collector never found the ring half full";
    EXPECT_EQ(after.rings_live, before.rings_live);
    EXPECT_LE(after.ring_bytes, before.ring_bytes + 2 * small_ring);
}

TEST(RingGrowth, ABudgetPastTheLimitIsRefusedNamingIt) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = memory_config(mem, "too-much");
    cfg.memory_budget = (std::size_t{1} << 40) + 1;
    try {
        loupe::start_session(cfg);
        FAIL() << "a memory_budget over 1 TiB was accepted";
    } catch (const loupe::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("memory_budget = 1099511627777"), std::string::npos) << what;
        EXPECT_NE(what.find("expected 0 (rings never grow) to 1099511627776"), std::string::npos) << what;
    }
}

// Rings pooled for threads to come (here: 64 threads' 1 MiB rings) do not
// keep a busy thread from growing: they are freed to make room.
TEST(RingGrowth, PooledRingsMakeRoomForABusyThread) {
    {
        auto pool_filler = loupe::start_session(memory_config(std::make_shared<loupe::sinks::memory_sink>(), "fill"));
        std::vector<std::thread> brief;
        for (int t = 0; t < 64; ++t) brief.emplace_back([] { LOUPE_ZONE("growth.brief"); });
        for (auto& b : brief) b.join();
        pool_filler.stop();
    }
    const auto before = loupe::detail::rt().counters();
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(growing_config(mem, std::size_t{4} << 20));
    std::thread(count_to, 200000).join();
    const loupe::session_stats stats = s.stop();
    const auto after = loupe::detail::rt().counters();
    EXPECT_EQ(stats.dropped, 0u);
    EXPECT_GE(after.rings_grown - before.rings_grown, 1u);
    EXPECT_LT(after.rings_pooled, before.rings_pooled) << "no pooled ring was freed";
}
