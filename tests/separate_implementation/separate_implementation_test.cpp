// A program built with LOUPE_SEPARATE_IMPLEMENTATION=1: its instrumenting
// file (instrumented_work.cpp) only declares loupe's shared out-of-line
// parts, implementation.cpp compiles them once, and everything works as in
// a header-only program: zones, flows, context scopes, a thread's first
// event (no ring yet), a full ring, misuse reports.
#include <gtest/gtest.h>

#include <loupe/session.hpp>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "instrumented_work.hpp"

namespace {

using loupe::record_kind;
using loupe::sinks::memory_event;

std::vector<memory_event> of_kind(const std::vector<memory_event>& events, record_kind kind) {
    std::vector<memory_event> out;
    for (const auto& e : events) {
        if (e.kind == kind) out.push_back(e);
    }
    return out;
}

// Runs `work` on a new thread (whose first event finds no ring yet) under a
// session into a memory sink configured by `cfg`.
template <class Work>
std::vector<memory_event> record_on_new_thread(loupe::session_config cfg, Work work) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    cfg.name = "separate";
    cfg.sinks = {sink};
    auto session = loupe::start_session(cfg);
    std::thread(work).join();
    const auto stats = session.stop();
    EXPECT_EQ(stats.dropped, 0u);
    return sink->events();
}

TEST(SeparateImplementation, AnInstrumentingFileRecordsZonesFlowsAndContext) {
    std::vector<separate_work_result> results;
    const auto events = record_on_new_thread({}, [&] {
        for (int i = 0; i < 100; ++i) results.push_back(separate_work(i));
    });
    ASSERT_EQ(results.size(), 100u);
    std::set<std::uint64_t> ids;
    for (std::size_t i = 0; i < results.size(); ++i) {
        EXPECT_EQ(results[i].user, "alice");
        EXPECT_EQ(results[i].request, "r-" + std::to_string(i));
        EXPECT_EQ(results[i].component, "checkout");
        EXPECT_NE(results[i].flow, 0u);
        ids.insert(results[i].flow);
    }
    EXPECT_EQ(ids.size(), 100u) << "flow ids repeat";
    EXPECT_TRUE(loupe::capture_context().get(loupe::context_field::user).empty()) << "the scopes did not end";

    const auto zones = of_kind(events, record_kind::zone);
    const auto flows = of_kind(events, record_kind::flow);
    ASSERT_EQ(zones.size(), 100u);
    ASSERT_EQ(flows.size(), 100u);
    for (std::size_t i = 0; i < flows.size(); ++i) {
        EXPECT_EQ(zones[i].name, "separate_work");
        EXPECT_EQ(flows[i].flow_id, results[i].flow) << "flow " << i;
    }
}

// A 256-byte ring (8 records) that may not grow, with the block policy: the
// thread meets a full ring again and again (the shared full-ring paths) and
// waits each time; nothing is lost.
TEST(SeparateImplementation, AFullRingWaitsAndLosesNothing) {
    loupe::session_config cfg;
    cfg.ring_bytes = 256;
    cfg.memory_budget = 0;
    cfg.overflow = loupe::overflow_policy::block;
    constexpr int calls = 5000;
    std::vector<std::uint64_t> made;
    const auto events = record_on_new_thread(cfg, [&] {
        for (int i = 0; i < calls; ++i) made.push_back(separate_work(i).flow);
    });
    const auto flows = of_kind(events, record_kind::flow);
    ASSERT_EQ(of_kind(events, record_kind::zone).size(), static_cast<std::size_t>(calls));
    ASSERT_EQ(flows.size(), static_cast<std::size_t>(calls));
    for (std::size_t i = 0; i < flows.size(); ++i) ASSERT_EQ(flows[i].flow_id, made[i]) << "flow " << i;
}

TEST(SeparateImplementation, ScopesEndedOutOfOrderAreReportedOnce) {
    std::vector<std::string> messages;
    loupe::set_error_handler([&](const std::string& m) { messages.push_back(m); });
    separate_out_of_order_scopes();
    separate_out_of_order_scopes();
    loupe::set_error_handler({});
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("out of order"), std::string::npos) << messages[0];
    EXPECT_TRUE(loupe::capture_context().get(loupe::context_field::request).empty()) << "a scope stayed";
}

}  // namespace
