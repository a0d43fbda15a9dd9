// The metric deltas viewer writers attach to zones (thread_zone_metrics):
// found by event index whatever the order of the questions, and still
// attached to the same zones after the thread's I/O operations are merged
// into its events.
#include <gtest/gtest.h>

#include <loupe/viewer/detail/sources.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace {

using loupe::detail::thread_zone_metrics;
using loupe::detail::timeline_event;

// Zones at events 1, 3, 4, 10, 11, 20, 21, ..., 79 (every other one from
// 20): each with one value, its event index times 10, as own values.
std::map<std::uint32_t, std::int64_t> fill(thread_zone_metrics& m) {
    std::map<std::uint32_t, std::int64_t> expected;
    std::vector<std::uint32_t> events = {1, 3, 4, 10, 11};
    for (std::uint32_t e = 20; e < 80; e += 2) events.push_back(e);
    for (const std::uint32_t e : events) {
        m.values().push_back({9, static_cast<std::int64_t>(e) * 10});
        m.add(e, m.values().size() - 1, 1);
        expected[e] = static_cast<std::int64_t>(e) * 10;
    }
    return expected;
}

void expect_answer(const thread_zone_metrics& m, const std::map<std::uint32_t, std::int64_t>& expected,
                   std::uint32_t event) {
    const thread_zone_metrics::span s = m.of(event);
    auto it = expected.find(event);
    if (it == expected.end()) {
        EXPECT_EQ(s.count, 0u) << "event " << event;
        return;
    }
    ASSERT_EQ(s.count, 1u) << "event " << event;
    EXPECT_EQ(s.values[0].id, 9u);
    EXPECT_EQ(s.values[0].value, it->second) << "event " << event;
}

TEST(ViewerZoneMetrics, EveryEventGetsItsOwnDeltasWhateverTheOrderOfQuestions) {
    thread_zone_metrics m;
    EXPECT_TRUE(m.empty());
    EXPECT_EQ(m.of(0).count, 0u);
    const auto expected = fill(m);
    EXPECT_FALSE(m.empty());
    std::vector<std::uint32_t> questions;
    for (std::uint32_t e = 0; e < 90; ++e) questions.push_back(e);
    for (const std::uint32_t e : questions) expect_answer(m, expected, e);  // ascending
    for (auto it = questions.rbegin(); it != questions.rend(); ++it) expect_answer(m, expected, *it);  // descending
    std::mt19937 rng(7);
    for (int round = 0; round < 5; ++round) {
        std::shuffle(questions.begin(), questions.end(), rng);
        for (const std::uint32_t e : questions) expect_answer(m, expected, e);
    }
    // Begin order of nested zones: an enclosing zone (recorded after the
    // zones in it) comes before them.
    for (const std::uint32_t e : {4u, 1u, 3u, 11u, 10u, 79u, 20u, 22u}) expect_answer(m, expected, e);
    m.clear();
    EXPECT_TRUE(m.empty());
    EXPECT_EQ(m.of(20).count, 0u);
}

TEST(ViewerZoneMetrics, DeltasFollowTheirZonesWhenIoOperationsAreMerged) {
    // Four zones of one thread, recorded at their ends 100, 200, 300, 400;
    // I/O operations end at 50, 150, 150, 350 and 500 (one before every zone,
    // two between the first and the second, none between the second and the
    // third, one after the last).
    loupe::trace t;
    t.sites.resize(1);
    for (const std::uint64_t end : {50u, 150u, 150u, 350u, 500u}) {
        loupe::trace_io_op op;
        op.thread_id = 1;
        op.begin_ns = end - 10;
        op.end_ns = end;
        t.io_ops.push_back(op);
    }
    const std::vector<std::uint32_t> ops = {0, 1, 2, 3, 4};
    std::vector<timeline_event> events, scratch;
    for (const std::uint64_t end : {100u, 200u, 300u, 400u}) {
        events.push_back(
            timeline_event::make(loupe::event_type::zone, 0, end - 20, end, 0.0, timeline_event::no_context));
    }
    for (const bool third_has_metrics : {true, false}) {
        std::vector<timeline_event> merged = events;
        thread_zone_metrics m;
        for (std::uint32_t e = 0; e < 4; ++e) {
            if (e == 2 && !third_has_metrics) continue;
            m.values().push_back({9, static_cast<std::int64_t>(merged[e].end_ns())});
            m.add(e, m.values().size() - 1, 1);
        }
        loupe::detail::merge_io(t, ops, merged, scratch, m,
                                [](const loupe::trace_io_op&) { return timeline_event::no_context; });
        ASSERT_EQ(merged.size(), 9u);
        std::size_t zones_with_metrics = 0;
        for (std::uint32_t i = 0; i < merged.size(); ++i) {
            const thread_zone_metrics::span s = m.of(i);
            const bool io = merged[i].site() != 0;
            const bool expect_metrics = !io && !(merged[i].end_ns() == 300 && !third_has_metrics);
            ASSERT_EQ(s.count, expect_metrics ? 1u : 0u) << "merged event " << i;
            if (s.count) {
                ++zones_with_metrics;
                EXPECT_EQ(s.values[0].value, static_cast<std::int64_t>(merged[i].end_ns())) << "merged event " << i;
            }
        }
        EXPECT_EQ(zones_with_metrics, third_has_metrics ? 4u : 3u);
    }
}

}  // namespace
