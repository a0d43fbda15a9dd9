// Chrome Trace Event JSON output: valid JSON whatever the names contain, and
// the events mean what was recorded.
#include <gtest/gtest.h>

#include <loupe/format/reader.hpp>
#include <loupe/text/printable.hpp>
#include <loupe/sinks/chrome_json_sink.hpp>
#include <loupe/viewer/chrome_json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "support/crafted_trace.hpp"
#include "support/json_parser.hpp"
#include "support/trace_files.hpp"

namespace {

namespace js = loupe_test::json;

js::value parse_or_fail(const std::string& text) {
    js::value v;
    const std::string error = js::parse(text, v);
    EXPECT_EQ(error, "") << text.substr(0, 2000);
    return v;
}

std::uint64_t ns_of(const js::value& microseconds) { return static_cast<std::uint64_t>(std::llround(microseconds.n * 1000)); }

TEST(ChromeJsonOutput, ZonesAreCompleteEventsWithTheirTimesAndThreads) {
    const std::string path = loupe_test::temp_trace_path("chrome_small");
    loupe_test::write_small_trace(path);
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    const js::value doc = parse_or_fail(loupe::viewer::to_chrome_json(t));
    ASSERT_EQ(doc["traceEvents"].kind, js::value::array);
    EXPECT_EQ(doc["otherData"]["session"].s, "small");

    std::map<std::uint64_t, std::string> thread_names;  // tid -> name
    std::vector<const js::value*> complete, instants, counters;
    for (const js::value& e : doc["traceEvents"].items) {
        EXPECT_EQ(e["pid"].n, ::getpid());
        const std::string& ph = e["ph"].s;
        if (ph == "M" && e["name"].s == "thread_name") thread_names[static_cast<std::uint64_t>(e["tid"].n)] = e["args"]["name"].s;
        if (ph == "M" && e["name"].s == "process_name") {
            EXPECT_EQ(e["args"]["name"].s, t.session.program);  // the program that recorded it
            EXPECT_FALSE(t.session.program.empty());
        }
        if (ph == "X") complete.push_back(&e);
        if (ph == "i") instants.push_back(&e);
        if (ph == "C") counters.push_back(&e);
    }
    ASSERT_EQ(thread_names.size(), 2u);

    // Every recorded zone is one X event with the same name, thread, ts and dur.
    std::multiset<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>> recorded, written;
    std::size_t recorded_instants = 0, recorded_counters = 0;
    for (const auto& e : t.events) {
        const loupe::trace_thread* th = t.find_thread(e.thread_id);
        if (e.type == loupe::event_type::zone) {
            recorded.emplace(t.find_site(e.site_id)->name, th->name, e.begin_ns, e.end_ns - e.begin_ns);
        }
        recorded_instants += e.type == loupe::event_type::instant;
        recorded_counters += e.type == loupe::event_type::counter;
    }
    for (const js::value* e : complete) {
        written.emplace((*e)["name"].s, thread_names[static_cast<std::uint64_t>((*e)["tid"].n)], ns_of((*e)["ts"]),
                        ns_of((*e)["dur"]));
    }
    EXPECT_EQ(written, recorded);
    EXPECT_EQ(instants.size(), recorded_instants);
    ASSERT_EQ(counters.size(), recorded_counters);
    EXPECT_EQ((*counters[1])["args"]["value"].n, 0.5);

    // Context goes on the outer zone only; the bad byte is spelled \xff.
    for (const js::value* e : complete) {
        if ((*e)["name"].s == "inner") {
            EXPECT_FALSE((*e).has("args"));
        }
        if ((*e)["name"].s == "outer") {
            EXPECT_EQ((*e)["args"]["app"].s, "shop");
            const std::string& user = (*e)["args"]["user"].s;
            EXPECT_TRUE(user == "ann" || user == "b\\xff") << user;
        }
    }
}

// Each drop is a gap marker on its thread's track, where the events were
// lost: after the end of the last event before it.
TEST(ChromeJsonOutput, DroppedEventsMarkAGapOnTheirThreadsTrack) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    const loupe::trace t = loupe_test::crafted_trace({{loupe::record_kind::zone, &work, 2000, 3000},
                                                      {loupe::record_kind::dropped, nullptr, 0, 0, 0, 17},
                                                      {loupe::record_kind::zone, &work, 5000, 6000},
                                                      {loupe::record_kind::dropped, nullptr, 0, 0, 0, 1}});
    const js::value doc = parse_or_fail(loupe::viewer::to_chrome_json(t));
    EXPECT_EQ(doc["otherData"]["dropped_events"].n, 18);
    std::vector<std::tuple<std::string, std::uint64_t, double, double>> gaps;  // name, ts, tid, dropped
    double zone_tid = -1;
    for (const js::value& e : doc["traceEvents"].items) {
        if (e["ph"].s == "X") zone_tid = e["tid"].n;
        if (e["ph"].s == "i") gaps.emplace_back(e["name"].s, ns_of(e["ts"]), e["tid"].n, e["args"]["dropped"].n);
    }
    ASSERT_EQ(gaps.size(), 2u);
    EXPECT_EQ(gaps[0], std::make_tuple(std::string("17 events dropped"), std::uint64_t{3000}, zone_tid, 17.0));
    EXPECT_EQ(gaps[1], std::make_tuple(std::string("1 event dropped"), std::uint64_t{6000}, zone_tid, 1.0));
}

TEST(ChromeJsonOutput, AnyNameGivesValidJson) {
    static const loupe::site hostile{"q\"uote\\back\nline\x01 ctl \xff bad \xc3\xa9 ok", "t.cpp", "f", 1,
                                     loupe::site_kind::zone};
    const loupe::trace t = loupe_test::crafted_trace({{loupe::record_kind::zone, &hostile, 2000, 3000}});
    const js::value doc = parse_or_fail(loupe::viewer::to_chrome_json(t));
    const js::value* zone = nullptr;
    for (const js::value& e : doc["traceEvents"].items) {
        if (e["ph"].s == "X") zone = &e;
    }
    ASSERT_NE(zone, nullptr);
    EXPECT_EQ((*zone)["name"].s, loupe::report::printable(hostile.name));
    EXPECT_EQ(ns_of((*zone)["ts"]), 2000u);
    EXPECT_EQ(ns_of((*zone)["dur"]), 1000u);
}

TEST(ChromeJsonSink, WritesTheSessionAsJson) {
    const std::string loupe_path = loupe_test::temp_trace_path("chrome_sink");
    const std::string json_path = loupe_path + ".json";
    loupe_test::write_small_trace(loupe_path, std::make_shared<loupe::sinks::chrome_json_sink>(json_path));
    std::ifstream in(json_path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), loupe::viewer::to_chrome_json(loupe::read_trace_file(loupe_path)));
    std::remove(loupe_path.c_str());
    std::remove(json_path.c_str());
}

}  // namespace
