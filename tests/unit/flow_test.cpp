// Flows as a user records them: ids, points on several threads, what turns
// them off, and how a forked child keeps its ids apart.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>
#include <vector>

#include "support/recording.hpp"

using namespace loupe_test;

TEST(Flow, PointsOnSeveralThreadsCarryTheirIdRoleAndTime) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    const std::uint64_t id = loupe::new_flow_id();
    LOUPE_FLOW("queued", id);
    std::thread worker([id] {
        LOUPE_FLOW("picked up", id);
        LOUPE_FLOW_END("answered", id);
    });
    worker.join();
    s.stop();
    const auto flows = of_kind(mem->events(), record_kind::flow);
    ASSERT_EQ(flows.size(), 3u);
    EXPECT_EQ(flows[0].name, "queued");
    EXPECT_EQ(flows[1].name, "picked up");
    EXPECT_EQ(flows[2].name, "answered");
    for (const memory_event& f : flows) EXPECT_EQ(f.flow_id, id) << f.name;
    EXPECT_EQ(flows[0].where->kind, loupe::site_kind::flow);
    EXPECT_EQ(flows[1].where->kind, loupe::site_kind::flow);
    EXPECT_EQ(flows[2].where->kind, loupe::site_kind::flow_end);
    EXPECT_NE(flows[0].thread_id, flows[1].thread_id);
    EXPECT_EQ(flows[1].thread_id, flows[2].thread_id);
    EXPECT_LE(flows[0].begin_ns, flows[1].begin_ns);
    EXPECT_LE(flows[1].begin_ns, flows[2].begin_ns);
    EXPECT_EQ(flows[0].begin_ns, flows[0].end_ns);
    // Other records say nothing of flows.
    for (const memory_event& e : mem->events()) {
        if (e.kind != record_kind::flow) {
            EXPECT_EQ(e.flow_id, 0u);
        }
    }
}

TEST(Flow, IdZeroAndSitesOfOtherKindsRecordNothing) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    LOUPE_FLOW("no flow", 0);
    static constexpr loupe::site zone_site{"a zone", "t.cpp", "f", 1, loupe::site_kind::zone};
    loupe::flow(zone_site, 7);
    LOUPE_FLOW("real", 7);
    s.stop();
    const auto flows = of_kind(mem->events(), record_kind::flow);
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].name, "real");
    EXPECT_TRUE(of_kind(mem->events(), record_kind::zone).empty());
}

TEST(Flow, ASessionWithoutKindsFlowsRecordsNoneAndAFilterKeepsOnlyItsThreads) {
    auto no_flows = std::make_shared<loupe::sinks::memory_sink>();
    auto alice_only = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config a = memory_config(no_flows, "zones only");
    a.kinds = loupe::kinds::zones;
    loupe::session_config b = memory_config(alice_only, "alice");
    b.filter = R"(user == "alice")";
    auto first = loupe::start_session(a);
    auto second = loupe::start_session(b);
    const std::uint64_t id = loupe::new_flow_id();
    {
        loupe::context_scope who({{loupe::context_field::user, "alice"}});
        LOUPE_FLOW("alice's", id);
    }
    std::thread bob([id] {
        loupe::context_scope who({{loupe::context_field::user, "bob"}});
        LOUPE_FLOW_END("bob's", id);
    });
    bob.join();
    second.stop();
    first.stop();
    EXPECT_TRUE(of_kind(no_flows->events(), record_kind::flow).empty());
    const auto flows = of_kind(alice_only->events(), record_kind::flow);
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].name, "alice's");
}

TEST(Flow, KindsFlowsAloneIsAValidSessionAndTheErrorMessageNamesIt) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg = memory_config(mem);
    cfg.kinds = loupe::kinds::flows;
    auto s = loupe::start_session(cfg);
    LOUPE_ZONE("not recorded");
    LOUPE_FLOW("recorded", 42);
    s.stop();
    EXPECT_EQ(of_kind(mem->events(), record_kind::flow).size(), 1u);
    EXPECT_TRUE(of_kind(mem->events(), record_kind::zone).empty());

    cfg.kinds = 1u << 30;
    try {
        loupe::start_session(cfg);
        FAIL() << "a session with an unknown kind bit started";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("flows"), std::string::npos) << e.what();
    }
}

TEST(FlowId, NeverZeroAndUniqueAcrossThreads) {
    constexpr int threads = 4, per_thread = 20000;
    std::vector<std::vector<std::uint64_t>> ids(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&ids, t] {
            for (int i = 0; i < per_thread; ++i) ids[t].push_back(loupe::new_flow_id());
        });
    }
    for (std::thread& t : pool) t.join();
    std::set<std::uint64_t> all;
    for (const auto& list : ids) {
        for (const std::uint64_t id : list) {
            EXPECT_NE(id, 0u);
            all.insert(id);
        }
    }
    EXPECT_EQ(all.size(), static_cast<std::size_t>(threads * per_thread));
}

TEST(FlowId, SuccessiveIdsDifferInTheirHighBits) {
    // Ids are spread over all 64 bits, so two processes' sequences do not
    // run into each other: successive ids share no long prefix.
    std::uint64_t previous = loupe::new_flow_id();
    int same_high_half = 0;
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t id = loupe::new_flow_id();
        same_high_half += (id >> 32) == (previous >> 32);
        previous = id;
    }
    EXPECT_LT(same_high_half, 3);
}

TEST(FlowId, AForkedChildDrawsFromASequenceOfItsOwn) {
    loupe::new_flow_id();  // seeded before the fork
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const std::uint64_t id = loupe::new_flow_id();
        const bool written = ::write(fds[1], &id, sizeof id) == static_cast<ssize_t>(sizeof id);
        ::_exit(written ? 0 : 1);
    }
    const std::uint64_t parent_id = loupe::new_flow_id();
    std::uint64_t child_id = 0;
    ASSERT_EQ(::read(fds[0], &child_id, sizeof child_id), static_cast<ssize_t>(sizeof child_id));
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ::close(fds[0]);
    ::close(fds[1]);
    // Without its own salt the child's first id would be the parent's next.
    EXPECT_NE(child_id, 0u);
    EXPECT_NE(child_id, parent_id);
}

TEST(FlowIdText, SixteenHexDigitsRoundTripAndBadTextIsNoFlow) {
    EXPECT_EQ(loupe::flow_id_text(0x00f067aa0ba902b7ull), "00f067aa0ba902b7");
    EXPECT_EQ(loupe::flow_id_text(~0ull), "ffffffffffffffff");
    for (int i = 0; i < 100; ++i) {
        const std::uint64_t id = loupe::new_flow_id();
        EXPECT_EQ(loupe::parse_flow_id(loupe::flow_id_text(id)), id);
    }
    EXPECT_EQ(loupe::parse_flow_id("00F067AA0BA902B7"), 0x00f067aa0ba902b7ull);
    EXPECT_EQ(loupe::parse_flow_id("2a"), 42u);
    EXPECT_EQ(loupe::parse_flow_id(""), 0u);
    EXPECT_EQ(loupe::parse_flow_id("00f067aa0ba902b71"), 0u);  // 17 digits
    EXPECT_EQ(loupe::parse_flow_id("0x2a"), 0u);
    EXPECT_EQ(loupe::parse_flow_id(" 2a"), 0u);
    EXPECT_EQ(loupe::parse_flow_id("2g"), 0u);
}
