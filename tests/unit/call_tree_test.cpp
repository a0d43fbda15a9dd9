// Call trees of recorded metrics (report/call_tree.hpp): the patent's A/B
// example, conservation against the recorded totals, recursion levels, the
// stanza invariants on random call patterns, and the JSON forms.
#include <gtest/gtest.h>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/report/call_tree.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/json_parser.hpp"
#include "support/trace_files.hpp"

namespace {

namespace rep = loupe::report;

loupe::metric_id ticks() {
    static const loupe::metric_id id = loupe::metric("ticks", "ticks");
    return id;
}

// Runs each body on its own thread (named "t0", "t1", ... in order, one
// after the other) in a session recording "ticks" into a file; returns the
// trace read back.
loupe::trace record_threads(const std::string& tag, const std::vector<std::function<void()>>& bodies) {
    ticks();
    const std::string path = loupe_test::temp_trace_path("call_tree_" + tag);
    loupe::session_config cfg;
    cfg.name = tag;
    cfg.metrics = {"ticks"};
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        std::thread worker([&] {
            loupe::set_thread_name("t" + std::to_string(i));
            bodies[i]();
        });
        worker.join();
    }
    session.stop();
    loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    return t;
}

// The non-root node `name` under `parent` (a node index), or nullptr.
const rep::call_node* child_named(const rep::call_tree& tree, std::size_t parent, const std::string& name) {
    for (const std::size_t c : tree.nodes[parent].children) {
        if (tree.name_of(tree.nodes[c]) == name) return &tree.nodes[c];
    }
    return nullptr;
}

std::size_t index_of(const rep::call_tree& tree, const rep::call_node* n) {
    return static_cast<std::size_t>(n - tree.nodes.data());
}

const rep::cost_line* line_named(const std::vector<rep::cost_line>& lines, const std::string& name) {
    for (const rep::cost_line& l : lines) {
        if (l.name == name) return &l;
    }
    return nullptr;
}

const rep::stanza* stanza_of(const rep::callers_report& r, const std::string& name) {
    for (const rep::stanza& s : r.stanzas) {
        if (s.self.name == name) return &s;
    }
    return nullptr;
}

void expect_cost(const rep::cost_line* l, std::uint64_t calls, std::int64_t base, std::int64_t cum,
                 const std::string& what) {
    ASSERT_NE(l, nullptr) << what;
    EXPECT_EQ(l->calls, calls) << what;
    EXPECT_EQ(l->base, base) << what;
    EXPECT_EQ(l->cum, cum) << what;
}

std::int64_t sum_of_bases(const rep::call_tree& tree, std::size_t k) {
    std::int64_t sum = 0;
    for (const rep::call_node& n : tree.nodes) sum += n.base[k];
    return sum;
}

// How many routines of a path ("a/b/a") are the last one.
std::uint32_t recursion_level(const std::string& path) {
    const std::string last = path.substr(path.rfind('/') + 1);
    std::uint32_t n = 0;
    for (std::size_t from = 0; from <= path.size();) {
        const std::size_t to = std::min(path.find('/', from), path.size());
        n += path.compare(from, to - from, last) == 0;
        from = to + 1;
    }
    return n;
}

// f calls itself until depth reaches `levels`, adding 1 on entry.
void recurse(int levels) {
    LOUPE_ZONE("f");
    loupe::metric_add(ticks(), 1);
    if (levels > 1) recurse(levels - 1);
}

}  // namespace

TEST(CallTree, PatentExampleABaseTwoCumTenBBaseEightCumEight) {
    const loupe::trace t = record_threads("ab", {[] {
                                              LOUPE_ZONE("A");
                                              loupe::metric_add(ticks(), 2);
                                              LOUPE_ZONE("B");
                                              loupe::metric_add(ticks(), 8);
                                          }});
    const rep::call_tree tree = rep::build_call_tree(t);
    ASSERT_EQ(tree.threads.size(), 1u);
    const std::size_t root = tree.threads[0].root;
    EXPECT_EQ(tree.name_of(tree.nodes[root]), "thread t0 (tid " + std::to_string(tree.threads[0].os_tid) + ")");
    const std::size_t k = tree.metric_index("ticks");
    EXPECT_EQ(tree.threads[0].totals[k], std::optional<std::int64_t>(10));

    const rep::tree_report r = rep::report_tree(tree, "ticks");
    ASSERT_EQ(r.rows.size(), 3u);
    EXPECT_EQ(r.rows[0].level, 0u);
    expect_cost(&r.rows[0].cost, 1, 0, 10, "root: everything happened in zones");
    EXPECT_EQ(r.rows[1].level, 1u);
    EXPECT_EQ(r.rows[1].rl, 1u);
    expect_cost(&r.rows[1].cost, 1, 2, 10, "A");
    EXPECT_EQ(r.rows[1].cost.name, "A");
    EXPECT_EQ(r.rows[2].level, 2u);
    EXPECT_EQ(r.rows[2].rl, 1u);
    expect_cost(&r.rows[2].cost, 1, 8, 8, "B");
    EXPECT_EQ(r.rows[2].parent, r.rows[1].node);

    const std::string text = rep::format_tree_report(r);
    EXPECT_NE(text.find("Level    RL      Calls           Base            Cum  Name"), std::string::npos) << text;
    EXPECT_NE(text.find("    1     1          1              2             10    A\n"), std::string::npos) << text;
    EXPECT_NE(text.find("    2     1          1              8              8      B\n"), std::string::npos) << text;

    const rep::flat_report flat = rep::report_flat(tree, "ticks");
    ASSERT_EQ(flat.routines.size(), 2u);
    expect_cost(&flat.routines[0], 1, 8, 8, "B first: largest base");
    expect_cost(&flat.routines[1], 1, 2, 10, "A");

    const rep::callers_report callers = rep::report_callers(tree, "ticks");
    EXPECT_EQ(rep::verify_stanzas(callers), "");
    const rep::stanza* a = stanza_of(callers, "A");
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(a->parents.size(), 1u);
    expect_cost(&a->parents[0], 1, 2, 10, "A's parent: the thread");
    expect_cost(&a->self, 1, 2, 10, "A self");
    expect_cost(line_named(a->children, "B"), 1, 8, 8, "A's child B");
    const rep::stanza* b = stanza_of(callers, "B");
    ASSERT_NE(b, nullptr);
    expect_cost(line_named(b->parents, "A"), 1, 8, 8, "B's parent A, the same numbers as A's child row");
    EXPECT_TRUE(b->children.empty());

    // Wall time: cum is the duration, base what B's duration leaves of A's.
    const rep::tree_report wall = rep::report_tree(tree, "wall_time");
    ASSERT_EQ(wall.rows.size(), 3u);
    std::uint64_t a_ns = 0, b_ns = 0;
    for (const loupe::trace_event& e : t.events) {
        const std::string& name = t.find_site(e.site_id)->name;
        (name == "A" ? a_ns : b_ns) = e.end_ns - e.begin_ns;
    }
    EXPECT_EQ(wall.rows[1].cost.cum, static_cast<std::int64_t>(a_ns));
    EXPECT_EQ(wall.rows[1].cost.base, static_cast<std::int64_t>(a_ns - b_ns));
    EXPECT_EQ(wall.rows[2].cost.cum, static_cast<std::int64_t>(b_ns));
    expect_cost(&wall.rows[0].cost, 1, 0, static_cast<std::int64_t>(a_ns), "wall time has no totals: the root holds A");
}

TEST(CallTree, BasesOfAllNodesAddUpToThePerThreadAndPerCpuTotals) {
    auto nested = [](int outside, int scale) {
        return [=] {
            loupe::metric_add(ticks(), outside);  // outside any zone: the root's base
            for (int i = 0; i < 3; ++i) {
                LOUPE_ZONE("serve");
                loupe::metric_add(ticks(), 3 * scale);
                {
                    LOUPE_ZONE("query");
                    loupe::metric_add(ticks(), 5 * scale);
                    recurse(3);
                }
                loupe::metric_add(ticks(), -scale);  // signed: a release
                recurse(2);
            }
            loupe::metric_add(ticks(), 2 * outside);
        };
    };
    const loupe::trace t = record_threads("conservation", {nested(1, 1), nested(4, 10)});
    const std::int64_t expected = (1 + 2) + 3 * (3 + 5 + 3 - 1 + 2) + (4 + 8) + 3 * (30 + 50 + 3 - 10 + 2);

    const rep::call_tree tree = rep::build_call_tree(t);
    ASSERT_EQ(tree.threads.size(), 2u);
    const std::size_t k = tree.metric_index("ticks");
    EXPECT_EQ(sum_of_bases(tree, k), expected);
    std::int64_t outside = 0;
    for (const rep::call_tree_thread& th : tree.threads) outside += tree.nodes[th.root].base[k];
    EXPECT_EQ(outside, 1 + 2 + 4 + 8);

    const rep::per_thread_report threads = rep::report_per_thread(tree, "ticks");
    ASSERT_EQ(threads.threads.size(), 2u);
    for (const rep::thread_totals& th : threads.threads) {
        ASSERT_EQ(th.metrics.size(), 1u);
        ASSERT_TRUE(th.metrics[0].total.has_value()) << th.label;
        EXPECT_EQ(*th.metrics[0].total, th.metrics[0].tree) << th.label;
        EXPECT_EQ(th.metrics[0].zones + th.metrics[0].outside, th.metrics[0].tree) << th.label;
    }
    ASSERT_EQ(threads.all.size(), 1u);
    EXPECT_EQ(threads.all[0].total, std::optional<std::int64_t>(expected));
    EXPECT_EQ(threads.all[0].tree, expected);

    const rep::per_cpu_report cpus = rep::report_per_cpu(t, "ticks");
    ASSERT_EQ(cpus.all.size(), 1u);
    EXPECT_EQ(cpus.all[0], expected);
    EXPECT_FALSE(cpus.cpus.empty());
    std::int64_t per_cpu = 0;
    for (const rep::cpu_totals& c : cpus.cpus) per_cpu += c.values[0];
    EXPECT_EQ(per_cpu, expected);

    // Every metric's tree: without totals (wall time) the roots hold only
    // their children, so the bases add up to the outermost zones' cum.
    const std::size_t wall = tree.metric_index("wall_time");
    std::int64_t outermost = 0;
    for (const rep::call_tree_thread& th : tree.threads) {
        EXPECT_EQ(tree.nodes[th.root].base[wall], 0);
        EXPECT_FALSE(th.totals[wall].has_value());
        for (const std::size_t c : tree.nodes[th.root].children) outermost += tree.nodes[c].cum[wall];
    }
    EXPECT_EQ(sum_of_bases(tree, wall), outermost);
    for (const char* metric : {"ticks", "wall_time"}) {
        EXPECT_EQ(rep::verify_stanzas(rep::report_callers(tree, metric)), "") << metric;
    }
}

TEST(CallTree, RecursionLevelsAndFlatCumCountTheOutermostInstanceOnce) {
    const loupe::trace t = record_threads("recursion", {[] { recurse(3); },
                                                        [] {
                                                            // indirect: a -> b -> a
                                                            LOUPE_ZONE("a");
                                                            loupe::metric_add(ticks(), 1);
                                                            LOUPE_ZONE("b");
                                                            loupe::metric_add(ticks(), 2);
                                                            LOUPE_ZONE("a");
                                                            loupe::metric_add(ticks(), 4);
                                                        }});
    const rep::call_tree tree = rep::build_call_tree(t);
    ASSERT_EQ(tree.threads.size(), 2u);
    const std::size_t k = tree.metric_index("ticks");

    const rep::call_node* f1 = child_named(tree, tree.threads[0].root, "f");
    ASSERT_NE(f1, nullptr);
    const rep::call_node* f2 = child_named(tree, index_of(tree, f1), "f");
    ASSERT_NE(f2, nullptr);
    const rep::call_node* f3 = child_named(tree, index_of(tree, f2), "f");
    ASSERT_NE(f3, nullptr);
    EXPECT_TRUE(f3->children.empty());
    const rep::call_node* fs[] = {f1, f2, f3};
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(fs[i]->rl, i + 1);
        EXPECT_EQ(fs[i]->level, i + 1);
        EXPECT_EQ(fs[i]->calls, 1u);
        EXPECT_EQ(fs[i]->base[k], 1);
        EXPECT_EQ(fs[i]->cum[k], static_cast<std::int64_t>(3 - i));
    }

    const rep::call_node* a1 = child_named(tree, tree.threads[1].root, "a");
    ASSERT_NE(a1, nullptr);
    const rep::call_node* b = child_named(tree, index_of(tree, a1), "b");
    ASSERT_NE(b, nullptr);
    const rep::call_node* a2 = child_named(tree, index_of(tree, b), "a");
    ASSERT_NE(a2, nullptr);
    EXPECT_EQ(a1->rl, 1u);
    EXPECT_EQ(b->rl, 1u);
    EXPECT_EQ(a2->rl, 2u);
    EXPECT_EQ(a2->level, 3u);

    const rep::flat_report flat = rep::report_flat(tree, "ticks");
    expect_cost(line_named(flat.routines, "f"), 3, 3, f1->cum[k], "f: cum of the outermost f only");
    expect_cost(line_named(flat.routines, "a"), 2, 5, 7, "a: the nested a is inside the outer one's cum");
    expect_cost(line_named(flat.routines, "b"), 1, 2, 6, "b");

    const rep::callers_report callers = rep::report_callers(tree, "ticks");
    EXPECT_EQ(rep::verify_stanzas(callers), "");
    const rep::stanza* f = stanza_of(callers, "f");
    ASSERT_NE(f, nullptr);
    expect_cost(&f->self, 3, 3, 3, "f self");
    expect_cost(line_named(f->parents, tree.name_of(tree.nodes[tree.threads[0].root])), 1, 1, 3, "f from the thread");
    expect_cost(line_named(f->parents, "f"), 2, 2, 0, "f from f: recursive calls add no cum");
    expect_cost(line_named(f->children, "f"), 2, 2, 0, "f's child f");
    const rep::stanza* a = stanza_of(callers, "a");
    ASSERT_NE(a, nullptr);
    expect_cost(line_named(a->parents, "b"), 1, 4, 0, "the nested a, called by b");
    expect_cost(line_named(a->children, "b"), 1, 2, 2, "b less the nested a (in its own stanza)");
    const rep::stanza* bs = stanza_of(callers, "b");
    ASSERT_NE(bs, nullptr);
    expect_cost(line_named(bs->children, "a"), 1, 4, 4, "b's child a");
}

TEST(CallTree, StanzaInvariantsHoldOnRandomNestedCalls) {
    static constexpr loupe::site sites[] = {
        {"a", __FILE__, "", __LINE__, loupe::site_kind::zone},
        {"b", __FILE__, "", __LINE__, loupe::site_kind::zone},
        {"c", __FILE__, "", __LINE__, loupe::site_kind::zone},
        {"d", __FILE__, "", __LINE__, loupe::site_kind::zone},
    };
    struct expected_node {
        std::uint64_t calls = 0;
        std::int64_t base = 0;
    };
    // Per thread: path ("a/b/a") -> what the pattern did there.
    std::vector<std::map<std::string, expected_node>> expected(2);
    auto pattern = [](unsigned seed, std::map<std::string, expected_node>& out) {
        return [seed, &out] {
            std::mt19937 rng(seed);
            std::function<void(const std::string&, int)> call = [&](const std::string& path, int depth) {
                const int calls = static_cast<int>(rng() % (depth < 2 ? 4 : depth < 5 ? 3 : 1));
                for (int i = 0; i < calls; ++i) {
                    const std::size_t which = rng() % 4;
                    const std::string here = (path.empty() ? "" : path + "/") + sites[which].name;
                    loupe::zone_scope zone(sites[which]);
                    expected_node& node = out[here];
                    ++node.calls;
                    for (int part = 0; part < 2; ++part) {
                        const std::int64_t add = static_cast<std::int64_t>(rng() % 14) - 3;  // -3..10
                        loupe::metric_add(ticks(), add);
                        node.base += add;
                        if (part == 0) call(here, depth + 1);
                    }
                }
            };
            for (int round = 0; round < 40; ++round) call("", 0);
        };
    };
    const loupe::trace t = record_threads("random", {pattern(20240611u, expected[0]), pattern(7u, expected[1])});
    const rep::call_tree tree = rep::build_call_tree(t);
    ASSERT_EQ(tree.threads.size(), 2u);
    const std::size_t k = tree.metric_index("ticks");

    // The tree is the pattern's: same paths, calls and bases.
    std::vector<std::string> path(tree.nodes.size());
    std::vector<std::map<std::string, expected_node>> built(2);
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        const rep::call_node& n = tree.nodes[i];
        if (n.is_root()) continue;
        const rep::call_node& p = tree.nodes[n.parent];
        path[i] = (p.is_root() ? "" : path[n.parent] + "/") + tree.name_of(n);
        std::size_t root = i;
        while (!tree.nodes[root].is_root()) root = tree.nodes[root].parent;
        const std::size_t thread = root == tree.threads[0].root ? 0 : 1;
        built[thread][path[i]] = {n.calls, n.base[k]};
        EXPECT_EQ(n.rl, recursion_level(path[i])) << path[i];
    }
    for (int thread = 0; thread < 2; ++thread) {
        ASSERT_EQ(built[thread].size(), expected[thread].size());
        for (const auto& [where, node] : expected[thread]) {
            EXPECT_EQ(built[thread][where].calls, node.calls) << where;
            EXPECT_EQ(built[thread][where].base, node.base) << where;
        }
    }

    for (const loupe::trace_metric& m : tree.metrics) {
        const rep::callers_report callers = rep::report_callers(tree, m.name);
        EXPECT_EQ(rep::verify_stanzas(callers), "") << m.name;
        EXPECT_EQ(callers.stanzas.size(), 4u) << m.name;
        // The self rows are the flat report.
        const rep::flat_report flat = rep::report_flat(tree, m.name);
        for (const rep::stanza& s : callers.stanzas) {
            expect_cost(line_named(flat.routines, s.self.name), s.self.calls, s.self.base, s.self.cum, s.self.name);
        }
    }
    std::int64_t total = 0;
    for (const rep::call_tree_thread& th : tree.threads) total += th.totals[k].value_or(-1000000);
    EXPECT_EQ(sum_of_bases(tree, k), total);
}

TEST(CallTree, VerifyStanzasNamesTheBrokenInvariant) {
    rep::callers_report r;
    rep::stanza s;
    s.self = {"work", 2, 3, 10};
    s.parents = {{"main", 2, 3, 10}};
    s.children = {{"io", 1, 7, 7}};
    r.stanzas.push_back(s);
    EXPECT_EQ(rep::verify_stanzas(r), "");
    r.stanzas[0].children[0].cum = 6;
    EXPECT_EQ(rep::verify_stanzas(r), "stanza \"work\": self base + sum of child cum vs self cum 9 != 10");
    r.stanzas[0].parents[0].calls = 1;
    EXPECT_EQ(rep::verify_stanzas(r), "stanza \"work\": sum of parent calls vs self calls 1 != 2");
}

TEST(CallTree, UnknownAndUnavailableMetricsAreErrorsThatSayWhy) {
    const loupe::trace t = record_threads("errors", {[] {
                                              LOUPE_ZONE("A");
                                              loupe::metric_add(ticks(), 1);
                                          }});
    const rep::call_tree tree = rep::build_call_tree(t);
    try {
        rep::report_tree(tree, "nope");
        FAIL() << "no error";
    } catch (const loupe::error& e) {
        EXPECT_STREQ(e.what(), "no metric \"nope\" in this trace; it has: wall_time, ticks");
    }
    EXPECT_THROW(rep::report_flat(tree, "nope"), loupe::error);
    EXPECT_THROW(rep::report_callers(tree, "nope"), loupe::error);
    EXPECT_THROW(rep::report_per_thread(tree, "nope"), loupe::error);
    EXPECT_THROW(rep::report_per_cpu(t, "nope"), loupe::error);
    try {
        rep::report_per_cpu(t, "wall_time");
        FAIL() << "no error";
    } catch (const loupe::error& e) {
        EXPECT_STREQ(e.what(),
                     "metric \"wall_time\" is a wall metric; per-CPU totals are recorded for push metrics only");
    }

    loupe::trace crafted = t;  // as if this machine had no hardware counters
    loupe::trace_metric cycles;
    cycles.id = loupe::metrics::cycles;
    cycles.name = "cycles";
    cycles.source = loupe::metric_source::pull;
    cycles.available = false;
    cycles.unavailable_reason = "perf_event_open: Permission denied";
    crafted.metrics.push_back(cycles);
    const rep::call_tree without = rep::build_call_tree(crafted);
    try {
        rep::report_tree(without, "cycles");
        FAIL() << "no error";
    } catch (const loupe::error& e) {
        EXPECT_STREQ(
            e.what(),
            "metric \"cycles\" was unavailable when the trace was recorded: perf_event_open: Permission denied");
    }
    EXPECT_EQ(rep::report_per_thread(without).threads[0].metrics.size(), 2u) << "unavailable metrics are left out";
}

TEST(CallTree, JsonFormsParseAndHoldTheNumbers) {
    const loupe::trace t = record_threads("json", {[] {
                                              LOUPE_ZONE("A");
                                              loupe::metric_add(ticks(), 2);
                                              LOUPE_ZONE("B \"quoted\"");
                                              loupe::metric_add(ticks(), 8);
                                          }});
    const rep::call_tree tree = rep::build_call_tree(t);
    auto parse = [](const std::string& text) {
        loupe_test::json::value v;
        const std::string error = loupe_test::json::parse(text, v);
        EXPECT_EQ(error, "") << text;
        return v;
    };

    const loupe_test::json::value tr = parse(rep::tree_report_json(rep::report_tree(tree, "ticks")));
    EXPECT_EQ(tr["metric"]["name"].s, "ticks");
    EXPECT_EQ(tr["metric"]["source"].s, "push");
    ASSERT_EQ(tr["nodes"].items.size(), 3u);
    EXPECT_EQ(tr["nodes"].items[0]["parent"].kind, loupe_test::json::value::null);
    EXPECT_EQ(tr["nodes"].items[2]["name"].s, "B \"quoted\"");
    EXPECT_EQ(tr["nodes"].items[2]["parent"].n, tr["nodes"].items[1]["id"].n);
    EXPECT_EQ(tr["nodes"].items[1]["base"].n, 2);
    EXPECT_EQ(tr["nodes"].items[1]["cum"].n, 10);
    EXPECT_EQ(tr["nodes"].items[2]["level"].n, 2);
    EXPECT_EQ(tr["nodes"].items[2]["rl"].n, 1);

    const loupe_test::json::value flat = parse(rep::flat_report_json(rep::report_flat(tree, "ticks")));
    ASSERT_EQ(flat["routines"].items.size(), 2u);
    EXPECT_EQ(flat["routines"].items[0]["base"].n, 8);
    EXPECT_EQ(flat["routines"].items[1]["name"].s, "A");
    EXPECT_EQ(flat["routines"].items[1]["cum"].n, 10);

    const loupe_test::json::value callers = parse(rep::callers_report_json(rep::report_callers(tree, "ticks")));
    ASSERT_EQ(callers["stanzas"].items.size(), 2u);
    const loupe_test::json::value& a = callers["stanzas"].items[0];
    EXPECT_EQ(a["self"]["name"].s, "A");
    EXPECT_EQ(a["children"].items[0]["cum"].n, 8);
    EXPECT_EQ(a["parents"].items[0]["calls"].n, 1);

    const loupe_test::json::value threads = parse(rep::per_thread_report_json(rep::report_per_thread(tree)));
    ASSERT_EQ(threads["threads"].items.size(), 1u);
    const loupe_test::json::value& metrics = threads["threads"].items[0]["metrics"];
    ASSERT_EQ(metrics.items.size(), 2u);
    EXPECT_EQ(metrics.items[0]["metric"]["name"].s, "wall_time");
    EXPECT_EQ(metrics.items[0]["total"].kind, loupe_test::json::value::null);
    EXPECT_EQ(metrics.items[1]["total"].n, 10);
    EXPECT_EQ(threads["all"].items[1]["tree"].n, 10);

    const loupe_test::json::value cpus = parse(rep::per_cpu_report_json(rep::report_per_cpu(t)));
    ASSERT_EQ(cpus["metrics"].items.size(), 1u);
    EXPECT_EQ(cpus["all"].items[0].n, 10);
    EXPECT_FALSE(cpus["cpus"].items.empty());
}

TEST(CallTree, TextFormsOfTheOtherReports) {
    const loupe::trace t = record_threads("text", {[] {
                                              LOUPE_ZONE("A");
                                              loupe::metric_add(ticks(), 2);
                                              LOUPE_ZONE("B");
                                              loupe::metric_add(ticks(), 8);
                                          }});
    const rep::call_tree tree = rep::build_call_tree(t);
    const std::string flat = rep::format_flat_report(rep::report_flat(tree, "ticks"));
    EXPECT_NE(flat.find("session \"text\": routines of ticks (ticks), push metric"), std::string::npos) << flat;
    EXPECT_NE(flat.find("         1              8              8  B\n         1              2             10  A\n"),
              std::string::npos)
        << flat;
    const std::string callers = rep::format_callers_report(rep::report_callers(tree, "ticks"));
    EXPECT_NE(
        callers.find("         1              2             10  A\n         1              8              8      B\n"),
        std::string::npos)
        << callers;
    const std::string threads = rep::format_per_thread_report(rep::report_per_thread(tree, "ticks"));
    EXPECT_NE(threads.find("ticks                            10             10             10              0"),
              std::string::npos)
        << threads;
    EXPECT_NE(threads.find("all threads"), std::string::npos) << threads;
    const std::string cpus = rep::format_per_cpu_report(rep::report_per_cpu(t));
    EXPECT_NE(cpus.find("all                        10\n"), std::string::npos) << cpus;
}

namespace {
void nest(int depth) {
    LOUPE_ZONE("nested");
    if (depth > 1) nest(depth - 1);
}
}  // namespace

// A deep call chain prints one row a level with the indentation capped, so
// the report grows linearly with the depth (40,000 levels printed 1.6 GB
// when every level indented two more spaces).
TEST(CallTreeReport, DeepNestingIsIndentedAtMostThirtyTwoLevels) {
    const int depth = 200;
    const loupe::trace t = record_threads("deep", {[] { nest(depth); }});
    const rep::call_tree tree = rep::build_call_tree(t);
    const std::string text = rep::format_tree_report(rep::report_tree(tree));
    std::size_t rows = 0;
    std::size_t widest_indent = 0;
    std::uint32_t deepest = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        const std::size_t name = line.rfind("nested");
        if (name == std::string::npos || name + 6 != line.size()) continue;
        ++rows;
        // "Level RL Calls Base Cum  " then the indentation, then the name.
        const std::size_t last_digit = line.find_last_of("0123456789", name);
        widest_indent = std::max(widest_indent, name - last_digit - 3);
        deepest = std::max(deepest, static_cast<std::uint32_t>(std::stoul(line.substr(0, 5))));
    }
    EXPECT_EQ(rows, static_cast<std::size_t>(depth));
    EXPECT_GE(deepest, static_cast<std::uint32_t>(depth));  // the Level column still says how deep
    EXPECT_EQ(widest_indent, 2u * rep::max_tree_indent_levels);
}

// The CLI streams a tree report: its text arrives in pieces of a bounded
// number of rows, which together are exactly format_tree_report's text.
TEST(CallTreeReport, ATreeReportIsWrittenInPiecesOfBoundedRows) {
    const int depth = 200;
    const loupe::trace t = record_threads("pieces", {[] { nest(depth); }});
    const rep::tree_report report = rep::report_tree(rep::build_call_tree(t));
    std::vector<std::string> pieces;
    rep::write_tree_report(report, [&](std::string_view piece) { pieces.emplace_back(piece); }, 16);
    std::string joined;
    std::size_t widest_piece_rows = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        joined += pieces[i];
        if (i + 1 < pieces.size() && i != 0) {  // every piece but the first (heading) and the last: 16 rows
            EXPECT_EQ(std::count(pieces[i].begin(), pieces[i].end(), '\n'), 16) << "piece " << i;
        }
        widest_piece_rows = std::max<std::size_t>(widest_piece_rows, std::count(pieces[i].begin(), pieces[i].end(), '\n'));
    }
    EXPECT_EQ(joined, rep::format_tree_report(report));
    EXPECT_GE(pieces.size(), report.rows.size() / 16);
    EXPECT_LE(widest_piece_rows, 16u + 4u);  // the first piece also holds the heading lines
}
