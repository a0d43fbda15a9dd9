// A failing sink is counted and reported once; the host never sees it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "support/captured_errors.hpp"
#include "support/recording.hpp"

using namespace loupe_test;


TEST(SinkFailure, AThrowingSinkIsReportedOnceAndTheOtherSinksKeepEverything) {
    captured_errors errors;
    int calls = 0;
    auto flaky = std::make_shared<loupe::sinks::callback_sink>([&](const loupe::record& r) {
        if (r.kind == record_kind::zone && ++calls == 3) throw std::runtime_error("disk on fire");
    });
    auto healthy = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "flaky";
    cfg.sinks = {flaky, healthy};
    auto s = loupe::start_session(cfg);
    for (int i = 0; i < 10; ++i) {
        LOUPE_ZONE("work");
    }
    auto stats = s.stop();
    EXPECT_EQ(of_kind(healthy->events(), record_kind::zone).size(), 10u);
    EXPECT_EQ(stats.delivered, 10u);
    EXPECT_EQ(stats.sink_failures, 1u);
    // The failing record and the 7 zones plus the session end after it.
    EXPECT_EQ(stats.records_undelivered, 9u);
    EXPECT_EQ(calls, 3);
    auto messages = errors.messages();
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("session 'flaky'"), std::string::npos) << messages[0];
    EXPECT_NE(messages[0].find("disk on fire"), std::string::npos) << messages[0];
}

TEST(SinkFailure, AFullDiskIsReportedAndTheSessionStillStops) {
    captured_errors errors;
    auto full = std::make_shared<loupe::sinks::file_sink>("/dev/full");
    loupe::session_config cfg;
    cfg.name = "disk-full";
    cfg.sinks = {full};
    auto s = loupe::start_session(cfg);
    for (int i = 0; i < 1000; ++i) {
        LOUPE_ZONE("write-me");
    }
    auto stats = s.stop();
    EXPECT_EQ(stats.sink_failures, 1u);
    auto messages = errors.messages();
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("/dev/full"), std::string::npos) << messages[0];
    EXPECT_NE(messages[0].find("No space left on device"), std::string::npos) << messages[0];
}

TEST(SinkFailure, AnErrorHandlerThatThrowsDoesNotReachTheHost) {
    loupe::set_error_handler([](const std::string&) { throw std::runtime_error("handler bug"); });
    auto bad = std::make_shared<loupe::sinks::callback_sink>(
        [](const loupe::record&) { throw std::runtime_error("sink bug"); });
    loupe::session_config cfg;
    cfg.sinks = {bad};
    auto s = loupe::start_session(cfg);
    LOUPE_INSTANT("x");
    EXPECT_EQ(s.stop().sink_failures, 1u);
    loupe::set_error_handler({});
}
