// Starting, stopping and configuring sessions.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "support/recording.hpp"

using namespace loupe_test;

namespace {
std::string start_error(loupe::session_config cfg) {
    try {
        loupe::start_session(std::move(cfg));
    } catch (const loupe::error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST(Session, BeginAndEndRecordsFrameTheEventsWithCounts) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem, "framed"));
    EXPECT_TRUE(s.active());
    EXPECT_EQ(s.name(), "framed");
    for (int i = 0; i < 5; ++i) {
        LOUPE_ZONE("work");
    }
    auto stats = s.stop();
    EXPECT_FALSE(s.active());
    EXPECT_TRUE(mem->closed());
    auto events = mem->events();
    ASSERT_GE(events.size(), 7u);
    EXPECT_EQ(events.front().kind, record_kind::session_begin);
    EXPECT_EQ(events.front().session, "framed");
    EXPECT_EQ(events.back().kind, record_kind::session_end);
    EXPECT_EQ(events.back().count, 5u);
    EXPECT_EQ(events.back().dropped_total, 0u);
    EXPECT_GE(events.back().end_ns, events.front().begin_ns);
    EXPECT_EQ(stats.delivered, 5u);
    EXPECT_EQ(stats.dropped, 0u);
}

TEST(Session, StopIsIdempotentAndDestructorStops) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    {
        auto s = loupe::start_session(memory_config(mem));
        LOUPE_INSTANT("once");
        auto first = s.stop();
        auto second = s.stop();
        EXPECT_EQ(first.delivered, second.delivered);
    }
    EXPECT_EQ(of_kind(mem->events(), record_kind::session_end).size(), 1u);
    auto mem2 = std::make_shared<loupe::sinks::memory_sink>();
    {
        auto s = loupe::start_session(memory_config(mem2));
        LOUPE_INSTANT("in-scope");
    }
    EXPECT_TRUE(mem2->closed());
    EXPECT_EQ(named(mem2->events(), "in-scope").size(), 1u);
}

TEST(Session, KindsSelectWhatIsRecorded) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = memory_config(mem);
    cfg.kinds = loupe::kinds::instants;
    auto s = loupe::start_session(cfg);
    {
        LOUPE_ZONE("not-wanted");
        LOUPE_INSTANT("wanted");
        LOUPE_COUNTER("not-wanted-either", 1);
    }
    s.stop();
    auto events = mem->events();
    EXPECT_EQ(of_kind(events, record_kind::zone).size(), 0u);
    EXPECT_EQ(of_kind(events, record_kind::counter).size(), 0u);
    EXPECT_EQ(of_kind(events, record_kind::instant).size(), 1u);
}

TEST(Session, TwoSessionsEachGetTheirOwnSinksAndSharedEventsReachBoth) {
    auto a = std::make_shared<loupe::sinks::memory_sink>();
    auto b = std::make_shared<loupe::sinks::memory_sink>();
    auto sa = loupe::start_session(memory_config(a, "a"));
    LOUPE_INSTANT("only-a");
    auto cfg_b = memory_config(b, "b");
    cfg_b.kinds = loupe::kinds::zones;
    auto sb = loupe::start_session(cfg_b);
    {
        LOUPE_ZONE("both");
    }
    sa.stop();
    {
        LOUPE_ZONE("only-b");
    }
    sb.stop();
    EXPECT_EQ(named(a->events(), "only-a").size(), 1u);
    EXPECT_EQ(named(a->events(), "both").size(), 1u);
    EXPECT_EQ(named(a->events(), "only-b").size(), 0u);
    EXPECT_EQ(named(b->events(), "only-a").size(), 0u);
    EXPECT_EQ(named(b->events(), "both").size(), 1u);
    EXPECT_EQ(named(b->events(), "only-b").size(), 1u);
    for (const auto& e : a->events()) EXPECT_EQ(e.session, "a");
}

TEST(Session, SixtyFourRunAtOnceAndTheSixtyFifthIsRefusedClearly) {
    std::vector<std::shared_ptr<loupe::sinks::memory_sink>> sinks;
    std::vector<loupe::session> sessions;
    for (int i = 0; i < 64; ++i) {
        sinks.push_back(std::make_shared<loupe::sinks::memory_sink>());
        sessions.push_back(loupe::start_session(memory_config(sinks.back(), "s" + std::to_string(i))));
    }
    auto extra = std::make_shared<loupe::sinks::memory_sink>();
    std::string err = start_error(memory_config(extra, "one-too-many"));
    EXPECT_NE(err.find("one-too-many"), std::string::npos) << err;
    EXPECT_NE(err.find("64 sessions are active"), std::string::npos) << err;
    LOUPE_INSTANT("everyone");
    for (auto& s : sessions) s.stop();
    for (auto& sink : sinks) EXPECT_EQ(named(sink->events(), "everyone").size(), 1u);
    // Slots are reusable once stopped.
    auto again = loupe::start_session(memory_config(extra, "after"));
    LOUPE_INSTANT("reused");
    again.stop();
    EXPECT_EQ(named(extra->events(), "reused").size(), 1u);
    EXPECT_EQ(named(extra->events(), "everyone").size(), 0u);
}

TEST(Session, InvalidConfigurationsFailWithMessagesNamingTheField) {
    loupe::session_config no_sinks;
    no_sinks.name = "empty";
    EXPECT_NE(start_error(no_sinks).find("session 'empty': sinks is empty"), std::string::npos);

    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto null_sink = memory_config(mem, "nul");
    null_sink.sinks.push_back(nullptr);
    EXPECT_NE(start_error(null_sink).find("sinks[1] is null"), std::string::npos);

    auto no_kinds = memory_config(mem, "k");
    no_kinds.kinds = 0;
    EXPECT_NE(start_error(no_kinds).find("kinds = 0"), std::string::npos);
    no_kinds.kinds = 1u << 20;
    EXPECT_NE(start_error(no_kinds).find("expected a non-empty OR"), std::string::npos);

    auto tiny = memory_config(mem, "r");
    tiny.ring_bytes = 16;
    EXPECT_NE(start_error(tiny).find("ring_bytes = 16: expected 256 to"), std::string::npos);
}

namespace {
// Starts a session whose callback sink runs `act(session)` when it receives
// an instant, records one, stops the session, and returns what the
// loupe::error `act` threw said ("" if it threw none).
std::string error_thrown_inside_a_sink(const char* name, const std::function<void(loupe::session&)>& act) {
    std::string seen_error;
    loupe::session* own = nullptr;
    auto cb = std::make_shared<loupe::sinks::callback_sink>([&](const loupe::record& r) {
        if (r.kind != record_kind::instant || own == nullptr) return;
        try {
            act(*own);
        } catch (const loupe::error& e) {
            seen_error = e.what();
        }
    });
    loupe::session_config cfg;
    cfg.name = name;
    cfg.sinks = {cb};
    auto s = loupe::start_session(cfg);
    own = &s;
    LOUPE_INSTANT("trigger");
    s.stop();
    return seen_error;
}
}  // namespace

TEST(Session, StoppingFromInsideASinkIsRefusedWithoutDeadlock) {
    const std::string seen_error = error_thrown_inside_a_sink("reentrant", [](loupe::session& own) { own.stop(); });
    EXPECT_NE(seen_error.find("from inside a sink"), std::string::npos) << seen_error;
}

TEST(Session, StartingFromInsideASinkIsRefusedWithoutDeadlock) {
    loupe::session started_inside;  // only if the start was wrongly allowed: stopped below
    auto inner = std::make_shared<loupe::sinks::memory_sink>();
    const std::string seen_error = error_thrown_inside_a_sink(
        "reentrant-start", [&](loupe::session&) { started_inside = loupe::start_session(memory_config(inner, "inner")); });
    EXPECT_FALSE(started_inside.active());
    started_inside.stop();
    EXPECT_NE(seen_error.find("cannot start session 'inner' from inside a sink"), std::string::npos) << seen_error;
}

TEST(Session, StartAndStopFromManyThreadsWhileOthersRecord) {
    std::atomic<bool> run{true};
    std::vector<std::thread> recorders;
    for (int t = 0; t < 2; ++t) {
        recorders.emplace_back([&] {
            while (run.load(std::memory_order_relaxed)) {
                LOUPE_ZONE("busy");
                LOUPE_INSTANT("tick");
            }
        });
    }
    std::vector<std::thread> controllers;
    std::atomic<int> consistent{0};
    for (int t = 0; t < 3; ++t) {
        controllers.emplace_back([&, t] {
            for (int i = 0; i < 20; ++i) {
                auto mem = std::make_shared<loupe::sinks::memory_sink>();
                auto s = loupe::start_session(memory_config(mem, "c" + std::to_string(t)));
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                auto stats = s.stop();
                auto events = mem->events();
                std::uint64_t recorded = of_kind(events, record_kind::zone).size() +
                                         of_kind(events, record_kind::instant).size();
                if (recorded == stats.delivered && dropped_total(events) == stats.dropped &&
                    events.back().kind == record_kind::session_end) {
                    ++consistent;
                }
            }
        });
    }
    for (auto& c : controllers) c.join();
    run = false;
    for (auto& r : recorders) r.join();
    EXPECT_EQ(consistent.load(), 60);
}
