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

// Ticks far before and after the anchor (days of ticks either way) convert
// with the calibrated rate exactly: the difference of two conversions is the
// difference of ticks times mult() / 2^32, to the nanosecond, and order is kept.
TEST(Clock, ConversionIsExactAndOrderedFarFromTheAnchor) {
    const auto& clock = loupe::detail::process_clock();
    const std::uint64_t mult = clock.mult();
    ASSERT_GT(mult, 0u);
    ASSERT_LT(mult, std::uint64_t{1} << 63);
    const std::uint64_t now = clock.now_ticks();
    for (const std::uint64_t away : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1'000'000'000},
                                     std::uint64_t{1'000'000'000'000}, std::uint64_t{300'000'000'000'000}}) {
        for (const std::uint64_t t : {now - away, now + away}) {
            for (const std::uint64_t step : {std::uint64_t{1}, std::uint64_t{3'000'000'000}}) {
                const auto scaled = static_cast<loupe::detail::uint128>(step) * mult;
                const auto expected = static_cast<std::uint64_t>(scaled >> 32);
                const std::uint64_t got = clock.to_ns(t + step) - clock.to_ns(t);
                EXPECT_LE(got - expected + 1, 2u) << "ticks " << t << " + " << step << ": " << got << " ns, expected "
                                                  << expected << " ± 1";
            }
        }
        // (Before the machine started, steady time has no value to compare.)
        const auto away_ns = static_cast<std::uint64_t>(static_cast<loupe::detail::uint128>(away) * mult >> 32);
        if (away_ns < clock.to_ns(now)) {
            EXPECT_LE(clock.to_ns(now - away), clock.to_ns(now) - away_ns + 1) << away;
        }
        EXPECT_GE(clock.to_ns(now + away) + 1, clock.to_ns(now) + away_ns) << away;
    }
}
