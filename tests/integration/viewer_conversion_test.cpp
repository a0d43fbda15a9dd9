// Converting straight from .loupe bytes (one thread at a time, what `loupe
// convert` and the viewer sinks do) gives exactly what converting the
// in-memory model gives.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/reader.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

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

}  // namespace
