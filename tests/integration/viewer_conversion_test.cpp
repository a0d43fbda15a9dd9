// Converting straight from .loupe bytes (one thread at a time, what `loupe
// convert` and the viewer sinks do) gives exactly what converting the
// in-memory model gives.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <loupe/format/encoder.hpp>
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/sinks/chrome_json_sink.hpp>
#include <loupe/sinks/perfetto_sink.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/crafted_trace.hpp"
#include "support/json_parser.hpp"
#include "support/perfetto_replay.hpp"
#include "support/trace_files.hpp"

namespace {

std::vector<unsigned char> record(const std::string& tag, void (*body)()) {
    const std::string path = loupe_test::temp_trace_path(tag);
    {
        loupe::session_config cfg;
        cfg.name = tag;
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        auto session = loupe::start_session(cfg);
        std::vector<std::thread> threads;
        for (int i = 0; i < 5; ++i) threads.emplace_back(body);
        for (auto& t : threads) t.join();
    }
    std::vector<unsigned char> bytes = loupe::read_file_bytes(path);
    std::remove(path.c_str());
    return bytes;
}

// Busy-waits `ns` nanoseconds, so that timestamps taken before and after
// differ even on a coarse clock (ties between a zone's begin and a context
// change in the same clock tick cannot be ordered from the trace).
void spin_for(std::chrono::nanoseconds ns) {
    const auto until = std::chrono::steady_clock::now() + ns;
    while (std::chrono::steady_clock::now() < until) {
    }
}

// A context change inside a zone: the outer zone is recorded after the
// inner context's record but belongs to the earlier context.
void context_changes_inside_zones() {
    LOUPE_THREAD_NAME("worker");
    for (int i = 0; i < 50; ++i) {
        loupe::context_scope request({{loupe::context_field::user, i % 2 ? "ann" : "bob"},
                                      {loupe::context_field::request, "r" + std::to_string(i)}});
        LOUPE_ZONE("outer");
        spin_for(std::chrono::nanoseconds(500));
        {
            loupe::field_scope nested(loupe::context_field::component, "db");
            LOUPE_ZONE("inner");
            LOUPE_COUNTER("rows", i);
        }
        LOUPE_INSTANT("done");
    }
}

// Sequential and parallel conversion from bytes, and conversion of the
// model, all give the same bytes.
void expect_same_conversions(const std::vector<unsigned char>& bytes, loupe::decode_options decode = {}) {
    const loupe::trace model = loupe::read_trace(bytes.data(), bytes.size(), decode);
    for (const unsigned workers : {1u, 2u, 4u}) {
        for (const bool compress : {true, false}) {
            std::string streamed;
            loupe::viewer::perfetto_options options;
            options.compress = compress;
            options.workers = workers;
            loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), streamed, options, decode);
            EXPECT_TRUE(streamed == loupe::viewer::to_perfetto(model, options))
                << "compress=" << compress << " workers=" << workers;
        }
        std::string json;
        loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json, decode, workers);
        EXPECT_EQ(json, loupe::viewer::to_chrome_json(model)) << "workers=" << workers;
    }
}

TEST(ViewerConversion, FromBytesEqualsFromTheModel) {
    expect_same_conversions(record("conversion_contexts", context_changes_inside_zones));
    const std::string path = loupe_test::temp_trace_path("conversion_small");
    loupe_test::write_small_trace(path);
    expect_same_conversions(loupe::read_file_bytes(path));
    std::remove(path.c_str());
}

// I/O operations are drawn as slices named after the operation, nested in
// the zone around them, with what they were done on, their result and
// descriptor; a thread that only did I/O gets a track too.
TEST(ViewerConversion, IoOperationsAreSlicesWithResourceResultAndDescriptor) {
    const std::string trace_path = loupe_test::temp_trace_path("conversion_io");
    const std::string data = trace_path + ".dat";
    const int fd = loupe::io::open(data.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    {
        loupe::session_config cfg;
        cfg.name = "conversion_io";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(trace_path)};
        auto session = loupe::start_session(cfg);
        std::thread zoned([&] {
            LOUPE_THREAD_NAME("zoned");
            loupe::context_scope who({{loupe::context_field::user, "ann"}});
            LOUPE_ZONE("save");
            loupe::io::write(fd, "hello", 5);
        });
        zoned.join();
        std::thread io_only([&] {
            LOUPE_THREAD_NAME("io-only");
            char buf[8];
            loupe::io::pread(fd, buf, sizeof buf, 0);
        });
        io_only.join();
    }
    loupe::io::close(fd);
    std::remove(data.c_str());
    const std::vector<unsigned char> bytes = loupe::read_file_bytes(trace_path);
    std::remove(trace_path.c_str());
    expect_same_conversions(bytes);

    std::string out;
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out);
    const loupe_test::perfetto::model m = loupe_test::perfetto::replay(out);
    ASSERT_TRUE(m.ok) << m.error;
    std::map<std::string, const loupe_test::perfetto::thread_track*> by_name;
    for (const auto& [uuid, thread] : m.threads) by_name[thread.name] = &thread;
    ASSERT_TRUE(by_name.count("zoned") && by_name.count("io-only"));
    const auto& zoned = by_name["zoned"]->slices;
    ASSERT_EQ(zoned.size(), 2u);
    EXPECT_EQ(zoned[0].name, "save");
    EXPECT_EQ(zoned[1].name, "write");
    EXPECT_EQ(zoned[1].depth, 1);
    EXPECT_LE(zoned[0].begin, zoned[1].begin);
    EXPECT_GE(zoned[0].end, zoned[1].end);
    EXPECT_EQ(zoned[1].args.at("resource"), data);
    EXPECT_EQ(zoned[1].args.at("result"), "5");
    EXPECT_EQ(zoned[1].args.at("fd"), std::to_string(fd));
    EXPECT_EQ(zoned[1].args.count("user"), 0u) << "the context is on the enclosing slice";
    const auto& io_only = by_name["io-only"]->slices;
    ASSERT_EQ(io_only.size(), 1u);
    EXPECT_EQ(io_only[0].name, "pread");
    EXPECT_EQ(io_only[0].depth, 0);
    EXPECT_EQ(io_only[0].args.at("result"), "5");

    std::string json;
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json);
    EXPECT_NE(json.find("\"name\":\"write\""), std::string::npos);
    EXPECT_NE(json.find("\"args\":{\"resource\":\"" + data + "\",\"result\":5,\"fd\":" + std::to_string(fd) + "}"),
              std::string::npos)
        << json;
}

TEST(ViewerConversion, AZoneSpanningAContextChangeKeepsItsOwnContext) {
    const std::vector<unsigned char> bytes = record("conversion_span", context_changes_inside_zones);
    std::string out;
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out);
    const loupe_test::perfetto::model m = loupe_test::perfetto::replay(out);
    ASSERT_TRUE(m.ok) << m.error;
    ASSERT_EQ(m.threads.size(), 5u);
    for (const auto& [uuid, thread] : m.threads) {
        ASSERT_EQ(thread.slices.size(), 100u);
        for (std::size_t i = 0; i < thread.slices.size(); i += 2) {
            const auto& outer = thread.slices[i];
            const auto& inner = thread.slices[i + 1];
            EXPECT_EQ(outer.name, "outer");
            EXPECT_EQ(outer.args.count("component"), 0u);
            EXPECT_EQ(outer.args.at("request"), "r" + std::to_string(i / 2));
            EXPECT_EQ(inner.name, "inner");
            EXPECT_EQ(inner.args.at("component"), "db");  // its context differs from the outer zone's
            EXPECT_EQ(inner.args.at("request"), outer.args.at("request"));
        }
    }
}

TEST(ViewerConversion, ABadEventFailsTheSameWayWhateverTheParallelism) {
    std::vector<unsigned char> bytes = record("conversion_bad", context_changes_inside_zones);
    // Corrupt an event tag inside the last EVENTS record (kind 0x05).
    std::size_t last_events = 0;
    for (std::size_t pos = 16; pos < bytes.size();) {
        const unsigned char kind = bytes[pos];
        std::size_t at = pos + 1;
        std::uint64_t length = 0;
        for (unsigned shift = 0;; shift += 7) {
            const unsigned char b = bytes[at++];
            length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
        }
        if (kind == 0x05) last_events = at;
        pos = at + length;
    }
    ASSERT_NE(last_events, 0u);
    std::size_t tag_at = last_events;
    while (bytes[tag_at] & 0x80) ++tag_at;  // the thread id is a varint (ids grow with the threads a process had)
    bytes[tag_at + 1] = 0x7e;  // the first event's tag
    std::string first_error;
    for (const unsigned workers : {1u, 3u}) {
        loupe::viewer::perfetto_options options;
        options.workers = workers;
        std::string out;
        try {
            loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out, options);
            ADD_FAILURE() << "expected loupe::trace_error";
        } catch (const loupe::trace_error& e) {
            EXPECT_NE(std::string(e.what()).find("event tag 126 is unknown"), std::string::npos) << e.what();
            if (first_error.empty()) first_error = e.what();
            EXPECT_EQ(e.what(), first_error);
        }
    }
    EXPECT_THROW(loupe::read_trace(bytes.data(), bytes.size()), loupe::trace_error);
}

TEST(ViewerConversion, ACutShortTraceConvertsAsFarAsItGoes) {
    const std::vector<unsigned char> bytes = record("conversion_cut", context_changes_inside_zones);
    loupe::decode_options partial;
    partial.accept_truncated = true;
    for (const std::size_t keep : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 5}) {
        const std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + static_cast<long>(keep));
        expect_same_conversions(cut, partial);
        std::string out;
        EXPECT_THROW(loupe::viewer::convert_to_perfetto(cut.data(), cut.size(), out), loupe::trace_error);
    }
}

// --- Metrics: a zone's deltas are arguments of its slice ---

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// One session recorded at once to a .loupe file and through the two viewer
// sinks (which convert their own in-memory encoding when the session stops).
struct metrics_recording {
    std::vector<unsigned char> bytes;  // the .loupe file
    std::string perfetto;              // perfetto_sink's file
    std::string json;                  // chrome_json_sink's file
};

// Three threads; per request a zone "request" that adds 5 to test.viewer_rows
// around a zone "query" that adds 5 and writes a byte (an I/O slice merged
// into the zones, which moves the zones' places in the thread's events).
metrics_recording record_with_metrics(const std::string& tag, std::vector<std::string> metrics) {
    const loupe::metric_id rows = loupe::metric("test.viewer_rows");
    const std::string path = loupe_test::temp_trace_path(tag);
    const std::string pftrace = path + ".pftrace", json = path + ".json", data = path + ".dat";
    const int fd = loupe::io::open(data.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    {
        loupe::session_config cfg;
        cfg.name = tag;
        cfg.overflow = loupe::overflow_policy::block;
        cfg.metrics = std::move(metrics);
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path),
                     std::make_shared<loupe::sinks::perfetto_sink>(pftrace),
                     std::make_shared<loupe::sinks::chrome_json_sink>(json)};
        auto session = loupe::start_session(cfg);
        std::vector<std::thread> threads;
        for (int t = 0; t < 3; ++t) {
            threads.emplace_back([&] {
                LOUPE_THREAD_NAME("metrics-worker");
                for (int i = 0; i < 20; ++i) {
                    LOUPE_ZONE("request");
                    loupe::metric_add(rows, 5);
                    {
                        LOUPE_ZONE("query");
                        loupe::metric_add(rows, 5);
                        loupe::io::write(fd, "x", 1);
                    }
                    LOUPE_INSTANT("done");
                }
            });
        }
        for (auto& t : threads) t.join();
    }
    loupe::io::close(fd);
    std::remove(data.c_str());
    metrics_recording r;
    r.bytes = loupe::read_file_bytes(path);
    r.perfetto = read_text(pftrace);
    r.json = read_text(json);
    for (const std::string& f : {path, pftrace, json}) std::remove(f.c_str());
    return r;
}

// Checks the slices of a Perfetto file: with metrics, "request" carries
// test.viewer_rows=10 (its own 5 and its query's), "query" 5, both a
// non-negative cpu_time when the machine measures it; I/O slices and, without
// metrics, every slice carry neither.
void expect_perfetto_metric_args(const std::string& pftrace, bool with_metrics, bool cpu_time_available) {
    const loupe_test::perfetto::model m = loupe_test::perfetto::replay(pftrace);
    ASSERT_TRUE(m.ok) << m.error;
    ASSERT_EQ(m.threads.size(), 3u);
    for (const auto& [uuid, thread] : m.threads) {
        ASSERT_EQ(thread.slices.size(), 60u);  // 20 × request, query, write
        for (const loupe_test::perfetto::slice& s : thread.slices) {
            if (!with_metrics || s.name == "write") {
                EXPECT_EQ(s.args.count("test.viewer_rows"), 0u) << s.name;
                EXPECT_EQ(s.args.count("cpu_time"), 0u) << s.name;
                continue;
            }
            ASSERT_TRUE(s.name == "request" || s.name == "query") << s.name;
            ASSERT_EQ(s.args.count("test.viewer_rows"), 1u) << s.name;
            EXPECT_EQ(s.args.at("test.viewer_rows"), s.name == "request" ? "10" : "5");
            if (cpu_time_available) {
                ASSERT_EQ(s.args.count("cpu_time"), 1u) << s.name;
                EXPECT_GE(std::stoll(s.args.at("cpu_time")), 0);
            } else {
                EXPECT_EQ(s.args.count("cpu_time"), 0u) << s.name;
            }
        }
    }
}

// The same for a Chrome JSON file.
void expect_json_metric_args(const std::string& text, bool with_metrics, bool cpu_time_available) {
    namespace js = loupe_test::json;
    js::value doc;
    ASSERT_EQ(js::parse(text, doc), "");
    std::size_t zones = 0;
    for (const js::value& e : doc["traceEvents"].items) {
        if (e["ph"].s != "X") continue;
        ++zones;
        const bool has_args = e.has("args");
        if (!with_metrics || e["name"].s == "write") {
            EXPECT_FALSE(has_args && e["args"].has("test.viewer_rows")) << e["name"].s;
            EXPECT_FALSE(has_args && e["args"].has("cpu_time")) << e["name"].s;
            continue;
        }
        ASSERT_TRUE(has_args) << e["name"].s;
        const js::value& args = e["args"];
        ASSERT_TRUE(args.has("test.viewer_rows")) << e["name"].s;
        EXPECT_EQ(args["test.viewer_rows"].kind, js::value::number);
        EXPECT_EQ(args["test.viewer_rows"].n, e["name"].s == "request" ? 10 : 5);
        EXPECT_EQ(args.has("cpu_time"), cpu_time_available) << e["name"].s;
        if (cpu_time_available) {
            EXPECT_GE(args["cpu_time"].n, 0);
        }
    }
    EXPECT_EQ(zones, 180u);
}

bool cpu_time_available(const loupe::trace& t) {
    const loupe::trace_metric* m = t.find_metric("cpu_time");
    return m && m->available;
}

TEST(ViewerConversion, ZonesShowTheirMetricDeltasAsArguments) {
    const metrics_recording r = record_with_metrics("conversion_metrics", {"test.viewer_rows", "cpu_time"});
    const loupe::trace model = loupe::read_trace(r.bytes.data(), r.bytes.size());
    ASSERT_NE(model.find_metric("test.viewer_rows"), nullptr);
    const bool cpu = cpu_time_available(model);
    // From the file (the two-pass conversion), sequential and parallel, and
    // from the in-memory model: the same bytes.
    expect_same_conversions(r.bytes);
    for (const unsigned workers : {1u, 2u}) {
        loupe::viewer::perfetto_options options;
        options.workers = workers;
        std::string pftrace;
        loupe::viewer::convert_to_perfetto(r.bytes.data(), r.bytes.size(), pftrace, options);
        expect_perfetto_metric_args(pftrace, true, cpu);
        std::string json;
        loupe::viewer::convert_to_chrome_json(r.bytes.data(), r.bytes.size(), json, {}, workers);
        expect_json_metric_args(json, true, cpu);
    }
    // From the live sinks.
    expect_perfetto_metric_args(r.perfetto, true, cpu);
    expect_json_metric_args(r.json, true, cpu);
    EXPECT_EQ(r.json, loupe::viewer::to_chrome_json(model));
}

TEST(ViewerConversion, ZonesOfASessionWithoutMetricsCarryNoMetricArguments) {
    const metrics_recording r = record_with_metrics("conversion_no_metrics", {});
    const loupe::trace model = loupe::read_trace(r.bytes.data(), r.bytes.size());
    EXPECT_TRUE(model.metrics.empty());
    expect_same_conversions(r.bytes);
    std::string pftrace, json;
    loupe::viewer::convert_to_perfetto(r.bytes.data(), r.bytes.size(), pftrace);
    loupe::viewer::convert_to_chrome_json(r.bytes.data(), r.bytes.size(), json);
    expect_perfetto_metric_args(pftrace, false, false);
    expect_json_metric_args(json, false, false);
    expect_perfetto_metric_args(r.perfetto, false, false);
    expect_json_metric_args(r.json, false, false);
}

// A one-thread trace whose zones carry the given deltas, encoded by hand
// (the metrics as METRIC records, the deltas as ZONE_METRICS).
struct crafted_metrics_zone {
    loupe::record_kind kind;
    std::uint64_t begin_ns, end_ns;
    std::vector<loupe::metric_value> deltas;
};
std::vector<unsigned char> crafted_metrics_trace(const std::vector<loupe::metric_info>& metrics,
                                                 const std::vector<crafted_metrics_zone>& zones) {
    static const loupe::site work{"work", "t.cpp", "f", 1, loupe::site_kind::zone};
    static const loupe::site tick{"tick", "t.cpp", "f", 2, loupe::site_kind::instant};
    std::vector<loupe_test::crafted_event> events;
    for (const crafted_metrics_zone& z : zones) {
        events.push_back({z.kind, z.kind == loupe::record_kind::zone ? &work : &tick, z.begin_ns, z.end_ns, 0, 0,
                          z.deltas});
    }
    return loupe_test::crafted_trace_bytes(events, metrics);
}

// Only the metrics the trace says were measured are shown (a delta of an
// unavailable one, which loupe does not write, is left out); a zone without
// deltas among zones with some gets none; negative deltas stay negative.
TEST(ViewerConversion, OnlyAvailableMetricsAreShownWithTheirSignedDeltas) {
    const std::vector<loupe::metric_info> metrics = {
        {9, "test.crafted", "rows", loupe::metric_source::push, true, ""},
        {3, "cycles", "", loupe::metric_source::pull, false, "no counter"}};
    const std::vector<unsigned char> bytes = crafted_metrics_trace(
        metrics, {{loupe::record_kind::zone, 2000, 3000, {{9, 7}, {3, 123}}},
                  {loupe::record_kind::zone, 3500, 3600, {}},
                  {loupe::record_kind::zone, 1500, 4000, {{9, -2}}}});
    expect_same_conversions(bytes);
    std::string pftrace;
    loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), pftrace);
    const loupe_test::perfetto::model m = loupe_test::perfetto::replay(pftrace);
    ASSERT_TRUE(m.ok) << m.error;
    ASSERT_EQ(m.threads.size(), 1u);
    const auto& slices = m.threads.begin()->second.slices;
    ASSERT_EQ(slices.size(), 3u);
    EXPECT_EQ(slices[0].args, (std::map<std::string, std::string>{{"test.crafted", "-2"}}));  // [1500, 4000]
    EXPECT_EQ(slices[1].args, (std::map<std::string, std::string>{{"test.crafted", "7"}}));   // [2000, 3000]
    EXPECT_TRUE(slices[2].args.empty());                                                       // [3500, 3600]

    std::string json;
    loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json);
    EXPECT_NE(json.find("\"ts\":2.000,\"dur\":1.000,\"args\":{\"test.crafted\":7}}"), std::string::npos) << json;
    EXPECT_NE(json.find("\"ts\":1.500,\"dur\":2.500,\"args\":{\"test.crafted\":-2}}"), std::string::npos) << json;
    EXPECT_NE(json.find("\"ts\":3.500,\"dur\":0.100}"), std::string::npos) << json;
    EXPECT_EQ(json.find("cycles"), std::string::npos) << json;
}

// ZONE_METRICS after an instant is refused by the conversion as by the reader.
TEST(ViewerConversion, ZoneMetricsThatDoNotFollowAZoneFailTheConversion) {
    const std::vector<loupe::metric_info> metrics = {{9, "test.crafted", "", loupe::metric_source::push, true, ""}};
    const std::vector<unsigned char> bytes =
        crafted_metrics_trace(metrics, {{loupe::record_kind::zone, 2000, 3000, {{9, 1}}},
                                        {loupe::record_kind::instant, 3500, 3500, {{9, 1}}}});
    std::string reader_error;
    try {
        loupe::read_trace(bytes.data(), bytes.size());
        ADD_FAILURE() << "expected loupe::trace_error from the reader";
    } catch (const loupe::trace_error& e) {
        reader_error = e.what();
    }
    EXPECT_NE(reader_error.find("does not follow a zone"), std::string::npos) << reader_error;
    for (const unsigned workers : {1u, 2u}) {
        loupe::viewer::perfetto_options options;
        options.workers = workers;
        std::string out;
        try {
            loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out, options);
            ADD_FAILURE() << "expected loupe::trace_error";
        } catch (const loupe::trace_error& e) {
            EXPECT_EQ(e.what(), reader_error);
        }
    }
}

}  // namespace
