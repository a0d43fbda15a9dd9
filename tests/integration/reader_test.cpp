// The .loupe reader: what the file sink writes reads back exactly; truncated
// and corrupted inputs give a trace_error naming an offset inside the input,
// never a crash or an out-of-bounds read (CI runs this under ASan).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>  // program_invocation_short_name
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include "support/recording.hpp"
#include "support/trace_files.hpp"

using namespace loupe_test;

namespace {

class Reader : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = temp_trace_path(::testing::UnitTest::GetInstance()->current_test_info()->name());
    }
    void TearDown() override { std::remove(path_.c_str()); }
    std::string path_;
};

std::string site_name(const loupe::trace& t, const loupe::trace_event& e) {
    const loupe::trace_site* s = t.find_site(e.site_id);
    return s ? s->name : "<undefined>";
}

// Offsets of every record, from the decoder itself.
struct record_offsets : loupe::trace_visitor {
    std::vector<std::uint64_t> all;
    std::uint64_t end = 0;
    void on_session(std::uint64_t at, const loupe::trace_session_info&) override { all.push_back(at); }
    void on_string(std::uint64_t at, std::uint64_t, std::string_view) override { all.push_back(at); }
    void on_site(std::uint64_t at, const loupe::trace_site&) override { all.push_back(at); }
    void on_thread(std::uint64_t at, const loupe::trace_thread&) override { all.push_back(at); }
    void on_events_begin(std::uint64_t at, std::uint64_t) override { all.push_back(at); }
    void on_dropped(std::uint64_t at, const loupe::trace_drop&) override { all.push_back(at); }
    void on_end(std::uint64_t at, const loupe::trace_end_info&) override {
        all.push_back(at);
        end = at;
    }
};

std::uint64_t end_offset(const std::vector<unsigned char>& bytes) {
    record_offsets offsets;
    loupe::decode_trace(bytes.data(), bytes.size(), offsets);
    return offsets.end;
}

template <class F>
loupe::trace_error expect_trace_error(F&& f) {
    try {
        f();
    } catch (const loupe::trace_error& e) {
        return e;
    }
    ADD_FAILURE() << "expected loupe::trace_error";
    return loupe::trace_error(0, "none");
}

}  // namespace

TEST_F(Reader, FileHoldsExactlyWhatTheSessionDelivered) {
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    const auto before_wall = std::chrono::system_clock::now().time_since_epoch();
    const auto stats = write_small_trace(path_, memory);
    const loupe::trace t = loupe::read_trace_file(path_);

    EXPECT_TRUE(t.complete);
    EXPECT_EQ(t.session.name, "small");
    EXPECT_EQ(t.session.pid, static_cast<std::uint32_t>(::getpid()));
#if defined(__linux__) && defined(__GLIBC__)
    EXPECT_EQ(t.session.program, program_invocation_short_name);  // the PROCESS record
#endif
    EXPECT_EQ(t.session.version_major, 1);
    const auto anchor = std::chrono::nanoseconds(t.session.wall_anchor_ns);
    EXPECT_LE(std::chrono::abs(anchor - before_wall), std::chrono::seconds(5));
    EXPECT_GE(t.end.end_ns, t.session.start_ns);

    // 2 threads x (3 + 2 iterations) x (outer, inner, counter, instant).
    ASSERT_EQ(stats.delivered, 20u);
    ASSERT_EQ(t.events.size(), 20u);
    EXPECT_EQ(t.end.events_written, 20u);
    EXPECT_EQ(t.dropped_total(), 0u);

    // Event for event, the file equals what the memory sink of the same session got.
    std::vector<memory_event> expected;
    for (const auto& e : memory->events()) {
        if (e.kind == record_kind::zone || e.kind == record_kind::instant || e.kind == record_kind::counter) {
            expected.push_back(e);
        }
    }
    ASSERT_EQ(expected.size(), t.events.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto& m = expected[i];
        const auto& e = t.events[i];
        SCOPED_TRACE("event " + std::to_string(i));
        EXPECT_EQ(site_name(t, e), m.name);
        EXPECT_EQ(static_cast<int>(e.type), static_cast<int>(m.kind == record_kind::zone      ? loupe::event_type::zone
                                                             : m.kind == record_kind::instant ? loupe::event_type::instant
                                                                                              : loupe::event_type::counter));
        EXPECT_EQ(e.begin_ns, m.begin_ns);
        if (m.kind == record_kind::zone) {
            EXPECT_EQ(e.end_ns, m.end_ns);
        }
        if (m.kind == record_kind::counter) {
            EXPECT_EQ(e.value, m.value);
        }
        ASSERT_NE(t.find_thread(e.thread_id), nullptr);
        EXPECT_EQ(t.find_thread(e.thread_id)->name, m.thread_name);
        EXPECT_EQ(t.find_thread(e.thread_id)->os_tid, m.os_tid);
    }

    // Call-site metadata survives: the zone's file and function.
    for (const auto& s : t.sites) {
        EXPECT_NE(s.file.find("trace_files.hpp"), std::string::npos) << s.name;
        EXPECT_GT(s.line, 0u);
        EXPECT_FALSE(s.function.empty());
    }
}

TEST_F(Reader, EveryPrefixIsReportedAsCutShortAtAnOffsetInsideIt) {
    write_small_trace(path_);
    const std::vector<unsigned char> bytes = loupe::read_file_bytes(path_);
    const loupe::trace full = loupe::read_trace(bytes.data(), bytes.size());
    ASSERT_GT(bytes.size(), 100u);

    for (std::size_t n = 0; n < bytes.size(); ++n) {
        SCOPED_TRACE("prefix of " + std::to_string(n) + " bytes");
        // A copy of exactly n bytes, so ASan sees any read past the prefix.
        const std::vector<unsigned char> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        const auto e = expect_trace_error([&] { loupe::read_trace(prefix.data(), prefix.size()); });
        EXPECT_LE(e.offset(), n);
        EXPECT_TRUE(e.truncated()) << e.what();
        EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(e.offset())), std::string::npos);

        // Accepting truncation yields the whole records before the cut: a
        // prefix of the full event list.
        try {
            const loupe::trace partial = loupe::read_trace(prefix.data(), prefix.size(), {true});
            EXPECT_FALSE(partial.complete);
            ASSERT_LE(partial.events.size(), full.events.size());
            for (std::size_t i = 0; i < partial.events.size(); ++i) {
                EXPECT_EQ(partial.events[i].begin_ns, full.events[i].begin_ns);
            }
        } catch (const loupe::trace_error& cut) {
            // Only when not even the header and SESSION record are whole.
            EXPECT_LT(n, 16u + 40u) << cut.what();
        }
    }
}

TEST_F(Reader, RandomByteFlipsNeverCrashAndErrorsStayInsideTheInput) {
    write_small_trace(path_);
    const std::vector<unsigned char> bytes = loupe::read_file_bytes(path_);
    std::mt19937 rng(12345);
    int rejected = 0;
    for (int round = 0; round < 3000; ++round) {
        std::vector<unsigned char> damaged = bytes;
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < flips; ++f) {
            damaged[rng() % damaged.size()] = static_cast<unsigned char>(rng());
        }
        // Converting straight from the bytes (which validates events in its
        // second pass) accepts and rejects exactly what the reader does.
        std::string streamed;
        bool stream_rejected = false;
        try {
            loupe::viewer::convert_to_perfetto(damaged.data(), damaged.size(), streamed);
        } catch (const loupe::trace_error& e) {
            stream_rejected = true;
            EXPECT_LT(e.offset(), damaged.size() + 1) << e.what();
        }
        try {
            const loupe::trace t = loupe::read_trace(damaged.data(), damaged.size());
            // Accepted only if still self-consistent, and then convertible
            // (ASan checks the writers on whatever damage got through).
            EXPECT_EQ(t.end.events_written, t.events.size());
            EXPECT_FALSE(stream_rejected) << "round " << round;
            EXPECT_TRUE(streamed == loupe::viewer::to_perfetto(t)) << "round " << round;
            EXPECT_FALSE(loupe::viewer::to_chrome_json(t).empty());
        } catch (const loupe::trace_error& e) {
            ++rejected;
            EXPECT_TRUE(stream_rejected) << "round " << round << ": " << e.what();
            EXPECT_LT(e.offset(), damaged.size() + 1) << e.what();
        }
    }
    EXPECT_GT(rejected, 1000);  // most damage is detected
}

TEST_F(Reader, ErrorsNameWhatWasExpected) {
    write_small_trace(path_);
    const std::vector<unsigned char> good = loupe::read_file_bytes(path_);

    auto bad_magic = good;
    bad_magic[1] = 'X';
    auto e = expect_trace_error([&] { loupe::read_trace(bad_magic.data(), bad_magic.size()); });
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos);

    auto future_major = good;
    future_major[8] = 2;
    e = expect_trace_error([&] { loupe::read_trace(future_major.data(), future_major.size()); });
    EXPECT_EQ(e.offset(), 8u);
    EXPECT_NE(std::string(e.what()).find("version 2." + std::to_string(loupe::detail::format::version_minor) + " is not supported"), std::string::npos);

    auto trailing = good;
    trailing.push_back(0);
    e = expect_trace_error([&] { loupe::read_trace(trailing.data(), trailing.size()); });
    EXPECT_EQ(e.offset(), good.size());
    EXPECT_NE(std::string(e.what()).find("follow the END record"), std::string::npos);

    auto wrong_count = good;
    const std::uint64_t end_at = end_offset(good);
    wrong_count[end_at + 2] ^= 1;  // END events_written (kind, length, then the varint)
    e = expect_trace_error([&] { loupe::read_trace(wrong_count.data(), wrong_count.size()); });
    EXPECT_EQ(e.offset(), end_at + 2);
    EXPECT_NE(std::string(e.what()).find("events were written"), std::string::npos);
}

TEST_F(Reader, MissingFileNamesThePathAndTheReason) {
    try {
        loupe::read_trace_file(path_ + ".missing");
        FAIL() << "expected loupe::error";
    } catch (const loupe::error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot open '" + path_ + ".missing': No such file or directory");
    }
}

TEST_F(Reader, UnknownRecordKindsAreSkipped) {
    write_small_trace(path_);
    const std::vector<unsigned char> good = loupe::read_file_bytes(path_);
    std::vector<unsigned char> extended = good;
    const auto end_at = static_cast<std::ptrdiff_t>(end_offset(good));
    const unsigned char future_record[] = {0x40, 3, 'a', 'b', 'c'};  // kind 0x40, 3 payload bytes
    extended.insert(extended.begin() + end_at, std::begin(future_record), std::end(future_record));

    struct unknown_counter : loupe::trace_visitor {
        int unknown = 0;
        void on_unknown(std::uint64_t, std::uint8_t kind, std::uint64_t n) override {
            EXPECT_EQ(kind, 0x40);
            EXPECT_EQ(n, 3u);
            ++unknown;
        }
    } visitor;
    EXPECT_TRUE(loupe::decode_trace(extended.data(), extended.size(), visitor).complete);
    EXPECT_EQ(visitor.unknown, 1);
    EXPECT_EQ(loupe::read_trace(extended.data(), extended.size()).events.size(), 20u);
}

TEST_F(Reader, PathIsPartOfTheErrorOfABadFile) {
    write_small_trace(path_);
    const std::vector<unsigned char> good = loupe::read_file_bytes(path_);
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
        std::fwrite(good.data(), 1, good.size() / 2, f);
        std::fclose(f);
    }
    const auto e = expect_trace_error([&] { loupe::read_trace_file(path_); });
    EXPECT_EQ(std::string(e.what()).rfind(path_ + ": byte ", 0), 0u) << e.what();
}

// The reader checks what it is given before reading it: a directory is a
// loupe::error naming it, input that is not a trace fails at its header
// without being read whole (/dev/zero never ends).
TEST(ReaderInput, ADirectoryIsAnErrorNamingIt) {
    const std::string dir = LOUPE_TEST_BINARY_DIR;
    try {
        (void)loupe::read_trace_file(dir);
        FAIL() << "a directory was read";
    } catch (const loupe::error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot read '" + dir + "': is a directory");
    }
    EXPECT_THROW((void)loupe::read_file_bytes(dir), loupe::error);
}

TEST(ReaderInput, EndlessInputFailsAtItsHeader) {
    if (::access("/dev/zero", R_OK) != 0) GTEST_SKIP() << "no /dev/zero";
    try {
        (void)loupe::read_trace_bytes("/dev/zero");
        FAIL() << "/dev/zero was accepted";
    } catch (const loupe::trace_error& e) {
        EXPECT_EQ(e.offset(), 0u);
        EXPECT_EQ(std::string(e.what()),
                  "/dev/zero: byte 0: not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A");
    }
}
