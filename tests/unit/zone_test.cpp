// Zones, instants and counters as a user records them.
#include <gtest/gtest.h>

#include <stdexcept>

#include "support/recording.hpp"

using namespace loupe_test;

namespace {

void throws_from_inside() {
    LOUPE_ZONE("thrower");
    throw std::runtime_error("boom");
}

int answer() {
    LOUPE_FUNCTION();
    return 42;
}

}  // namespace

TEST(Zone, NestedZonesArriveWithTheirNestingAndSiteMetadata) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    {
        LOUPE_ZONE("outer");
        {
            LOUPE_ZONE("inner");
        }
    }
    s.stop();
    auto zones = of_kind(mem->events(), record_kind::zone);
    ASSERT_EQ(zones.size(), 2u);
    // Zones are delivered when they end: the inner one first.
    EXPECT_EQ(zones[0].name, "inner");
    EXPECT_EQ(zones[1].name, "outer");
    EXPECT_LE(zones[1].begin_ns, zones[0].begin_ns);
    EXPECT_GE(zones[1].end_ns, zones[0].end_ns);
    EXPECT_LE(zones[0].begin_ns, zones[0].end_ns);
    ASSERT_NE(zones[0].where, nullptr);
    EXPECT_EQ(zones[0].where->kind, loupe::site_kind::zone);
    EXPECT_NE(std::string(zones[0].where->file).find("zone_test.cpp"), std::string::npos);
    EXPECT_GT(zones[0].where->line, 0u);
    EXPECT_NE(std::string(zones[0].where->function).find("NestedZones"), std::string::npos);
}

TEST(Zone, TwoZonesInOneBlockAndOnOneLineCompileAndBothRecord) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    {
        LOUPE_ZONE("a"); LOUPE_ZONE("b");
    }
    s.stop();
    auto zones = of_kind(mem->events(), record_kind::zone);
    ASSERT_EQ(zones.size(), 2u);
    EXPECT_EQ(zones[0].name, "b");
    EXPECT_EQ(zones[1].name, "a");
}

TEST(Zone, ExceptionUnwindingClosesEveryZoneInOrder) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    try {
        LOUPE_ZONE("catcher");
        throws_from_inside();
    } catch (const std::runtime_error&) {
    }
    {
        LOUPE_ZONE("after");
    }
    s.stop();
    auto zones = of_kind(mem->events(), record_kind::zone);
    ASSERT_EQ(zones.size(), 3u);
    EXPECT_EQ(zones[0].name, "thrower");
    EXPECT_EQ(zones[1].name, "catcher");
    EXPECT_EQ(zones[2].name, "after");
    EXPECT_LE(zones[1].begin_ns, zones[0].begin_ns);
    EXPECT_GE(zones[1].end_ns, zones[0].end_ns);
}

TEST(Zone, FunctionZoneIsNamedAfterTheFunction) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    EXPECT_EQ(answer(), 42);
    s.stop();
    auto zones = of_kind(mem->events(), record_kind::zone);
    ASSERT_EQ(zones.size(), 1u);
    EXPECT_EQ(zones[0].name, "answer");
}

TEST(Zone, InstantAndCounterCarryTimeAndValue) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    LOUPE_INSTANT("checkpoint");
    LOUPE_COUNTER("queue.depth", 17);
    LOUPE_COUNTER("ratio", 0.25);
    s.stop();
    auto events = mem->events();
    auto instants = of_kind(events, record_kind::instant);
    auto counters = of_kind(events, record_kind::counter);
    ASSERT_EQ(instants.size(), 1u);
    EXPECT_EQ(instants[0].name, "checkpoint");
    EXPECT_EQ(instants[0].begin_ns, instants[0].end_ns);
    ASSERT_EQ(counters.size(), 2u);
    EXPECT_EQ(counters[0].name, "queue.depth");
    EXPECT_EQ(counters[0].value, 17.0);
    EXPECT_EQ(counters[1].value, 0.25);
    EXPECT_LE(instants[0].begin_ns, counters[0].begin_ns);
}

TEST(Zone, NothingIsRecordedWithoutASessionAndCounterValueIsNotEvaluated) {
    int evaluated = 0;
    auto value = [&] {
        ++evaluated;
        return 1;
    };
    {
        LOUPE_ZONE("unrecorded");
        LOUPE_COUNTER("c", value());
    }
    EXPECT_EQ(evaluated, 0);
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    LOUPE_COUNTER("c", value());
    s.stop();
    EXPECT_EQ(evaluated, 1);
    EXPECT_EQ(of_kind(mem->events(), record_kind::zone).size(), 0u);
}

TEST(Zone, AZoneThatBeganRecordedEndsRecordedAfterTheSessionStopped) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem, "first"));
    auto mem2 = std::make_shared<loupe::sinks::memory_sink>();
    auto s2 = loupe::start_session(memory_config(mem2, "second"));
    {
        LOUPE_ZONE("spanning");
        s.stop();  // the zone is still open; the second session keeps recording
        EXPECT_FALSE(s.active());
    }
    s2.stop();
    EXPECT_EQ(named(mem2->events(), "spanning").size(), 1u);
    // The first session was closed before the zone ended: it never sees a
    // half zone, and its counts stay consistent.
    EXPECT_EQ(named(mem->events(), "spanning").size(), 0u);
    EXPECT_EQ(s.stats().delivered, 0u);
}

TEST(Zone, NonMacroApiRecordsLikeTheMacros) {
    static constexpr loupe::site zone_site{"manual", __FILE__, "manual_fn", 7, loupe::site_kind::zone};
    static constexpr loupe::site counter_site{"manual.count", "", "", 0, loupe::site_kind::counter};
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    {
        loupe::zone_scope z(zone_site);
        EXPECT_TRUE(z.recording());
        loupe::counter(counter_site, 3.5);
    }
    s.stop();
    auto events = mem->events();
    ASSERT_EQ(named(events, "manual").size(), 1u);
    EXPECT_EQ(named(events, "manual")[0].where, &zone_site);
    ASSERT_EQ(named(events, "manual.count").size(), 1u);
    EXPECT_EQ(named(events, "manual.count")[0].value, 3.5);
}
