// The `loupe` tool, run as a user would: exit codes, one-line errors, and
// output that holds what the trace holds.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include "support/trace_files.hpp"

using namespace loupe_test;

namespace {

struct run_result {
    int status = -1;
    std::string out;
    std::string err;
};

std::string slurp(const std::string& path) {
    std::string s;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
        std::fclose(f);
    }
    return s;
}

run_result run_cli(const std::string& args) {
    const std::string out = temp_trace_path("cli_stdout") + ".txt";
    const std::string err = temp_trace_path("cli_stderr") + ".txt";
    const std::string command = std::string("'") + LOUPE_CLI_PATH + "' " + args + " >'" + out + "' 2>'" + err + "'";
    run_result r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
    return n;
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
    const run_result r = run_cli("dump '" + path_ + "'");
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
    const run_result r = run_cli("dump '" + path_ + "' --json");
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
    const run_result r = run_cli("stats '" + path_ + "'");
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
    const run_result r = run_cli("stats --json '" + path_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("{\"session\":\"small\",\"group_by\":\"thread\",\"complete\":true", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("{\"name\":\"outer\""), std::string::npos);
    EXPECT_NE(r.out.find("{\"label\":\"beta\",\"stats\":{\"count\":2,"), std::string::npos) << r.out;
}

TEST_F(Cli, StatsByUserGroupsByContextAndEscapesInvalidUtf8) {
    const run_result r = run_cli("stats '" + path_ + "' --by user");
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

    const run_result dump = run_cli("dump --json '" + path_ + "'");
    EXPECT_NE(dump.out.find("\"record\":\"context\""), std::string::npos);
    EXPECT_NE(dump.out.find("\"user\":\"b\\\\xff\""), std::string::npos) << dump.out;
    EXPECT_EQ(dump.out.find('\xff'), std::string::npos);

    const run_result bad = run_cli("stats '" + path_ + "' --by nobody");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--by 'nobody'"), std::string::npos) << bad.err;
}

TEST_F(Cli, MissingFileIsOneLineAndExitCodeOne) {
    const run_result r = run_cli("stats '" + path_ + ".nope'");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: cannot open '" + path_ + ".nope': No such file or directory\n");
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, CutShortFileNamesTheByteAndPartialReadsWhatIsThere) {
    const std::vector<unsigned char> good = loupe::read_file_bytes(path_);
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
        std::fwrite(good.data(), 1, good.size() - 3, f);
        std::fclose(f);
    }
    for (const char* command : {"dump", "stats"}) {
        const run_result r = run_cli(std::string(command) + " '" + path_ + "'");
        EXPECT_EQ(r.status, 1) << command;
        EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
        EXPECT_EQ(r.err.rfind("loupe: " + path_ + ": byte ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find("cut short"), std::string::npos) << r.err;
    }
    const run_result partial = run_cli("stats --partial '" + path_ + "'");
    EXPECT_EQ(partial.status, 0) << partial.err;
    EXPECT_NE(partial.out.find("(trace cut short)"), std::string::npos) << partial.out;
}

TEST_F(Cli, NotATraceIsRejected) {
    if (std::FILE* f = std::fopen(path_.c_str(), "wb")) {
        std::fputs("hello, world\n", f);
        std::fclose(f);
    }
    const run_result r = run_cli("dump '" + path_ + "'");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: " + path_ + ": byte 0: not a .loupe trace: expected the magic bytes 89 4C 4F 55 50 45 0D 0A\n");
}

TEST_F(Cli, ConvertWritesWhatTheLibraryWrites) {
    const loupe::trace t = loupe::read_trace_file(path_);
    const std::string pftrace = path_ + ".pftrace";
    const run_result p = run_cli("convert '" + path_ + "' --to perfetto -o '" + pftrace + "'");
    EXPECT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(slurp(pftrace), loupe::viewer::to_perfetto(t));
    const run_result plain = run_cli("convert '" + path_ + "' --to perfetto --uncompressed -o '" + pftrace + "'");
    EXPECT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(slurp(pftrace), loupe::viewer::to_perfetto(t, {false}));
    const std::string json = path_ + ".json";
    const run_result j = run_cli("convert -o '" + json + "' --to chrome-json '" + path_ + "'");
    EXPECT_EQ(j.status, 0) << j.err;
    EXPECT_EQ(slurp(json), loupe::viewer::to_chrome_json(t));
    std::remove(pftrace.c_str());
    std::remove(json.c_str());
}

TEST_F(Cli, ConvertOfAnUnwritableOutputNamesIt) {
    const run_result r = run_cli("convert '" + path_ + "' --to perfetto -o /nonexistent-dir/x.pftrace");
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

    const run_result by_file = run_cli("report '" + trace_path + "' --io");
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

    const run_result by_thread = run_cli("report --io --by thread '" + trace_path + "'");
    EXPECT_EQ(by_thread.status, 0);
    EXPECT_NE(by_thread.out.find("writer"), std::string::npos);
    EXPECT_NE(by_thread.out.find("reader"), std::string::npos);

    const run_result json = run_cli("report --io --json '" + trace_path + "'");
    EXPECT_EQ(json.status, 0);
    EXPECT_NE(json.out.find("\"bytes_in\":12,\"bytes_out\":12"), std::string::npos) << json.out;

    const run_result dump = run_cli("dump '" + trace_path + "'");
    EXPECT_EQ(dump.status, 0);
    EXPECT_EQ(count_of(dump.out, "IO_RESOURCE"), 1u) << "a resource is written once per trace";
    EXPECT_EQ(count_of(dump.out, " IO "), 4u);
    EXPECT_NE(dump.out.find("pwrite"), std::string::npos);
    std::remove(trace_path.c_str());
}

TEST(CliUsage, BadUsageExitsTwoWithUsage) {
    for (const char* args : {"", "frobnicate x.loupe", "dump", "dump a b", "stats --fast x.loupe",
                             "convert x.loupe -o y", "convert x.loupe --to perfetto", "convert x.loupe --to pdf -o y",
                             "stats x.loupe --to perfetto", "convert x.loupe --to",
                             "convert x.loupe --to chrome-json --uncompressed -o y", "report x.loupe",
                             "report x.loupe --io --by nobody", "stats x.loupe --io", "stats x.loupe --by file",
                             "dump x.loupe --by user"}) {
        const run_result r = run_cli(args);
        EXPECT_EQ(r.status, 2) << args;
        EXPECT_EQ(r.err.rfind("loupe: ", 0), 0u) << args;
        EXPECT_NE(r.err.find("usage: loupe"), std::string::npos) << args;
    }
}

TEST(CliUsage, HelpAndVersion) {
    const run_result help = run_cli("--help");
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("dump"), std::string::npos);
    EXPECT_NE(help.out.find("stats"), std::string::npos);
    const run_result version = run_cli("--version");
    EXPECT_EQ(version.status, 0);
    EXPECT_EQ(version.out, std::string("loupe ") + LOUPE_VERSION_STRING + "\n");
}
