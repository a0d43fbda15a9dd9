// `loupe merge` and `loupe report --tasks`, run as a user would: traces of
// two processes on two hosts joined into a trace set, a Perfetto trace or a
// Chrome JSON document; the summary, the report, usage errors and bad input.
#include <gtest/gtest.h>

#include <loupe/format/trace_set.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "support/cli_process.hpp"
#include "support/json_parser.hpp"
#include "support/task_files.hpp"
#include "support/trace_files.hpp"

using namespace loupe_test;

namespace {

constexpr std::uint64_t skew = 5'000'000;  // the inventory host's clock reads 5 ms more

// frontend (host A) serves GET / and calls inventory (host B) twice;
// inventory calls the database, which is not profiled.
struct merge_files {
    std::string a, b;
    std::vector<unsigned char> a_bytes, b_bytes;
    explicit merge_files(const std::string& tag)
        : a(temp_trace_path(tag + "_frontend")), b(temp_trace_path(tag + "_inventory")) {
        process_file fa("frontend", 100, "boot-a", 1000, "hostA");
        process_file fb("inventory", 200, "boot-b", 1000 + skew, "hostB");
        fa.zone(1, "parse", 2000, 2500);
        fa.server(0, 0x11, 0, 0xa1, 1500, 20000, "GET /");
        fa.client(0, 0x11, 7, 0xa1, 3000, 9000, "GET /stock", 1, "inventory:80");
        fb.zone(2, "lookup", 3600 + skew, 8000 + skew);
        fb.server(0, 0x11, 7, 0xb1, 3500 + skew, 8500 + skew, "GET /stock", 2);
        fb.client(0, 0x11, 8, 0xb1, 4000 + skew, 7000 + skew, "SELECT", 2, "db:5432");
        fa.client(0, 0x11, 9, 0xa1, 10000, 15000, "GET /price", 1, "inventory:80");
        fb.server(0, 0x11, 9, 0xb2, 10400 + skew, 14700 + skew, "GET /price", 3);
        fa.zone(1, "render", 16000, 19000);
        a_bytes = fa.finish(30000);
        b_bytes = fb.finish(30000 + skew);
        write(a, a_bytes);
        write(b, b_bytes);
    }
    ~merge_files() {
        std::remove(a.c_str());
        std::remove(b.c_str());
    }
    static void write(const std::string& path, const std::vector<unsigned char>& bytes) {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
    }
    std::string both() const { return "'" + a + "' '" + b + "'"; }
};

std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool readable(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f) std::fclose(f);
    return f != nullptr;
}

// A usage error: exit 2, nothing on stdout, the message and the hint.
void expect_usage_error(const std::string& args, const std::string& message, const std::string& command) {
    const run_result r = run_loupe(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
    const std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), 2u) << args << "\n" << r.err;
    EXPECT_EQ(err[0].rfind("loupe: " + message, 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(err[1], "try 'loupe " + command + " --help'") << args;
}

}  // namespace

TEST(CliMerge, WritesATraceSetOfTheInputsAndSummarizes) {
    const merge_files files("merge_set");
    const std::string out = temp_trace_path("merge_set_out");
    const run_result r = run_loupe("merge " + files.both() + " -o " + quoted(out));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(r.err.rfind("loupe: merged 2 traces (3 events, 2 hosts) into '" + out + "' (loupe, ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("): 1 task, 4 calls: 2 joined, 1 opaque, 0 unlinked, 0 via unprofiled, 0 clamped, 0 open; "
                         "clocks: boot-a reference, boot-b +5.00 ms \u00b1 350 ns (2 calls)\n"),
              std::string::npos)
        << r.err;
    // The set: both traces, byte for byte.
    const std::string set = slurp(out);
    EXPECT_EQ(set, std::string(files.a_bytes.begin(), files.a_bytes.end()) +
                       std::string(files.b_bytes.begin(), files.b_bytes.end()));
    EXPECT_FALSE(readable(out + ".tmp"));
    // Reading the set joins the traces again, the same way.
    const run_result from_set = run_loupe("report " + quoted(out) + " --tasks");
    const run_result from_files = run_loupe("report " + files.both() + " --tasks");
    ASSERT_EQ(from_set.status, 0) << from_set.err;
    EXPECT_EQ(from_set.out, from_files.out);
    EXPECT_NE(from_set.out.find("  boot-b (inventory): +5.00 ms \u00b1 350 ns from boot-a, 2 calls\n"), std::string::npos)
        << from_set.out;
    EXPECT_NE(from_set.out.find("frontend  GET / [root]\n"), std::string::npos) << from_set.out;
    EXPECT_NE(from_set.out.find("    inventory  GET /stock  from frontend\n"), std::string::npos) << from_set.out;
    EXPECT_NE(from_set.out.find("[db:5432]  SELECT  from inventory [opaque: not profiled]\n"), std::string::npos)
        << from_set.out;
    EXPECT_NE(from_set.out.find("  critical path (18.5 us): frontend GET / "), std::string::npos) << from_set.out;
    std::remove(out.c_str());
}

TEST(CliMerge, ReportTasksJson) {
    const merge_files files("merge_json_report");
    const run_result r = run_loupe("report " + files.both() + " --tasks --json");
    ASSERT_EQ(r.status, 0) << r.err;
    json::value doc;
    ASSERT_EQ(json::parse(r.out, doc), "") << r.out;
    EXPECT_EQ(doc["counts"]["joined"].n, 2);
    EXPECT_EQ(doc["domains"].items[1]["name"].s, "boot-b");
    ASSERT_EQ(doc["tasks"].items.size(), 1u);
    EXPECT_EQ(doc["tasks"].items[0]["trace_id"].s, "00000000000000000000000000000011");
    EXPECT_EQ(doc["tasks"].items[0]["nodes"].items.size(), 4u);
}

TEST(CliMerge, WritesPerfettoAndChromeJsonByTheOutputsExtension) {
    const merge_files files("merge_viewers");
    const std::string pf = temp_trace_path("merge_viewers_out") + ".pftrace";
    const std::string js = temp_trace_path("merge_viewers_out") + ".json";
    const run_result p = run_loupe("merge " + files.both() + " -o " + quoted(pf));
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_NE(p.err.find("(perfetto, "), std::string::npos) << p.err;
    EXPECT_FALSE(slurp(pf).empty());
    const run_result j = run_loupe("merge " + files.both() + " -o " + quoted(js));
    ASSERT_EQ(j.status, 0) << j.err;
    json::value doc;
    ASSERT_EQ(json::parse(slurp(js), doc), "");
    std::size_t slices_b = 0;
    double lookup = 0;
    for (const auto& e : doc["traceEvents"].items) {
        if (e["pid"].n == 200 && e["ph"].s == "X") ++slices_b;
        if (e["name"].s == "lookup") lookup = e["ts"].n;
    }
    EXPECT_EQ(slices_b, 4u);  // lookup, the two server slices and the call to the database
    EXPECT_NEAR(lookup, 3.55, 0.0001);  // on the frontend's timeline: 3.6 us minus the estimated 5.000050 ms
    // --to wins over the extension; '-' is stdout.
    const run_result to_stdout = run_loupe("merge " + files.both() + " --to chrome-json -o -");
    ASSERT_EQ(to_stdout.status, 0) << to_stdout.err;
    json::value streamed;
    EXPECT_EQ(json::parse(to_stdout.out, streamed), "");
    EXPECT_NE(to_stdout.err.find("into stdout (chrome-json, "), std::string::npos) << to_stdout.err;
    std::remove(pf.c_str());
    std::remove(js.c_str());
}

TEST(CliMerge, UsageErrorsNameTheArgument) {
    expect_usage_error("merge x.loupe", "merge needs -o OUT", "merge");
    expect_usage_error("merge -o out.loupe", "'merge' needs at least one trace FILE", "merge");
    expect_usage_error("merge x.loupe -o out.txt", "cannot tell the format of 'out.txt'", "merge");
    expect_usage_error("merge x.loupe -o -", "cannot tell the format of '-'", "merge");
    expect_usage_error("merge x.loupe -o out.loupe --to pdf", "--to 'pdf' (argument 6): expected loupe, perfetto or",
                       "merge");
    expect_usage_error("merge x.loupe -o out.json --uncompressed", "--uncompressed (argument 5) applies to the perfetto",
                       "merge");
    expect_usage_error("merge x.loupe -o x.loupe", "-o 'x.loupe' is also an input", "merge");
    expect_usage_error("merge x.loupe -o y.loupe --bogus", "unknown option '--bogus' (argument 5)", "merge");
    expect_usage_error("merge x.loupe -o y.loupe --strict --partial", "--partial (argument 6) and --strict (argument 5)",
                       "merge");
    expect_usage_error("report x.loupe --tasks --tree", "--tree (argument 4): one report at a time; --tasks", "report");
    expect_usage_error("report --tasks", "'report' needs a trace FILE", "report");
    const run_result help = run_loupe("merge --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_EQ(help.out.rfind("usage: loupe merge FILE... -o OUT", 0), 0u) << help.out;
    EXPECT_NE(run_loupe("report --help").out.find("--tasks"), std::string::npos);
    EXPECT_NE(run_loupe("--help").out.find("  merge "), std::string::npos);
}

TEST(CliMerge, BadInputNamesTheFileAndByteAndWritesNothing) {
    const merge_files files("merge_bad");
    const std::string bad = temp_trace_path("merge_bad_input");
    std::vector<unsigned char> bytes = files.b_bytes;
    bytes.push_back('x');  // a byte after the END record that starts no trace
    merge_files::write(bad, bytes);
    const std::string out = temp_trace_path("merge_bad_out");
    const run_result r = run_loupe("merge '" + files.a + "' '" + bad + "' -o " + quoted(out));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "loupe: " + bad + ": byte " + std::to_string(files.b_bytes.size()) +
                         ": what follows the END record of the trace that starts at byte 0 does not start a trace: "
                         "1 byte before the end of the input; expected the magic bytes 89 4C 4F 55 50 45 0D 0A or "
                         "the end of the input\n");
    EXPECT_FALSE(readable(out));
    EXPECT_FALSE(readable(out + ".tmp"));
    const run_result missing = run_loupe("report '" + bad + ".nope' --tasks");
    EXPECT_EQ(missing.status, 1);
    EXPECT_EQ(missing.err.rfind("loupe: cannot open '" + bad + ".nope'", 0), 0u) << missing.err;
    std::remove(bad.c_str());
}

TEST(CliMerge, ACutShortInputIsMergedUpToItsLastWholeRecord) {
    const merge_files files("merge_cut");
    const std::string cut = temp_trace_path("merge_cut_input");
    std::vector<unsigned char> bytes = files.b_bytes;
    bytes.resize(bytes.size() - 4);  // inside END
    merge_files::write(cut, bytes);
    const std::string out = temp_trace_path("merge_cut_out");
    const run_result r = run_loupe("merge '" + files.a + "' '" + cut + "' -o " + quoted(out));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("loupe: " + cut + ": trace cut short (no END record)"), std::string::npos) << r.err;
    // The set holds the cut trace's whole records, so that it stays readable.
    const std::vector<loupe::trace> traces = [&] {
        loupe::trace_set_options o;
        o.decode.accept_truncated = true;
        return loupe::read_trace_set_file(out, o);
    }();
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_FALSE(traces[1].complete);
    const run_result strict = run_loupe("merge '" + files.a + "' '" + cut + "' -o " + quoted(out) + " --strict");
    EXPECT_EQ(strict.status, 1);
    EXPECT_NE(strict.err.find("cut short"), std::string::npos) << strict.err;
    std::remove(cut.c_str());
    std::remove(out.c_str());
}
