// The calls of joined tasks drawn for the viewers (report/task_slices.hpp)
// and several traces written as one Perfetto trace or one Chrome JSON
// document (viewer/perfetto.hpp perfetto_set_writer, viewer/chrome_json.hpp
// chrome_json_set_writer): one process per trace on the merged timeline,
// client and server slices linked by flows, the zones where they happened.
#include <gtest/gtest.h>

#include <loupe/format/reader.hpp>
#include <loupe/report/task_join.hpp>
#include <loupe/report/task_slices.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/json_parser.hpp"
#include "support/perfetto_replay.hpp"
#include "support/task_files.hpp"

namespace {

namespace rep = loupe::report;

constexpr std::uint64_t b_clock_offset = 5'000'000;  // B's clock reads 5 ms more than A's

// A (host A) serves "GET /" and calls B (host B) for "/stock"; B's handler
// runs a zone "lookup" and calls the database (not profiled) twice at once.
std::vector<loupe::trace> two_processes(std::uint32_t pid_b = 200) {
    loupe_test::process_file a("frontend", 100, "boot-a", 1000, "hostA");
    loupe_test::process_file b("inventory", pid_b, "boot-b", 1000 + b_clock_offset, "hostB");
    a.zone(1, "parse", 2000, 2500);
    a.server(0, 0x11, 0, 0xa1, 1500, 20000, "GET /");
    a.client(0, 0x11, 7, 0xa1, 3000, 9000, "/stock");
    b.zone(2, "lookup", 3600 + b_clock_offset, 8000 + b_clock_offset);
    b.server(0, 0x11, 7, 0xb1, 3500 + b_clock_offset, 8500 + b_clock_offset, "/stock", 2);
    b.client(0, 0x11, 8, 0xb1, 4000 + b_clock_offset, 7000 + b_clock_offset, "SELECT 1", 2, "db");
    b.client(0, 0x11, 9, 0xb1, 4500 + b_clock_offset, 7500 + b_clock_offset, "SELECT 2", 2, "db");
    a.zone(1, "render", 16000, 19000);
    const std::vector<unsigned char> ab = a.finish(30000), bb = b.finish(30000 + b_clock_offset);
    return {loupe::read_trace(ab.data(), ab.size()), loupe::read_trace(bb.data(), bb.size())};
}

// The zones of thread `thread` of `t`, as "name begin..end", in file order.
std::vector<std::string> zones_of(const loupe::trace& t, std::uint64_t thread) {
    std::vector<std::string> out;
    for (const loupe::trace_event& e : t.events) {
        if (e.thread_id != thread || e.type != loupe::event_type::zone) continue;
        out.push_back(t.find_site(e.site_id)->name + " " + std::to_string(e.begin_ns) + ".." + std::to_string(e.end_ns));
    }
    return out;
}

const loupe::trace_thread* thread_named(const loupe::trace& t, const std::string& name) {
    for (const loupe::trace_thread& th : t.threads) {
        if (th.name == name) return &th;
    }
    return nullptr;
}

}  // namespace

TEST(TaskSlices, CallsBecomeZonesInRecordOrderAndFlows) {
    std::vector<loupe::trace> traces = two_processes();
    const rep::task_forest f = rep::join_tasks(traces);
    const rep::task_slice_counts a = rep::add_task_slices(traces[0], 0, f);
    EXPECT_EQ(a.slices, 2u);  // GET / (server), /stock (client)
    EXPECT_EQ(a.flow_points, 2u);
    EXPECT_EQ(a.lanes, 0u);
    // A zone is recorded when it ends; an enclosing zone after those inside it.
    EXPECT_EQ(zones_of(traces[0], 1), (std::vector<std::string>{"parse 2000..2500", "/stock \u2192 inventory 3000..9000",
                                                                 "render 16000..19000", "GET / 1500..20000"}));
    const rep::task_slice_counts b = rep::add_task_slices(traces[1], 1, f);
    // The server slice, and the two concurrent calls to the database: the
    // second crosses the first, so it goes on a lane.
    EXPECT_EQ(b.slices, 3u);
    EXPECT_EQ(b.on_lanes, 1u);
    EXPECT_EQ(b.lanes, 1u);
    const std::uint64_t o = b_clock_offset;
    EXPECT_EQ(zones_of(traces[1], 2),
              (std::vector<std::string>{"SELECT 1 \u2192 [db] " + std::to_string(4000 + o) + ".." + std::to_string(7000 + o),
                                        "lookup " + std::to_string(3600 + o) + ".." + std::to_string(8000 + o),
                                        "/stock \u2190 frontend " + std::to_string(3500 + o) + ".." +
                                            std::to_string(8500 + o)}));
    const loupe::trace_thread* lane = thread_named(traces[1], "t2 calls");
    ASSERT_NE(lane, nullptr);
    EXPECT_EQ(lane->os_tid, (std::uint64_t{1} << 30) + lane->id);
    EXPECT_EQ(zones_of(traces[1], lane->id),
              (std::vector<std::string>{"SELECT 2 \u2192 [db] " + std::to_string(4500 + o) + ".." + std::to_string(7500 + o)}));
    // One request flow and one response flow per joined call, with the same
    // ids in both traces: t1 starts the request, t2 ends it; t3 starts the
    // response, t4 ends it.
    std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, bool>>> flows;  // id -> (time on A's clock, ends)
    for (const loupe::trace_flow& p : traces[0].flows) flows[p.flow_id].push_back({p.time_ns, p.terminates});
    for (const loupe::trace_flow& p : traces[1].flows) flows[p.flow_id].push_back({p.time_ns - o, p.terminates});
    ASSERT_EQ(flows.size(), 2u);
    std::set<std::vector<std::pair<std::uint64_t, bool>>> seen;
    for (auto& [id, points] : flows) {
        std::sort(points.begin(), points.end());
        seen.insert(points);
    }
    EXPECT_TRUE(seen.count({{3000, false}, {3500, true}}));  // request
    EXPECT_TRUE(seen.count({{8500, false}, {9000, true}}));  // response
}

TEST(TaskSlices, PerfettoSetHasOneProcessPerTraceOnTheMergedTimeline) {
    std::vector<loupe::trace> traces = two_processes();
    const rep::task_forest f = rep::join_tasks(traces);
    for (std::uint32_t i = 0; i < traces.size(); ++i) rep::add_task_slices(traces[i], i, f);
    std::string out;
    loupe::viewer::perfetto_options options;
    loupe::viewer::perfetto_set_writer writer(out, options);
    for (std::uint32_t i = 0; i < traces.size(); ++i) {
        writer.add(traces[i], {-f.alignment.offset_of(i), traces[i].session.pid});
    }
    const loupe_test::perfetto::model m = loupe_test::perfetto::replay(out);
    ASSERT_TRUE(m.ok) << m.error;
    // B's slices on A's timeline: the server slice inside the client's.
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> slices;
    std::map<std::uint64_t, std::vector<std::uint64_t>> flow_times;  // id -> times of its points
    std::set<std::int64_t> tids;
    for (const auto& [uuid, t] : m.threads) {
        tids.insert(t.tid);
        for (const auto& s : t.slices) slices[s.name] = {s.begin, s.end};
        for (const auto& p : t.instants) {
            for (const std::uint64_t id : p.flow_ids) flow_times[id].push_back(p.time);
            for (const std::uint64_t id : p.terminating_flow_ids) flow_times[id].push_back(p.time);
        }
    }
    const std::int64_t theta = f.alignment.domains[1].offset_ns;
    EXPECT_LE(std::llabs(theta - static_cast<std::int64_t>(b_clock_offset)), f.alignment.domains[1].uncertainty_ns);
    const auto placed = [&](std::uint64_t recorded_on_b) { return recorded_on_b - static_cast<std::uint64_t>(theta); };
    EXPECT_EQ(slices["/stock \u2192 inventory"], std::make_pair(std::uint64_t{3000}, std::uint64_t{9000}));
    EXPECT_EQ(slices["/stock \u2190 frontend"], std::make_pair(placed(3500 + b_clock_offset), placed(8500 + b_clock_offset)));
    EXPECT_EQ(slices["lookup"], std::make_pair(placed(3600 + b_clock_offset), placed(8000 + b_clock_offset)));
    EXPECT_EQ(slices["GET /"], std::make_pair(std::uint64_t{1500}, std::uint64_t{20000}));
    ASSERT_EQ(flow_times.size(), 2u);
    for (const auto& [id, times] : flow_times) EXPECT_EQ(times.size(), 2u);
    EXPECT_TRUE(tids.count(101) && tids.count(102));  // A's t1 and B's t2 (tids 100 + id)
    // Two process descriptors, with the pids given.
    std::set<std::int64_t> pids;
    bool ok = true;
    const loupe_test::perfetto::unpacked packets = loupe_test::perfetto::unpack(out);
    for (const auto& p : loupe_test::perfetto::parse(packets.packets, ok)) {
        bool k = true;
        for (const auto& field : loupe_test::perfetto::parse(p.bytes, k)) {
            if (field.number != 60) continue;
            for (const auto& d : loupe_test::perfetto::parse(field.bytes, k)) {
                if (d.number != 3) continue;
                for (const auto& pf : loupe_test::perfetto::parse(d.bytes, k)) {
                    if (pf.number == 1) pids.insert(static_cast<std::int64_t>(pf.value));
                }
            }
        }
    }
    EXPECT_EQ(pids, (std::set<std::int64_t>{100, 200}));
    // Only the first trace ties the timeline to wall-clock time.
    EXPECT_EQ(m.clock_snapshot.size(), 2u);
}

TEST(TaskSlices, ASetOfOneIsTheSingleTraceOutput) {
    const std::vector<loupe::trace> traces = two_processes();
    for (const bool compress : {true, false}) {
        loupe::viewer::perfetto_options options;
        options.compress = compress;
        std::string set;
        loupe::viewer::write_perfetto({loupe::viewer::placed_trace{&traces[1], {}}}, set, options);
        EXPECT_EQ(set, loupe::viewer::to_perfetto(traces[1], options));
    }
    std::string json;
    loupe::viewer::write_chrome_json({loupe::viewer::placed_trace{&traces[1], {}}}, json);
    EXPECT_EQ(json, loupe::viewer::to_chrome_json(traces[1]));
}

TEST(TaskSlices, ChromeJsonSetIsOneDocumentWithAPidPerTrace) {
    std::vector<loupe::trace> traces = two_processes(100);  // both processes have pid 100
    const rep::task_forest f = rep::join_tasks(traces);
    std::vector<loupe::viewer::placed_trace> placed;
    for (std::uint32_t i = 0; i < traces.size(); ++i) {
        rep::add_task_slices(traces[i], i, f);
        placed.push_back({&traces[i], {-f.alignment.offset_of(i), i == 0 ? 100u : 100u + (1u << 22)}});
    }
    std::string out;
    loupe::viewer::write_chrome_json(placed, out);
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(out, doc), "") << out.substr(0, 400);
    std::set<double> pids;
    std::map<std::string, double> flow_phases;  // "<ph> <id>" -> ts
    double lookup_ts = 0;
    for (const auto& e : doc["traceEvents"].items) {
        pids.insert(e["pid"].n);
        if (e["name"].s == "lookup") lookup_ts = e["ts"].n;
        if (e["cat"].s == "loupe.flow") flow_phases[e["ph"].s + " " + e["id"].s] = e["ts"].n;
    }
    EXPECT_EQ(pids, (std::set<double>{100.0, 100.0 + (1u << 22)}));
    const double theta = static_cast<double>(f.alignment.domains[1].offset_ns);
    EXPECT_DOUBLE_EQ(lookup_ts, (3600.0 + b_clock_offset - theta) / 1000.0);
    // Each of the two flows starts in one process ("s") and ends in the other ("f").
    std::size_t starts = 0, ends = 0;
    for (const auto& [key, ts] : flow_phases) {
        starts += key[0] == 's';
        ends += key[0] == 'f';
    }
    EXPECT_EQ(starts, 2u);
    EXPECT_EQ(ends, 2u);
}
