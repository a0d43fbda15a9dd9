// loupe's clock: ticks convert to nanoseconds that track steady_clock.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

TEST(Clock, TicksConvertToNanosecondsThatTrackSteadyClock) {
    const auto& clock = loupe::detail::process_clock();
    const std::uint64_t s0 = loupe::detail::steady_ns();
    const std::uint64_t t0 = clock.to_ns(clock.now_ticks());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t s1 = loupe::detail::steady_ns();
    const std::uint64_t t1 = clock.to_ns(clock.now_ticks());
    const double steady = static_cast<double>(s1 - s0);
    const double ticks = static_cast<double>(t1 - t0);
    // Calibration error, not timing: the two clocks agree to within 1 %.
    EXPECT_NEAR(ticks / steady, 1.0, 0.01);
    // Both are on the same time base (loupe anchors ticks to steady_clock).
    EXPECT_NEAR(static_cast<double>(t0), static_cast<double>(s0), 5e6);
}

TEST(Clock, SessionCarriesAWallClockAnchorAndTheClockSource) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_info seen;
    std::string name;
    auto cb = std::make_shared<loupe::sinks::callback_sink>([&](const loupe::record& r) {
        if (r.kind == loupe::record_kind::session_begin) {
            seen = *r.session;
            name = std::string(r.session->name);
        }
    });
    loupe::session_config cfg;
    cfg.name = "anchored";
    cfg.sinks = {cb};
    const std::uint64_t wall_before = loupe::detail::wall_ns();
    auto s = loupe::start_session(cfg);
    s.stop();
    const std::uint64_t wall_after = loupe::detail::wall_ns();
    EXPECT_EQ(name, "anchored");
    EXPECT_GE(seen.wall_anchor_ns, wall_before);
    EXPECT_LE(seen.wall_anchor_ns, wall_after);
    EXPECT_EQ(seen.clock, loupe::detail::process_clock().source());
    EXPECT_EQ(seen.pid, static_cast<std::uint32_t>(::getpid()));
}
