// Metrics charged to zones: each zone carries exactly its own thread's
// deltas (never a shared counter's), totals per thread and per CPU agree
// with the zones, and bad metric names fail the session start.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <loupe/metrics/metric.hpp>
#include <loupe/format/reader.hpp>

#include "support/recording.hpp"
#include "support/trace_files.hpp"

using namespace loupe_test;

namespace {

loupe::session_config metric_config(std::shared_ptr<loupe::sinks::memory_sink> sink, std::vector<std::string> metrics) {
    auto cfg = memory_config(std::move(sink), "metrics");
    cfg.overflow = loupe::overflow_policy::block;
    cfg.metrics = std::move(metrics);
    return cfg;
}

std::string start_error(const loupe::session_config& cfg) {
    try {
        loupe::start_session(cfg).stop();
    } catch (const loupe::error& e) {
        return e.what();
    }
    return "";
}

// Zones named `name` of one thread, in arrival order.
std::vector<memory_event> zones_named(const std::vector<memory_event>& events, const std::string& name) {
    return named(of_kind(events, record_kind::zone), name);
}

}  // namespace

TEST(Metrics, EachZoneCarriesOnlyItsOwnThreadsDeltaWhileAnotherThreadAddsConcurrently) {
    const loupe::metric_id rows = loupe::metric("test.rows", "rows");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"test.rows"}));
    // Two threads add different amounts at the same time; a shared counter
    // read at entry and exit would charge each zone some of the other's.
    std::atomic<int> ready{0};
    auto worker = [&](const char* zone_name, std::int64_t step) {
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
        for (int i = 0; i < 200; ++i) {
            static constexpr loupe::site a{"worker.a", __FILE__, __func__, __LINE__, loupe::site_kind::zone};
            static constexpr loupe::site b{"worker.b", __FILE__, __func__, __LINE__, loupe::site_kind::zone};
            loupe::zone_scope z(step == 1 ? a : b);
            for (int k = 0; k < 50; ++k) loupe::metric_add(rows, step);
        }
        (void)zone_name;
    };
    std::thread t1(worker, "a", 1), t2(worker, "b", 3);
    t1.join();
    t2.join();
    s.stop();
    const auto events = mem->events();
    const auto a = zones_named(events, "worker.a");
    const auto b = zones_named(events, "worker.b");
    ASSERT_EQ(a.size(), 200u);
    ASSERT_EQ(b.size(), 200u);
    for (const auto& z : a) EXPECT_EQ(z.metric(rows, -1), 50);
    for (const auto& z : b) EXPECT_EQ(z.metric(rows, -1), 150);
}

TEST(Metrics, NestedZonesCarryInclusiveDeltasAndNegativeDeltasStaySigned) {
    const loupe::metric_id live = loupe::metric("test.live_objects");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"test.live_objects"}));
    {
        LOUPE_ZONE("outer");
        loupe::metric_add(live, 2);
        {
            LOUPE_ZONE("inner");
            loupe::metric_add(live, 8);
        }
        {
            LOUPE_ZONE("release");
            loupe::metric_add(live, -5);
        }
    }
    s.stop();
    const auto events = mem->events();
    ASSERT_EQ(zones_named(events, "outer").size(), 1u);
    EXPECT_EQ(zones_named(events, "outer")[0].metric(live, -100), 5);
    EXPECT_EQ(zones_named(events, "inner")[0].metric(live, -100), 8);
    EXPECT_EQ(zones_named(events, "release")[0].metric(live, -100), -5);
}

TEST(Metrics, ThreadAndCpuTotalsAgreeWithTheZonesAndCountOnlyTheSession) {
    const loupe::metric_id bytes = loupe::metric("test.bytes", "B");
    loupe::metric_add(bytes, 1000);  // before the session: not in its totals
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"test.bytes"}));
    std::vector<std::thread> threads;
    for (int t = 1; t <= 3; ++t) {
        threads.emplace_back([t, bytes] {
            for (int i = 0; i < 100; ++i) {
                LOUPE_ZONE("work");
                loupe::metric_add(bytes, t * 10);
            }
        });
    }
    for (auto& t : threads) t.join();
    s.stop();
    const auto events = mem->events();
    std::map<std::uint64_t, std::int64_t> zone_sum_by_thread;
    std::int64_t zone_sum = 0;
    for (const auto& z : zones_named(events, "work")) {
        zone_sum_by_thread[z.thread_id] += z.metric(bytes);
        zone_sum += z.metric(bytes);
    }
    EXPECT_EQ(zone_sum, 100 * (10 + 20 + 30));
    std::int64_t thread_total = 0, cpu_total = 0;
    for (const auto& t : of_kind(events, record_kind::metric_totals)) {
        if (t.thread_id != 0) {
            EXPECT_EQ(t.metric(bytes), zone_sum_by_thread[t.thread_id]) << "thread " << t.thread_id;
            thread_total += t.metric(bytes);
        } else {
            cpu_total += t.metric(bytes);
        }
    }
    EXPECT_EQ(thread_total, zone_sum);
    EXPECT_EQ(cpu_total, zone_sum);
}

TEST(Metrics, AThreadMovedFromCpu0ToCpu1KeepsAllItsDeltas) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
    const loupe::metric_id moved = loupe::metric("test.migrating");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"test.migrating"}));
    std::vector<std::int64_t> per_cpu_before = loupe::metric_per_cpu(moved);
    bool pinned = true;
    std::thread t([&] {
        auto pin = [&](int cpu) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            pinned = pinned && sched_setaffinity(0, sizeof set, &set) == 0;
        };
        LOUPE_ZONE("migrating");
        pin(0);
        loupe::metric_add(moved, 100);
        pin(1);
        loupe::metric_add(moved, 200);
    });
    t.join();
    s.stop();
    if (!pinned) GTEST_SKIP() << "sched_setaffinity to CPUs 0 and 1 is not permitted here";
    const auto zones = zones_named(mem->events(), "migrating");
    ASSERT_EQ(zones.size(), 1u);
    EXPECT_EQ(zones[0].metric(moved), 300);
    const std::vector<std::int64_t> per_cpu = loupe::metric_per_cpu(moved);
    EXPECT_EQ(per_cpu[0] - per_cpu_before[0], 100);
    EXPECT_EQ(per_cpu[1] - per_cpu_before[1], 200);
    std::int64_t cpu0 = 0, cpu1 = 0;
    for (const auto& r : of_kind(mem->events(), record_kind::metric_totals)) {
        if (r.thread_id == 0 && r.cpu == 0) cpu0 = r.metric(moved);
        if (r.thread_id == 0 && r.cpu == 1) cpu1 = r.metric(moved);
    }
    EXPECT_EQ(cpu0, 100);
    EXPECT_EQ(cpu1, 200);
}

TEST(Metrics, CpuTimeOfASleepingZoneIsFarBelowItsWallTimeAndASpinningZoneHasSome) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"cpu_time"}));
    {
        LOUPE_ZONE("sleep");
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    {
        LOUPE_ZONE("spin");
        volatile std::uint64_t x = 0;
        for (int i = 0; i < 5000000; ++i) x = x + static_cast<std::uint64_t>(i);
    }
    s.stop();
    const auto events = mem->events();
    const auto sleep = zones_named(events, "sleep");
    const auto spin = zones_named(events, "spin");
    ASSERT_EQ(sleep.size(), 1u);
    ASSERT_EQ(spin.size(), 1u);
    const std::int64_t sleep_cpu = sleep[0].metric(loupe::metrics::cpu_time, -1);
    const std::int64_t spin_cpu = spin[0].metric(loupe::metrics::cpu_time, -1);
    EXPECT_GE(sleep_cpu, 0);
    EXPECT_LT(sleep_cpu, static_cast<std::int64_t>(sleep[0].end_ns - sleep[0].begin_ns) / 2);
    EXPECT_GT(spin_cpu, 0);
}

TEST(Metrics, TwoSessionsEachGetOnlyTheirOwnMetrics) {
    const loupe::metric_id x = loupe::metric("test.x");
    const loupe::metric_id y = loupe::metric("test.y");
    auto mx = std::make_shared<loupe::sinks::memory_sink>();
    auto my = std::make_shared<loupe::sinks::memory_sink>();
    auto sx = loupe::start_session(metric_config(mx, {"test.x"}));
    auto sy = loupe::start_session(metric_config(my, {"test.y"}));
    {
        LOUPE_ZONE("both");
        loupe::metric_add(x, 4);
        loupe::metric_add(y, 7);
    }
    sx.stop();
    sy.stop();
    const auto zx = zones_named(mx->events(), "both");
    const auto zy = zones_named(my->events(), "both");
    ASSERT_EQ(zx.size(), 1u);
    ASSERT_EQ(zy.size(), 1u);
    ASSERT_EQ(zx[0].metrics.size(), 1u);
    ASSERT_EQ(zy[0].metrics.size(), 1u);
    EXPECT_EQ(zx[0].metric(x), 4);
    EXPECT_EQ(zy[0].metric(y), 7);
}

TEST(Metrics, ASessionWithoutMetricsGetsPlainZones) {
    const loupe::metric_id x = loupe::metric("test.plain");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(memory_config(mem));
    {
        LOUPE_ZONE("plain");
        loupe::metric_add(x, 1);
    }
    s.stop();
    const auto z = zones_named(mem->events(), "plain");
    ASSERT_EQ(z.size(), 1u);
    EXPECT_TRUE(z[0].metrics.empty());
    EXPECT_TRUE(of_kind(mem->events(), record_kind::metric_totals).empty());
}

TEST(Metrics, BadMetricNamesFailWithTheNameAndWhatWasExpected) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    std::string e = start_error(metric_config(mem, {"cpu_time", "db.rowz"}));
    EXPECT_NE(e.find("metrics[1] = \"db.rowz\": no such metric; known: wall_time, cpu_time"), std::string::npos) << e;
    e = start_error(metric_config(mem, {"cpu_time", "cpu_time"}));
    EXPECT_NE(e.find("metrics[1] = \"cpu_time\": listed twice"), std::string::npos) << e;

    auto what = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const loupe::error& ex) {
            return ex.what();
        }
        return "";
    };
    EXPECT_NE(what([] { loupe::metric("db rows"); }).find("character ' ' at position 2 is not allowed"),
              std::string::npos);
    EXPECT_NE(what([] { loupe::metric(""); }).find("the name is empty"), std::string::npos);
    EXPECT_NE(what([] { loupe::metric(std::string(48, 'x')); }).find("48 characters: expected at most 47"),
              std::string::npos);
    EXPECT_NE(what([] { loupe::metric("cpu_time"); }).find("built-in metric that loupe measures itself"),
              std::string::npos);
    // Same name, same id; a built-in push metric's name gives its id.
    EXPECT_EQ(loupe::metric("test.same"), loupe::metric("test.same"));
    EXPECT_EQ(loupe::metric("alloc_bytes"), loupe::metrics::alloc_bytes);
    EXPECT_EQ(loupe::find_metric("test.never_defined"), -1);
}

TEST(Metrics, MoreThanEightZoneMetricsOverRunningSessionsAreRefused) {
    std::vector<std::string> names;
    for (int i = 0; i < 6; ++i) {
        names.push_back("test.many" + std::to_string(i));
        loupe::metric(names.back());
    }
    auto m1 = std::make_shared<loupe::sinks::memory_sink>();
    auto first = loupe::start_session(metric_config(m1, names));
    std::vector<std::string> more = {"test.many0", "test.more1", "test.more2", "test.more3"};
    for (const auto& n : more) loupe::metric(n);
    auto m2 = std::make_shared<loupe::sinks::memory_sink>();
    const std::string e = start_error(metric_config(m2, more));
    EXPECT_NE(e.find("zones would carry 9 metrics; at most 8"), std::string::npos) << e;
    first.stop();
    // Alone, the second set fits.
    EXPECT_EQ(start_error(metric_config(m2, more)), "");
}

TEST(Metrics, UnavailableCountersAreReportedInTheTraceAndTheSessionStillRecords) {
    const std::string path = loupe_test::temp_trace_path("metrics_availability");
    loupe::session_config cfg;
    cfg.name = "availability";
    cfg.metrics = {"cycles", "instructions", "task_clock", "cpu_time"};
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto s = loupe::start_session(cfg);
    {
        LOUPE_ZONE("measured");
        volatile std::uint64_t x = 0;
        for (int i = 0; i < 1000000; ++i) x = x + static_cast<std::uint64_t>(i);
    }
    s.stop();
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    ASSERT_EQ(t.metrics.size(), 4u);
    ASSERT_EQ(t.events.size(), 1u);
    const loupe::trace_event& zone = t.events[0];
    for (const loupe::trace_metric& m : t.metrics) {
        std::int64_t delta = 0;
        const bool carried = t.metric_of(zone, m.id, delta);
        if (m.available) {
            EXPECT_TRUE(m.unavailable_reason.empty()) << m.name;
            EXPECT_TRUE(carried) << m.name;
            EXPECT_GT(delta, 0) << m.name;
        } else {
            // e.g. "perf_event_open(cycles) failed: No such file or directory (...)"
            EXPECT_NE(m.unavailable_reason.find("perf_event_open(" + m.name + ") failed"), std::string::npos)
                << m.unavailable_reason;
            EXPECT_FALSE(carried) << m.name;
        }
    }
    EXPECT_TRUE(t.find_metric("cpu_time")->available);
}

TEST(Metrics, AZoneDeltaIsTheModularDifferenceSoAWrappedCounterStaysRight) {
    loupe::detail::metric_plan plan;
    plan.count = 1;
    plan.ids[0] = loupe::metrics::first_custom;
    static constexpr loupe::site where{"wrap", "", "", 0, loupe::site_kind::zone};
    const std::int64_t begin[1] = {std::numeric_limits<std::int64_t>::max() - 5};
    const std::int64_t end[1] = {std::numeric_limits<std::int64_t>::min() + 4};  // 10 later, wrapped
    loupe::detail::raw_record unit[loupe::detail::max_zone_metrics_records];
    const std::size_t n = loupe::detail::pack_zone_with_metrics(&where, 1, 2, 1, plan, begin, end, unit);
    ASSERT_EQ(n, 2u);  // header (with the one delta), the zone
    EXPECT_EQ(static_cast<std::int64_t>(unit[0].t1), 10);
    EXPECT_EQ(unit[1].where, &where);
}

TEST(Metrics, PerCpuRowsLoseNothingWhileThreadsMigrateAndAddConcurrently) {
    // Every add to a CPU's row is a plain add committed only while the thread
    // still runs on that CPU (rseq) or an atomic add: with more threads than
    // CPUs, yielding and changing CPUs all the time, no add may be lost.
    const loupe::metric_id hits = loupe::metric("test.contended");
    const std::int64_t before = loupe::metric_total(hits);
    const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    constexpr int threads = 6;
    constexpr int adds = 200000;
    std::vector<std::thread> workers;
    std::vector<std::int64_t> own(threads);
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (int i = 0; i < adds; ++i) {
                loupe::metric_add(hits, 1);
                if (i % 5000 == 0) {
                    cpu_set_t set;
                    CPU_ZERO(&set);
                    CPU_SET((t + i / 5000) % cpus, &set);
                    sched_setaffinity(0, sizeof set, &set);  // best effort: a refusal only means fewer migrations
                    std::this_thread::yield();
                }
            }
            own[t] = loupe::thread_metric(hits);
        });
    }
    for (auto& w : workers) w.join();
    EXPECT_EQ(loupe::metric_total(hits) - before, std::int64_t{threads} * adds);
    for (int t = 0; t < threads; ++t) EXPECT_EQ(own[t], adds) << "thread " << t;
}

namespace {
// Opens `depth` nested zones, adding 1 at each level.
void nest(int depth, loupe::metric_id id) {
    if (depth == 0) return;
    LOUPE_ZONE("nested");
    loupe::metric_add(id, 1);
    nest(depth - 1, id);
}
}  // namespace

TEST(Metrics, ZonesNestedBeyondTheEntryStackAreRecordedWithoutMetricsAndTheRestStayExact) {
    const loupe::metric_id id = loupe::metric("test.deep");
    const int capacity =
        static_cast<int>(loupe::detail::thread_metrics::entry_capacity);  // one metric: one value a zone
    const int depth = capacity + 100;
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"test.deep"}));
    nest(depth, id);
    nest(3, id);  // the stack is balanced again afterwards
    s.stop();
    const auto zones = zones_named(mem->events(), "nested");
    ASSERT_EQ(zones.size(), static_cast<std::size_t>(depth + 3));
    // Zones end innermost first: the 100 deepest carry nothing; the others
    // carry every add at or below their level (the i-th to end saw i + 1).
    std::size_t with = 0, without = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(depth); ++i) {
        if (zones[i].metrics.empty()) {
            ++without;
        } else {
            ++with;
            EXPECT_EQ(zones[i].metric(id), static_cast<std::int64_t>(i + 1)) << "zone " << i;
        }
    }
    EXPECT_EQ(without, 100u);
    EXPECT_EQ(with, static_cast<std::size_t>(capacity));
    for (std::size_t i = depth; i < zones.size(); ++i)
        EXPECT_EQ(zones[i].metric(id, -1), static_cast<std::int64_t>(i - depth + 1));
}

TEST(Metrics, LongSessionsWriteTotalsPeriodicallyAndTheReaderKeepsTheLatest) {
    const loupe::metric_id id = loupe::metric("test.periodic");
    const std::string path = loupe_test::temp_trace_path("metrics_periodic");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = metric_config(mem, {"test.periodic"});
    cfg.sinks.push_back(std::make_shared<loupe::sinks::file_sink>(path));
    cfg.metric_totals_interval = std::chrono::milliseconds(10);
    auto s = loupe::start_session(cfg);
    std::uint64_t me = 0;
    for (int i = 0; i < 5; ++i) {
        {
            LOUPE_ZONE("tick");
            loupe::metric_add(id, 7);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    s.stop();
    std::vector<std::int64_t> snapshots;  // this thread's totals, in the order written
    for (const auto& e : mem->events()) {
        if (e.kind == record_kind::zone && e.name == "tick") me = e.thread_id;
        if (e.kind == record_kind::metric_totals && e.thread_id != 0 && e.thread_id == me) snapshots.push_back(e.metric(id));
    }
    ASSERT_GE(snapshots.size(), 2u) << "periodic totals besides the final ones";
    for (std::size_t i = 1; i < snapshots.size(); ++i) EXPECT_GE(snapshots[i], snapshots[i - 1]);
    EXPECT_EQ(snapshots.back(), 35);
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    std::size_t mine = 0;
    for (const auto& r : t.metric_totals) {
        if (!r.per_cpu && r.thread_id == me) {
            ++mine;
            ASSERT_EQ(r.values.size(), 1u);
            EXPECT_EQ(r.values[0].value, 35);
        }
    }
    EXPECT_EQ(mine, 1u);
}

TEST(Metrics, ANegativeTotalsIntervalIsRefused) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = metric_config(mem, {"cpu_time"});
    cfg.metric_totals_interval = std::chrono::milliseconds(-5);
    EXPECT_NE(start_error(cfg).find("metric_totals_interval = -5 ms: expected 0 (only at the stop) or a positive interval"),
              std::string::npos);
}

TEST(Metrics, ThreadTotalsOfCpuTimeCoverTheirZonesAndSurviveTheThreadsExit) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto s = loupe::start_session(metric_config(mem, {"cpu_time"}));
    auto spin = [] {
        volatile std::uint64_t x = 0;
        for (int i = 0; i < 2000000; ++i) x = x + static_cast<std::uint64_t>(i);
    };
    std::thread worker([&] {
        for (int i = 0; i < 3; ++i) {
            LOUPE_ZONE("cpu.work");
            spin();
        }
        spin();  // outside any zone: in the thread's total, not in a zone
    });
    worker.join();  // exits before the stop: its total comes from its last reading
    s.stop();
    const auto events = mem->events();
    const auto zones = zones_named(events, "cpu.work");
    ASSERT_EQ(zones.size(), 3u);
    std::int64_t in_zones = 0;
    for (const auto& z : zones) in_zones += z.metric(loupe::metrics::cpu_time);
    std::int64_t total = -1;
    for (const auto& r : of_kind(events, record_kind::metric_totals)) {
        if (r.thread_id == zones[0].thread_id) total = r.metric(loupe::metrics::cpu_time, -1);
    }
    ASSERT_GT(in_zones, 0);
    EXPECT_GT(total, in_zones);  // the spin outside the zones is in the total only
}
