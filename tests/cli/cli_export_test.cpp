// `loupe export`, run as a user would, against a local OTLP receiver
// (support/otlp_receiver.hpp): exit codes, the summary line, errors that
// name the endpoint, usage errors that name the argument, the environment.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <loupe/format/reader.hpp>
#include <loupe/viewer/otlp.hpp>

#include "support/cli_process.hpp"
#include "support/otlp_reader.hpp"
#include "support/otlp_receiver.hpp"
#include "support/trace_files.hpp"

using loupe_test::lines;
using loupe_test::dead_port;
using loupe_test::otlp_receiver;
using loupe_test::run_result;
using loupe_test::slurp;

namespace {

// Runs `loupe ARGS` with the OTEL_* variables of the test's environment
// removed and `env` ("NAME=value ...", shell-quoted by the caller) set.
run_result run_without_otel_environment(const std::string& args, const std::string& env = "") {
    return loupe_test::run_loupe(args,
                                 "env -u OTEL_EXPORTER_OTLP_TRACES_ENDPOINT -u OTEL_EXPORTER_OTLP_ENDPOINT "
                                 "-u OTEL_EXPORTER_OTLP_HEADERS -u OTEL_SERVICE_NAME -u OTEL_RESOURCE_ATTRIBUTES " +
                                     env);
}

std::string last_line(const std::string& text) {
    const std::vector<std::string> all = lines(text);
    return all.empty() ? std::string() : all.back();
}

// A usage error: exit 2, nothing on stdout, the message and the hint.
void expect_export_usage_error(const std::string& args, const std::string& message, const std::string& env = "") {
    const run_result r = run_without_otel_environment(args, env);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(r.err, "loupe: " + message + "\ntry 'loupe export --help'\n") << args;
}

class CliExport : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        first_ = loupe_test::temp_trace_path(name + "_a");
        second_ = loupe_test::temp_trace_path(name + "_b");
        loupe_test::write_small_trace(first_);
        loupe_test::write_small_trace(second_);
        spans_ = count_spans(first_);
    }
    void TearDown() override {
        std::remove(first_.c_str());
        std::remove(second_.c_str());
    }
    static std::uint64_t count_spans(const std::string& path) {
        loupe::viewer::otlp_result r;
        loupe::viewer::to_otlp(loupe::read_trace_file(path), {}, &r);
        return r.spans;
    }
    std::string first_, second_;
    std::uint64_t spans_ = 0;
};

TEST_F(CliExport, SendsEachFileInOrderAndPrintsOneSummaryLine) {
    otlp_receiver receiver;
    const run_result r =
        run_without_otel_environment("export '" + first_ + "' '" + second_ + "' --otlp " + receiver.url());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    // stderr is not a terminal and --progress is not given: the summary only.
    ASSERT_EQ(lines(r.err).size(), 1u) << r.err;
    const std::string n = std::to_string(2 * spans_);
    const std::string summary = "loupe: sent " + n + " of " + n + " spans in 2 of 2 batches to " + receiver.url() + " (";
    EXPECT_EQ(r.err.rfind(summary, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("B, 0 rejected, 0 retries)\n"), std::string::npos) << r.err;  // "7.9 KiB, ..."
    // One request per file, in order, each the file's own conversion.
    const std::vector<std::string> bodies = receiver.accepted_bodies();
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_EQ(bodies[0], loupe::viewer::to_otlp(loupe::read_trace_file(first_)));
    EXPECT_EQ(bodies[1], loupe::viewer::to_otlp(loupe::read_trace_file(second_)));
}

TEST_F(CliExport, ProgressShowsEachBatchAndBatchBytesBoundsThem) {
    otlp_receiver receiver;
    const run_result r = run_without_otel_environment("export '" + first_ + "' --otlp " + receiver.url() +
                                                      " --batch-bytes 1024 --progress");
    EXPECT_EQ(r.status, 0) << r.err;
    const std::vector<std::string> bodies = receiver.accepted_bodies();
    ASSERT_GE(bodies.size(), 2u);
    std::uint64_t spans = 0;
    for (const std::string& b : bodies) {
        EXPECT_LE(b.size(), 1024u);
        for (const auto& rs : loupe_test::otlp::read_request(b)) spans += rs.spans.size();
    }
    EXPECT_EQ(spans, spans_);
    const std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), bodies.size() + 1) << r.err;  // one line per batch, then the summary
    EXPECT_EQ(err[0].rfind("loupe: " + first_ + ": 1 batches, ", 0), 0u) << err[0];
    EXPECT_EQ(err.back().rfind("loupe: sent " + std::to_string(spans_) + " of " + std::to_string(spans_) +
                                   " spans in " + std::to_string(bodies.size()) + " of " +
                                   std::to_string(bodies.size()) + " batches",
                               0),
              0u)
        << r.err;
}

TEST_F(CliExport, RejectedSpansExitOneAndAreReported) {
    otlp_receiver receiver({otlp_receiver::reply::partial_success(3, "spans too old")});
    const run_result r = run_without_otel_environment("export '" + first_ + "' --otlp " + receiver.url());
    EXPECT_EQ(r.status, 1);
    const std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), 2u) << r.err;
    EXPECT_EQ(err[0], "loupe: the collector rejected 3 spans: spans too old");
    EXPECT_NE(err[1].find(", 3 rejected, 0 retries)"), std::string::npos) << err[1];
}

TEST_F(CliExport, RetriesOn503WithRetryAfterZero) {
    otlp_receiver receiver({{otlp_receiver::reply::unavailable, 0}});
    const run_result r =
        run_without_otel_environment("export '" + first_ + "' --otlp " + receiver.url() + " --progress");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("loupe: " + receiver.authority() + ": HTTP 503 Service Unavailable; retry 1 of 5 in 0.000 s\n"),
              std::string::npos)
        << r.err;
    EXPECT_NE(last_line(r.err).find(", 0 rejected, 1 retry)"), std::string::npos) << r.err;
    EXPECT_EQ(receiver.accepted_bodies().size(), 1u);
}

TEST_F(CliExport, AnUnreachableEndpointNamesHostAndPortAndExitsOne) {
    const dead_port nobody;
    const run_result r =
        run_without_otel_environment("export '" + first_ + "' --otlp " + nobody.url() + " --retries 0");
    EXPECT_EQ(r.status, 1);
    const std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), 2u) << r.err;
    EXPECT_EQ(err[0], "loupe: " + nobody.authority() + ": connect: Connection refused (batch 1)");
    EXPECT_EQ(err[1], "loupe: sent 0 of " + std::to_string(spans_) + " spans in 0 of 1 batch to " + nobody.url() +
                          " (0 B, 0 rejected, 0 retries)");
}

TEST_F(CliExport, ABadFileIsReportedAndTheOthersAreStillSent) {
    otlp_receiver receiver;
    const std::string missing = first_ + ".missing";
    const run_result r =
        run_without_otel_environment("export '" + missing + "' '" + first_ + "' --otlp " + receiver.url());
    EXPECT_EQ(r.status, 1);
    const std::vector<std::string> err = lines(r.err);
    ASSERT_EQ(err.size(), 2u) << r.err;
    EXPECT_NE(err[0].find(missing), std::string::npos) << err[0];
    EXPECT_EQ(err[1].rfind("loupe: sent " + std::to_string(spans_) + " of " + std::to_string(spans_), 0), 0u);
    EXPECT_EQ(receiver.accepted_bodies().size(), 1u);
}

TEST_F(CliExport, GzipCompressesEachRequest) {
    otlp_receiver receiver;
    const run_result r = run_without_otel_environment("export '" + first_ + "' --otlp " + receiver.url() + " --gzip");
    EXPECT_EQ(r.status, 0) << r.err;
    const std::vector<otlp_receiver::request> requests = receiver.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].headers.at("content-encoding"), "gzip");
    EXPECT_EQ(requests[0].body.substr(0, 2), "\x1f\x8b");
    EXPECT_NE(r.err.find("B gzip, 0 rejected"), std::string::npos) << r.err;
}

TEST_F(CliExport, TheEnvironmentGivesEndpointHeadersAndResourceAndOtlpWins) {
    otlp_receiver receiver;
    const dead_port nobody;
    const std::string env = "OTEL_EXPORTER_OTLP_ENDPOINT='http://" + receiver.authority() +
                            "/' OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer%20abc' OTEL_SERVICE_NAME=checkout "
                            "OTEL_RESOURCE_ATTRIBUTES='deployment.environment=staging'";
    run_result r = run_without_otel_environment("export '" + first_ + "'", env);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(" to " + receiver.url() + " ("), std::string::npos) << r.err;
    std::vector<otlp_receiver::request> requests = receiver.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].path, "/v1/traces");
    EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer abc");
    const auto resource = loupe_test::otlp::read_request(requests[0].body).at(0).resource;
    EXPECT_EQ(resource.at("service.name").text, "checkout");
    EXPECT_EQ(resource.at("deployment.environment").text, "staging");

    // --otlp wins over the environment's endpoint.
    r = run_without_otel_environment("export '" + first_ + "' --otlp " + receiver.url(),
                                     "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + nobody.url());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(receiver.requests().size(), 2u);
}

TEST(CliExportUsage, UsageErrorsNameTheArgumentOrTheVariable) {
    expect_export_usage_error("export x.loupe --otlp htp://x",
                              "--otlp 'htp://x' (argument 4): position 1: expected a URL starting with http://");
    expect_export_usage_error("export x.loupe --otlp http://host:70000/v1/traces",
                              "--otlp 'http://host:70000/v1/traces' (argument 4): position 13: port out of range; "
                              "expected 1 to 65535");
    expect_export_usage_error("export x.loupe --otlp", "--otlp (argument 3) needs a URL");
    expect_export_usage_error("export x.loupe --otlp http://127.0.0.1:4318/v1/traces --retries -1",
                              "--retries '-1' (argument 6): expected a number of retries, 0 to 100");
    expect_export_usage_error("export x.loupe --otlp http://127.0.0.1:4318/v1/traces --batch-bytes 10",
                              "--batch-bytes '10' (argument 6): expected a number of bytes, 1024 to 4294967296");
    expect_export_usage_error("export x.loupe --otlp http://127.0.0.1:4318/v1/traces --json",
                              "--json (argument 5) does not apply to 'export'");
    expect_export_usage_error(
        "export x.loupe",
        "export needs --otlp URL (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)");
    expect_export_usage_error("export --otlp http://127.0.0.1:4318/v1/traces", "'export' needs a trace FILE");
    expect_export_usage_error("export x.loupe --otlp http://127.0.0.1:4318/v1/traces",
                              "OTEL_EXPORTER_OTLP_HEADERS: position 7: expected key=value",
                              "OTEL_EXPORTER_OTLP_HEADERS='a=b , c'");
    expect_export_usage_error("export x.loupe",
                              "OTEL_EXPORTER_OTLP_ENDPOINT 'https://collector': position 1: "
                              "https is not supported (loupe sends plain HTTP, no TLS); send to an "
                              "OpenTelemetry Collector on localhost (http://127.0.0.1:4318/v1/traces) "
                              "that forwards over TLS",
                              "OTEL_EXPORTER_OTLP_ENDPOINT=https://collector");
    const run_result other = run_without_otel_environment("stats x.loupe --gzip");
    EXPECT_EQ(other.status, 2);
    EXPECT_EQ(other.err, "loupe: --gzip (argument 3) applies to 'export' only\ntry 'loupe stats --help'\n");
}

TEST(CliExportUsage, ExportHasItsOwnHelp) {
    const run_result r = run_without_otel_environment("export --help");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out.rfind("usage: loupe export FILE... --otlp URL", 0), 0u) << r.out;
    for (const char* option : {"--otlp URL", "--gzip", "--batch-bytes N", "--retries N", "--progress", "--strict",
                               "OTEL_EXPORTER_OTLP_HEADERS", "no TLS", "exit status"}) {
        EXPECT_NE(r.out.find(option), std::string::npos) << option;
    }
    EXPECT_EQ(run_without_otel_environment("help export").out, r.out);
    EXPECT_NE(run_without_otel_environment("--help").out.find("\n  export "), std::string::npos);
}

}  // namespace
