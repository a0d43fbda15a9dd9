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

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <sstream>
#include <string>

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
    EXPECT_EQ(m.process_name, "small");
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
    EXPECT_EQ(count("process_name: \"small\""), 1u);
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
                                metrics,   2};
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

TEST(PerfettoSink, AnUnwritablePathFailsBeforeTheSessionStarts) {
    try {
        loupe::sinks::perfetto_sink sink("/nonexistent-dir/out.pftrace");
        FAIL() << "expected loupe::error";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/out.pftrace"), std::string::npos) << e.what();
    }
}

}  // namespace
