// The order in which viewer writers replay a thread's events: properly
// nested begins and ends even when timestamps tie.
#include <gtest/gtest.h>

#include <loupe/viewer/detail/sources.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "support/crafted_trace.hpp"

namespace {

using loupe::record_kind;
using loupe_test::crafted_trace;

const loupe::site outer_site{"outer", "t.cpp", "f", 1, loupe::site_kind::zone};
const loupe::site inner_site{"inner", "t.cpp", "f", 2, loupe::site_kind::zone};
const loupe::site next_site{"next", "t.cpp", "f", 3, loupe::site_kind::zone};
const loupe::site tick_site{"tick", "t.cpp", "f", 4, loupe::site_kind::instant};

// "+name@t" for a begin, "-name@t" for an end, "!name@t" for an instant.
// Every step of every thread, in replay order.
template <class OnStep>
void replay_all(const loupe::trace& t, OnStep&& on_step) {
    std::vector<std::uint32_t> scratch;
    loupe::detail::for_each_thread_events(t, [&](const loupe::trace_thread&, const auto& events, const auto&) {
        loupe::detail::replay_thread(events, scratch, [&](const loupe::detail::timeline_step& s) { on_step(events, s); });
    });
}

std::string replay(const loupe::trace& t) {
    std::string out;
    replay_all(t, [&](const auto& events, const loupe::detail::timeline_step& s) {
        const char mark = s.kind == loupe::detail::timeline_step::begin ? '+'
                          : s.kind == loupe::detail::timeline_step::end ? '-'
                                                                        : '!';
        out += mark + t.sites[events[s.event].site()].name + "@" + std::to_string(s.time_ns) + " ";
    });
    return out;
}

TEST(ViewerTimeline, NestedZonesReplayInBeginOrder) {
    // inner [2000,3000] inside outer [1500,4000]; a tick at 3500.
    const auto t = crafted_trace({{record_kind::zone, &inner_site, 2000, 3000},
                                  {record_kind::instant, &tick_site, 3500, 3500},
                                  {record_kind::zone, &outer_site, 1500, 4000}});
    EXPECT_EQ(replay(t), "+outer@1500 +inner@2000 -inner@3000 !tick@3500 -outer@4000 ");
}

TEST(ViewerTimeline, SameBeginNestsTheLongerZoneOutside) {
    const auto t = crafted_trace({{record_kind::zone, &inner_site, 2000, 3000},
                                  {record_kind::zone, &outer_site, 2000, 4000}});
    EXPECT_EQ(replay(t), "+outer@2000 +inner@2000 -inner@3000 -outer@4000 ");
}

TEST(ViewerTimeline, IdenticalIntervalsNestTheLaterRecordedOutside) {
    // Both [2000,3000]: the one recorded last ended last, so it encloses.
    const auto t = crafted_trace({{record_kind::zone, &inner_site, 2000, 3000},
                                  {record_kind::zone, &outer_site, 2000, 3000}});
    EXPECT_EQ(replay(t), "+outer@2000 +inner@2000 -inner@3000 -outer@3000 ");
}

TEST(ViewerTimeline, AdjacentZonesEndBeforeTheNextBegins) {
    const auto t = crafted_trace({{record_kind::zone, &outer_site, 2000, 3000},
                                  {record_kind::zone, &next_site, 3000, 4000}});
    EXPECT_EQ(replay(t), "+outer@2000 -outer@3000 +next@3000 -next@4000 ");
}

TEST(ViewerTimeline, ZeroLengthZoneBeginsBeforeItEnds) {
    // A zero-length zone alone, then one at the very start of an enclosing zone.
    const auto t = crafted_trace({{record_kind::zone, &next_site, 1500, 1500},
                                  {record_kind::zone, &inner_site, 2000, 2000},
                                  {record_kind::zone, &outer_site, 2000, 2500}});
    EXPECT_EQ(replay(t), "+next@1500 -next@1500 +outer@2000 +inner@2000 -inner@2000 -outer@2500 ");
}

TEST(ViewerTimeline, EveryEndClosesTheZoneBegunLast) {
    // A deterministic pseudo-random forest of properly nested zones.
    std::vector<loupe_test::crafted_event> events;
    std::uint64_t state = 12345;
    auto rnd = [&](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
    };
    // Recursively generate zones in record (end) order.
    std::function<void(std::uint64_t, std::uint64_t, int)> gen = [&](std::uint64_t b, std::uint64_t e, int depth) {
        std::uint64_t at = b;
        while (depth < 5 && at < e && rnd(3) != 0) {
            const std::uint64_t cb = at + rnd(3);
            const std::uint64_t ce = std::min(e, cb + rnd(40));
            if (cb > ce) break;
            gen(cb, ce, depth + 1);
            events.push_back({record_kind::zone, &inner_site, cb, ce});
            at = ce + rnd(2);
        }
    };
    gen(0 + 2000, 4000, 0);
    events.push_back({record_kind::zone, &outer_site, 2000, 4000});
    const auto t = crafted_trace(events);
    std::vector<std::uint32_t> open;
    int begins = 0;
    std::uint64_t last = 0;
    replay_all(t, [&](const auto&, const loupe::detail::timeline_step& s) {
        EXPECT_GE(s.time_ns, last);
        last = s.time_ns;
        if (s.kind == loupe::detail::timeline_step::begin) {
            open.push_back(s.event);
            ++begins;
        } else if (s.kind == loupe::detail::timeline_step::end) {
            ASSERT_FALSE(open.empty());
            EXPECT_EQ(open.back(), s.event);
            open.pop_back();
        }
    });
    EXPECT_TRUE(open.empty());
    EXPECT_EQ(begins, static_cast<int>(events.size()));
    EXPECT_GT(events.size(), 20u);
}

}  // namespace

namespace {

// thread_contexts::at walks from its previous answer; whatever the order of
// the questions it must give what a binary search gives.
TEST(ViewerContexts, AtAgreesWithABinarySearchWhateverTheQueryOrder) {
    const loupe::trace empty_model;
    loupe::detail::thread_contexts contexts(empty_model);
    std::vector<std::uint64_t> times;
    std::uint64_t now = 1000;
    std::uint64_t state = 99;
    auto rnd = [&](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
    };
    for (int i = 0; i < 2000; ++i) {
        now += rnd(3) * 10;  // ties included
        times.push_back(now);
        contexts.add(now, static_cast<std::uint64_t>(i));
    }
    contexts.sort_by_time();
    for (int q = 0; q < 20000; ++q) {
        // Mostly small steps forward, sometimes back, sometimes far.
        const std::uint64_t begin = q % 97 == 0 ? rnd(now + 2000) : 1000 + (q / 2) * 2 - rnd(30);
        const auto after = std::upper_bound(times.begin(), times.end(), begin);
        const std::uint32_t expected = after == times.begin() ? loupe::detail::timeline_event::no_context
                                                              : static_cast<std::uint32_t>(after - times.begin() - 1);
        ASSERT_EQ(contexts.at(begin), expected) << "query " << q << " begin " << begin;
    }
}

}  // namespace
