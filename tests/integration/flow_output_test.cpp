// Flows through the .loupe file and both viewer outputs: the ids, roles and
// threads a user recorded are what ui.perfetto.dev would link.
#include <gtest/gtest.h>

#include <loupe/format/reader.hpp>
#include <loupe/report/flow_stats.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/json_parser.hpp"
#include "support/perfetto_replay.hpp"
#include "support/protoc_decode.hpp"
#include "support/trace_files.hpp"

namespace {

namespace pf = loupe_test::perfetto;
namespace js = loupe_test::json;

struct recorded {
    std::string bytes;
    loupe::trace trace;
    std::uint64_t request = 0;  // the flow acceptor -> worker
    std::uint64_t side = 0;     // a flow whose only point is on a thread without zones
};

// An acceptor hands a request to a worker (a flow that starts inside a zone
// and ends inside one on another thread); a third thread records nothing
// but one flow point.
const recorded& handoff_trace() {
    static const recorded r = [] {
        recorded out;
        const std::string path = loupe_test::temp_trace_path("flow_handoff");
        loupe::session_config cfg;
        cfg.name = "flows";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        auto session = loupe::start_session(cfg);
        out.request = loupe::new_flow_id();
        out.side = loupe::new_flow_id();
        LOUPE_THREAD_NAME("acceptor");
        {
            LOUPE_ZONE("accept");
            LOUPE_FLOW("queued", out.request);
        }
        std::thread worker([&out] {
            LOUPE_THREAD_NAME("worker");
            LOUPE_ZONE("handle");
            LOUPE_FLOW("picked up", out.request);
            LOUPE_FLOW_END("answered", out.request);
        });
        worker.join();
        std::thread bare([&out] {
            LOUPE_THREAD_NAME("bare");
            LOUPE_FLOW("lonely", out.side);
        });
        bare.join();
        session.stop();
        out.bytes = loupe_test::read_text(path);
        std::remove(path.c_str());
        out.trace = loupe::read_trace(out.bytes.data(), out.bytes.size());
        return out;
    }();
    return r;
}

const loupe::trace_thread* thread_named(const loupe::trace& t, const std::string& name) {
    for (const auto& th : t.threads) {
        if (th.name == name) return &th;
    }
    return nullptr;
}

const pf::thread_track* track_named(const pf::model& m, const std::string& name) {
    for (const auto& [uuid, t] : m.threads) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

// The offset of the first record of `kind` in .loupe bytes (0: none).
std::size_t find_record(const std::string& bytes, std::uint8_t kind, std::size_t& payload, std::size_t& length) {
    std::size_t at = 16;
    while (at < bytes.size()) {
        const auto k = static_cast<std::uint8_t>(bytes[at]);
        std::size_t i = at + 1, n = 0;
        for (int shift = 0;; shift += 7) {
            const auto b = static_cast<unsigned char>(bytes[i++]);
            n |= static_cast<std::size_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
        }
        if (k == kind) {
            payload = i;
            length = n;
            return at;
        }
        at = i + n;
    }
    return 0;
}

}  // namespace

TEST(FlowOutput, TheFileHoldsEveryPointWithItsIdRoleThreadAndSite) {
    const recorded& r = handoff_trace();
    const loupe::trace& t = r.trace;
    ASSERT_TRUE(t.complete);
    EXPECT_EQ(t.session.version_minor, 9);
    ASSERT_EQ(t.flows.size(), 4u);
    std::map<std::string, const loupe::trace_flow*> by_name;
    for (const loupe::trace_flow& f : t.flows) {
        const loupe::trace_site* site = t.find_site(f.site_id);
        ASSERT_NE(site, nullptr);
        EXPECT_EQ(site->kind, loupe::site_kind::instant) << "flow sites are instant sites in the file";
        by_name[site->name] = &f;
    }
    ASSERT_EQ(by_name.size(), 4u);
    const loupe::trace_thread* acceptor = thread_named(t, "acceptor");
    const loupe::trace_thread* worker = thread_named(t, "worker");
    const loupe::trace_thread* bare = thread_named(t, "bare");
    ASSERT_TRUE(acceptor && worker && bare);
    EXPECT_EQ(by_name["queued"]->thread_id, acceptor->id);
    EXPECT_EQ(by_name["picked up"]->thread_id, worker->id);
    EXPECT_EQ(by_name["answered"]->thread_id, worker->id);
    EXPECT_EQ(by_name["lonely"]->thread_id, bare->id);
    EXPECT_EQ(by_name["queued"]->flow_id, r.request);
    EXPECT_EQ(by_name["answered"]->flow_id, r.request);
    EXPECT_EQ(by_name["lonely"]->flow_id, r.side);
    EXPECT_FALSE(by_name["queued"]->terminates);
    EXPECT_FALSE(by_name["picked up"]->terminates);
    EXPECT_TRUE(by_name["answered"]->terminates);
    EXPECT_LE(by_name["queued"]->time_ns, by_name["picked up"]->time_ns);
    EXPECT_LE(by_name["picked up"]->time_ns, by_name["answered"]->time_ns);
    // Flow points are not events: a reader that knows no FLOW record reads
    // the same zones.
    EXPECT_EQ(t.events.size(), 2u);
}

TEST(FlowOutput, ABadFlowRecordIsAnErrorThatNamesItsOffsetAndField) {
    const std::string& good = handoff_trace().bytes;
    std::size_t payload = 0, length = 0;
    const std::size_t at = find_record(good, 0x11, payload, length);
    ASSERT_NE(at, 0u);
    auto error_of = [](const std::string& bytes) -> std::string {
        try {
            loupe::read_trace(bytes.data(), bytes.size());
        } catch (const loupe::trace_error& e) {
            return std::to_string(e.offset()) + ": " + e.what();
        }
        return "";
    };
    std::string flags = good;
    flags[payload + length - 1] = 2;
    EXPECT_NE(error_of(flags).find(std::to_string(payload + length - 1) + ": "), std::string::npos) << error_of(flags);
    EXPECT_NE(error_of(flags).find("FLOW flags 2 has unknown bits; expected 0 or 1"), std::string::npos) << error_of(flags);

    std::string zero = good;
    for (std::size_t i = payload + length - 9; i < payload + length - 1; ++i) zero[i] = 0;
    EXPECT_NE(error_of(zero).find(std::to_string(payload + length - 9) + ": "), std::string::npos) << error_of(zero);
    EXPECT_NE(error_of(zero).find("FLOW id 0 is reserved"), std::string::npos) << error_of(zero);

    std::string site = good;
    site[payload + 1] = 0x7f;  // the site id (one-byte thread and site ids): undefined
    EXPECT_NE(error_of(site).find("FLOW site 127 is not defined before it"), std::string::npos) << error_of(site);
}

TEST(FlowOutput, PerfettoLinksThePointsOnTheirThreadsTracks) {
    const recorded& r = handoff_trace();
    for (const bool from_bytes : {false, true}) {
        std::string out;
        if (from_bytes) {
            loupe::viewer::convert_to_perfetto(r.bytes.data(), r.bytes.size(), out, {false, 2});
        } else {
            loupe::viewer::write_perfetto(r.trace, out, {false});
        }
        const pf::model m = pf::replay(out);
        ASSERT_TRUE(m.ok) << m.error;
        const pf::thread_track* acceptor = track_named(m, "acceptor");
        const pf::thread_track* worker = track_named(m, "worker");
        const pf::thread_track* bare = track_named(m, "bare");
        ASSERT_TRUE(acceptor && worker && bare) << "from_bytes " << from_bytes;
        std::map<std::string, pf::instant> points;
        for (const pf::thread_track* track : {acceptor, worker, bare}) {
            for (const pf::instant& i : track->instants) points[i.name] = i;
        }
        ASSERT_EQ(points.size(), 4u);
        EXPECT_EQ(points["queued"].flow_ids, std::vector<std::uint64_t>{r.request});
        EXPECT_EQ(points["picked up"].flow_ids, std::vector<std::uint64_t>{r.request});
        EXPECT_TRUE(points["answered"].flow_ids.empty());
        EXPECT_EQ(points["answered"].terminating_flow_ids, std::vector<std::uint64_t>{r.request});
        EXPECT_EQ(points["lonely"].flow_ids, std::vector<std::uint64_t>{r.side});
        EXPECT_EQ(acceptor->instants.size(), 1u);
        EXPECT_EQ(bare->instants.size(), 1u);
        for (const loupe::trace_flow& f : r.trace.flows) {
            EXPECT_EQ(points[r.trace.find_site(f.site_id)->name].time, f.time_ns);
        }
        // The zones around them are there as before.
        ASSERT_EQ(worker->slices.size(), 1u);
        EXPECT_EQ(worker->slices[0].name, "handle");
    }
}

#ifdef LOUPE_PROTOC
TEST(FlowOutput, ProtocDecodesTheFlowIdsAgainstPerfettosSchema) {
    const recorded& r = handoff_trace();
    std::string error;
    const std::string text = loupe_test::protoc_decode(loupe::viewer::to_perfetto(r.trace, {false}), "flow_protoc", error);
    ASSERT_NE(text, "") << error;
    auto count = [&](const std::string& needle) { return loupe_test::occurrences(text, needle); };
    EXPECT_EQ(count("flow_ids: " + std::to_string(r.request) + "\n"), 3u);  // two flow_ids, one terminating
    EXPECT_EQ(count("terminating_flow_ids: " + std::to_string(r.request) + "\n"), 1u);
    EXPECT_EQ(count("flow_ids: " + std::to_string(r.side) + "\n"), 1u);
    EXPECT_EQ(count("thread_name: \"bare\""), 1u);
}
#endif

TEST(FlowOutput, ChromeJsonHasAnInstantAndABoundFlowEventPerPoint) {
    const recorded& r = handoff_trace();
    std::string from_bytes;
    loupe::viewer::convert_to_chrome_json(r.bytes.data(), r.bytes.size(), from_bytes);
    EXPECT_EQ(from_bytes, loupe::viewer::to_chrome_json(r.trace));
    js::value doc;
    ASSERT_EQ(js::parse(from_bytes, doc), "");
    std::map<std::string, std::string> flow_arg;  // instant name -> args.flow
    std::vector<const js::value*> flow_events;
    std::set<std::string> thread_names;
    for (const js::value& e : doc["traceEvents"].items) {
        const std::string ph = e["ph"].s;
        if (ph == "i" && e["args"].kind == js::value::object && e["args"]["flow"].kind == js::value::string) {
            flow_arg[e["name"].s] = e["args"]["flow"].s;
        }
        if (ph == "s" || ph == "t" || ph == "f") flow_events.push_back(&e);
        if (ph == "M" && e["name"].s == "thread_name") thread_names.insert(e["args"]["name"].s);
    }
    ASSERT_EQ(flow_arg.size(), 4u);
    EXPECT_EQ(flow_arg["queued"], loupe::flow_id_text(r.request));
    EXPECT_EQ(flow_arg["answered"], loupe::flow_id_text(r.request));
    EXPECT_EQ(flow_arg["lonely"], loupe::flow_id_text(r.side));
    ASSERT_EQ(flow_events.size(), 4u);
    std::map<std::string, std::vector<std::string>> phases;  // id -> phases in time order
    std::vector<std::pair<double, const js::value*>> ordered;
    for (const js::value* e : flow_events) ordered.push_back({(*e)["ts"].n, e});
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [ts, e] : ordered) {
        EXPECT_EQ((*e)["cat"].s, "loupe.flow");
        EXPECT_EQ((*e)["bp"].s, "e");
        phases[(*e)["id"].s].push_back((*e)["ph"].s);
    }
    EXPECT_EQ(phases["0x" + loupe::flow_id_text(r.request)], (std::vector<std::string>{"s", "t", "f"}));
    EXPECT_EQ(phases["0x" + loupe::flow_id_text(r.side)], std::vector<std::string>{"s"});
    EXPECT_TRUE(thread_names.count("bare"));
}

// An id used again after its flow ended starts a new flow; a flow with one
// point here is counted as such; hops are grouped by the points' names.
TEST(FlowOutput, FlowStatsSplitsAtEndsAndCountsHopsByName) {
    const std::string path = loupe_test::temp_trace_path("flow_stats");
    loupe::session_config cfg;
    cfg.name = "hops";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    const std::uint64_t reused = 77, lonely = 78;
    LOUPE_FLOW("a", reused);
    std::thread([] { LOUPE_FLOW_END("b", 77); }).join();
    LOUPE_FLOW("a", reused);  // a new flow with the same id
    LOUPE_FLOW_END("b", reused);
    LOUPE_FLOW("alone", lonely);
    session.stop();
    const loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    const loupe::report::flow_report r = loupe::report::flow_stats(t);
    EXPECT_EQ(r.points, 5u);
    EXPECT_EQ(r.flows, 3u);
    EXPECT_EQ(r.ended, 2u);
    EXPECT_EQ(r.single_point, 1u);
    ASSERT_EQ(r.hops.size(), 1u);  // no hop from an end to the next flow's start
    EXPECT_EQ(r.hops[0].from, "a");
    EXPECT_EQ(r.hops[0].to, "b");
    EXPECT_EQ(r.hops[0].stats.count, 2u);
    EXPECT_EQ(r.hops[0].cross_thread, 1u);
    const std::string text = loupe::report::format_flow_stats(r);
    EXPECT_NE(text.find("5 flow points, 3 flows (2 ended, 1 with one point here)"), std::string::npos) << text;
    EXPECT_NE(text.find("a -> b"), std::string::npos) << text;
    js::value doc;
    ASSERT_EQ(js::parse(loupe::report::flow_stats_json(r), doc), "");
    EXPECT_EQ(doc["hops"].items.at(0)["stats"]["count"].n, 2);
}
