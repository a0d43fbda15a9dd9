// Joining task points across processes (report/task_join.hpp): the three
// tasks of US 9,619,273 FIG. 4, concurrent tasks that never mix, opaque
// callees, unlinked requests, retries, cut-short traces, self time with
// parallel fan-out, critical paths, and damaged inputs.
#include <gtest/gtest.h>

#include <loupe/report/task_join.hpp>
#include <loupe/report/task_report.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/task_traces.hpp"

namespace {

namespace rep = loupe::report;
using loupe::task_point_kind;
using loupe_test::client_call;
using loupe_test::server_call;
using loupe_test::test_trace_id;
using loupe_test::tree_lines;

constexpr test_trace_id task1{0x1111, 0x1};
constexpr test_trace_id task2{0x2222, 0x2};
constexpr test_trace_id task3{0x3333, 0x3};

// FIG. 4: processes A, B, C, D, F are profiled, E is not (it speaks W3C:
// what it receives and sends carries the task's trace id). Three tasks run
// at once, their times interleaved:
//   1. A -> B -> D
//   2. A -> B -> E -> B' (E calls back into B: B' is nested under the call to E)
//   3. A -> C -> B -> F, then C -> E
std::vector<loupe::trace> figure4() {
    loupe::trace a = loupe_test::process_trace("A", 1, "host1");
    loupe::trace b = loupe_test::process_trace("B", 2, "host1");
    loupe::trace c = loupe_test::process_trace("C", 3, "host1");
    loupe::trace d = loupe_test::process_trace("D", 4, "host1");
    loupe::trace f = loupe_test::process_trace("F", 6, "host1");
    // Task 1. A serves "GET /" (no context came in: call id 0) as span 0xa1.
    server_call(a, task1, 0, 0xa1, 100, 1000, "GET /");
    client_call(a, task1, 11, 0xa1, 200, 750, "/b");
    server_call(b, task1, 11, 0xb1, 250, 700, "/b");
    client_call(b, task1, 12, 0xb1, 300, 520, "/d");
    server_call(d, task1, 12, 0xd1, 320, 500, "/d");
    // Task 2: B's call to E (id 22) has no request anywhere; E's call back
    // into B arrives with E's own span as its parent id (0xe9).
    server_call(a, task2, 0, 0xa2, 150, 1100, "GET /");
    client_call(a, task2, 21, 0xa2, 210, 700, "/b", 2);
    server_call(b, task2, 21, 0xb2, 260, 650, "/b", 2);
    client_call(b, task2, 22, 0xb2, 310, 600, "/e", 2, "e:80");
    server_call(b, task2, 0xe9, 0xb3, 400, 450, "/b'", 3);
    // Task 3.
    server_call(a, task3, 0, 0xa3, 120, 1200, "GET /", 3);
    client_call(a, task3, 31, 0xa3, 130, 320, "/c", 3);
    server_call(c, task3, 31, 0xc3, 140, 310, "/c");
    client_call(c, task3, 32, 0xc3, 150, 220, "/b");
    server_call(b, task3, 32, 0xb4, 160, 210, "/b", 4);
    client_call(b, task3, 33, 0xb4, 170, 200, "/f", 4);
    server_call(f, task3, 33, 0xf3, 180, 190, "/f");
    client_call(c, task3, 34, 0xc3, 230, 300, "/e", 1, "e:80");
    return {a, b, c, d, f};
}

// The index of the task with trace id `id` (-1: none).
int task_index(const rep::task_forest& f, test_trace_id id) {
    for (std::size_t i = 0; i < f.tasks.size(); ++i) {
        if (f.tasks[i].trace_high == id.high && f.tasks[i].trace_low == id.low) return static_cast<int>(i);
    }
    return -1;
}

std::vector<std::string> lines_of(const rep::task_forest& f, test_trace_id id) {
    const int t = task_index(f, id);
    return t < 0 ? std::vector<std::string>{} : tree_lines(f, static_cast<std::size_t>(t));
}

const rep::task_node* node_named(const rep::task_forest& f, test_trace_id id, const std::string& process,
                                 const std::string& name) {
    const int t = task_index(f, id);
    if (t < 0) return nullptr;
    const rep::task_tree& tree = f.tasks[static_cast<std::size_t>(t)];
    for (std::uint32_t i = tree.first_node; i < tree.first_node + tree.node_count; ++i) {
        if (f.process_of(f.nodes[i]) == process && f.name_of(f.nodes[i]) == name) return &f.nodes[i];
    }
    return nullptr;
}

}  // namespace

TEST(TaskJoin, Figure4GivesExactlyTheExpectedTrees) {
    const rep::task_forest f = rep::join_tasks(figure4());
    ASSERT_EQ(f.tasks.size(), 3u);
    // Tasks by begin: task 1 (A's request at 100), task 3 (120), task 2 (150).
    EXPECT_EQ(f.tasks[0].trace_high, task1.high);
    EXPECT_EQ(f.tasks[1].trace_high, task3.high);
    EXPECT_EQ(f.tasks[2].trace_high, task2.high);
    EXPECT_EQ(lines_of(f, task1), (std::vector<std::string>{
                                      "A GET / (root)",
                                      "  B /b <- A",
                                      "    D /d <- B",
                                  }));
    EXPECT_EQ(lines_of(f, task2), (std::vector<std::string>{
                                      "A GET / (root)",
                                      "  B /b <- A",
                                      "    [e:80] /e <- B (opaque)",
                                      "      B /b' (via_unprofiled)",
                                  }));
    EXPECT_EQ(lines_of(f, task3), (std::vector<std::string>{
                                      "A GET / (root)",
                                      "  C /c <- A",
                                      "    B /b <- C",
                                      "      F /f <- B",
                                      "    [e:80] /e <- C (opaque)",
                                  }));
    EXPECT_EQ(f.counts.tasks, 3u);
    EXPECT_EQ(f.counts.calls, 12u);
    EXPECT_EQ(f.counts.roots, 3u);
    EXPECT_EQ(f.counts.joined, 6u);
    EXPECT_EQ(f.counts.opaque, 2u);
    EXPECT_EQ(f.counts.via_unprofiled, 1u);
    EXPECT_EQ(f.counts.unlinked, 0u);
    EXPECT_EQ(f.counts.clamped, 0u);
    EXPECT_EQ(f.tasks[static_cast<std::size_t>(task_index(f, task3))].processes, 4u);  // A, B, C, F
}

TEST(TaskJoin, Figure4TimesAndSelfTimes) {
    const rep::task_forest f = rep::join_tasks(figure4());
    // One clock domain: times as recorded. A call's interval is what its
    // caller saw; its self time what its children do not cover.
    const rep::task_node* b = node_named(f, task1, "B", "/b");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->begin_ns, 200);
    EXPECT_EQ(b->end_ns, 750);
    EXPECT_EQ(b->self_ns, 550 - 220);  // D's call: 300..520
    EXPECT_EQ(f.server_side(*b).begin_ns, 250);
    EXPECT_EQ(f.server_side(*b).end_ns, 700);
    const rep::task_node* root = node_named(f, task1, "A", "GET /");
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->kind, rep::task_node_kind::root);
    EXPECT_EQ(root->duration_ns(), 900);
    EXPECT_EQ(root->self_ns, 900 - 550);
    // The opaque call lasts what B saw: 310..600; B' runs inside it.
    const rep::task_node* e = node_named(f, task2, "[e:80]", "/e");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->duration_ns(), 290);
    EXPECT_EQ(e->self_ns, 290 - 50);
}

TEST(TaskJoin, ConcurrentTasksWithTheSameIdsNeverMix) {
    // Two tasks through the same processes, with the same call ids and
    // spans, their times interleaved: only the trace ids tell them apart.
    loupe::trace a = loupe_test::process_trace("A", 1, "host1");
    loupe::trace b = loupe_test::process_trace("B", 2, "host1");
    const test_trace_id x{0, 0xaaaa}, y{0, 0xbbbb};
    for (const test_trace_id id : {x, y}) {
        const std::uint64_t o = id.low == x.low ? 0 : 5;  // y runs 5 ns after x
        server_call(a, id, 0, 0xa, 100 + o, 900 + o, "GET /");
        client_call(a, id, 7, 0xa, 200 + o, 600 + o, id.low == x.low ? "/x" : "/y");
        server_call(b, id, 7, 0xb, 300 + o, 500 + o, id.low == x.low ? "/x" : "/y");
    }
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    ASSERT_EQ(f.tasks.size(), 2u);
    EXPECT_EQ(lines_of(f, x), (std::vector<std::string>{"A GET / (root)", "  B /x <- A"}));
    EXPECT_EQ(lines_of(f, y), (std::vector<std::string>{"A GET / (root)", "  B /y <- A"}));
    EXPECT_EQ(f.counts.duplicates, 0u);
    const rep::task_node* bx = node_named(f, x, "B", "/x");
    ASSERT_NE(bx, nullptr);
    EXPECT_EQ(f.server_side(*bx).begin_ns, 300);
}

TEST(TaskJoin, ManyInterleavedTasksNeverMix) {
    // 200 tasks through three processes, calls and spans reused by every
    // task, points shuffled in each trace: each tree has its own three calls.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe::trace b = loupe_test::process_trace("B", 2, "h");
    loupe::trace c = loupe_test::process_trace("C", 3, "h");
    for (std::uint64_t k = 0; k < 200; ++k) {
        const test_trace_id id{k + 1, ~k};
        const std::uint64_t o = k * 3;
        const std::string tag = std::to_string(k);
        server_call(a, id, 0, 1, 1000 + o, 5000 + o, "root" + tag);
        client_call(a, id, 2, 1, 1100 + o, 4000 + o, "b" + tag);
        server_call(b, id, 2, 3, 1200 + o, 3900 + o, "b" + tag);
        client_call(b, id, 4, 3, 1300 + o, 3000 + o, "c" + tag);
        server_call(c, id, 4, 5, 1400 + o, 2900 + o, "c" + tag);
    }
    std::mt19937 rng(42);
    for (loupe::trace* t : {&a, &b, &c}) std::shuffle(t->task_points.begin(), t->task_points.end(), rng);
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b, c});
    ASSERT_EQ(f.tasks.size(), 200u);
    for (std::uint64_t k = 0; k < 200; ++k) {
        const std::string tag = std::to_string(k);
        EXPECT_EQ(lines_of(f, {k + 1, ~k}), (std::vector<std::string>{"A root" + tag + " (root)", "  B b" + tag + " <- A",
                                                                      "    C c" + tag + " <- B"}))
            << k;
    }
    EXPECT_EQ(f.counts.joined, 400u);
}

TEST(TaskJoin, OpaqueCalleeHasTheDurationItsCallerSaw) {
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    server_call(a, task1, 0, 1, 0, 1000, "main");
    client_call(a, task1, 5, 1, 100, 350, "SELECT", 1, "db:5432");
    client_call(a, task1, 6, 1, 400, 400, "ping");  // no peer named
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a});
    EXPECT_EQ(lines_of(f, task1), (std::vector<std::string>{"A main (root)", "  [db:5432] SELECT <- A (opaque)",
                                                           "  [not profiled] ping <- A (opaque)"}));
    const rep::task_node* db = node_named(f, task1, "[db:5432]", "SELECT");
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(db->duration_ns(), 250);
    EXPECT_EQ(db->self_ns, 250);
    EXPECT_FALSE(f.server_side(*db).present());
    EXPECT_EQ(f.counts.opaque, 2u);
}

TEST(TaskJoin, RequestWithoutAKnownCallerIsUnlinkedNeverGuessed) {
    // B receives a call whose parent id no trace made (an unprofiled proxy
    // in front of it), at a time when A had two calls to unprofiled
    // services in flight: two opaque calls contain it, so nothing is
    // inferred; a request outside any opaque call stays unlinked too.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe::trace b = loupe_test::process_trace("B", 2, "h");
    server_call(a, task1, 0, 1, 0, 1000, "main");
    client_call(a, task1, 5, 1, 100, 600, "/p1", 1, "proxy1");
    client_call(a, task1, 6, 1, 150, 650, "/p2", 2, "proxy2");
    server_call(b, task1, 0x77, 9, 200, 300, "/b");
    server_call(b, task1, 0x78, 10, 700, 800, "/late");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    EXPECT_EQ(lines_of(f, task1), (std::vector<std::string>{"A main (root)", "  [proxy1] /p1 <- A (opaque)",
                                                           "  [proxy2] /p2 <- A (opaque)", "B /b (unlinked)",
                                                           "B /late (unlinked)"}));
    EXPECT_EQ(f.counts.unlinked, 2u);
    EXPECT_EQ(f.counts.via_unprofiled, 0u);
    ASSERT_EQ(f.tasks.size(), 1u);
    EXPECT_EQ(f.tasks[0].roots.size(), 3u);
}

TEST(TaskJoin, InferenceNeedsTheSameTraceId) {
    // The only opaque call containing the request belongs to another task.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe::trace b = loupe_test::process_trace("B", 2, "h");
    client_call(a, task1, 5, 1, 100, 600, "/p", 1, "proxy");
    server_call(b, task2, 0x77, 9, 200, 300, "/b");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    EXPECT_EQ(lines_of(f, task2), (std::vector<std::string>{"B /b (unlinked)"}));
    EXPECT_EQ(f.counts.via_unprofiled, 0u);
}

TEST(TaskJoin, SelfTimeWithParallelFanOutIsDurationMinusTheUnion) {
    // A's handler (0..1000) fans out to B, C, D at once: 100..500,
    // 200..600, 300..400 overlap; E runs alone at 800..900. The union of
    // the children is 100..600 and 800..900: 600 ns.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe::trace b = loupe_test::process_trace("B", 2, "h");
    server_call(a, task1, 0, 1, 0, 1000, "main");
    client_call(a, task1, 2, 1, 100, 500, "/b", 2);
    client_call(a, task1, 3, 1, 200, 600, "/c", 3);
    client_call(a, task1, 4, 1, 300, 400, "/d", 4);
    client_call(a, task1, 5, 1, 800, 900, "/e", 5);
    server_call(b, task1, 2, 0xb, 110, 490, "/b");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    const rep::task_node* root = node_named(f, task1, "A", "main");
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->duration_ns(), 1000);
    EXPECT_EQ(root->self_ns, 400);
    EXPECT_EQ(root->children_count, 4u);
    // The sum of the children's durations (900) would give a self time of
    // 100: the union counts the overlap once.
    const rep::task_report r = rep::report_tasks(f);
    ASSERT_EQ(r.tasks.size(), 1u);
    // Critical path, backwards from 1000: A 900..1000, E 800..900, A
    // 600..800, then C (ends last, 600) 200..600, A 0..200; B and D
    // overlap C and are not on it.
    const std::vector<rep::task_path_step>& path = r.tasks[0].critical_path;
    ASSERT_EQ(path.size(), 3u);
    EXPECT_EQ(r.forest.name_of(r.forest.nodes[path[0].node]), "main");
    EXPECT_EQ(path[0].ns, 200 + 200 + 100);
    EXPECT_EQ(r.forest.name_of(r.forest.nodes[path[1].node]), "/c");
    EXPECT_EQ(path[1].ns, 400);
    EXPECT_EQ(r.forest.name_of(r.forest.nodes[path[2].node]), "/e");
    EXPECT_EQ(path[2].ns, 100);
    EXPECT_EQ(r.tasks[0].critical_ns, 1000);
}

TEST(TaskJoin, CriticalPathDescendsThroughProcesses) {
    const rep::task_report r = rep::report_tasks(rep::join_tasks(figure4()));
    const int t = task_index(r.forest, task3);
    ASSERT_GE(t, 0);
    // A 120..1200: C's call 130..320; in it, E's call ends last (230..300),
    // then B's (150..220), in it F's (170..200).
    std::vector<std::string> names;
    std::int64_t sum = 0;
    for (const rep::task_path_step& s : r.tasks[static_cast<std::size_t>(t)].critical_path) {
        names.push_back(r.forest.process_of(r.forest.nodes[s.node]) + " " + r.forest.name_of(r.forest.nodes[s.node]));
        sum += s.ns;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"A GET /", "C /c", "B /b", "F /f", "[e:80] /e"}));
    EXPECT_EQ(sum, 1200 - 120);
}

TEST(TaskJoin, RetriesOfOneCallIdPairInTimeOrder) {
    // A sends call 9 twice (a retry with the same traceparent); B handled
    // both. Each request pairs with the latest copy sent before it arrived.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe::trace b = loupe_test::process_trace("B", 2, "h");
    server_call(a, task1, 0, 1, 0, 1000, "main");
    client_call(a, task1, 9, 1, 100, 300, "/b");
    client_call(a, task1, 9, 1, 400, 700, "/b");
    server_call(b, task1, 9, 0xb1, 150, 250, "/b");
    server_call(b, task1, 9, 0xb2, 450, 650, "/b");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    ASSERT_EQ(f.tasks.size(), 1u);
    EXPECT_EQ(f.counts.joined, 2u);
    EXPECT_EQ(f.counts.duplicates, 2u);
    const rep::task_tree& tree = f.tasks[0];
    ASSERT_EQ(tree.node_count, 3u);
    const rep::task_node& first = f.nodes[tree.first_node + 1];
    const rep::task_node& second = f.nodes[tree.first_node + 2];
    EXPECT_EQ(f.client_side(first).begin_ns, 100);
    EXPECT_EQ(f.server_side(first).begin_ns, 150);
    EXPECT_EQ(f.client_side(second).begin_ns, 400);
    EXPECT_EQ(f.server_side(second).begin_ns, 450);
    EXPECT_TRUE(first.has(rep::task_flag::duplicate));
}

TEST(TaskJoin, CallStillInFlightAtTheEndIsOpenToTheTraceEnd) {
    // A's session ended at 800 while its call to B was still out; B's
    // trace was cut short (no END) after the request arrived.
    loupe::trace a = loupe_test::process_trace("A", 1, "h", 0, 800);
    loupe::trace b = loupe_test::process_trace("B", 2, "h", 0, 0);
    b.complete = false;
    b.end = {};
    server_call(a, task1, 0, 1, 0, 700, "main");
    loupe_test::add_point(a, task_point_kind::call_out, 100, task1, 3, 1, "/b");
    loupe_test::add_point(b, task_point_kind::request_in, 150, task1, 3, 0xb, "/b");
    loupe_test::add_point(b, task_point_kind::call_out, 160, task1, 4, 0xb, "/c");  // B's latest time: 160
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a, b});
    const rep::task_node* call = node_named(f, task1, "B", "/b");
    ASSERT_NE(call, nullptr);
    EXPECT_TRUE(call->has(rep::task_flag::open));
    EXPECT_EQ(f.client_side(*call).end_ns, 800);  // A's END
    EXPECT_EQ(f.server_side(*call).end_ns, 160);  // B's last point
    EXPECT_FALSE(f.client_side(*call).has_end);
    EXPECT_EQ(f.counts.open, 2u);  // and B's call to C, open until 160
    const rep::task_report r = rep::report_tasks(f);
    for (const rep::task_call_stats& s : r.calls) {
        if (s.call == "/b") {
            EXPECT_EQ(s.count, 0u);
            EXPECT_EQ(s.open, 1u);
        }
    }
}

TEST(TaskJoin, ReturnWithoutItsCallBeganBeforeTheTrace) {
    loupe::trace a = loupe_test::process_trace("A", 1, "h", 50, 1000);
    loupe_test::add_point(a, task_point_kind::return_in, 300, task1, 3, 1, "/b");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a});
    ASSERT_EQ(f.nodes.size(), 1u);
    EXPECT_TRUE(f.nodes[0].has(rep::task_flag::begin_unknown));
    EXPECT_EQ(f.nodes[0].begin_ns, 50);
    EXPECT_EQ(f.nodes[0].end_ns, 300);
}

TEST(TaskJoin, CallsWithinOneProcessJoinLikeAnyOther) {
    // A calls itself through its own stream: CALL_OUT and REQUEST_IN in one file.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    server_call(a, task1, 0, 1, 0, 1000, "main");
    client_call(a, task1, 2, 1, 100, 500, "/self", 1);
    server_call(a, task1, 2, 7, 120, 480, "/self", 2);
    client_call(a, task1, 3, 7, 200, 300, "/db", 2, "db");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a});
    EXPECT_EQ(lines_of(f, task1), (std::vector<std::string>{"A main (root)", "  A /self <- A",
                                                           "    [db] /db <- A (opaque)"}));
}

TEST(TaskJoin, IgnoresPointsWithoutIdsAndCutsCycles) {
    // A zero trace id and a client call id 0 are no calls. Two same-process
    // calls whose handlers name each other's spans would make a cycle.
    loupe::trace a = loupe_test::process_trace("A", 1, "h");
    loupe_test::add_point(a, task_point_kind::call_out, 10, {0, 0}, 5, 1, "x");
    loupe_test::add_point(a, task_point_kind::call_out, 10, task1, 0, 1, "y");
    client_call(a, task1, 2, 20, 100, 200, "/p");
    server_call(a, task1, 2, 30, 110, 190, "/p");
    client_call(a, task1, 3, 30, 120, 180, "/q");
    server_call(a, task1, 3, 20, 130, 170, "/q");
    const rep::task_forest f = rep::join_tasks(std::vector<loupe::trace>{a});
    EXPECT_EQ(f.counts.points_ignored, 2u);
    EXPECT_EQ(f.counts.cycles, 1u);
    ASSERT_EQ(f.tasks.size(), 1u);
    EXPECT_EQ(f.tasks[0].node_count, 2u);
    EXPECT_EQ(f.tasks[0].roots.size(), 1u);
}

TEST(TaskJoin, InputLabelsAreUnique) {
    std::vector<loupe::trace> traces;
    traces.push_back(loupe_test::process_trace("worker", 10, "h"));
    traces.push_back(loupe_test::process_trace("worker", 11, "h"));
    traces.push_back(loupe_test::process_trace("worker", 11, "h2"));
    traces.push_back(loupe_test::process_trace("", 12, "h"));
    traces.back().session.name.clear();
    const rep::task_forest f = rep::join_tasks(traces);
    ASSERT_EQ(f.inputs.size(), 4u);
    EXPECT_EQ(f.inputs[0].label, "worker:10");
    EXPECT_EQ(f.inputs[1].label, "worker:11#2");
    EXPECT_EQ(f.inputs[2].label, "worker:11#3");
    EXPECT_EQ(f.inputs[3].label, "pid 12");
}

TEST(TaskJoin, RandomPointsNeverBreakTheModel) {
    // Damaged input: random kinds, ids from a small set (collisions,
    // cycles, copies), random times (some near 2^64). The model stays a forest whose nodes
    // are each in one tree, parents before children, self within duration.
    std::mt19937_64 rng(7);
    for (int round = 0; round < 300; ++round) {
        std::vector<loupe::trace> traces;
        for (int p = 0; p < 3; ++p) {
            traces.push_back(loupe_test::process_trace("p" + std::to_string(p), 1 + p, p == 2 ? "other" : "h"));
            for (int k = 0; k < 60; ++k) {  // one draw per statement: the same points with every compiler
                const auto kind = static_cast<task_point_kind>(1 + rng() % 4);
                // Half the rounds near the largest time: arithmetic saturates, never overflows.
                const std::uint64_t time = (round % 2 ? 0 : UINT64_MAX - 3000) + rng() % 2000;
                const test_trace_id id{0, 1 + rng() % 2};
                const std::uint64_t call = rng() % 6;
                const std::uint64_t span = rng() % 6;
                loupe_test::add_point(traces.back(), kind, time, id, call, span, "n" + std::to_string(rng() % 3));
            }
        }
        const rep::task_forest f = rep::join_tasks(traces);
        std::size_t nodes = 0;
        for (const rep::task_tree& t : f.tasks) {
            nodes += t.node_count;
            for (std::uint32_t i = t.first_node; i < t.first_node + t.node_count; ++i) {
                const rep::task_node& n = f.nodes[i];
                if (n.parent != rep::no_task_node) {
                    ASSERT_LT(n.parent, i);
                    ASSERT_GE(n.parent, t.first_node);
                    ASSERT_EQ(n.depth, f.nodes[n.parent].depth + 1);
                }
                ASSERT_GE(n.self_ns, 0);
                ASSERT_LE(n.self_ns, n.duration_ns());
            }
        }
        ASSERT_EQ(nodes, f.nodes.size());
        const rep::task_report r = rep::report_tasks(f);
        for (std::size_t t = 0; t < r.tasks.size(); ++t) {
            std::int64_t sum = 0;
            for (const rep::task_path_step& s : r.tasks[t].critical_path) sum += s.ns;
            ASSERT_EQ(sum, r.tasks[t].critical_ns) << round << " " << t;
        }
        (void)rep::format_task_report(r);
        (void)rep::task_report_json(r);
    }
}

TEST(TaskJoin, CountsOnlyIsTheSameJoinWithoutTheTrees) {
    // finish(task_detail::counts) joins every task as finish() does, then
    // keeps the inputs, the clock alignment and the counts only. Damaged
    // input as above, three clock domains, calls between them.
    std::mt19937_64 rng(11);
    for (int round = 0; round < 200; ++round) {
        std::vector<loupe::trace> traces;
        for (int p = 0; p < 4; ++p) {
            traces.push_back(loupe_test::process_trace("p" + std::to_string(p % 3), 1 + p, "h" + std::to_string(p % 3)));
            for (int k = 0; k < 40; ++k) {  // one draw per statement: the same points with every compiler
                const auto kind = static_cast<task_point_kind>(1 + rng() % 4);
                const std::uint64_t time = 1000 * static_cast<std::uint64_t>(p) + rng() % 3000;
                const test_trace_id id{0, 1 + rng() % 3};
                const std::uint64_t call = rng() % 5;
                const std::uint64_t span = rng() % 5;
                loupe_test::add_point(traces.back(), kind, time, id, call, span, "n" + std::to_string(rng() % 3));
            }
        }
        rep::task_joiner trees, counts;
        for (const loupe::trace& t : traces) {
            trees.add(t);
            counts.add(t);
        }
        const rep::task_forest f = trees.finish();
        const rep::task_forest c = counts.finish(rep::task_detail::counts);
        EXPECT_TRUE(c.nodes.empty() && c.sides.empty() && c.children.empty() && c.tasks.empty());
        const auto numbers = [](const rep::task_counts& k) {
            return std::vector<std::uint64_t>{k.points,  k.points_ignored, k.tasks,     k.calls,      k.joined,
                                              k.opaque,  k.roots,          k.unlinked,  k.via_unprofiled,
                                              k.clamped, k.open,           k.duplicates, k.unaligned, k.cycles};
        };
        ASSERT_EQ(numbers(c.counts), numbers(f.counts)) << round;
        ASSERT_EQ(c.alignment.domain_of, f.alignment.domain_of);
        ASSERT_EQ(c.alignment.domains.size(), f.alignment.domains.size());
        for (std::size_t d = 0; d < f.alignment.domains.size(); ++d) {
            EXPECT_EQ(c.alignment.domains[d].aligned, f.alignment.domains[d].aligned);
            EXPECT_EQ(c.alignment.domains[d].offset_ns, f.alignment.domains[d].offset_ns);
            EXPECT_EQ(c.alignment.domains[d].uncertainty_ns, f.alignment.domains[d].uncertainty_ns);
            EXPECT_EQ(c.alignment.domains[d].samples, f.alignment.domains[d].samples);
        }
        ASSERT_EQ(c.inputs.size(), f.inputs.size());
        for (std::size_t i = 0; i < f.inputs.size(); ++i) EXPECT_EQ(c.inputs[i].label, f.inputs[i].label);
    }
}
