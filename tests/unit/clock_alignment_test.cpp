// Placing traces of several machines on one timeline
// (report/clock_alignment.hpp and the clamp of report/task_join.hpp): a
// known offset is recovered within its stated uncertainty, a causality
// violation is clamped and flagged, domains chain through the tightest
// path, and domains no call relates stay as recorded.
#include <gtest/gtest.h>

#include <loupe/report/clock_alignment.hpp>
#include <loupe/report/task_join.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "support/task_traces.hpp"

namespace {

namespace rep = loupe::report;
using loupe_test::client_call;
using loupe_test::server_call;
using loupe_test::test_trace_id;

constexpr test_trace_id task{0xabc, 0xdef};

// `n` calls from A (clock domain "hostA") to B ("hostB"), whose clock reads
// `offset` ns more than A's at the same instant. Each call leaves A at t1,
// travels `up` ns, is served for `serve` ns and travels `down` ns back;
// one-way delays differ (asymmetric network), so each call alone is off
// by (up - down) / 2.
struct two_hosts {
    loupe::trace a = loupe_test::process_trace("A", 1, "hostA", 0, 10'000'000'000);
    loupe::trace b = loupe_test::process_trace("B", 2, "hostB", 0, 20'000'000'000);
    std::uint64_t next_call = 1;

    void call(std::uint64_t t1, std::uint64_t up, std::uint64_t serve, std::uint64_t down, std::int64_t offset,
              const test_trace_id& id = task) {
        const std::uint64_t call_id = next_call++;
        const std::uint64_t t2 = t1 + up, t3 = t2 + serve, t4 = t3 + down;
        client_call(a, id, call_id, 0xa0, t1, t4, "/b");
        server_call(b, id, call_id, 0xb0 + call_id, static_cast<std::uint64_t>(static_cast<std::int64_t>(t2) + offset),
                    static_cast<std::uint64_t>(static_cast<std::int64_t>(t3) + offset), "/b");
    }
};

}  // namespace

TEST(ClockAlignment, EstimateIsNtpsFormula) {
    // Server 1000 ns ahead; 100 ns up, 300 ns down, served in 50 ns.
    const rep::clock_estimate e = rep::estimate_offset(0, 100 + 1000, 150 + 1000, 450);
    ASSERT_TRUE(e.valid);
    EXPECT_EQ(e.offset_ns, ((1100 - 0) + (1150 - 450)) / 2);  // 900: off by (100 - 300) / 2
    EXPECT_EQ(e.uncertainty_ns, ((450 - 0) - (1150 - 1100)) / 2);  // 200
    EXPECT_LE(std::llabs(e.offset_ns - 1000), e.uncertainty_ns);
    // A server interval longer than the client's fits no offset.
    EXPECT_FALSE(rep::estimate_offset(0, 100, 600, 400).valid);
}

TEST(ClockAlignment, RecoversAKnownOffsetWithinItsStatedUncertainty) {
    const std::int64_t offset = 3'250'000'000;  // B's clock reads 3.25 s more than A's
    two_hosts h;
    std::mt19937_64 rng(1);
    for (int k = 0; k < 100; ++k) {
        const std::uint64_t up = 20'000 + rng() % 400'000, down = 20'000 + rng() % 400'000;
        h.call(1'000'000 + static_cast<std::uint64_t>(k) * 2'000'000, up, 50'000 + rng() % 100'000, down, offset);
    }
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{h.a, h.b});
    const rep::clock_alignment& a = f.alignment;
    ASSERT_EQ(a.domains.size(), 2u);
    EXPECT_TRUE(a.domains[0].reference);
    EXPECT_EQ(a.domains[0].offset_ns, 0);
    const rep::clock_domain& b = a.domains[1];
    EXPECT_EQ(b.name, "hostB");
    EXPECT_TRUE(b.aligned);
    EXPECT_EQ(b.via, 0u);
    EXPECT_EQ(b.samples, 100u);
    EXPECT_LE(std::llabs(b.offset_ns - offset), b.uncertainty_ns);
    EXPECT_LE(b.uncertainty_ns, 500'000);  // the tightest call's, at most (420 + 420) / 2 µs
    // Every call fits its client's interval with this estimate, or was
    // clamped to: none needed more than the uncertainty.
    for (const rep::task_node& n : f.nodes) {
        if (n.kind != rep::task_node_kind::call) continue;
        EXPECT_LE(f.client_side(n).begin_ns, f.server_side(n).begin_ns);
        EXPECT_LE(f.server_side(n).end_ns, f.client_side(n).end_ns);
        EXPECT_LE(std::llabs(n.shift_ns), 2 * b.uncertainty_ns);
    }
}

TEST(ClockAlignment, KeepsTheEstimateWithTheLeastUncertainty) {
    const std::int64_t offset = -7'000'000;  // B's clock behind A's
    two_hosts h;
    h.call(10'000'000, 900'000, 10'000, 100'000, offset);  // δ = 500 µs, off by 400 µs
    h.call(20'000'000, 40'000, 10'000, 60'000, offset);    // δ = 50 µs, off by -10 µs
    h.call(30'000'000, 300'000, 10'000, 700'000, offset);  // δ = 500 µs
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{h.a, h.b});
    const rep::clock_domain& b = f.alignment.domains[1];
    EXPECT_EQ(b.uncertainty_ns, 50'000);
    EXPECT_EQ(b.offset_ns, offset - 10'000);
    ASSERT_EQ(f.alignment.pairs.size(), 1u);
    EXPECT_EQ(f.alignment.pairs[0].samples, 3u);
}

TEST(ClockAlignment, CallsInEitherDirectionAreSamples) {
    // B calls A: the server is in the reference domain.
    loupe::trace a = loupe_test::process_trace("A", 1, "hostA");
    loupe::trace b = loupe_test::process_trace("B", 2, "hostB");
    const std::int64_t offset = 40'000;  // B ahead of A
    client_call(b, task, 1, 0xb, 1000 + offset, 1500 + offset, "/a");
    server_call(a, task, 1, 0xa, 1100, 1400, "/a");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    EXPECT_EQ(f.alignment.domains[1].offset_ns, offset);
    EXPECT_EQ(f.alignment.domains[1].uncertainty_ns, 100);
    EXPECT_EQ(f.alignment.to_timeline(1, 1000 + offset), 1000);
}

TEST(ClockAlignment, ClampsACausalityViolationAndFlagsIt) {
    // The offset comes from a tight call (δ = 10 ns). A second call's times
    // on B are 2 µs too early for it (B's clock drifted, or the request
    // was stamped late on A): placed as recorded, t2' would come before
    // t1. The clamp moves B's side forward until t1 = t2', without
    // stretching it, and moves B's own calls with it.
    const std::int64_t offset = 1'000'000;
    two_hosts h;
    h.call(1000, 10, 100, 10, offset);  // call 1: exact within 10 ns
    const std::uint64_t t1 = 50'000, t4 = 60'000;
    client_call(h.a, task, 2, 0xa0, t1, t4, "/late");
    // As recorded by B (its clock): 2 µs before t1 once aligned.
    const std::uint64_t t2 = t1 - 2'000 + offset, t3 = t2 + 5'000;
    server_call(h.b, task, 2, 0xbb, t2, t3, "/late");
    client_call(h.b, task, 3, 0xbb, t2 + 1'000, t2 + 2'000, "/db", 1, "db");  // B's call inside
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{h.a, h.b});
    ASSERT_TRUE(f.alignment.domains[1].aligned);
    EXPECT_EQ(f.alignment.domains[1].offset_ns, offset);
    EXPECT_EQ(f.counts.clamped, 1u);
    const rep::task_node* late = nullptr;
    const rep::task_node* db = nullptr;
    for (const rep::task_node& n : f.nodes) {
        if (f.name_of(n) == "/late") late = &n;
        if (f.name_of(n) == "/db") db = &n;
    }
    ASSERT_NE(late, nullptr);
    ASSERT_NE(db, nullptr);
    EXPECT_TRUE(late->has(rep::task_flag::clamped));
    EXPECT_EQ(late->shift_ns, 2'000);
    EXPECT_EQ(f.server_side(*late).begin_ns, static_cast<std::int64_t>(t1));
    EXPECT_EQ(f.server_side(*late).end_ns - f.server_side(*late).begin_ns, 5'000);  // shifted, not stretched
    EXPECT_LE(f.server_side(*late).end_ns, static_cast<std::int64_t>(t4));
    // B's call to the database moved with the side that made it.
    EXPECT_EQ(db->parent, static_cast<std::uint32_t>(late - f.nodes.data()));
    EXPECT_EQ(db->begin_ns, static_cast<std::int64_t>(t1) + 1'000);
    // The tight call needed nothing.
    for (const rep::task_node& n : f.nodes) {
        if (f.name_of(n) == "/b") {
            EXPECT_FALSE(n.has(rep::task_flag::clamped));
        }
    }
}

TEST(ClockAlignment, ClampsTheEndToo) {
    // t3' after t4: moved back until t3' = t4.
    const std::int64_t offset = 1'000'000;
    two_hosts h;
    h.call(1000, 10, 100, 10, offset);
    client_call(h.a, task, 2, 0xa0, 50'000, 60'000, "/late");
    server_call(h.b, task, 2, 0xbb, 58'000 + offset, 61'000 + offset, "/late");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{h.a, h.b});
    for (const rep::task_node& n : f.nodes) {
        if (f.name_of(n) != "/late") continue;
        EXPECT_TRUE(n.has(rep::task_flag::clamped));
        EXPECT_EQ(n.shift_ns, -1'000);
        EXPECT_EQ(f.server_side(n).end_ns, 60'000);
        EXPECT_EQ(f.server_side(n).begin_ns, 57'000);
    }
}

TEST(ClockAlignment, AServerLongerThanItsClientStartsWithIt) {
    const std::int64_t offset = 1'000'000;
    two_hosts h;
    h.call(1000, 10, 100, 10, offset);
    client_call(h.a, task, 2, 0xa0, 50'000, 51'000, "/long");
    server_call(h.b, task, 2, 0xbb, 49'000 + offset, 53'000 + offset, "/long");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{h.a, h.b});
    for (const rep::task_node& n : f.nodes) {
        if (f.name_of(n) != "/long") continue;
        EXPECT_TRUE(n.has(rep::task_flag::overlong));
        EXPECT_TRUE(n.has(rep::task_flag::clamped));
        EXPECT_EQ(f.server_side(n).begin_ns, 50'000);
        EXPECT_EQ(f.server_side(n).end_ns, 54'000);
    }
}

TEST(ClockAlignment, OneClockDomainComparesDirectly) {
    // Same machine and boot: no offset is estimated, even from calls whose
    // times look skewed, and nothing is clamped that is in order.
    loupe::trace a = loupe_test::process_trace("A", 1, "boot-1");
    loupe::trace b = loupe_test::process_trace("B", 2, "boot-1");
    client_call(a, task, 1, 0xa, 1000, 2000, "/b");
    server_call(b, task, 1, 0xb, 1900, 1950, "/b");  // network up 900 ns, down 50 ns
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    ASSERT_EQ(f.alignment.domains.size(), 1u);
    EXPECT_EQ(f.alignment.domains[0].inputs, (std::vector<std::uint32_t>{0, 1}));
    EXPECT_TRUE(f.alignment.pairs.empty());
    ASSERT_EQ(f.nodes.size(), 1u);
    EXPECT_EQ(f.server_side(f.nodes[0]).begin_ns, 1900);
    EXPECT_EQ(f.counts.clamped, 0u);
}

TEST(ClockAlignment, TracesWithoutADomainAreDomainsOfTheirOwn) {
    loupe::trace a = loupe_test::process_trace("A", 1, "");
    loupe::trace b = loupe_test::process_trace("B", 2, "");
    client_call(a, task, 1, 0xa, 1000, 2000, "/b");
    server_call(b, task, 1, 0xb, 501'400, 501'600, "/b");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    ASSERT_EQ(f.alignment.domains.size(), 2u);
    EXPECT_EQ(f.alignment.domains[1].offset_ns, 500'000);
    EXPECT_EQ(f.server_side(f.nodes[0]).begin_ns, 1400);
}

TEST(ClockAlignment, DomainWithoutCallsStaysUnalignedAndFlagged) {
    // C's only call has no RETURN_OUT (no sample): C's domain cannot be
    // placed; its times stay as recorded and its call is not clamped.
    two_hosts h;
    h.call(1000, 10, 100, 10, 5'000);
    loupe::trace c = loupe_test::process_trace("C", 3, "hostC");
    client_call(h.a, task, 50, 0xa0, 3000, 4000, "/c");
    loupe_test::add_point(c, loupe::task_point_kind::request_in, 999'999'000, task, 50, 0xc, "/c");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{h.a, h.b, c});
    ASSERT_EQ(f.alignment.domains.size(), 3u);
    EXPECT_TRUE(f.alignment.domains[1].aligned);
    EXPECT_FALSE(f.alignment.domains[2].aligned);
    EXPECT_EQ(f.alignment.domains[2].offset_ns, 0);
    for (const rep::task_node& n : f.nodes) {
        if (f.name_of(n) != "/c") continue;
        EXPECT_TRUE(n.has(rep::task_flag::unaligned));
        EXPECT_FALSE(n.has(rep::task_flag::clamped));
        EXPECT_EQ(f.server_side(n).begin_ns, 999'999'000);
    }
    EXPECT_EQ(f.counts.unaligned, 1u);
}

TEST(ClockAlignment, DomainsChainThroughTheTightestPath) {
    // Inputs' clocks: A reference, B = A + 1 ms, C = B + 2 ms. A-C calls are
    // loose (δ 100 µs), A-B and B-C tight (δ 1 µs each): C is placed
    // through B, with uncertainty 2 µs.
    const std::vector<std::string> domains = {"a", "b", "c"};
    std::vector<rep::clock_sample> samples;
    const auto sample = [&](std::uint32_t client, std::uint32_t server, std::int64_t server_offset,
                            std::uint64_t up, std::uint64_t down) {
        const std::uint64_t t1 = 10'000'000, t2 = t1 + up, t3 = t2 + 500, t4 = t3 + down;
        samples.push_back({client, server, t1, static_cast<std::uint64_t>(static_cast<std::int64_t>(t2) + server_offset),
                           static_cast<std::uint64_t>(static_cast<std::int64_t>(t3) + server_offset), t4});
    };
    sample(0, 2, 3'000'000, 100'000, 100'000);  // A -> C: symmetric, δ = 100 µs
    sample(0, 1, 1'000'000, 1'000, 1'000);      // A -> B
    sample(2, 1, -2'000'000, 1'000, 1'000);     // C -> B: B is 2 ms behind C
    const rep::clock_alignment a = rep::align_clocks(domains, samples);
    ASSERT_EQ(a.domains.size(), 3u);
    EXPECT_EQ(a.domains[1].offset_ns, 1'000'000);
    EXPECT_EQ(a.domains[1].uncertainty_ns, 1'000);
    EXPECT_EQ(a.domains[2].offset_ns, 3'000'000);
    EXPECT_EQ(a.domains[2].via, 1u);
    EXPECT_EQ(a.domains[2].uncertainty_ns, 2'000);
    EXPECT_EQ(a.pairs.size(), 3u);
}

TEST(ClockAlignment, EqualDomainsShareOneOffset) {
    // Two processes on host B (one boot) and one on A: both B processes
    // move together, placed by a call to either.
    loupe::trace a = loupe_test::process_trace("A", 1, "A");
    loupe::trace b1 = loupe_test::process_trace("B1", 2, "B");
    loupe::trace b2 = loupe_test::process_trace("B2", 3, "B");
    client_call(a, task, 1, 0xa, 1000, 2000, "/b1");
    server_call(b1, task, 1, 0xb1, 9'001'400, 9'001'600, "/b1");
    client_call(b1, task, 2, 0xb1, 9'001'450, 9'001'550, "/b2");
    server_call(b2, task, 2, 0xb2, 9'001'470, 9'001'530, "/b2");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b1, b2});
    ASSERT_EQ(f.alignment.domains.size(), 2u);
    EXPECT_EQ(f.alignment.domain_of[1], f.alignment.domain_of[2]);
    EXPECT_EQ(f.alignment.offset_of(2), 9'000'000);
    EXPECT_EQ(f.alignment.to_timeline(2, 9'001'470), 1470);
}
