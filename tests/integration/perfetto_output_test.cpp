// Perfetto output: what ui.perfetto.dev would show must be what was recorded.
// Traces are replayed with an independent wire-format reader
// (support/perfetto_replay.hpp) and decoded with protoc against Perfetto's
// schema (tests/data/perfetto_trace.proto).
#include <gtest/gtest.h>

#include <loupe/format/encoder.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/text/printable.hpp>
#include <loupe/sinks/perfetto_sink.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <unistd.h>

#include <cerrno>  // program_invocation_short_name

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "support/crafted_trace.hpp"
#include "support/perfetto_replay.hpp"
#include "support/protoc_decode.hpp"
#include "support/trace_files.hpp"

namespace {

namespace pf = loupe_test::perfetto;

struct recorded {
    std::string path;
    loupe::trace trace;
};

const recorded& small_trace() {
    static const recorded r = [] {
        recorded out;
        out.path = loupe_test::temp_trace_path("perfetto_small");
        loupe_test::write_small_trace(out.path);
        out.trace = loupe::read_trace_file(out.path);
        return out;
    }();
    return r;
}

const pf::thread_track* track_named(const pf::model& m, const std::string& name) {
    for (const auto& [uuid, t] : m.threads) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

TEST(PerfettoOutput, EveryZoneIsASliceWithItsNameTimesAndNesting) {
    const loupe::trace& t = small_trace().trace;
    const pf::model m = pf::replay(loupe::viewer::to_perfetto(t));
    ASSERT_TRUE(m.ok) << m.error;
#if defined(__linux__) && defined(__GLIBC__)
    EXPECT_EQ(m.process_name, program_invocation_short_name);  // the trace's PROCESS record
#endif
    EXPECT_EQ(m.pid, static_cast<std::int64_t>(::getpid()));
    ASSERT_EQ(m.threads.size(), 2u);

    for (const loupe::trace_thread& thread : t.threads) {
        const pf::thread_track* track = track_named(m, thread.name);
        ASSERT_NE(track, nullptr) << thread.name;
        EXPECT_EQ(track->tid, static_cast<std::int64_t>(thread.os_tid));
        // The thread's zones, in begin order, must be the track's slices.
        std::vector<const loupe::trace_event*> zones;
        for (const auto& e : t.events) {
            if (e.thread_id == thread.id && e.type == loupe::event_type::zone) zones.push_back(&e);
        }
        // Begin order; a zone and the one nested in it can begin in the same
        // nanosecond, and then the enclosing (longer) one comes first.
        std::sort(zones.begin(), zones.end(), [](auto* a, auto* b) {
            return a->begin_ns != b->begin_ns ? a->begin_ns < b->begin_ns : a->end_ns > b->end_ns;
        });
        ASSERT_EQ(track->slices.size(), zones.size());
        for (std::size_t i = 0; i < zones.size(); ++i) {
            const pf::slice& s = track->slices[i];
            EXPECT_EQ(s.name, t.find_site(zones[i]->site_id)->name);
            EXPECT_EQ(s.begin, zones[i]->begin_ns);
            EXPECT_EQ(s.end, zones[i]->end_ns);
            EXPECT_EQ(s.depth, s.name == "outer" ? 0 : 1) << i;
        }
    }
}

TEST(PerfettoOutput, ContextFieldsAnnotateTheOutermostSliceOnly) {
    const pf::model m = pf::replay(loupe::viewer::to_perfetto(small_trace().trace));
    ASSERT_TRUE(m.ok) << m.error;
    const pf::thread_track* alpha = track_named(m, "alpha");
    const pf::thread_track* beta = track_named(m, "beta");
    ASSERT_TRUE(alpha && beta);
    for (const pf::slice& s : alpha->slices) {
        if (s.depth == 0) {
            EXPECT_EQ(s.args, (std::map<std::string, std::string>{{"user", "ann"}, {"app", "shop"}}));
        } else {
            EXPECT_TRUE(s.args.empty()) << "nested slices inherit the context";
        }
    }
    // Not valid UTF-8 in the recording: shown as the text \xff.
    EXPECT_EQ(beta->slices.front().args.at("user"), "b\\xff");
}

TEST(PerfettoOutput, InstantsAndCountersKeepTheirTimesAndValues) {
    const loupe::trace& t = small_trace().trace;
    const pf::model m = pf::replay(loupe::viewer::to_perfetto(t));
    ASSERT_TRUE(m.ok) << m.error;
    const pf::thread_track* alpha = track_named(m, "alpha");
    ASSERT_NE(alpha, nullptr);
    std::vector<double> values;
    for (const auto& c : alpha->counters) {
        EXPECT_EQ(c.track, "depth");
        values.push_back(c.value);
    }
    EXPECT_EQ(values, (std::vector<double>{0.0, 0.5, 1.0}));
    ASSERT_EQ(alpha->instants.size(), 3u);
    std::vector<std::uint64_t> recorded_ticks;
    for (const auto& e : t.events) {
        if (e.type == loupe::event_type::instant && t.find_thread(e.thread_id)->name == "alpha") {
            recorded_ticks.push_back(e.begin_ns);
        }
    }
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(alpha->instants[i].name, "tick");
        EXPECT_EQ(alpha->instants[i].time, recorded_ticks[i]);
    }
}

TEST(PerfettoOutput, ClockSnapshotTiesTheTimelineToWallClock) {
    const loupe::trace& t = small_trace().trace;
    const pf::model m = pf::replay(loupe::viewer::to_perfetto(t));
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_EQ(m.clock_snapshot.at(6), t.session.start_ns);         // BOOTTIME
    EXPECT_EQ(m.clock_snapshot.at(1), t.session.wall_anchor_ns);  // REALTIME
}

TEST(PerfettoOutput, DroppedEventsShowOnTheProcessTrack) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    const loupe::trace t = loupe_test::crafted_trace({{loupe::record_kind::zone, &work, 2000, 3000},
                                                      {loupe::record_kind::dropped, nullptr, 0, 0, 0, 17}});
    const pf::model m = pf::replay(loupe::viewer::to_perfetto(t));
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_EQ(m.process_instant_counts.at("loupe: events dropped"), 17u);
}

// Each drop is also a gap marker on its thread's track, where the events
// were lost: after the end of the last event before it.
TEST(PerfettoOutput, DroppedEventsMarkAGapOnTheirThreadsTrack) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    const loupe::trace t = loupe_test::crafted_trace({{loupe::record_kind::zone, &work, 2000, 3000},
                                                      {loupe::record_kind::dropped, nullptr, 0, 0, 0, 17},
                                                      {loupe::record_kind::zone, &work, 5000, 6000},
                                                      {loupe::record_kind::dropped, nullptr, 0, 0, 0, 1}});
    const pf::model m = pf::replay(loupe::viewer::to_perfetto(t));
    ASSERT_TRUE(m.ok) << m.error;
    ASSERT_EQ(m.threads.size(), 1u);
    const pf::thread_track& thread = m.threads.begin()->second;
    ASSERT_EQ(thread.instants.size(), 2u);
    EXPECT_EQ(thread.instants[0].name, "17 events dropped");
    EXPECT_EQ(thread.instants[0].time, 3000u);
    EXPECT_EQ(thread.instants[0].args.at("dropped"), "17");
    EXPECT_EQ(thread.instants[1].name, "1 event dropped");
    EXPECT_EQ(thread.instants[1].time, 6000u);
    EXPECT_EQ(thread.slices.size(), 2u);
    EXPECT_EQ(m.process_instant_counts.at("loupe: events dropped"), 18u);
}


TEST(PerfettoOutput, ProtocDecodesItAgainstPerfettosSchema) {
#ifndef LOUPE_PROTOC
    GTEST_SKIP() << "protoc not found at configure time (CI installs protobuf-compiler)";
#else
    const loupe::trace& t = small_trace().trace;
    // The compressed file as written, and the packets inside it.
    const std::string file = loupe::viewer::to_perfetto(t);
    std::string error;
    const std::string outer = loupe_test::protoc_decode(file, "perfetto_outer", error);
    ASSERT_NE(outer, "") << error;
    EXPECT_NE(outer.find("compressed_packets: "), std::string::npos);
    const pf::unpacked inner = pf::unpack(file);
    ASSERT_EQ(inner.error, "");
    const std::string text = loupe_test::protoc_decode(inner.packets, "perfetto_inner", error);
    ASSERT_NE(text, "") << error;
    auto count = [&](const std::string& needle) { return loupe_test::occurrences(text, needle); };
    std::size_t zones = 0;
    for (const auto& e : t.events) zones += e.type == loupe::event_type::zone;
    EXPECT_EQ(count("type: TYPE_SLICE_BEGIN"), zones);
    EXPECT_EQ(count("type: TYPE_SLICE_END"), zones);
    EXPECT_EQ(count("type: TYPE_INSTANT"), 5u);
    EXPECT_EQ(count("type: TYPE_COUNTER"), 5u);
    EXPECT_EQ(count("thread_name: \"alpha\""), 1u);
    EXPECT_EQ(count("thread_name: \"beta\""), 1u);
    EXPECT_EQ(count("process_name: "), 1u);  // the program's (the session's name is the label)
    EXPECT_EQ(count("process_name: \"small\""), 0u);
    EXPECT_EQ(count("process_labels: \"small\""), 1u);
    EXPECT_EQ(count("unique_session_name: \"small\""), 1u);
    EXPECT_EQ(count("name: \"outer\""), 2u);  // interned once per thread sequence
    EXPECT_EQ(count("str: \"ann\""), 1u);
    EXPECT_EQ(count("double_counter_value: 0.5"), 2u);
    // Uncompressed output is the same packets, readable by protoc directly.
    EXPECT_EQ(loupe_test::protoc_decode(loupe::viewer::to_perfetto(t, {false}), "perfetto_plain", error), text) << error;
#endif
}

// A zone's metric deltas are debug annotations with integer values, their
// names interned once per sequence, valid against Perfetto's schema.
TEST(PerfettoOutput, ZoneMetricsAreIntegerDebugAnnotations) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    const loupe::metric_info metrics[] = {{9, "db.rows", "rows", loupe::metric_source::push, true, ""},
                                          {1, "cpu_time", "ns", loupe::metric_source::pull, true, ""}};
    loupe::detail::trace_encoder encoder;
    loupe::session_info session{"metrics", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                                metrics,   2, {}, {}, {}, {}, 0};
    loupe::thread_info thread{1, 777, "worker", 1};
    loupe::record r;
    r.session = &session;
    r.kind = loupe::record_kind::session_begin;
    encoder.encode(r);
    const loupe::metric_value deltas[][2] = {{{9, 3}, {1, 1500}}, {{9, -4}, {1, 2500}}};
    for (std::uint64_t i = 0; i < 2; ++i) {
        loupe::record z;
        z.session = &session;
        z.thread = &thread;
        z.kind = loupe::record_kind::zone;
        z.where = &work;
        z.begin_ns = 2000 + 2000 * i;
        z.end_ns = 3000 + 2000 * i;
        z.metrics = deltas[i];
        z.metric_count = 2;
        encoder.encode(z);
    }
    loupe::record end;
    end.session = &session;
    end.kind = loupe::record_kind::session_end;
    end.end_ns = 1'000'000;
    end.count = 2;
    encoder.encode(end);
    encoder.close_batch();
    const loupe::trace t = loupe::read_trace(encoder.bytes().data(), encoder.bytes().size());
    const std::string plain = loupe::viewer::to_perfetto(t, {false});

    const pf::model m = pf::replay(plain);
    ASSERT_TRUE(m.ok) << m.error;
    const pf::thread_track* worker = track_named(m, "worker");
    ASSERT_NE(worker, nullptr);
    ASSERT_EQ(worker->slices.size(), 2u);
    EXPECT_EQ(worker->slices[0].args, (std::map<std::string, std::string>{{"db.rows", "3"}, {"cpu_time", "1500"}}));
    EXPECT_EQ(worker->slices[1].args, (std::map<std::string, std::string>{{"db.rows", "-4"}, {"cpu_time", "2500"}}));
#ifdef LOUPE_PROTOC
    std::string error;
    const std::string text = loupe_test::protoc_decode(plain, "perfetto_metrics", error);
    ASSERT_NE(text, "") << error;
    auto count = [&](const std::string& needle) { return loupe_test::occurrences(text, needle); };
    EXPECT_EQ(count("name: \"db.rows\""), 1u);  // interned once
    EXPECT_EQ(count("name: \"cpu_time\""), 1u);
    EXPECT_EQ(count("int_value: 3\n"), 1u);
    EXPECT_EQ(count("int_value: -4\n"), 1u);
    EXPECT_EQ(count("int_value: 2500\n"), 1u);
#endif
}

TEST(PerfettoOutput, CompressedGroupsHoldExactlyThePlainPacketsAndStayUnder512KiB) {
    // Enough zones for several compressed groups.
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    std::vector<loupe_test::crafted_event> events;
    std::uint64_t now = 2000;
    for (int i = 0; i < 150000; ++i) {
        const std::uint64_t begin = now + static_cast<std::uint64_t>(i % 7) * 13;
        now = begin + 50 + static_cast<std::uint64_t>(i % 11) * 17;
        events.push_back({loupe::record_kind::zone, &work, begin, now});
    }
    const loupe::trace t = loupe_test::crafted_trace(events);
    const std::string plain = loupe::viewer::to_perfetto(t, {false});
    const pf::unpacked u = pf::unpack(loupe::viewer::to_perfetto(t));
    ASSERT_EQ(u.error, "");
    EXPECT_GT(u.compressed_groups, 3u);
    EXPECT_LT(u.largest_group, 512u * 1024);
    EXPECT_TRUE(u.packets == plain) << "inflated " << u.packets.size() << " bytes, plain " << plain.size();
    const pf::model m = pf::replay(plain);
    ASSERT_TRUE(m.ok) << m.error;
    ASSERT_EQ(m.threads.size(), 1u);
    EXPECT_EQ(m.threads.begin()->second.slices.size(), events.size());
}

// --- Time order, thread track names, process and session names ---

// A session's records, encoded as a sink receives them, with the pid and
// times a test chooses.
class session_records {
public:
    session_records(const char* name, std::uint32_t pid, std::string_view program = {})
        : session_{name, 1000, 1'700'000'000'000'000'000ull, pid, loupe::clock_source::tsc, nullptr, 0, program, {}, {}, {}, 0} {
        encoder_.encode(base(loupe::record_kind::session_begin));
    }
    void zone(const loupe::thread_info& t, const loupe::site& where, std::uint64_t begin, std::uint64_t end) {
        event(loupe::record_kind::zone, t, where, begin, end);
    }
    void instant(const loupe::thread_info& t, const loupe::site& where, std::uint64_t at) {
        event(loupe::record_kind::instant, t, where, at, at);
    }
    /// A flow point (its site's kind says whether it ends the flow).
    void flow(const loupe::thread_info& t, const loupe::site& where, std::uint64_t at, std::uint64_t id) {
        loupe::record r = base(loupe::record_kind::flow);
        r.thread = &t;
        r.where = &where;
        r.begin_ns = r.end_ns = at;
        r.flow_id = id;
        encoder_.encode(r);
    }
    /// The .loupe bytes of the session, ended.
    std::vector<unsigned char> finish() {
        loupe::record end = base(loupe::record_kind::session_end);
        end.end_ns = 1'000'000;
        end.count = events_;
        encoder_.encode(end);
        encoder_.close_batch();
        return encoder_.bytes();
    }

private:
    loupe::record base(loupe::record_kind kind) const {
        loupe::record r;
        r.session = &session_;
        r.kind = kind;
        return r;
    }
    void event(loupe::record_kind kind, const loupe::thread_info& t, const loupe::site& where, std::uint64_t begin,
               std::uint64_t end) {
        loupe::record r = base(kind);
        r.thread = &t;
        r.where = &where;
        r.begin_ns = begin;
        r.end_ns = end;
        encoder_.encode(r);
        ++events_;
    }
    loupe::session_info session_;
    loupe::detail::trace_encoder encoder_;
    std::uint64_t events_ = 0;
};

// One packet of a Perfetto trace: its sequence and, when it has one, its
// time resolved as trace_processor does (absolute, or a delta on the
// sequence's incremental clock), and its track event's type.
struct timed_packet {
    std::uint64_t sequence = 0;
    bool has_time = false;
    std::uint64_t time = 0;
    std::uint64_t event_type = 0;  // TrackEvent.type; 0: no track event
    bool flow = false;             // the event carries flow_ids or terminating_flow_ids
};

std::vector<timed_packet> timed_packets(std::string_view pftrace) {
    const pf::unpacked u = pf::unpack(pftrace);
    EXPECT_EQ(u.error, "");
    struct clock_state {
        std::uint64_t default_clock = 0;
        std::uint64_t incremental = 0;
    };
    std::map<std::uint64_t, clock_state> clocks;  // by sequence
    std::vector<timed_packet> out;
    bool ok = true;
    for (const pf::field& p : pf::parse(u.packets, ok)) {
        timed_packet t;
        std::uint64_t ts = 0, ts_clock = 0;
        const std::vector<pf::field> fields = pf::parse(p.bytes, ok);
        for (const pf::field& f : fields) {
            if (f.number == 10) t.sequence = f.value;
            if (f.number == 8) ts = f.value, t.has_time = true;
            if (f.number == 58) ts_clock = f.value;
        }
        clock_state& c = clocks[t.sequence];
        for (const pf::field& f : fields) {
            if (f.number == 59) {  // TracePacketDefaults.timestamp_clock_id
                for (const pf::field& d : pf::parse(f.bytes, ok)) {
                    if (d.number == 58) c.default_clock = d.value;
                }
            }
            if (f.number == 6) {  // ClockSnapshot: the incremental clock's start
                for (const pf::field& clock : pf::parse(f.bytes, ok)) {
                    std::uint64_t id = 0, value = 0;
                    for (const pf::field& cf : pf::parse(clock.bytes, ok)) {
                        if (cf.number == 1) id = cf.value;
                        if (cf.number == 2) value = cf.value;
                    }
                    if (id == 64) c.incremental = value;
                }
            }
            if (f.number == 11) {  // TrackEvent
                for (const pf::field& e : pf::parse(f.bytes, ok)) {
                    if (e.number == 9) t.event_type = e.value;
                    if (e.number == 47 || e.number == 48) t.flow = true;
                }
            }
        }
        if (t.has_time) {
            if ((ts_clock ? ts_clock : c.default_clock) == 64) {
                c.incremental += ts;
                t.time = c.incremental;
            } else {
                t.time = ts;
            }
        }
        out.push_back(t);
    }
    EXPECT_TRUE(ok) << "malformed trace";
    return out;
}

// What a Perfetto trace says of the process, its threads and the session.
struct trace_names {
    bool has_process_name = false;
    std::string process_name;
    std::vector<std::string> process_labels;
    std::string unique_session_name;
    std::vector<std::tuple<std::int64_t, std::string, std::string>> threads;  // (tid, track name, thread name)
};

trace_names names_in(std::string_view pftrace) {
    const pf::unpacked u = pf::unpack(pftrace);
    EXPECT_EQ(u.error, "");
    trace_names n;
    bool ok = true;
    for (const pf::field& p : pf::parse(u.packets, ok)) {
        for (const pf::field& f : pf::parse(p.bytes, ok)) {
            if (f.number == 33) {  // TraceConfig
                for (const pf::field& c : pf::parse(f.bytes, ok)) {
                    if (c.number == 22) n.unique_session_name = std::string(c.bytes);
                }
            }
            if (f.number != 60) continue;  // TrackDescriptor
            std::string track_name, thread_name;
            std::int64_t tid = -1;
            for (const pf::field& d : pf::parse(f.bytes, ok)) {
                if (d.number == 2) track_name = std::string(d.bytes);
                if (d.number == 3) {
                    for (const pf::field& pd : pf::parse(d.bytes, ok)) {
                        if (pd.number == 6) n.process_name = std::string(pd.bytes), n.has_process_name = true;
                        if (pd.number == 8) n.process_labels.emplace_back(pd.bytes);
                    }
                }
                if (d.number == 4) {
                    for (const pf::field& td : pf::parse(d.bytes, ok)) {
                        if (td.number == 2) tid = static_cast<std::int64_t>(td.value);
                        if (td.number == 5) thread_name = std::string(td.bytes);
                    }
                }
            }
            if (tid >= 0) n.threads.emplace_back(tid, track_name, thread_name);
        }
    }
    std::sort(n.threads.begin(), n.threads.end());
    EXPECT_TRUE(ok) << "malformed trace";
    return n;
}

// Flow points were written after all of a thread's slices with absolute
// times, so each thread's sequence went back in time once. They are merged
// in by time now: after the begins at their time (inside the zone that
// begins), before the ends and instants at their time.
TEST(PerfettoOutput, EachSequenceGoesForwardInTimeWithItsFlowPointsMergedIn) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    static const loupe::site later{"later", "t.cpp", "f", 2, loupe::site_kind::zone};
    static const loupe::site hop{"hop", "t.cpp", "f", 3, loupe::site_kind::flow};
    static const loupe::site done{"done", "t.cpp", "f", 4, loupe::site_kind::flow_end};
    static const loupe::site tick{"tick", "t.cpp", "f", 5, loupe::site_kind::instant};
    const loupe::thread_info first{1, 501, "first", 1}, second{2, 502, "second", 1};
    session_records records("flows-in-order", 42);
    records.flow(first, hop, 2000, 7);  // at the begin of the zone around it
    records.flow(first, hop, 2500, 7);
    records.flow(second, hop, 2600, 7);
    records.zone(second, work, 2200, 2800);
    records.flow(first, hop, 3000, 8);  // at the end of the zone around it
    records.zone(first, work, 2000, 3000);
    records.flow(first, done, 4500, 7);
    records.instant(first, tick, 4500);
    records.zone(first, later, 4000, 5000);
    records.flow(first, hop, 6000, 9);  // after the last zone
    const std::vector<unsigned char> bytes = records.finish();
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    ASSERT_EQ(t.flows.size(), 6u);

    std::string streamed;
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), streamed, {true, 2});
    for (const std::string& out : {loupe::viewer::to_perfetto(t, {false}), loupe::viewer::to_perfetto(t), streamed}) {
        std::map<std::uint64_t, std::uint64_t> last;  // sequence -> its latest time
        std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, char>>> steps;  // sequence -> (time, kind)
        std::size_t flows = 0;
        for (const timed_packet& p : timed_packets(out)) {
            if (!p.has_time) continue;
            auto [it, fresh] = last.try_emplace(p.sequence, p.time);
            EXPECT_GE(p.time, it->second) << "sequence " << p.sequence << " goes back in time";
            it->second = std::max(it->second, p.time);
            flows += p.flow;
            if (p.event_type != 0) steps[p.sequence].push_back({p.time, p.flow ? 'F' : "?BEI"[p.event_type]});
        }
        EXPECT_EQ(flows, 6u);
        ASSERT_EQ(steps.size(), 2u);  // the two threads' sequences
        EXPECT_EQ(steps.begin()->second, (std::vector<std::pair<std::uint64_t, char>>{{2000, 'B'},
                                                                                       {2000, 'F'},
                                                                                       {2500, 'F'},
                                                                                       {3000, 'F'},
                                                                                       {3000, 'E'},
                                                                                       {4000, 'B'},
                                                                                       {4500, 'F'},
                                                                                       {4500, 'I'},
                                                                                       {5000, 'E'},
                                                                                       {6000, 'F'}}));
        EXPECT_EQ(std::next(steps.begin())->second,
                  (std::vector<std::pair<std::uint64_t, char>>{{2200, 'B'}, {2600, 'F'}, {2800, 'E'}}));
        // The replay sees each point where it was, with its flow id.
        const pf::model m = pf::replay(out);
        ASSERT_TRUE(m.ok) << m.error;
        const pf::thread_track* track = track_named(m, "first");
        ASSERT_NE(track, nullptr);
        std::vector<std::pair<std::string, std::uint64_t>> points;
        for (const pf::instant& i : track->instants) {
            if (!i.flow_ids.empty()) points.push_back({i.name, i.flow_ids[0]});
            if (!i.terminating_flow_ids.empty()) points.push_back({i.name + " (end)", i.terminating_flow_ids[0]});
        }
        EXPECT_EQ(points, (std::vector<std::pair<std::string, std::uint64_t>>{
                              {"hop", 7}, {"hop", 7}, {"hop", 8}, {"done (end)", 7}, {"hop", 9}}));
    }
}

// Two threads named "main" had two tracks named "main". A name that several
// threads of the trace share gets the thread's tid, and its loupe id too
// when the tid was reused; unique names and unnamed threads are as they were.
TEST(PerfettoOutput, ThreadsThatShareANameGetDistinctTrackNames) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    const loupe::thread_info threads[] = {{1, 501, "main", 1},   {2, 502, "main", 1},   {3, 503, "io", 1},
                                          {4, 600, "worker", 1}, {5, 600, "worker", 1}, {6, 604, "", 1}};
    session_records records("names", 42);
    std::uint64_t now = 2000;
    for (const loupe::thread_info& thread : threads) {
        records.zone(thread, work, now, now + 100);
        now += 200;
    }
    const std::vector<unsigned char> bytes = records.finish();
    std::string streamed;
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), streamed, {true, 2});
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
    for (const std::string& out : {loupe::viewer::to_perfetto(t), streamed}) {
        const trace_names n = names_in(out);
        using names = std::tuple<std::int64_t, std::string, std::string>;  // (tid, track name, thread name)
        EXPECT_EQ(n.threads, (std::vector<names>{{501, "main (501)", "main (501)"},
                                                 {502, "main (502)", "main (502)"},
                                                 {503, "io", "io"},
                                                 {600, "worker (600 #4)", "worker (600 #4)"},
                                                 {600, "worker (600 #5)", "worker (600 #5)"},
                                                 {604, "", ""}}));
        const pf::model m = pf::replay(out);
        ASSERT_TRUE(m.ok) << m.error;
        std::map<std::string, int> tracks;  // thread name -> tracks with it
        for (const auto& [uuid, track] : m.threads) ++tracks[track.name];
        EXPECT_EQ(tracks, (std::map<std::string, int>{{"", 1},
                                                       {"io", 1},
                                                       {"main (501)", 1},
                                                       {"main (502)", 1},
                                                       {"worker (600 #4)", 1},
                                                       {"worker (600 #5)", 1}}));
    }
}

// The process was named after the session. It is named after the program
// that recorded the trace (its PROCESS record), or as the options say; the
// session's name labels the process and is the trace's session name.
TEST(PerfettoOutput, TheProcessIsNamedAfterTheProgramAndTheSessionIsOnTheTrace) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    const loupe::thread_info thread{1, 501, "main", 1};
    auto session_of = [&](std::string_view program) {
        session_records records("checkout-load", 42, program);
        records.zone(thread, work, 2000, 3000);
        const std::vector<unsigned char> bytes = records.finish();
        return loupe::read_trace(bytes.data(), bytes.size());
    };
    const loupe::trace recorded = session_of("shopd");
    EXPECT_EQ(recorded.session.program, "shopd");
    const trace_names from_record = names_in(loupe::viewer::to_perfetto(recorded));
    EXPECT_EQ(from_record.process_name, "shopd");
    EXPECT_EQ(from_record.process_labels, std::vector<std::string>{"checkout-load"});
    EXPECT_EQ(from_record.unique_session_name, "checkout-load");

    const trace_names unknown = names_in(loupe::viewer::to_perfetto(session_of("")));
    EXPECT_FALSE(unknown.has_process_name) << unknown.process_name;  // no PROCESS record (as before 1.7)
    EXPECT_EQ(unknown.process_labels, std::vector<std::string>{"checkout-load"});

    loupe::viewer::perfetto_options named;
    named.process_name = "shopd-canary";
    const trace_names given = names_in(loupe::viewer::to_perfetto(recorded, named));
    EXPECT_EQ(given.process_name, "shopd-canary");
    EXPECT_EQ(given.unique_session_name, "checkout-load");
}

TEST(PerfettoSink, WritesWhatTheSessionRecordedWhenItStops) {
    const std::string loupe_path = loupe_test::temp_trace_path("perfetto_sink");
    const std::string pftrace = loupe_path + ".pftrace";
    auto sink = std::make_shared<loupe::sinks::perfetto_sink>(pftrace);
    loupe_test::write_small_trace(loupe_path, sink);
    const pf::model from_sink = pf::replay(loupe_test::read_text(pftrace));
    ASSERT_TRUE(from_sink.ok) << from_sink.error;
    const pf::model from_file = pf::replay(loupe::viewer::to_perfetto(loupe::read_trace_file(loupe_path)));
    ASSERT_EQ(from_sink.threads.size(), 2u);
    for (const char* name : {"alpha", "beta"}) {
        const pf::thread_track* a = track_named(from_sink, name);
        const pf::thread_track* b = track_named(from_file, name);
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->slices.size(), b->slices.size());
        for (std::size_t i = 0; i < a->slices.size(); ++i) {
            EXPECT_EQ(a->slices[i].name, b->slices[i].name);
            EXPECT_EQ(a->slices[i].begin, b->slices[i].begin);
            EXPECT_EQ(a->slices[i].end, b->slices[i].end);
        }
    }
    std::remove(loupe_path.c_str());
    std::remove(pftrace.c_str());
}

// The live sink names the process after the running program (the session's
// PROCESS record), and puts the session's name on the trace.
TEST(PerfettoSink, NamesTheProcessAfterTheProgramAndLabelsItWithTheSession) {
    const std::string loupe_path = loupe_test::temp_trace_path("perfetto_sink_names");
    const std::string pftrace = loupe_path + ".pftrace";
    loupe_test::write_small_trace(loupe_path, std::make_shared<loupe::sinks::perfetto_sink>(pftrace));
    const trace_names n = names_in(loupe_test::read_text(pftrace));
#if defined(__linux__) && defined(__GLIBC__)
    EXPECT_EQ(n.process_name, program_invocation_short_name);
#endif
    EXPECT_NE(n.process_name, "small");
    EXPECT_EQ(n.process_labels, std::vector<std::string>{"small"});
    EXPECT_EQ(n.unique_session_name, "small");
    std::remove(loupe_path.c_str());
    std::remove(pftrace.c_str());
}

TEST(PerfettoSink, ASessionThatOutgrowsTheBufferKeepsItsBeginningAndSaysSo) {
    std::vector<std::string> errors;
    std::mutex errors_mutex;
    loupe::set_error_handler([&](const std::string& m) {
        std::lock_guard<std::mutex> lock(errors_mutex);
        errors.push_back(m);
    });
    const std::string pftrace = loupe_test::temp_trace_path("perfetto_cap") + ".pftrace";
    loupe::session_config cfg;
    cfg.name = "capped";
    cfg.overflow = loupe::overflow_policy::block;
    cfg.sinks = {std::make_shared<loupe::sinks::perfetto_sink>(pftrace, loupe::viewer::perfetto_options{}, 8192)};
    loupe::session_stats stats;
    {
        auto session = loupe::start_session(cfg);
        std::thread([] {
            LOUPE_THREAD_NAME("busy");
            for (int i = 0; i < 20000; ++i) {
                LOUPE_ZONE("step");
            }
        }).join();
        stats = session.stop();
    }
    loupe::set_error_handler({});
    EXPECT_EQ(stats.sink_failures, 1u);
    EXPECT_GT(stats.records_undelivered, 0u);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("outgrew the sink's buffer of 8192 bytes"), std::string::npos) << errors[0];
    const pf::model m = pf::replay(loupe_test::read_text(pftrace));
    ASSERT_TRUE(m.ok) << m.error;
    const pf::thread_track* busy = track_named(m, "busy");
    ASSERT_NE(busy, nullptr);
    EXPECT_GT(busy->slices.size(), 1000u);   // about 8 KiB of 4-byte zones
    EXPECT_LT(busy->slices.size(), 20000u);
    for (const pf::slice& s : busy->slices) EXPECT_EQ(s.name, "step");
    std::remove(pftrace.c_str());
}

}  // namespace
