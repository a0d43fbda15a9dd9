// The task report (report/task_report.hpp): the text a user reads (trees
// across processes, marks, critical paths, per-call statistics, clock
// domains) and the JSON a script reads.
#include <gtest/gtest.h>

#include <loupe/report/task_join.hpp>
#include <loupe/report/task_report.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "support/json_parser.hpp"
#include "support/task_traces.hpp"

namespace {

namespace rep = loupe::report;
using loupe_test::client_call;
using loupe_test::server_call;
using loupe_test::test_trace_id;

constexpr test_trace_id task{0x4bf92f3577b34da6, 0xa3ce929d0e0e4736};

// A on host a serves "GET /", calls B on host b (clock 5 ms ahead), which
// calls E (not profiled); E calls back into B. A second call from A is
// clamped (its B times are 2 µs early); B also receives a request whose
// caller is unknown.
std::vector<loupe::trace> scenario() {
    const std::uint64_t o = 5'000'000;
    loupe::trace a = loupe_test::process_trace("A", 1, "a", 0, 10'000'000, "host-a");
    loupe::trace b = loupe_test::process_trace("B", 2, "b", 0, 20'000'000, "host-b");
    server_call(a, task, 0, 1, 1'000, 900'000, "GET /");
    client_call(a, task, 2, 1, 10'000, 400'000, "/b");
    server_call(b, task, 2, 20, 10'100 + o, 399'900 + o, "/b");  // δ = 100 ns
    client_call(b, task, 3, 20, 50'000 + o, 300'000 + o, "/e", 1, "e:80");
    server_call(b, task, 0xe1, 30, 100'000 + o, 200'000 + o, "/b-again", 2);
    client_call(a, task, 4, 1, 500'000, 600'000, "/late");
    server_call(b, task, 4, 40, 498'000 + o, 550'000 + o, "/late", 3);
    server_call(b, task, 0x99, 50, 700'000 + o, 710'000 + o, "/orphan", 4);
    return {a, b};
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace

TEST(TaskReport, TextShowsTheTreesMarksAndCriticalPath) {
    const rep::task_report r = rep::report_tasks(rep::join_tasks(scenario()));
    const std::string text = rep::format_task_report(r);
    EXPECT_TRUE(contains(text, "2 inputs, 2 clock domains\n")) << text;
    EXPECT_TRUE(contains(text, "  a (A): reference\n")) << text;
    EXPECT_TRUE(contains(text, "  b (B): +5.00 ms \u00b1 100 ns from a, 2 calls\n")) << text;
    EXPECT_TRUE(contains(text, "1 task, 6 calls: 2 joined, 1 opaque, 1 root, 1 unlinked, 1 via unprofiled, 1 clamped, "
                               "0 open\n"))
        << text;
    EXPECT_TRUE(contains(text, "\ntask 4bf92f3577b34da6a3ce929d0e0e4736: 899 us, 2 processes, 6 calls\n")) << text;
    // The tree: duration, self, then the call indented by depth.
    const std::vector<std::string> lines = lines_of(text);
    std::vector<std::string> calls;
    bool in_task = false;
    for (const std::string& line : lines) {
        if (line.rfind("    duration", 0) == 0) {
            in_task = true;
            continue;
        }
        if (line.rfind("  critical path", 0) == 0) break;
        if (in_task) calls.push_back(line.substr(25));  // after the two time columns
    }
    EXPECT_EQ(calls, (std::vector<std::string>{
                         "A  GET / [root]",
                         "  B  /b  from A",
                         "    [e:80]  /e  from B [opaque: not profiled]",
                         "      B  /b-again [via unprofiled: inferred]",
                         "  B  /late  from A [clamped +2.00 us]",
                         "B  /orphan [unlinked: its caller is in no trace]",
                     }))
        << text;
    // GET / 899 us: /b 390 us and /late 100 us are its children.
    EXPECT_TRUE(contains(text, "      899 us     409 us  A  GET / [root]\n")) << text;
    EXPECT_TRUE(contains(text, "  critical path (899 us): A GET / 409 us > B /b 140 us > [e:80] /e 150 us > "
                               "B /b-again 100 us > B /late 100 us\n"))
        << text;
    // Statistics per process and call.
    EXPECT_TRUE(contains(text, "\nper process and call (open calls not in the times):\n")) << text;
    bool row = false;
    for (const std::string& line : lines) {
        if (line.rfind("  B ", 0) == 0 && contains(line, " /b ")) {
            row = true;
            EXPECT_TRUE(contains(line, "  390 us     140 us     390 us")) << line;
        }
    }
    EXPECT_TRUE(row) << text;
}

TEST(TaskReport, JsonHoldsEveryNodeAndTheStatistics) {
    const rep::task_report r = rep::report_tasks(rep::join_tasks(scenario()));
    loupe_test::json::value doc;
    const std::string text = rep::task_report_json(r);
    ASSERT_EQ(loupe_test::json::parse(text, doc), "") << text;
    ASSERT_EQ(doc["inputs"].items.size(), 2u);
    EXPECT_EQ(doc["inputs"].items[1]["label"].s, "B");
    EXPECT_EQ(doc["inputs"].items[1]["host"].s, "host-b");
    ASSERT_EQ(doc["domains"].items.size(), 2u);
    EXPECT_EQ(doc["domains"].items[1]["offset_ns"].n, 5'000'000);
    EXPECT_EQ(doc["domains"].items[1]["uncertainty_ns"].n, 100);
    EXPECT_EQ(doc["domains"].items[1]["via"].n, 0);
    EXPECT_EQ(doc["domains"].items[0]["via"].kind, loupe_test::json::value::null);
    EXPECT_EQ(doc["counts"]["calls"].n, 6);
    EXPECT_EQ(doc["counts"]["clamped"].n, 1);
    ASSERT_EQ(doc["tasks"].items.size(), 1u);
    const loupe_test::json::value& t = doc["tasks"].items[0];
    EXPECT_EQ(t["trace_id"].s, "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(t["roots"].items.size(), 2u);
    const std::vector<loupe_test::json::value>& nodes = t["nodes"].items;
    ASSERT_EQ(nodes.size(), 6u);
    EXPECT_EQ(nodes[0]["kind"].s, "root");
    EXPECT_EQ(nodes[0]["parent"].kind, loupe_test::json::value::null);
    EXPECT_EQ(nodes[0]["client"].kind, loupe_test::json::value::null);
    EXPECT_EQ(nodes[1]["parent"].n, 0);
    EXPECT_EQ(nodes[1]["process"].s, "B");
    EXPECT_EQ(nodes[1]["caller"].s, "A");
    EXPECT_EQ(nodes[1]["server"]["begin_recorded"].n, 5'010'100);
    EXPECT_EQ(nodes[1]["server"]["begin_ns"].n, 10'100);
    EXPECT_EQ(nodes[2]["kind"].s, "opaque");
    EXPECT_EQ(nodes[2]["client"]["peer"].s, "e:80");
    EXPECT_EQ(nodes[3]["kind"].s, "via_unprofiled");
    EXPECT_EQ(nodes[3]["parent"].n, 2);
    EXPECT_EQ(nodes[4]["flags"].items.size(), 1u);
    EXPECT_EQ(nodes[4]["flags"].items[0].s, "clamped");
    EXPECT_EQ(nodes[4]["shift_ns"].n, 2'000);
    EXPECT_EQ(nodes[5]["kind"].s, "unlinked");
    double path = 0;
    for (const auto& step : t["critical_path"].items) path += step["ns"].n;
    EXPECT_EQ(path, t["critical_path_ns"].n);
    EXPECT_EQ(path, 899'000);
    bool found = false;
    for (const auto& c : doc["calls"].items) {
        if (c["process"].s == "B" && c["call"].s == "/b") {
            found = true;
            EXPECT_EQ(c["count"].n, 1);
            EXPECT_EQ(c["total_ns"].n, 390'000);
            EXPECT_EQ(c["self_ns"].n, 140'000);
        }
    }
    EXPECT_TRUE(found);
}

TEST(TaskReport, PercentilesPerProcessAndCallAreNearestRank) {
    // 100 tasks; in each, A calls B's "/work" for k µs (k = 1..100).
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe::trace b = loupe_test::process_trace("B", 2, "h");
    for (std::uint64_t k = 1; k <= 100; ++k) {
        const test_trace_id id{0, k};
        const std::uint64_t at = k * 1'000'000;
        client_call(a, id, 1, 1, at, at + k * 1000, "/work");
        server_call(b, id, 1, 2, at + 1, at + k * 1000 - 1, "/work");
    }
    const rep::task_report r = rep::report_tasks(rep::join_tasks(std::vector<loupe::trace>{a, b}));
    ASSERT_EQ(r.calls.size(), 1u);
    const rep::task_call_stats& s = r.calls[0];
    EXPECT_EQ(s.process, "B");
    EXPECT_EQ(s.call, "/work");
    EXPECT_EQ(s.count, 100u);
    EXPECT_EQ(s.p50_ns, 50'000);
    EXPECT_EQ(s.p95_ns, 95'000);
    EXPECT_EQ(s.p99_ns, 99'000);
    EXPECT_EQ(s.max_ns, 100'000);
    EXPECT_EQ(s.total_ns, 5'050'000);
    EXPECT_DOUBLE_EQ(s.mean_ns, 50'500.0);
    const std::string text = rep::format_task_report(r);
    EXPECT_TRUE(contains(text, "100 tasks, 100 calls: 100 joined")) << text.substr(0, 300);
    bool row = false;
    for (const std::string& line : lines_of(text)) {
        if (line.rfind("  B ", 0) != 0) continue;
        std::istringstream in(line);
        std::vector<std::string> f;
        for (std::string w; in >> w;) f.push_back(w);
        ASSERT_GE(f.size(), 12u) << line;
        EXPECT_EQ(std::vector<std::string>(f.begin(), f.begin() + 12),
                  (std::vector<std::string>{"B", "/work", "100", "0", "5.05", "ms", "5.05", "ms", "50.5", "us", "50.0", "us"}))
            << line;
        row = true;
    }
    EXPECT_TRUE(row) << text;
}

TEST(TaskReport, UnalignedDomainsAndNoTasksAreSaid) {
    loupe::trace a = loupe_test::process_trace("A", 1, "a");
    loupe::trace c = loupe_test::process_trace("C", 3, "");
    const rep::task_report none = rep::report_tasks(rep::join_tasks(std::vector<loupe::trace>{a, c}));
    const std::string text = rep::format_task_report(none);
    EXPECT_TRUE(contains(text, "  (no clock domain) (C): not aligned: no complete call relates it to the others; "
                               "times as recorded\n"))
        << text;
    EXPECT_TRUE(contains(text, "no task points recorded")) << text;
    const std::string one = rep::format_task_report(rep::report_tasks(rep::join_tasks(std::vector<loupe::trace>{a})));
    EXPECT_TRUE(contains(one, "1 input, 1 clock domain\n")) << one;
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(rep::task_report_json(none), doc), "");
    EXPECT_EQ(doc["tasks"].items.size(), 0u);
    EXPECT_FALSE(doc["domains"].items[1]["aligned"].b);
}
