// The per-thread ring on its own: what a producer sees when the collector
// falls behind (drops, and how soon it notices room again), that units
// arrive whole or not at all, and the method frames built in place.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include <loupe/core/detail/ring.hpp>

namespace {

using loupe::detail::raw_record;
using loupe::detail::ring;

const loupe::site test_site{"ring_test", "ring_test.cpp", "f", 1, loupe::site_kind::zone};

std::vector<std::uint64_t> drain_all(ring& r) {
    std::vector<std::uint64_t> seen;
    r.drain_runs([&seen](const raw_record* first, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) seen.push_back(first[i].t0);
        return n;
    });
    return seen;
}

TEST(Ring, AProducerThatFoundTheRingFullDropsFifteenMoreBeforeLookingAgain) {
    ring r(8);
    for (std::uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_FALSE(r.try_push(&test_site, 8, 8, 1));  // full: the producer looked, and it is
    EXPECT_EQ(drain_all(r).size(), 8u);             // the collector catches up
    for (int i = 0; i < 15; ++i) EXPECT_FALSE(r.try_push(&test_site, 100, 100, 1)) << i;
    EXPECT_TRUE(r.try_push(&test_site, 42, 42, 1));  // the 16th looks again and finds room
    EXPECT_EQ(drain_all(r), std::vector<std::uint64_t>{42});
}

TEST(Ring, RecheckRoomMakesTheNextPushLookAtOnce) {
    ring r(8);
    for (std::uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_FALSE(r.try_push(&test_site, 8, 8, 1));
    drain_all(r);
    r.recheck_room();  // what a blocking producer does before each retry
    EXPECT_TRUE(r.try_push(&test_site, 9, 9, 1));
    EXPECT_EQ(drain_all(r), std::vector<std::uint64_t>{9});
}

TEST(Ring, AUnitThatDoesNotFitIsNotPushedAtAll) {
    ring r(8);
    for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    const raw_record unit[3] = {{&test_site, 10, 0, 1}, {&test_site, 11, 0, 1}, {&test_site, 12, 0, 1}};
    EXPECT_FALSE(r.try_push_n(unit, 3));  // 2 slots left
    EXPECT_EQ(drain_all(r).size(), 6u);   // nothing of the unit is visible
    r.recheck_room();
    EXPECT_TRUE(r.try_push_n(unit, 3));
    EXPECT_EQ(drain_all(r), (std::vector<std::uint64_t>{10, 11, 12}));
}

TEST(Ring, RecordsStartOnCacheLinesSoNoneStraddlesTwo) {
    for (const std::size_t records : {std::size_t{8}, std::size_t{1} << 15}) {  // small, and mmap-sized
        ring r(records);
        raw_record* slot = r.try_reserve(1);
        ASSERT_NE(slot, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slot) % 64, 0u) << records << " records";
    }
}

TEST(Ring, DrainRunsStopsAtTheArrayEndAndFreesWhatTheCallbackTook) {
    ring r(8);
    for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    drain_all(r);  // head at 6
    const raw_record unit[5] = {{&test_site, 10, 0, 1}, {&test_site, 11, 0, 1}, {&test_site, 12, 0, 1},
                                {&test_site, 13, 0, 1}, {&test_site, 14, 0, 1}};
    ASSERT_TRUE(r.try_push_n(unit, 5));  // slots 6, 7, then 0, 1, 2
    std::vector<std::pair<std::uint64_t, std::size_t>> runs;  // (first record's t0, run length)
    // Takes one record of the first run, then the rest of it, then leaves the wrapped part.
    std::size_t calls = 0;
    const std::size_t taken = r.drain_runs([&](const raw_record* first, std::size_t n) -> std::size_t {
        runs.emplace_back(first->t0, n);
        return ++calls <= 2 ? 1 : 0;
    });
    EXPECT_EQ(taken, 2u);
    EXPECT_EQ(runs, (std::vector<std::pair<std::uint64_t, std::size_t>>{{10, 2}, {11, 1}, {12, 3}}));
    EXPECT_EQ(drain_all(r), (std::vector<std::uint64_t>{12, 13, 14}));  // what was left, in order
}

TEST(Ring, AReservationThatWouldWrapIsRefusedAndPushNWrapsInstead) {
    ring r(8);
    for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    drain_all(r);  // head at 6: 2 slots before the end of the array
    EXPECT_EQ(r.try_reserve(3), nullptr);
    const raw_record unit[3] = {{&test_site, 20, 0, 1}, {&test_site, 21, 0, 1}, {&test_site, 22, 0, 1}};
    EXPECT_TRUE(r.try_push_n(unit, 3));
    EXPECT_EQ(drain_all(r), (std::vector<std::uint64_t>{20, 21, 22}));
    raw_record* slots = r.try_reserve(2);
    ASSERT_NE(slots, nullptr);
    slots[0] = {&test_site, 30, 0, 1};
    slots[1] = {&test_site, 31, 0, 1};
    EXPECT_TRUE(drain_all(r).empty());  // not visible before commit
    r.commit(2);
    EXPECT_EQ(drain_all(r), (std::vector<std::uint64_t>{30, 31}));
}

// The collector's pause (core/detail/collector.hpp) ends early when a ring
// passes half full: the producer takes hot_state::paused_collector_wake and
// calls it, once.
int ring_test_wakes = 0;
void ring_test_count_wake() noexcept { ++ring_test_wakes; }

struct PausingCollector : ::testing::Test {
    void SetUp() override {
        ring_test_wakes = 0;
        loupe::detail::g_hot.paused_collector_wake.store(&ring_test_count_wake);
    }
    void TearDown() override { loupe::detail::g_hot.paused_collector_wake.store(nullptr); }
};

TEST_F(PausingCollector, IsWokenOnceWhenTheRingPassesHalfFull) {
    ring r(16);
    for (std::uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_EQ(ring_test_wakes, 0) << "8 of 16 slots is half, not past it";
    ASSERT_TRUE(r.try_push(&test_site, 8, 8, 1));
    EXPECT_EQ(ring_test_wakes, 1);
    EXPECT_EQ(loupe::detail::g_hot.paused_collector_wake.load(), nullptr) << "the producer took the wake call";
    for (std::uint64_t i = 9; i < 16; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_EQ(ring_test_wakes, 1);
    EXPECT_EQ(drain_all(r).size(), 16u);  // nothing lost on the way
}

TEST_F(PausingCollector, IsWokenAgainOnlyAfterAnotherHalfRingPastWhatItDrained) {
    ring r(16);
    for (std::uint64_t i = 0; i < 9; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    ASSERT_EQ(ring_test_wakes, 1);
    EXPECT_EQ(drain_all(r).size(), 9u);  // the woken collector drains; its next pause begins
    loupe::detail::g_hot.paused_collector_wake.store(&ring_test_count_wake);
    // The producer does not look at the tail again before the end it saw
    // (16): then it finds 7 in the ring, and looks again at 9 past the tail.
    for (std::uint64_t i = 9; i < 17; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_EQ(ring_test_wakes, 1);
    for (std::uint64_t i = 17; i < 18; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_EQ(ring_test_wakes, 2);
}

TEST(Ring, NothingIsCalledWhenTheCollectorIsNotPausing) {
    ASSERT_EQ(loupe::detail::g_hot.paused_collector_wake.load(), nullptr);
    ring r(8);
    for (std::uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_FALSE(r.try_push(&test_site, 8, 8, 1));  // full, as before
    EXPECT_EQ(drain_all(r).size(), 8u);
}

// A frame built in place (ring::open_frame): what a method call's entry and
// exit do with it, and what any other push in between does to it.

std::vector<raw_record> drain_records(ring& r) {
    std::vector<raw_record> seen;
    r.drain_runs([&seen](const raw_record* first, std::size_t n) {
        seen.insert(seen.end(), first, first + n);
        return n;
    });
    return seen;
}

raw_record* open_test_frame(ring& r, std::size_t n, unsigned char fill) {
    raw_record* slots = r.open_frame(n);
    if (slots != nullptr) std::memset(static_cast<void*>(slots + 1), fill, (n - 1) * sizeof(raw_record));
    return slots;
}

TEST(RingFrame, AFrameNothingInterruptsIsPublishedInPlaceByItsHeader) {
    ring r(64);
    raw_record* slots = open_test_frame(r, 4, 0xAB);
    ASSERT_NE(slots, nullptr);
    unsigned char spill[96] = {};
    ASSERT_EQ(r.close_frame(3, 64, spill), ring::frame_state::in_place);
    EXPECT_TRUE(drain_all(r).empty());  // nothing visible while it waits
    ASSERT_TRUE(r.frame_waits());
    ASSERT_EQ(r.waiting_frame(), slots);
    slots[0] = {&test_site, 7, 8, 1};
    r.commit_frame();
    EXPECT_FALSE(r.frame_waits());
    const std::vector<raw_record> seen = drain_records(r);
    ASSERT_EQ(seen.size(), 3u);  // the header and the two payload records the frame closed with
    EXPECT_EQ(seen[0].t0, 7u);
    EXPECT_EQ(reinterpret_cast<const unsigned char*>(&seen[1])[0], 0xAB);
    EXPECT_EQ(spill[0], 0);  // never copied
    EXPECT_TRUE(r.try_push(&test_site, 9, 9, 1));  // the ring goes on after it
    EXPECT_EQ(drain_all(r), std::vector<std::uint64_t>{9});
}

TEST(RingFrame, APushAfterTheFrameClosedCopiesItsPayloadOutAndTakesItsSlots) {
    ring r(64);
    raw_record* slots = open_test_frame(r, 4, 0x5C);
    ASSERT_NE(slots, nullptr);
    unsigned char spill[64] = {};
    ASSERT_EQ(r.close_frame(3, 40, spill), ring::frame_state::in_place);
    EXPECT_TRUE(r.try_push(&test_site, 1, 2, 1));  // e.g. a zone inside the call
    EXPECT_FALSE(r.frame_waits());
    for (int i = 0; i < 40; ++i) ASSERT_EQ(spill[i], 0x5C) << i;
    EXPECT_EQ(spill[40], 0);  // exactly the payload's bytes
    EXPECT_EQ(drain_all(r), std::vector<std::uint64_t>{1});
}

TEST(RingFrame, EveryKindOfPushSetsAWaitingFrameAsideFirst) {
    for (int kind = 0; kind < 3; ++kind) {
        ring r(64);
        ASSERT_NE(open_test_frame(r, 4, 0x11), nullptr);
        unsigned char spill[32] = {};
        ASSERT_EQ(r.close_frame(2, 16, spill), ring::frame_state::in_place);
        const raw_record unit[2] = {{&test_site, 3, 0, 1}, {&test_site, 4, 0, 1}};
        if (kind == 0) {
            ASSERT_TRUE(r.try_push(&test_site, 3, 0, 1));
        } else if (kind == 1) {
            ASSERT_TRUE(r.try_push_n(unit, 2));
        } else {
            raw_record* s = r.try_reserve(1);
            ASSERT_NE(s, nullptr);
            *s = unit[0];
            r.commit(1);
        }
        EXPECT_EQ(spill[15], 0x11) << kind;
        EXPECT_FALSE(r.frame_waits()) << kind;
        EXPECT_EQ(drain_all(r).front(), 3u) << kind;
    }
}

TEST(RingFrame, APushWhileTheFrameIsOpenLeavesItsSlotsBehindAsASkippedUnit) {
    ring r(64);
    raw_record* slots = open_test_frame(r, 4, 0x77);
    ASSERT_NE(slots, nullptr);
    EXPECT_TRUE(r.try_push(&test_site, 5, 5, 1));  // a getter the chains call records a zone
    unsigned char spill[64] = {};
    EXPECT_EQ(r.close_frame(3, 40, spill), ring::frame_state::skipped);  // its bytes are intact: the caller copies them
    EXPECT_EQ(reinterpret_cast<const unsigned char*>(slots + 1)[39], 0x77);
    EXPECT_FALSE(r.frame_waits());
    const std::vector<raw_record> seen = drain_records(r);
    ASSERT_EQ(seen.size(), 5u);  // the skipped unit (header + 3 records), then the zone
    EXPECT_EQ(seen[0].where, &loupe::detail::skipped_unit_marker);
    EXPECT_EQ(seen[0].t1, 3 * sizeof(raw_record));
    EXPECT_EQ(seen[0].sessions, 0u);
    EXPECT_EQ(seen[4].t0, 5u);
}

TEST(RingFrame, AFrameOverwrittenWhileOpenIsReportedSo) {
    ring r(8);
    ASSERT_NE(open_test_frame(r, 3, 0x22), nullptr);
    // The chains' getter records more than the ring holds, the collector
    // keeping up: the ring comes round over the frame's bytes.
    for (std::uint64_t i = 0; i < 12; ++i) {
        r.recheck_room();
        ASSERT_TRUE(r.try_push(&test_site, i, i, 1)) << i;
        drain_all(r);
    }
    unsigned char spill[64] = {};
    EXPECT_EQ(r.close_frame(2, 20, spill), ring::frame_state::overwritten);
}

TEST(RingFrame, AFrameThatWouldWrapOrDoesNotFitIsNotOpened) {
    ring r(8);
    for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(r.try_push(&test_site, i, i, 1));
    EXPECT_EQ(r.open_frame(3), nullptr);  // 2 slots left
    drain_all(r);
    r.recheck_room();
    EXPECT_EQ(r.open_frame(3), nullptr);  // head at 6: it would wrap
    EXPECT_TRUE(r.try_push(&test_site, 1, 1, 1));  // the ring is unchanged by the refusals
    EXPECT_EQ(drain_all(r), std::vector<std::uint64_t>{1});
}

TEST(RingFrame, ASecondFrameSetsTheFirstAside) {
    ring r(64);
    ASSERT_NE(open_test_frame(r, 3, 0x01), nullptr);
    unsigned char outer[32] = {};
    ASSERT_EQ(r.close_frame(2, 24, outer), ring::frame_state::in_place);
    raw_record* inner = open_test_frame(r, 3, 0x02);  // a call inside the first
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(outer[23], 0x01);
    unsigned char inner_spill[32] = {};
    ASSERT_EQ(r.close_frame(2, 24, inner_spill), ring::frame_state::in_place);
    inner[0] = {&test_site, 50, 51, 1};
    r.commit_frame();
    EXPECT_FALSE(r.frame_waits());  // the outer call then packs its unit from `outer`
    EXPECT_EQ(drain_all(r), (std::vector<std::uint64_t>{50, 0x0202020202020202u}));
}

}  // namespace

#if LOUPE_DETAIL_PREFETCHW_CHECKED && LOUPE_OS_LINUX
// The write hint's CPU check (core/detail/write_prefetch.hpp) reads the bit
// Linux reports as "3dnowprefetch": a wrong bit would give the hint to CPUs
// that lack it, or keep it from those that have it.
TEST(WritePrefetch, TheCpuCheckAgreesWithTheKernel) {
    std::FILE* cpuinfo = std::fopen("/proc/cpuinfo", "r");
    if (cpuinfo == nullptr) GTEST_SKIP() << "no /proc/cpuinfo";
    bool kernel_says = false, flags_seen = false;
    char line[8192];
    while (!flags_seen && std::fgets(line, sizeof line, cpuinfo) != nullptr) {
        if (std::strncmp(line, "flags", 5) != 0) continue;
        flags_seen = true;
        kernel_says = std::strstr(line, " 3dnowprefetch") != nullptr;
    }
    std::fclose(cpuinfo);
    if (!flags_seen) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
    EXPECT_EQ(loupe::detail::cpu_has_prefetchw(), kernel_says);
    EXPECT_EQ(loupe::detail::g_cpu_has_prefetchw, kernel_says) << "the start-up check";
}
#endif
