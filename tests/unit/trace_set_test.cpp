// Trace sets (format/trace_set.hpp): several .loupe traces back to back,
// split by the record framing; a plain file is a set of one; bad input
// (a trace cut inside, garbage between or after traces) is an error naming
// the byte.
#include <gtest/gtest.h>

#include <loupe/format/mapped_file.hpp>
#include <loupe/format/trace_set.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "support/task_files.hpp"

namespace {

std::vector<unsigned char> process_bytes(const std::string& program, std::uint32_t pid, int zones) {
    loupe_test::process_file p(program, pid, "boot-" + program);
    for (int i = 0; i < zones; ++i) p.zone(1, "work", 2000 + 100 * static_cast<std::uint64_t>(i), 2050 + 100 * static_cast<std::uint64_t>(i));
    p.server(0, 7, 0, 0xa, 1500, 9000, "GET /");
    return p.finish(10'000);
}

std::vector<unsigned char> concat(const std::vector<std::vector<unsigned char>>& parts) {
    std::vector<unsigned char> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

// The error reading `bytes` as a set throws (empty when none).
struct caught {
    bool thrown = false;
    std::uint64_t offset = 0;
    bool truncated = false;
    std::string message;
};
caught error_of(const std::vector<unsigned char>& bytes, loupe::decode_options options = {}) {
    caught c;
    try {
        loupe::trace_set_options o;
        o.decode = options;
        (void)loupe::read_trace_set(bytes.data(), bytes.size(), o);
    } catch (const loupe::trace_error& e) {
        c.thrown = true;
        c.offset = e.offset();
        c.truncated = e.truncated();
        c.message = e.what();
    }
    return c;
}

// The byte where the END record of a single trace starts.
std::uint64_t end_record_at(const std::vector<unsigned char>& bytes) {
    struct finder : loupe::trace_visitor {
        std::uint64_t at = 0;
        void on_end(std::uint64_t offset, const loupe::trace_end_info&) override { at = offset; }
    } f;
    loupe::decode_trace(bytes.data(), bytes.size(), f);
    return f.at;
}

}  // namespace

TEST(TraceSet, SplitsTracesBackToBack) {
    const auto a = process_bytes("alpha", 11, 3), b = process_bytes("beta", 12, 5), c = process_bytes("gamma", 13, 1);
    const std::vector<unsigned char> set = concat({a, b, c});
    const std::vector<loupe::trace_segment> segments = loupe::split_trace_set(set.data(), set.size());
    ASSERT_EQ(segments.size(), 3u);
    EXPECT_EQ(segments[0].offset, 0u);
    EXPECT_EQ(segments[0].size, a.size());
    EXPECT_EQ(segments[1].offset, a.size());
    EXPECT_EQ(segments[1].size, b.size());
    EXPECT_EQ(segments[2].offset, a.size() + b.size());
    EXPECT_EQ(segments[2].size, c.size());
    for (const auto& s : segments) EXPECT_TRUE(s.ended);

    const std::vector<loupe::trace> traces = loupe::read_trace_set(set.data(), set.size());
    ASSERT_EQ(traces.size(), 3u);
    EXPECT_EQ(traces[0].session.program, "alpha");
    EXPECT_EQ(traces[1].session.program, "beta");
    EXPECT_EQ(traces[2].session.program, "gamma");
    EXPECT_EQ(traces[1].session.pid, 12u);
    EXPECT_EQ(traces[1].session.clock_domain, "boot-beta");
    EXPECT_EQ(traces[1].events.size(), 5u);
    ASSERT_EQ(traces[1].task_points.size(), 2u);
    EXPECT_EQ(traces[1].task_points[0].kind, loupe::task_point_kind::request_in);
    EXPECT_EQ(traces[1].task_points[0].time_ns, 1500u);
    for (const loupe::trace& t : traces) EXPECT_TRUE(t.complete);
}

TEST(TraceSet, APlainTraceIsASetOfOne) {
    const auto a = process_bytes("alpha", 11, 3);
    const std::vector<loupe::trace> traces = loupe::read_trace_set(a.data(), a.size());
    ASSERT_EQ(traces.size(), 1u);
    const loupe::trace alone = loupe::read_trace(a.data(), a.size());
    EXPECT_EQ(traces[0].events.size(), alone.events.size());
    EXPECT_EQ(traces[0].session.program, alone.session.program);
}

TEST(TraceSet, WithoutEventsEveryEventIsCheckedAndNoneKept) {
    const auto set = concat({process_bytes("alpha", 11, 3), process_bytes("beta", 12, 4)});
    loupe::trace_set_options o;
    o.events = false;
    const std::vector<loupe::trace> traces = loupe::read_trace_set(set.data(), set.size(), o);
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_TRUE(traces[1].events.empty());
    EXPECT_EQ(traces[1].end.events_written, 4u);
    EXPECT_EQ(traces[1].task_points.size(), 2u);
    EXPECT_EQ(traces[1].threads.size(), 1u);
    // A bad event is still an error: the second trace's first event tag
    // (its EVENTS record: kind, a one-byte length, the thread, then the tag).
    std::vector<unsigned char> bad = set;
    const std::vector<unsigned char> beta = process_bytes("beta", 12, 4);
    struct finder : loupe::trace_visitor {
        std::uint64_t at = 0;
        void on_events_begin(std::uint64_t offset, std::uint64_t) override {
            if (at == 0) at = offset;
        }
    } events;
    loupe::decode_trace(beta.data(), beta.size(), events);
    ASSERT_NE(events.at, 0u);
    const std::size_t tag_at = set.size() - beta.size() + static_cast<std::size_t>(events.at) + 3;
    ASSERT_EQ(bad[tag_at], 0x01);  // a zone
    bad[tag_at] = 0x09;
    EXPECT_THROW(loupe::read_trace_set(bad.data(), bad.size(), o), loupe::trace_error);
}

TEST(TraceSet, ErrorsInALaterTraceNameTheByteOfTheSet) {
    const auto a = process_bytes("alpha", 11, 3), b = process_bytes("beta", 12, 5);
    std::vector<unsigned char> set = concat({a, b});
    // Corrupt the second trace's SESSION clock source (header 16 + kind +
    // length + 8 + 8 + pid varint).
    const std::size_t clock_at = a.size() + 16 + 2 + 16 + 1;
    set[clock_at] = 7;
    const caught c = error_of(set);
    ASSERT_TRUE(c.thrown);
    EXPECT_EQ(c.offset, clock_at);
    EXPECT_NE(c.message.find("byte " + std::to_string(clock_at) + ": trace 2 of 2 (from byte " +
                             std::to_string(a.size()) + "): SESSION clock_source 7"),
              std::string::npos)
        << c.message;
}

TEST(TraceSet, CutInsideALaterTraceIsAnErrorNamingTheByte) {
    const auto a = process_bytes("alpha", 11, 3), b = process_bytes("beta", 12, 5);
    const std::vector<unsigned char> whole = concat({a, b});
    for (const std::size_t cut : {a.size() + 5, a.size() + 20, whole.size() - 3}) {
        const std::vector<unsigned char> set(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
        const caught c = error_of(set);
        ASSERT_TRUE(c.thrown) << cut;
        EXPECT_TRUE(c.truncated) << cut << c.message;
        EXPECT_GE(c.offset, a.size()) << cut << c.message;
        EXPECT_LE(c.offset, cut) << c.message;
        EXPECT_NE(c.message.find("cut short"), std::string::npos) << c.message;
    }
    // Accepted on request: the first trace whole, the second up to its last
    // whole record.
    const std::vector<unsigned char> set(whole.begin(), whole.end() - 3);
    loupe::decode_options partial;
    partial.accept_truncated = true;
    const std::vector<loupe::trace_segment> segments = loupe::split_trace_set(set.data(), set.size(), partial);
    ASSERT_EQ(segments.size(), 2u);
    EXPECT_FALSE(segments[1].ended);
    EXPECT_LT(segments[1].offset + segments[1].size, set.size());  // the cut record is not part of it
    loupe::trace_set_options o;
    o.decode = partial;
    const std::vector<loupe::trace> traces = loupe::read_trace_set(set.data(), set.size(), o);
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_TRUE(traces[0].complete);
    EXPECT_FALSE(traces[1].complete);
}

TEST(TraceSet, GarbageBetweenOrAfterTracesIsAnErrorNamingTheByte) {
    const auto a = process_bytes("alpha", 11, 3), b = process_bytes("beta", 12, 5);
    const std::vector<unsigned char> junk = {'j', 'u', 'n', 'k'};
    const caught between = error_of(concat({a, junk, b}));
    ASSERT_TRUE(between.thrown);
    EXPECT_EQ(between.offset, a.size());
    EXPECT_FALSE(between.truncated);
    EXPECT_NE(between.message.find("byte " + std::to_string(a.size()) + ": "), std::string::npos) << between.message;
    EXPECT_NE(between.message.find("does not start a trace: 4 bytes before the next trace (at byte " +
                                   std::to_string(a.size() + 4) + ")"),
              std::string::npos)
        << between.message;
    const caught after = error_of(concat({a, b, junk}));
    ASSERT_TRUE(after.thrown);
    EXPECT_EQ(after.offset, a.size() + b.size());
    // A few bytes of the magic at the end: a trace cut inside its header.
    const std::vector<unsigned char> magic_start = {0x89, 'L', 'O'};
    const caught cut_magic = error_of(concat({a, magic_start}));
    ASSERT_TRUE(cut_magic.thrown);
    EXPECT_TRUE(cut_magic.truncated);
    EXPECT_EQ(cut_magic.offset, a.size() + 3);
    // Nothing at all, and not a trace at all.
    EXPECT_TRUE(error_of({}).thrown);
    const caught text = error_of(junk);
    ASSERT_TRUE(text.thrown);
    EXPECT_EQ(text.offset, 0u);
    EXPECT_NE(text.message.find("not a .loupe trace"), std::string::npos);
}

TEST(TraceSet, ATraceWithoutEndFollowedByAnother) {
    // The first trace lost its END (its writer died): the next one's magic
    // at a record boundary ends it. An error, or with accept_truncated a
    // cut-short trace followed by a whole one.
    const auto a = process_bytes("alpha", 11, 3), b = process_bytes("beta", 12, 5);
    const std::uint64_t end_at = end_record_at(a);
    std::vector<unsigned char> set(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(end_at));
    set.insert(set.end(), b.begin(), b.end());
    const caught c = error_of(set);
    ASSERT_TRUE(c.thrown);
    EXPECT_EQ(c.offset, end_at);
    EXPECT_NE(c.message.find("no END record"), std::string::npos) << c.message;
    loupe::trace_set_options o;
    o.decode.accept_truncated = true;
    const std::vector<loupe::trace> traces = loupe::read_trace_set(set.data(), set.size(), o);
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_FALSE(traces[0].complete);
    EXPECT_EQ(traces[0].events.size(), 3u);
    EXPECT_TRUE(traces[1].complete);
    EXPECT_EQ(traces[1].session.program, "beta");
}

TEST(TraceSet, FileErrorsNameThePath) {
    const std::string path = std::string(LOUPE_TEST_BINARY_DIR) + "/trace_set_test_bad.loupe";
    const auto a = process_bytes("alpha", 11, 3);
    std::vector<unsigned char> set = concat({a, {'x'}});
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(set.data(), 1, set.size(), f);
    std::fclose(f);
    try {
        (void)loupe::read_trace_set_file(path);
        ADD_FAILURE() << "no error";
    } catch (const loupe::trace_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": byte " + std::to_string(a.size()) + ": ", 0), 0u) << e.what();
    }
    std::remove(path.c_str());
}

TEST(TraceSet, ReadersTellWhatTheyReadAndAMappingCanDropIt) {
    // split_trace_set, count_records and decode_trace report the bytes they
    // read (read_progress): ranges one after the other, from the start to
    // where they stopped, a step at least between tells. A mapped file
    // whose pages were dropped as told reads the same bytes again.
    const auto a = process_bytes("alpha", 11, 600'000), b = process_bytes("beta", 12, 5);
    ASSERT_GT(a.size(), 2 * loupe::read_progress_step);
    const std::vector<unsigned char> set = concat({a, b});
    std::vector<std::pair<std::size_t, std::size_t>> told;
    const loupe::read_progress tell = [&](std::size_t begin, std::size_t end) { told.emplace_back(begin, end); };
    const auto expect_all_told = [&](std::size_t size, const char* reader) {
        ASSERT_GE(told.size(), 2u) << reader;
        EXPECT_EQ(told.front().first, 0u) << reader;
        EXPECT_EQ(told.back().second, size) << reader;
        for (std::size_t k = 0; k < told.size(); ++k) {
            EXPECT_LT(told[k].first, told[k].second) << reader;
            if (k > 0) {
                EXPECT_EQ(told[k].first, told[k - 1].second) << reader;
            }
            if (k + 1 < told.size()) {
                EXPECT_GE(told[k].second - told[k].first, loupe::read_progress_step) << reader;
            }
        }
        told.clear();
    };
    const std::vector<loupe::trace_segment> segments = loupe::split_trace_set(set.data(), set.size(), {}, tell);
    ASSERT_EQ(segments.size(), 2u);
    expect_all_told(set.size(), "split_trace_set");
    EXPECT_EQ(loupe::count_records(a.data(), a.size(), loupe::detail::format::rec_events, tell),
              loupe::count_records(a.data(), a.size(), loupe::detail::format::rec_events));
    expect_all_told(a.size(), "count_records");
    loupe::trace_visitor nothing;
    EXPECT_TRUE(loupe::decode_trace(a.data(), a.size(), nothing, {}, tell).complete);
    expect_all_told(a.size(), "decode_trace");

    const std::string path = std::string(LOUPE_TEST_BINARY_DIR) + "/trace_set_test_released.loupe";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(set.data(), 1, set.size(), f);
    std::fclose(f);
    {
        loupe::detail::mapped_file m(path, loupe::detail::mapped_file::use::sequential);
        const auto release = [&m](std::size_t begin, std::size_t end) { m.release(begin, end); };
        ASSERT_EQ(loupe::split_trace_set(m.data(), m.size(), {}, release).size(), 2u);
        EXPECT_TRUE(loupe::decode_trace(m.data(), a.size(), nothing, {}, release).complete);
        ASSERT_EQ(m.size(), set.size());
        EXPECT_EQ(std::memcmp(m.data(), set.data(), set.size()), 0);
    }
    std::remove(path.c_str());
}
