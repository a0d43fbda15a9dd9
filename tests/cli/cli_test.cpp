// The `loupe` tool, run as a user would: exit codes, one-line errors, and
// output that holds what the trace holds.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <loupe/format/encoder.hpp>
#include <loupe/io.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/otlp.hpp>
#include <loupe/viewer/perfetto.hpp>

#include "support/cli_process.hpp"
#include "support/json_parser.hpp"
#include "support/trace_files.hpp"

using namespace loupe_test;

namespace {

// The whitespace-separated fields of a line.
std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string field; in >> field;) out.push_back(field);
    return out;
}

// The fields of the lines of `text` that end with `last`.
std::vector<std::vector<std::string>> rows_ending(const std::string& text, const std::string& last) {
    std::vector<std::vector<std::string>> out;
    for (const std::string& line : lines(text)) {
        std::vector<std::string> f = fields(line);
        if (!f.empty() && f.back() == last) out.push_back(std::move(f));
    }
    return out;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
    return n;
}

// Writes hand-built records to a .loupe file through the encoder, with no
// session around them (what file_sink writes, without its lifecycle).
class trace_file_writer {
public:
    explicit trace_file_writer(std::string path) : path_(std::move(path)) {}
    void write(const loupe::record& r) { encoder_.encode(r); }
    void close() {
        encoder_.close_batch();
        const std::vector<unsigned char>& bytes = encoder_.bytes();
        std::FILE* f = std::fopen(path_.c_str(), "wb");
        ASSERT_NE(f, nullptr) << path_;
        EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size()) << path_;
        std::fclose(f);
    }

private:
    std::string path_;
    loupe::detail::trace_encoder encoder_;
};

// The hint a usage error of `args` (which start with the command) ends
// with: the command's help, or the global help for a missing or unknown one.
std::string hint_for(const std::string& args) {
    const std::vector<std::string> words = fields(args);
    for (const char* command : {"dump", "stats", "report", "convert"}) {
        if (!words.empty() && words[0] == command) return "try 'loupe " + words[0] + " --help'";
    }
    return "try 'loupe --help'";
}

// A usage error as a user sees it: exit code 2, nothing on stdout, and two
// lines on stderr: what was wrong (starting with `message`) and the hint.
void expect_usage_error(const std::string& args, const std::string& message) {
    const run_result r = run_loupe(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    const std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), 2u) << args << "\n" << r.err;
    EXPECT_EQ(err[0].rfind("loupe: " + message, 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(err[1], hint_for(args)) << args;
}

class Cli : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = temp_trace_path(::testing::UnitTest::GetInstance()->current_test_info()->name());
        write_small_trace(path_);
    }
    void TearDown() override { std::remove(path_.c_str()); }
    std::string path_;
};

}  // namespace

TEST_F(Cli, DumpPrintsEveryRecordInFileOrder) {
    const run_result r = run_loupe("dump '" + path_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const auto all = lines(r.out);
    ASSERT_GE(all.size(), 3u);
    EXPECT_NE(all[0].find("HEADER"), std::string::npos);
    EXPECT_NE(all[1].find("SESSION"), std::string::npos);
    EXPECT_NE(all[1].find("name \"small\""), std::string::npos);
    EXPECT_NE(all.back().find("END"), std::string::npos);
    EXPECT_NE(all.back().find("written 20 dropped 0"), std::string::npos);
    EXPECT_EQ(count_of(r.out, "  zone "), 10u);
    EXPECT_EQ(count_of(r.out, "  instant "), 5u);
    EXPECT_EQ(count_of(r.out, "  counter "), 5u);
    EXPECT_NE(r.out.find("THREAD"), std::string::npos);
    EXPECT_NE(r.out.find("name \"alpha\""), std::string::npos);
}

TEST_F(Cli, DumpJsonIsOneObjectPerLine) {
    const run_result r = run_loupe("dump '" + path_ + "' --json");
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& line : lines(r.out)) {
        ASSERT_FALSE(line.empty());
        EXPECT_EQ(line.front(), '{') << line;
        EXPECT_EQ(line.back(), '}') << line;
        EXPECT_NE(line.find("\"record\":"), std::string::npos) << line;
    }
    EXPECT_EQ(count_of(r.out, "\"record\":\"zone\""), 10u);
    EXPECT_EQ(count_of(r.out, "\"record\":\"counter\""), 5u);
    EXPECT_NE(r.out.find("\"value\":0.5"), std::string::npos);  // the "depth" counter at i = 1
    EXPECT_NE(r.out.find("\"record\":\"end\",\"events_written\":20"), std::string::npos);
}

TEST_F(Cli, StatsGivesEachZoneOverallAndPerThread) {
    const run_result r = run_loupe("stats '" + path_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("session \"small\": 20 events, 0 dropped"), std::string::npos) << r.out;
    for (const char* column : {"count", "total", "mean", "min", "p50", "p99", "max"}) {
        EXPECT_NE(lines(r.out)[2].find(column), std::string::npos) << column;
    }
    bool outer_all = false, inner_alpha = false, inner_beta = false;
    std::string current;
    for (const auto& line : lines(r.out)) {
        std::istringstream fields(line);
        std::string first, second, third;
        fields >> first >> second >> third;
        if (first == "outer" || first == "inner") {
            current = first;
            if (first == "outer" && second == "all") outer_all = third == "5";
        } else if (current == "inner" && first == "alpha") {
            inner_alpha = second == "3";
        } else if (current == "inner" && first == "beta") {
            inner_beta = second == "2";
        }
    }
    EXPECT_TRUE(outer_all) << r.out;
    EXPECT_TRUE(inner_alpha) << r.out;
    EXPECT_TRUE(inner_beta) << r.out;
}

TEST_F(Cli, StatsJson) {
    const run_result r = run_loupe("stats --json '" + path_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("{\"session\":\"small\",\"group_by\":\"thread\",\"complete\":true", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("{\"name\":\"outer\""), std::string::npos);
    EXPECT_NE(r.out.find("{\"label\":\"beta\",\"stats\":{\"count\":2,"), std::string::npos) << r.out;
}

TEST_F(Cli, StatsByUserGroupsByContextAndEscapesInvalidUtf8) {
    const run_result r = run_loupe("stats '" + path_ + "' --by user");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(lines(r.out)[2].find(" user "), std::string::npos) << r.out;
    bool ann = false, beta = false;
    for (const auto& line : lines(r.out)) {
        std::istringstream fields(line);
        std::string first, second;
        fields >> first >> second;
        ann = ann || (first == "ann" && second == "3");
        beta = beta || (first == "b\\xff" && second == "2");
    }
    EXPECT_TRUE(ann) << r.out;
    EXPECT_TRUE(beta) << r.out;
    EXPECT_EQ(r.out.find('\xff'), std::string::npos);  // never printed raw

    const run_result dump = run_loupe("dump --json '" + path_ + "'");
    EXPECT_NE(dump.out.find("\"record\":\"context\""), std::string::npos);
    EXPECT_NE(dump.out.find("\"user\":\"b\\\\xff\""), std::string::npos) << dump.out;
    EXPECT_EQ(dump.out.find('\xff'), std::string::npos);

    const run_result bad = run_loupe("stats '" + path_ + "' --by nobody");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--by 'nobody'"), std::string::npos) << bad.err;
}

TEST_F(Cli, MissingFileIsOneLineAndExitCodeOne) {
    const run_result r = run_loupe("stats '" + path_ + ".nope'");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: cannot open '" + path_ + ".nope': No such file or directory\n");
    EXPECT_TRUE(r.out.empty());
}

// A trace cut short (the process died): every command reads it up to its
// last whole record without being asked, and says on stderr how much was
// lost; --strict refuses it, naming the byte.
TEST_F(Cli, CutShortFileIsReadUpToItsLastWholeRecordAndSaysHowMuchWasLost) {
    const std::vector<unsigned char> good = loupe::read_file_bytes(path_);
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
        std::fwrite(good.data(), 1, good.size() - 3, f);
        std::fclose(f);
    }
    const std::string cut = std::to_string(good.size() - 3);
    for (const char* command : {"dump", "stats", "report --io", "report --flat"}) {
        const run_result r = run_loupe(std::string(command) + " '" + path_ + "'");
        EXPECT_EQ(r.status, 0) << command << ": " << r.err;
        EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
        EXPECT_EQ(r.err.rfind("loupe: " + path_ + ": trace cut short (no END record): read up to its last whole record, byte ", 0), 0u)
            << r.err;
        EXPECT_NE(r.err.find(" of " + cut + " ("), std::string::npos) << r.err;
        EXPECT_FALSE(r.out.empty()) << command;
    }
    const run_result stats = run_loupe("stats '" + path_ + "'");
    EXPECT_NE(stats.out.find("(trace cut short)"), std::string::npos) << stats.out;
    for (const char* command : {"dump", "stats"}) {
        const run_result strict = run_loupe(std::string(command) + " --strict '" + path_ + "'");
        EXPECT_EQ(strict.status, 1) << command;
        EXPECT_EQ(count_of(strict.err, "\n"), 1u) << strict.err;
        EXPECT_EQ(strict.err.rfind("loupe: " + path_ + ": byte ", 0), 0u) << strict.err;
        EXPECT_NE(strict.err.find("cut short"), std::string::npos) << strict.err;
    }
    const run_result partial = run_loupe("stats --partial '" + path_ + "'");  // the default, still accepted
    EXPECT_EQ(partial.status, 0) << partial.err;
    const run_result both = run_loupe("stats --partial --strict '" + path_ + "'");
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("contradict"), std::string::npos) << both.err;
}

TEST_F(Cli, NotATraceIsRejected) {
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
        std::fputs("hello, world\n", f);
        std::fclose(f);
    }
    const run_result r = run_loupe("dump '" + path_ + "'");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: " + path_ + ": byte 0: not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A\n");
}

// A directory given as FILE is one line naming it, for every command
// (issue: ftell on a directory gave LONG_MAX and the reader allocated it).
TEST_F(Cli, ADirectoryAsFileIsOneLineSayingSo) {
    const std::string dir = LOUPE_TEST_BINARY_DIR;
    for (const std::string command : {"dump", "stats", "report --io", "report --tree", "convert --to perfetto -o /dev/null"}) {
        const run_result r = run_loupe(command + " '" + dir + "'");
        EXPECT_EQ(r.status, 1) << command;
        EXPECT_EQ(r.err, "loupe: cannot read '" + dir + "': is a directory\n") << command;
    }
}

// Input that is not a trace is rejected at its header, before it is read
// whole: /dev/zero never ends, and would be read until memory runs out.
TEST_F(Cli, EndlessInputIsRejectedAtItsHeader) {
    if (::access("/dev/zero", R_OK) != 0) GTEST_SKIP() << "no /dev/zero";
    for (const std::string command : {"dump", "stats", "report --io", "convert --to perfetto -o /dev/null"}) {
        const run_result r = run_loupe(command + " /dev/zero");
        EXPECT_EQ(r.status, 1) << command;
        EXPECT_EQ(r.err, "loupe: /dev/zero: byte 0: not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D "
                         "0A\n")
            << command;
    }
}

// Output that cannot be written (a full disk) fails with one line and a
// nonzero exit instead of exit 0 with the output lost.
TEST_F(Cli, OutputThatCannotBeWrittenFails) {
    if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
    const std::string err = temp_trace_path("cli_full_stderr") + ".txt";
    for (const std::string command : {"dump", "dump --json", "stats", "stats --json", "report --io", "report --tree"}) {
        const std::string line = std::string("'") + LOUPE_CLI_PATH + "' " + command + " '" + path_ + "' >/dev/full 2>'" +
                                 err + "'";
        const int raw = std::system(line.c_str());
        EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 1) << command;
        EXPECT_EQ(slurp(err), "loupe: cannot write output: No space left on device\n") << command;
    }
    std::remove(err.c_str());
}

TEST_F(Cli, ConvertWritesWhatTheLibraryWrites) {
    const loupe::trace t = loupe::read_trace_file(path_);
    const std::string pftrace = path_ + ".pftrace";
    const run_result p = run_loupe("convert '" + path_ + "' --to perfetto -o '" + pftrace + "'");
    EXPECT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(slurp(pftrace), loupe::viewer::to_perfetto(t));
    const run_result plain = run_loupe("convert '" + path_ + "' --to perfetto --uncompressed -o '" + pftrace + "'");
    EXPECT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(slurp(pftrace), loupe::viewer::to_perfetto(t, {false}));
    const std::string json = path_ + ".json";
    const run_result j = run_loupe("convert -o '" + json + "' --to chrome-json '" + path_ + "'");
    EXPECT_EQ(j.status, 0) << j.err;
    EXPECT_EQ(slurp(json), loupe::viewer::to_chrome_json(t));
    std::remove(pftrace.c_str());
    std::remove(json.c_str());
}

namespace {

// A size as convert's summary gives it: "812 B", "3.4 KiB".
std::string size_text(std::size_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    return buf;
}

}  // namespace

// One line on stderr: how many events went to which file, in which format, and its size.
TEST_F(Cli, ConvertSaysWhatItWrote) {
    const std::string pftrace = path_ + ".pftrace";
    const run_result p = run_loupe("convert '" + path_ + "' --to perfetto -o '" + pftrace + "'");
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_TRUE(p.out.empty()) << p.out;
    EXPECT_EQ(p.err,
              "loupe: wrote 20 events to '" + pftrace + "' (perfetto, " + size_text(slurp(pftrace).size()) + ")\n");
    const std::string json = path_ + ".json";
    const run_result j = run_loupe("convert '" + path_ + "' --to chrome-json -o '" + json + "'");
    ASSERT_EQ(j.status, 0) << j.err;
    EXPECT_EQ(j.err, "loupe: wrote 20 events to '" + json + "' (chrome-json, " + size_text(slurp(json).size()) + ")\n");
    std::remove(pftrace.c_str());
    std::remove(json.c_str());
}

// OTLP: the requests loupe::viewer::to_otlp makes, and a summary in spans
// and batches; a batch limit below one request is refused by name.
TEST_F(Cli, ConvertToOtlpWritesTheRequestsAndCountsSpansAndBatches) {
    const std::string pb = path_ + ".pb";
    const run_result r = run_loupe("convert '" + path_ + "' --to otlp -o '" + pb + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    loupe::viewer::otlp_result expected_result;
    const std::string expected = loupe::viewer::to_otlp(loupe::read_trace_file(path_), {}, &expected_result);
    EXPECT_EQ(slurp(pb), expected);
    EXPECT_EQ(r.err, "loupe: wrote " + std::to_string(expected_result.spans) + " spans in 1 batch to '" + pb +
                         "' (otlp, " + size_text(expected.size()) + ")\n");
    const run_result small = run_loupe("convert '" + path_ + "' --to otlp --batch-bytes 12 -o '" + pb + "'");
    EXPECT_EQ(small.status, 2);
    EXPECT_NE(small.err.find("--batch-bytes '12' (argument 6)"), std::string::npos) << small.err;
    std::remove(pb.c_str());
}

// -o -: the converted trace alone on stdout, the summary on stderr.
TEST_F(Cli, ConvertToStdoutKeepsTheSummaryOnStderr) {
    const std::string expected = loupe::viewer::to_chrome_json(loupe::read_trace_file(path_));
    const run_result r = run_loupe("convert '" + path_ + "' --to chrome-json -o -");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, expected);
    EXPECT_EQ(r.err, "loupe: wrote 20 events to stdout (chrome-json, " + size_text(expected.size()) + ")\n");
}

TEST_F(Cli, ConvertOfAnUnwritableOutputNamesIt) {
    const run_result r = run_loupe("convert '" + path_ + "' --to perfetto -o /nonexistent-dir/x.pftrace");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: cannot open '/nonexistent-dir/x.pftrace' for writing: No such file or directory\n");
}

// A trace with I/O: one file written by thread "writer" and read by "reader".
TEST(CliIo, ReportIoByFileThreadAndJsonAndDumpShowsTheRecords) {
    const std::string trace_path = temp_trace_path("cli_io");
    const std::string data = trace_path + ".dat";
    const int fd = loupe::io::open(data.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);  // before the session
    ASSERT_GE(fd, 0);
    loupe::session_config cfg;
    cfg.name = "cli-io";
    cfg.kinds = loupe::kinds::io;
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(trace_path)};
    auto session = loupe::start_session(cfg);
    std::thread writer([&] {
        loupe::set_thread_name("writer");
        for (int i = 0; i < 3; ++i) loupe::io::pwrite(fd, "abcd", 4, i * 4);
    });
    writer.join();
    std::thread reader([&] {
        loupe::set_thread_name("reader");
        char buf[12];
        loupe::io::pread(fd, buf, sizeof buf, 0);
    });
    reader.join();
    session.stop();
    loupe::io::close(fd);
    std::remove(data.c_str());

    const run_result by_file = run_loupe("report '" + trace_path + "' --io");
    EXPECT_EQ(by_file.status, 0) << by_file.err;
    EXPECT_NE(by_file.out.find("session \"cli-io\": 4 I/O operations"), std::string::npos) << by_file.out;
    bool file_row = false;
    for (const std::string& line : lines(by_file.out)) {
        if (line.rfind(data, 0) == 0) {
            file_row = true;
            EXPECT_NE(line.find(" 4 "), std::string::npos) << line;        // ops
            EXPECT_NE(line.find("12 B"), std::string::npos) << line;       // in and out
        }
    }
    EXPECT_TRUE(file_row) << by_file.out;

    const run_result by_thread = run_loupe("report --io --by thread '" + trace_path + "'");
    EXPECT_EQ(by_thread.status, 0);
    EXPECT_NE(by_thread.out.find("writer"), std::string::npos);
    EXPECT_NE(by_thread.out.find("reader"), std::string::npos);

    const run_result json = run_loupe("report --io --json '" + trace_path + "'");
    EXPECT_EQ(json.status, 0);
    EXPECT_NE(json.out.find("\"bytes_in\":12,\"bytes_out\":12"), std::string::npos) << json.out;

    const run_result dump = run_loupe("dump '" + trace_path + "'");
    EXPECT_EQ(dump.status, 0);
    EXPECT_EQ(count_of(dump.out, "IO_RESOURCE"), 1u) << "a resource is written once per trace";
    EXPECT_EQ(count_of(dump.out, " IO "), 4u);
    EXPECT_NE(dump.out.find("pwrite"), std::string::npos);
    std::remove(trace_path.c_str());
}

// The patent's example (A adds 2 and calls B, which adds 8) on thread
// "worker", and 5 added by the main thread outside any zone.
class CliMetrics : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = temp_trace_path(::testing::UnitTest::GetInstance()->current_test_info()->name());
        const loupe::metric_id ticks = loupe::metric("ticks", "ticks");
        loupe::session_config cfg;
        cfg.name = "cli-metrics";
        cfg.metrics = {"ticks"};
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path_)};
        auto session = loupe::start_session(cfg);
        std::thread worker([&] {
            loupe::set_thread_name("worker");
            LOUPE_ZONE("A");
            loupe::metric_add(ticks, 2);
            LOUPE_ZONE("B");
            loupe::metric_add(ticks, 8);
        });
        worker.join();
        loupe::metric_add(ticks, 5);
        session.stop();
    }
    void TearDown() override { std::remove(path_.c_str()); }
    std::string path_;
};

TEST_F(CliMetrics, TreeShowsLevelRecursionLevelCallsBaseAndCum) {
    const run_result r = run_loupe("report '" + path_ + "' --tree --metric ticks");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("session \"cli-metrics\": call tree of ticks (ticks), push metric"), std::string::npos)
        << r.out;
    EXPECT_EQ(fields(lines(r.out)[2]), (std::vector<std::string>{"Level", "RL", "Calls", "Base", "Cum", "Name"}));
    EXPECT_EQ(rows_ending(r.out, "A"), (std::vector<std::vector<std::string>>{{"1", "1", "1", "2", "10", "A"}}))
        << r.out;
    EXPECT_EQ(rows_ending(r.out, "B"), (std::vector<std::vector<std::string>>{{"2", "1", "1", "8", "8", "B"}}))
        << r.out;
    EXPECT_NE(r.out.find("thread worker (tid "), std::string::npos) << r.out;

    const run_result wall = run_loupe("report --tree '" + path_ + "'");
    ASSERT_EQ(wall.status, 0) << wall.err;
    EXPECT_NE(wall.out.find("call tree of wall_time (ns), wall metric"), std::string::npos) << wall.out;
    ASSERT_EQ(rows_ending(wall.out, "B").size(), 1u) << wall.out;

    const run_result json = run_loupe("report --tree --json --metric ticks '" + path_ + "'");
    ASSERT_EQ(json.status, 0) << json.err;
    loupe_test::json::value v;
    ASSERT_EQ(loupe_test::json::parse(json.out, v), "") << json.out;
    EXPECT_EQ(v["nodes"].items.size(), 4u) << "two roots, A and B";
}

TEST_F(CliMetrics, FlatJsonParsesAndCallersPrintsStanzas) {
    const run_result flat = run_loupe("report '" + path_ + "' --flat --json --metric ticks");
    ASSERT_EQ(flat.status, 0) << flat.err;
    loupe_test::json::value v;
    ASSERT_EQ(loupe_test::json::parse(flat.out, v), "") << flat.out;
    EXPECT_EQ(v["metric"]["name"].s, "ticks");
    ASSERT_EQ(v["routines"].items.size(), 2u);
    EXPECT_EQ(v["routines"].items[0]["name"].s, "B");
    EXPECT_EQ(v["routines"].items[0]["base"].n, 8);
    EXPECT_EQ(v["routines"].items[1]["name"].s, "A");
    EXPECT_EQ(v["routines"].items[1]["calls"].n, 1);
    EXPECT_EQ(v["routines"].items[1]["base"].n, 2);
    EXPECT_EQ(v["routines"].items[1]["cum"].n, 10);

    const run_result text = run_loupe("report '" + path_ + "' --flat --metric ticks");
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_EQ(rows_ending(text.out, "A"), (std::vector<std::vector<std::string>>{{"1", "2", "10", "A"}})) << text.out;

    const run_result callers = run_loupe("report '" + path_ + "' --callers --metric ticks");
    ASSERT_EQ(callers.status, 0) << callers.err;
    // A's self row and B's parent row (B's calls, base and cum under A);
    // A's child row and B's self row.
    EXPECT_EQ(rows_ending(callers.out, "A"),
              (std::vector<std::vector<std::string>>{{"1", "2", "10", "A"}, {"1", "8", "8", "A"}}))
        << callers.out;
    EXPECT_EQ(rows_ending(callers.out, "B"), (std::vector<std::vector<std::string>>(2, {"1", "8", "8", "B"})))
        << callers.out;
    // A's stanza: the parent row (indented) above the self row, the child row (indented) below.
    const auto all = lines(callers.out);
    const auto self_a = std::find(all.begin(), all.end(), "         1              2             10  A");
    ASSERT_TRUE(self_a > all.begin() && self_a + 1 < all.end()) << callers.out;
    EXPECT_NE((self_a - 1)->find("             10      thread worker (tid "), std::string::npos) << callers.out;
    EXPECT_EQ(*(self_a + 1), "         1              8              8      B") << callers.out;

    const run_result json = run_loupe("report '" + path_ + "' --callers --json --metric ticks");
    ASSERT_EQ(json.status, 0) << json.err;
    loupe_test::json::value stanzas;
    ASSERT_EQ(loupe_test::json::parse(json.out, stanzas), "") << json.out;
    EXPECT_EQ(stanzas["stanzas"].items.size(), 2u);
}

TEST_F(CliMetrics, PerThreadAndPerCpuTotalsAddUp) {
    const run_result threads = run_loupe("report '" + path_ + "' --per-thread --ns");
    ASSERT_EQ(threads.status, 0) << threads.err;
    EXPECT_NE(threads.out.find("thread worker (tid "), std::string::npos) << threads.out;
    // Total, Tree (Σ base), Zones, Outside over all threads: the main
    // thread's 5 were outside zones; wall time has no recorded total
    // (--ns: its times are one integer each).
    const auto rows = lines(threads.out);
    ASSERT_GE(rows.size(), 2u);
    const std::vector<std::string> wall = fields(rows[rows.size() - 2]);
    ASSERT_EQ(wall.size(), 7u) << threads.out;
    EXPECT_EQ(std::vector<std::string>(wall.begin(), wall.begin() + 4),
              (std::vector<std::string>{"all", "threads", "wall_time", "-"}))
        << threads.out;
    EXPECT_EQ(fields(rows.back()), (std::vector<std::string>{"ticks", "15", "15", "10", "5"})) << threads.out;

    const run_result json = run_loupe("report '" + path_ + "' --per-thread --metric ticks --json");
    ASSERT_EQ(json.status, 0) << json.err;
    loupe_test::json::value v;
    ASSERT_EQ(loupe_test::json::parse(json.out, v), "") << json.out;
    EXPECT_EQ(v["threads"].items.size(), 2u);
    EXPECT_EQ(v["all"].items[0]["total"].n, 15);

    const run_result cpus = run_loupe("report '" + path_ + "' --per-cpu");
    ASSERT_EQ(cpus.status, 0) << cpus.err;
    const auto cpu_rows = lines(cpus.out);
    ASSERT_GE(cpu_rows.size(), 4u) << cpus.out;
    EXPECT_EQ(fields(cpu_rows[2]), (std::vector<std::string>{"CPU", "ticks"})) << cpus.out;
    EXPECT_EQ(fields(cpu_rows.back()), (std::vector<std::string>{"all", "15"})) << cpus.out;
    const run_result cpus_json = run_loupe("report '" + path_ + "' --per-cpu --json");
    ASSERT_EQ(cpus_json.status, 0) << cpus_json.err;
    loupe_test::json::value per_cpu;
    ASSERT_EQ(loupe_test::json::parse(cpus_json.out, per_cpu), "") << cpus_json.out;
    EXPECT_EQ(per_cpu["all"].items[0].n, 15);
}

TEST_F(CliMetrics, UnknownMetricIsOneLineAndExitCodeOne) {
    const run_result r = run_loupe("report '" + path_ + "' --tree --metric nope");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: " + path_ + ": no metric \"nope\" in this trace; it has: wall_time, ticks\n");
    EXPECT_TRUE(r.out.empty());
    const run_result wall = run_loupe("report '" + path_ + "' --per-cpu --metric wall_time");
    EXPECT_EQ(wall.status, 1);
    EXPECT_NE(wall.err.find("per-CPU totals are recorded for push metrics only"), std::string::npos) << wall.err;
}

namespace {

// Thread "main" (tid 501): zone "outer" of 213,696,002 ns around zone
// "inner" of 1,500,000 ns; hand-built records, so the times are exact.
void write_timed_trace(const std::string& path) {
    static const loupe::site outer{"outer", "timed.cpp", "serve", 10, loupe::site_kind::zone};
    static const loupe::site inner{"inner", "timed.cpp", "query", 20, loupe::site_kind::zone};
    trace_file_writer sink(path);
    loupe::session_info session{"timed", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc, nullptr, 0, {}, {}, {}, {}, 0};
    loupe::thread_info thread{1, 501, "main", 1};
    loupe::record r;
    r.session = &session;
    r.kind = loupe::record_kind::session_begin;
    sink.write(r);
    auto zone = [&](const loupe::site& where, std::uint64_t begin, std::uint64_t duration) {
        loupe::record z = r;
        z.kind = loupe::record_kind::zone;
        z.thread = &thread;
        z.where = &where;
        z.begin_ns = begin;
        z.end_ns = begin + duration;
        sink.write(z);
    };
    zone(inner, 3000, 1'500'000);  // zones are written as they end
    zone(outer, 2000, 213'696'002);
    loupe::record end = r;
    end.kind = loupe::record_kind::session_end;
    end.end_ns = 300'000'000;
    end.count = 2;
    sink.write(end);
    sink.close();
}

class CliTimes : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        path_ = new std::string(temp_trace_path("cli_times"));
        write_timed_trace(*path_);
    }
    static void TearDownTestSuite() {
        std::remove(path_->c_str());
        delete path_;
    }
    static std::string* path_;
};
std::string* CliTimes::path_ = nullptr;

using rows = std::vector<std::vector<std::string>>;

}  // namespace

// Wall time prints as "214 ms", as stats does, in every text report with times.
TEST_F(CliTimes, TreeFlatCallersAndPerThreadPrintTimesInHumanUnits) {
    const run_result tree = run_loupe("report '" + *path_ + "' --tree");
    ASSERT_EQ(tree.status, 0) << tree.err;
    EXPECT_EQ(rows_ending(tree.out, "outer"), (rows{{"1", "1", "1", "212", "ms", "214", "ms", "outer"}})) << tree.out;
    EXPECT_EQ(rows_ending(tree.out, "inner"), (rows{{"2", "1", "1", "1.50", "ms", "1.50", "ms", "inner"}})) << tree.out;
    EXPECT_EQ(rows_ending(tree.out, "501)"),
              (rows{{"0", "1", "1", "0", "ns", "214", "ms", "thread", "main", "(tid", "501)"}}))
        << tree.out;

    const run_result flat = run_loupe("report '" + *path_ + "' --flat");
    ASSERT_EQ(flat.status, 0) << flat.err;
    EXPECT_EQ(rows_ending(flat.out, "outer"), (rows{{"1", "212", "ms", "214", "ms", "outer"}})) << flat.out;

    const run_result callers = run_loupe("report '" + *path_ + "' --callers");
    ASSERT_EQ(callers.status, 0) << callers.err;
    // outer's own row, and outer as the parent in inner's stanza.
    EXPECT_EQ(rows_ending(callers.out, "outer"),
              (rows{{"1", "212", "ms", "214", "ms", "outer"}, {"1", "1.50", "ms", "1.50", "ms", "outer"}}))
        << callers.out;

    const run_result threads = run_loupe("report '" + *path_ + "' --per-thread");
    ASSERT_EQ(threads.status, 0) << threads.err;
    EXPECT_EQ(rows_ending(threads.out, "ns"),
              (rows{{"thread", "main", "(tid", "501)", "wall_time", "-", "214", "ms", "214", "ms", "0", "ns"},
                    {"all", "threads", "wall_time", "-", "214", "ms", "214", "ms", "0", "ns"}}))
        << threads.out;
    for (const run_result* r : {&tree, &flat, &callers, &threads}) {
        EXPECT_EQ(r->out.find("213696002"), std::string::npos) << r->out;
    }
}

// --ns: the same reports with every time an integer of nanoseconds; the JSON
// forms are in nanoseconds either way.
TEST_F(CliTimes, NsPrintsRawNanoseconds) {
    const run_result tree = run_loupe("report '" + *path_ + "' --tree --ns");
    ASSERT_EQ(tree.status, 0) << tree.err;
    EXPECT_EQ(rows_ending(tree.out, "outer"), (rows{{"1", "1", "1", "212196002", "213696002", "outer"}})) << tree.out;
    EXPECT_EQ(rows_ending(tree.out, "inner"), (rows{{"2", "1", "1", "1500000", "1500000", "inner"}})) << tree.out;

    const run_result flat = run_loupe("report --ns '" + *path_ + "' --flat");
    ASSERT_EQ(flat.status, 0) << flat.err;
    EXPECT_EQ(rows_ending(flat.out, "outer"), (rows{{"1", "212196002", "213696002", "outer"}})) << flat.out;

    const run_result callers = run_loupe("report '" + *path_ + "' --callers --ns");
    ASSERT_EQ(callers.status, 0) << callers.err;
    EXPECT_EQ(rows_ending(callers.out, "inner"), (rows(2, {"1", "1500000", "1500000", "inner"}))) << callers.out;

    const run_result threads = run_loupe("report '" + *path_ + "' --per-thread --ns");
    ASSERT_EQ(threads.status, 0) << threads.err;
    EXPECT_EQ(rows_ending(threads.out, "0"),
              (rows{{"thread", "main", "(tid", "501)", "wall_time", "-", "213696002", "213696002", "0"},
                    {"all", "threads", "wall_time", "-", "213696002", "213696002", "0"}}))
        << threads.out;

    const run_result json = run_loupe("report '" + *path_ + "' --flat --json");
    ASSERT_EQ(json.status, 0) << json.err;
    EXPECT_NE(json.out.find("\"base\":212196002,\"cum\":213696002"), std::string::npos) << json.out;
    EXPECT_EQ(run_loupe("report '" + *path_ + "' --flat --json --ns").out, json.out);
}

TEST(CliUsage, MetricReportUsageErrorsNameTheArgument) {
    const std::pair<const char*, const char*> cases[] = {
        {"report x.loupe --tree --flat", "--flat (argument 4): one report at a time; --tree was given before"},
        {"report x.loupe --io --callers", "--callers (argument 4): one report at a time; --io was given before"},
        {"report x.loupe --tree --metric", "--metric (argument 4) needs a metric name"},
        {"report x.loupe --io --metric ticks", "--metric (argument 4) applies to report --tree, --flat"},
        {"report x.loupe --per-cpu --by thread", "--by (argument 4) applies to report --io, not --per-cpu"},
        {"stats x.loupe --per-thread", "--per-thread applies to 'report' only"},
        {"report x.loupe", "report needs one of --io, --tasks, --tree, --flat, --callers, --per-cpu, --per-thread"},
        {"stats x.loupe --ns", "--ns (argument 3) applies to report --tree, --flat, --callers and --per-thread only"},
        {"report x.loupe --io --ns", "--ns (argument 4) applies to report --tree, --flat, --callers and --per-thread"},
        {"report x.loupe --per-cpu --ns", "--ns (argument 4) applies to report --tree, --flat, --callers and"},
    };
    for (const auto& [args, message] : cases) expect_usage_error(args, message);
    const run_result help = run_loupe("report --help");
    EXPECT_NE(help.out.find("--tree|--flat|--callers|--per-thread|--per-cpu [--metric M] [--ns]"), std::string::npos)
        << help.out;
}

TEST(CliUsage, BadUsageExitsTwoWithOneLineAndAHint) {
    for (const char* args :
         {"", "frobnicate x.loupe", "dump", "dump a b", "stats --fast x.loupe", "convert x.loupe -o y",
          "convert x.loupe --to perfetto", "convert x.loupe --to pdf -o y", "stats x.loupe --to perfetto",
          "convert x.loupe --to", "convert x.loupe --to chrome-json --uncompressed -o y", "report x.loupe",
          "report x.loupe --io --by nobody", "stats x.loupe --io", "stats x.loupe --by file",
          "dump x.loupe --by user"}) {
        expect_usage_error(args, "");
    }
}

// The line names what was wrong; the hint names the command's own help (the
// global help when there is no known command); no usage text follows.
TEST(CliUsage, AUsageErrorIsOneLineNamingTheArgumentAndAHint) {
    const run_result option = run_loupe("report x.loupe --tree --bogus");
    EXPECT_EQ(option.status, 2);
    EXPECT_EQ(option.err, "loupe: unknown option '--bogus' (argument 4)\ntry 'loupe report --help'\n");
    EXPECT_TRUE(option.out.empty());
    const run_result value = run_loupe("convert x.loupe --to pdf -o y");
    EXPECT_EQ(value.err,
              "loupe: --to 'pdf' (argument 4): expected perfetto, chrome-json or otlp\ntry 'loupe convert --help'\n");
    const run_result command = run_loupe("frobnicate x.loupe");
    EXPECT_EQ(command.status, 2);
    EXPECT_EQ(command.err,
              "loupe: unknown command 'frobnicate'; expected dump, stats, report, convert, merge, export, ps, start, set, "
              "stop, status or record\n"
              "try 'loupe --help'\n");
    const run_result nothing = run_loupe("");
    EXPECT_EQ(nothing.status, 2);
    EXPECT_EQ(nothing.err,
              "loupe: missing command; expected dump, stats, report, convert, merge, export, ps, start, set, stop, status "
              "or record\n"
              "try 'loupe --help'\n");
    const run_result help_of_nothing = run_loupe("frobnicate --help");
    EXPECT_EQ(help_of_nothing.status, 2);
    EXPECT_EQ(help_of_nothing.err.rfind("loupe: unknown command 'frobnicate'", 0), 0u) << help_of_nothing.err;
}

// `loupe CMD --help` (or `loupe help CMD`, or --help anywhere after CMD):
// CMD's usage, what it does and its options, and nothing of the others.
TEST(CliUsage, EachCommandHasItsOwnShortHelp) {
    const std::pair<std::string, std::vector<std::string>> commands[] = {
        {"dump", {"--json", "--strict"}},
        {"stats", {"--by FIELD", "--params", "--top N", "--flows", "--json", "--strict"}},
        {"report",
         {"--io", "--tree", "--flat", "--callers", "--per-thread", "--per-cpu", "--by GROUP", "--metric M", "--ns",
          "--json", "--strict"}},
        {"convert", {"--to FORMAT", "-o OUT", "'-': stdout", "--uncompressed", "--strict"}},
    };
    for (const auto& [command, options] : commands) {
        const run_result r = run_loupe(command + " --help");
        EXPECT_EQ(r.status, 0) << command;
        EXPECT_TRUE(r.err.empty()) << command;
        EXPECT_EQ(r.out.rfind("usage: loupe " + command + " FILE", 0), 0u) << r.out;
        EXPECT_LE(lines(r.out).size(), 25u) << r.out;
        for (const std::string& option : options) EXPECT_NE(r.out.find(option), std::string::npos) << option;
        for (const auto& [other, unused] : commands) {
            if (other == command) continue;
            EXPECT_EQ(r.out.find("loupe " + other), std::string::npos) << r.out;
        }
        EXPECT_EQ(run_loupe("help " + command).out, r.out) << command;
        EXPECT_EQ(run_loupe(command + " x.loupe --json --help").out, r.out) << command;
    }
    EXPECT_EQ(run_loupe("dump --help").out.find("--metric"), std::string::npos);
}

// `loupe --help` and `loupe help`: the commands, one line each, and where
// their options are.
TEST(CliUsage, GlobalHelpListsTheCommandsOneLineEach) {
    const run_result help = run_loupe("--help");
    EXPECT_EQ(help.status, 0);
    EXPECT_EQ(run_loupe("help").out, help.out);
    EXPECT_EQ(run_loupe("-h").out, help.out);
    EXPECT_LE(lines(help.out).size(), 20u) << help.out;
    EXPECT_NE(help.out.find("loupe <command> --help"), std::string::npos) << help.out;
    for (const char* command : {"dump", "stats", "report", "convert", "help"}) {
        std::size_t rows = 0;
        for (const std::string& line : lines(help.out)) {
            const std::vector<std::string> f = fields(line);
            rows += !f.empty() && f[0] == command && line.rfind("  ", 0) == 0;
        }
        EXPECT_EQ(rows, 1u) << command << "\n" << help.out;
    }
    EXPECT_EQ(help.out.find("--metric"), std::string::npos) << "options belong to the commands' help";
}

TEST(CliUsage, HelpAndVersion) {
    const run_result help = run_loupe("--help");
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("dump"), std::string::npos);
    EXPECT_NE(help.out.find("stats"), std::string::npos);
    const run_result version = run_loupe("--version");
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out, std::string("loupe ") + LOUPE_VERSION_STRING + "\n");
}

// ---- stats --params: method call durations by parameter value -------------

namespace {

// A trace of `shop::Cart::add` calls: sku "A" 3 calls of 100 ns, sku "B" one
// of 1000 ns, one call whose chain failed (NullInCall), a truncated sku, and
// an apply error; written from hand-built records through file_sink.
void write_param_trace(const std::string& path) {
    static const loupe::site add{"shop::Cart::add(Item const&,int)", "cart.cpp", "add", 12, loupe::site_kind::zone};
    trace_file_writer sink(path);
    loupe::session_info session{"cli-params", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                                nullptr,      0, {}, {}, {}, {}, 0};
    loupe::thread_info thread{1, 501, "main", 1};
    loupe::record r;
    r.session = &session;
    r.kind = loupe::record_kind::session_begin;
    sink.write(r);
    const loupe::param_spec_info sku{0, "method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)", "sku"};
    const loupe::param_spec_info qty{1, "method=shop::Cart::add(Item const&,int); param=2", ""};
    for (const auto* s : {&sku, &qty}) {
        loupe::record spec = r;
        spec.kind = loupe::record_kind::param_spec;
        spec.spec = s;
        sink.write(spec);
    }
    struct call {
        const char* sku;  // nullptr: NullInCall
        bool truncated;
        std::uint64_t duration;
        bool exceptional;
    };
    const call calls[] = {{"A", false, 100, false},    {"B", false, 1000, true}, {"A", false, 100, false},
                          {nullptr, false, 50, false}, {"A", false, 100, false}, {"LONGSKU", true, 10, false}};
    std::uint64_t t = 2000;
    for (const call& c : calls) {
        loupe::param_value values[2];
        values[0].spec = 0;
        values[0].kind = c.sku ? loupe::value_kind::string : loupe::value_kind::null_in_call;
        if (c.sku) values[0].text = c.sku;
        values[0].truncated = c.truncated;
        values[0].original_size = c.truncated ? 40 : static_cast<std::uint32_t>(values[0].text.size());
        values[1].spec = 1;
        values[1].kind = loupe::value_kind::integer;
        values[1].bits = 2;
        const loupe::method_call m{values, 2, c.exceptional, false, 0, 0};
        loupe::record z = r;
        z.kind = loupe::record_kind::zone;
        z.thread = &thread;
        z.where = &add;
        z.begin_ns = t;
        z.end_ns = t + c.duration;
        z.method = &m;
        sink.write(z);
        t += 2000;
    }
    const loupe::param_apply_error error{2, "modifier 1 `field(nosuch)`: shop::Item has no field 'nosuch'"};
    loupe::record e = r;
    e.kind = loupe::record_kind::param_apply_error;
    e.where = &add;
    e.apply_error = &error;
    sink.write(e);
    loupe::record end = r;
    end.kind = loupe::record_kind::session_end;
    end.end_ns = t;
    end.count = 6;
    sink.write(end);
    sink.close();
}

class CliParams : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        path_ = new std::string(temp_trace_path("cli_params"));
        write_param_trace(*path_);
    }
    static void TearDownTestSuite() {
        std::remove(path_->c_str());
        delete path_;
    }
    static std::string* path_;
};
std::string* CliParams::path_ = nullptr;

}  // namespace

TEST_F(CliParams, StatsParamsGroupsCallDurationsByValueSortedByTotal) {
    const run_result r = run_loupe("stats '" + *path_ + "' --params");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("6 method calls with parameters"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("shop::Cart::add(Item const&,int)  (cart.cpp:12)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("6 calls, total 1.36 us, 1 exceptional"), std::string::npos) << r.out;
    EXPECT_NE(
        r.out.find(
            "sku (spec 0: method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)), 6 calls, 4 values"),
        std::string::npos)
        << r.out;
    // count total mean max value; by total: B (1000), A (300), NullInCall (50), LONGSKU… (10).
    const std::vector<std::string> want[] = {{"1", "1.00", "us", "1.00", "us", "1.00", "us", "B"},
                                             {"3", "300", "ns", "100", "ns", "100", "ns", "A"},
                                             {"1", "50", "ns", "50", "ns", "50", "ns", "NullInCall"},
                                             {"1", "10", "ns", "10", "ns", "10", "ns", "LONGSKU\xE2\x80\xA6"}};
    std::vector<std::vector<std::string>> rows;
    for (const std::string& line : lines(r.out)) {
        const std::vector<std::string> f = fields(line);
        if (f.size() == 8 && (f[2] == "ns" || f[2] == "us")) rows.push_back(f);
    }
    ASSERT_GE(rows.size(), 5u) << r.out;
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(rows[i], want[i]) << i;
    EXPECT_EQ(rows[4], (std::vector<std::string>{"6", "1.36", "us", "227", "ns", "1.00", "us", "2"}));  // param1 = 2
    EXPECT_NE(r.out.find("param1 (spec 1: "), std::string::npos);
    EXPECT_NE(r.out.find("shop::Cart::add(Item const&,int): spec 2 (param2): modifier 1 `field(nosuch)`"),
              std::string::npos)
        << r.out;
}

TEST_F(CliParams, TopAndJson) {
    const run_result top = run_loupe("stats '" + *path_ + "' --params --top 1");
    ASSERT_EQ(top.status, 0) << top.err;
    EXPECT_NE(top.out.find("(3 more values)"), std::string::npos) << top.out;
    EXPECT_EQ(top.out.find(" A\n"), std::string::npos) << top.out;

    const run_result r = run_loupe("stats '" + *path_ + "' --params --json --top 2");
    ASSERT_EQ(r.status, 0) << r.err;
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(r.out, doc), "") << r.out;
    EXPECT_EQ(doc["method_calls"].n, 6);
    EXPECT_EQ(doc["top"].n, 2);
    const auto& method = doc["methods"].items.at(0);
    EXPECT_EQ(method["method"].s, "shop::Cart::add(Item const&,int)");
    EXPECT_EQ(method["exceptional"].n, 1);
    const auto& sku = method["specs"].items.at(0);
    EXPECT_EQ(sku["label"].s, "sku");
    EXPECT_EQ(sku["distinct_values"].n, 4);
    ASSERT_EQ(sku["values"].items.size(), 2u);
    EXPECT_EQ(sku["values"].items[0]["value"].s, "B");
    EXPECT_EQ(sku["values"].items[1]["value"].s, "A");
    EXPECT_EQ(sku["values"].items[1]["count"].n, 3);
    EXPECT_EQ(sku["values"].items[1]["total_ns"].n, 300);
    EXPECT_EQ(sku["values"].items[1]["mean_ns"].n, 100);
    EXPECT_EQ(sku["values"].items[1]["max_ns"].n, 100);
    EXPECT_EQ(doc["apply_errors"].items.at(0)["spec"].n, 2);
}

TEST_F(CliParams, DumpShowsSpecsCallsAndApplyErrors) {
    const run_result r = run_loupe("dump '" + *path_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(count_of(r.out, "PARAM_SPEC"), 2u);
    EXPECT_NE(r.out.find("METHOD   thread 1 values: spec 0 string \"A\", spec 1 int 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("METHOD   thread 1 exceptional values: spec 0 string \"B\""), std::string::npos);
    EXPECT_NE(r.out.find("spec 0 NullInCall"), std::string::npos);
    EXPECT_NE(r.out.find("spec 0 string \"LONGSKU\"\xE2\x80\xA6 (truncated, 40 B)"), std::string::npos);
    EXPECT_NE(r.out.find("APPLY_ERR  site 1 \"shop::Cart::add(Item const&,int)\" spec 2: "), std::string::npos);
    const run_result json = run_loupe("dump '" + *path_ + "' --json");
    ASSERT_EQ(json.status, 0);
    std::size_t calls = 0;
    for (const std::string& line : lines(json.out)) {
        loupe_test::json::value v;
        ASSERT_EQ(loupe_test::json::parse(line, v), "") << line;
        if (v["record"].s != "method_call") continue;
        ++calls;
        EXPECT_EQ(v["values"].items.size(), 2u);
    }
    EXPECT_EQ(calls, 6u);
}

TEST(CliParamsUsage, ATraceWithoutParametersSaysSoAndUsageErrorsNameTheArgument) {
    const std::string path = temp_trace_path("cli_no_params");
    write_small_trace(path);
    const run_result r = run_loupe("stats '" + path + "' --params");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("no parameter values recorded"), std::string::npos) << r.out;
    const run_result json = run_loupe("stats '" + path + "' --params --json");
    EXPECT_EQ(json.status, 0);
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(json.out, doc), "") << json.out;
    EXPECT_TRUE(doc["methods"].items.empty());
    std::remove(path.c_str());

    const std::pair<const char*, const char*> cases[] = {
        {"stats x.loupe --params --top", "--top (argument 4) needs a number N"},
        {"stats x.loupe --params --top ten", "--top 'ten' (argument 5): expected a number of values"},
        {"stats x.loupe --params --top -1", "--top '-1' (argument 5): expected a number of values"},
        {"stats x.loupe --top 3", "--top (argument 3) applies to stats --params only"},
        {"dump x.loupe --params", "--params (argument 3) applies to 'stats' only"},
        {"stats x.loupe --params --by user", "--by (argument 4) does not apply to stats --params (argument 3)"},
    };
    for (const auto& [args, message] : cases) expect_usage_error(args, message);
}

namespace {

// Two requests, each a flow from a client thread to a worker and back:
// "sent" -> "received" (across threads) -> "answered" (across threads, ends).
std::string write_flow_trace(std::uint64_t& first_id) {
    const std::string path = temp_trace_path("cli_flows");
    loupe::session_config cfg;
    cfg.name = "flows";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    for (int request = 0; request < 2; ++request) {
        const std::uint64_t id = loupe::new_flow_id();
        if (request == 0) first_id = id;
        LOUPE_FLOW("sent", id);
        std::thread([id] { LOUPE_FLOW("received", id); }).join();
        LOUPE_FLOW_END("answered", id);
    }
    session.stop();
    return path;
}

}  // namespace

TEST(CliFlows, DumpShowsFlowRecordsAndStatsFlowsGroupsTheHops) {
    std::uint64_t first_id = 0;
    const std::string path = write_flow_trace(first_id);
    const run_result dump = run_loupe("dump '" + path + "'");
    ASSERT_EQ(dump.status, 0) << dump.err;
    EXPECT_EQ(count_of(dump.out, "FLOW "), 6u) << dump.out;
    EXPECT_NE(dump.out.find("\"sent\" id " + loupe::flow_id_text(first_id) + " step"), std::string::npos) << dump.out;
    EXPECT_NE(dump.out.find("\"answered\" id " + loupe::flow_id_text(first_id) + " end"), std::string::npos);
    const run_result dump_json = run_loupe("dump '" + path + "' --json");
    EXPECT_EQ(count_of(dump_json.out, "\"record\":\"flow\""), 6u);
    EXPECT_NE(dump_json.out.find("\"id\":\"" + loupe::flow_id_text(first_id) + "\",\"role\":\"end\""), std::string::npos);

    const run_result stats = run_loupe("stats '" + path + "' --flows");
    ASSERT_EQ(stats.status, 0) << stats.err;
    EXPECT_NE(stats.out.find("6 flow points, 2 flows (2 ended, 0 with one point here)"), std::string::npos) << stats.out;
    EXPECT_NE(stats.out.find("sent -> received"), std::string::npos) << stats.out;
    EXPECT_NE(stats.out.find("received -> answered"), std::string::npos) << stats.out;
    const run_result json = run_loupe("stats '" + path + "' --flows --json");
    ASSERT_EQ(json.status, 0) << json.err;
    loupe_test::json::value doc;
    ASSERT_EQ(loupe_test::json::parse(json.out, doc), "") << json.out;
    EXPECT_EQ(doc["flows"].n, 2);
    ASSERT_EQ(doc["hops"].items.size(), 2u);
    for (const auto& hop : doc["hops"].items) {
        EXPECT_EQ(hop["stats"]["count"].n, 2) << json.out;
        EXPECT_EQ(hop["cross_thread"].n, 2) << json.out;  // every hop changes thread
    }
    std::remove(path.c_str());
}

TEST(CliFlows, ATraceWithoutFlowsSaysSoAndUsageErrorsNameTheArgument) {
    const std::string path = temp_trace_path("cli_no_flows");
    write_small_trace(path);
    const run_result r = run_loupe("stats '" + path + "' --flows");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("no flows recorded"), std::string::npos) << r.out;
    std::remove(path.c_str());
    const std::pair<const char*, const char*> cases[] = {
        {"dump x.loupe --flows", "--flows (argument 3) applies to 'stats' only"},
        {"stats x.loupe --flows --params", "--params (argument 4) does not apply to stats --flows (argument 3)"},
        {"stats x.loupe --flows --by user", "--by (argument 4) does not apply to stats --flows (argument 3)"},
    };
    for (const auto& [args, message] : cases) expect_usage_error(args, message);
}
