// The per-thread ring on its own: what a producer sees when the collector
// falls behind (drops, and how soon it notices room again), and that units
// arrive whole or not at all.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <loupe/detail/ring.hpp>

namespace {

using loupe::detail::raw_record;
using loupe::detail::ring;

const loupe::site test_site{"ring_test", "ring_test.cpp", "f", 1, loupe::site_kind::zone};

std::vector<std::uint64_t> drain_all(ring& r) {
    std::vector<std::uint64_t> seen;
    r.drain([&seen](const raw_record& rec) {
        seen.push_back(rec.t0);
        return true;
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

}  // namespace
