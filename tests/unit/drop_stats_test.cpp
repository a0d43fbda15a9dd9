// Drops made visible (report/drop_stats.hpp): each loss placed after its
// thread's last event before the report, the dropped share per thread and
// per window, printed under `loupe stats`' table only when something was
// lost.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/zone_stats.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/crafted_trace.hpp"
#include "support/trace_files.hpp"

namespace {

using loupe::record_kind;

constexpr loupe::site work{"work", "w.cpp", "work", 1, loupe::site_kind::zone};

TEST(DropStats, ALossIsPlacedAfterItsThreadsLastEventAndCountedInItsWindow) {
    // Session from 1000 ns; zones end at 1100, 1300; 30 lost; a zone ends
    // at 9000; 10 lost; the session ends at 1,000,000 (crafted_trace).
    const loupe::trace t = loupe_test::crafted_trace({
        {record_kind::zone, &work, 1000, 1100},
        {record_kind::zone, &work, 1200, 1300},
        {record_kind::dropped, nullptr, 0, 0, 0, 30},
        {record_kind::zone, &work, 8000, 9000},
        {record_kind::dropped, nullptr, 0, 0, 0, 10},
    });
    ASSERT_EQ(t.drops.size(), 2u);
    EXPECT_EQ(t.drops[0].after_ns, 1300u);
    EXPECT_EQ(t.drops[1].after_ns, 9000u);

    const loupe::report::drop_report r = loupe::report::drop_stats(t, 4);
    EXPECT_EQ(r.recorded, 3u);
    EXPECT_EQ(r.dropped, 40u);
    EXPECT_DOUBLE_EQ(r.share, 40.0 / 43.0);
    ASSERT_EQ(r.threads.size(), 1u);
    EXPECT_EQ(r.threads[0].thread, "crafted-thread");
    EXPECT_EQ(r.threads[0].recorded, 3u);
    EXPECT_EQ(r.threads[0].dropped, 40u);
    ASSERT_EQ(r.windows.size(), 4u);
    EXPECT_EQ(r.windows[0].begin_ns, 1000u);
    EXPECT_EQ(r.windows[3].end_ns, 1'000'000u);
    EXPECT_EQ(r.windows[0].recorded, 3u);  // everything happened in the first quarter
    EXPECT_EQ(r.windows[0].dropped, 40u);
    for (std::size_t i = 1; i < 4; ++i) {
        EXPECT_EQ(r.windows[i].recorded + r.windows[i].dropped, 0u) << i;
        EXPECT_EQ(r.windows[i].begin_ns, r.windows[i - 1].end_ns) << i;
    }

    const std::string text = loupe::report::format_drop_stats(r);
    EXPECT_NE(text.find("dropped events: 40 of 43 (93.0 %)"), std::string::npos) << text;
    EXPECT_NE(text.find("crafted-thread"), std::string::npos) << text;
    const std::string stats = loupe::report::format_zone_stats(loupe::report::zone_stats(t));
    EXPECT_NE(stats.find("dropped events: 40 of 43"), std::string::npos) << stats;
    const std::string json = loupe::report::zone_stats_json(loupe::report::zone_stats(t));
    EXPECT_NE(json.find("\"drops\":{\"recorded\":3,\"dropped\":40,"), std::string::npos) << json;
}

TEST(DropStats, NothingIsPrintedWhenNothingWasLost) {
    const loupe::trace t = loupe_test::crafted_trace({{record_kind::zone, &work, 1000, 1100}});
    const loupe::report::drop_report r = loupe::report::drop_stats(t);
    EXPECT_EQ(r.dropped, 0u);
    EXPECT_TRUE(r.threads.empty());
    EXPECT_TRUE(r.windows.empty());
    EXPECT_EQ(loupe::report::format_drop_stats(r), "");
    EXPECT_EQ(loupe::report::format_zone_stats(loupe::report::zone_stats(t)).find("dropped events:"),
              std::string::npos);
}

// Two threads flat out into a small ring: every thread's losses are
// accounted to it, and the per-thread and per-window sums are the totals.
TEST(DropStats, ThreadsAndWindowsAddUpToTheTotalsOfARealSession) {
    const std::string path = loupe_test::temp_trace_path("drop_stats");
    loupe::session_config cfg;
    cfg.name = "drops";
    cfg.ring_bytes = 4096;
    cfg.memory_budget = 0;  // a ring that stays small drops
    cfg.overflow = loupe::overflow_policy::drop;
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    auto spin = [](const char* name) {
        LOUPE_THREAD_NAME(name);
        for (int i = 0; i < 200000; ++i) {
            LOUPE_ZONE("tight");
        }
    };
    std::thread a(spin, "spinner-a"), b(spin, "spinner-b");
    a.join();
    b.join();
    const loupe::session_stats stats = session.stop();
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());

    const loupe::report::drop_report r = loupe::report::drop_stats(t);
    EXPECT_EQ(r.dropped, stats.dropped);
    EXPECT_EQ(r.recorded, t.events.size());
    std::uint64_t by_threads = 0, by_windows = 0, recorded_in_windows = 0;
    for (const auto& th : r.threads) {
        by_threads += th.dropped;
        EXPECT_TRUE(th.thread == "spinner-a" || th.thread == "spinner-b") << th.thread;
    }
    for (const auto& w : r.windows) {
        by_windows += w.dropped;
        recorded_in_windows += w.recorded;
    }
    EXPECT_EQ(by_threads, r.dropped);
    EXPECT_EQ(by_windows, r.dropped);
    if (r.dropped != 0) {
        EXPECT_EQ(recorded_in_windows, r.recorded);
    }
    for (const loupe::trace_drop& d : t.drops) {
        EXPECT_GE(d.after_ns, t.session.start_ns);
        EXPECT_LE(d.after_ns, t.end.end_ns);
    }
}

}  // namespace
