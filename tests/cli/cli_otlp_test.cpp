// `loupe start PID --otlp URL` and `loupe record --otlp URL`: a session
// started from outside the process that also sends its spans to an
// OpenTelemetry collector while it runs (a local receiver here), with the
// process's OTEL_* variables; `stop` says what the collector accepted, and
// the spans are the zones the session's file holds. A bad URL is refused
// before anything starts.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <loupe/format/reader.hpp>

#include "support/cli_process.hpp"
#include "support/control_child.hpp"
#include "support/otlp_reader.hpp"
#include "support/otlp_receiver.hpp"
#include "support/spawned_program.hpp"

using namespace loupe_test;

namespace {

// The spans the receiver accepted, with their resource's service.name.
std::vector<std::pair<std::string, otlp::span>> received(const otlp_receiver& receiver) {
    std::vector<std::pair<std::string, otlp::span>> out;
    for (const std::string& body : receiver.accepted_bodies()) {
        for (const otlp::resource_spans& r : otlp::read_request(body)) {
            const auto service = r.resource.find("service.name");
            for (const otlp::span& s : r.spans) {
                out.emplace_back(service == r.resource.end() ? std::string() : service->second.text, s);
            }
        }
    }
    return out;
}

// The N and M of "PREFIX: N of M spans accepted" in `out`; false when absent.
bool accepted_of(const std::string& out, const std::string& prefix, unsigned long long& accepted,
                 unsigned long long& spans) {
    const std::size_t at = out.find(prefix + ": ");
    return at != std::string::npos &&
           std::sscanf(out.c_str() + at + prefix.size() + 2, "%llu of %llu spans accepted", &accepted, &spans) == 2;
}

std::size_t zones_in(const std::string& path) {
    std::size_t n = 0;
    const loupe::trace t = loupe::read_trace_file(path);
    for (const loupe::trace_event& e : t.events) n += e.type == loupe::event_type::zone ? 1 : 0;
    return n;
}

// The listening program made to listen by LOUPE_CONTROL=1, writing under
// `runtime`/out, as service "checkout", with `env` besides.
spawned_program checkout_program(const temp_folder& runtime, std::vector<std::string> env = {}) {
    std::filesystem::create_directory(runtime / "out");
    env.insert(env.end(), {"XDG_RUNTIME_DIR=" + runtime.path(), "LOUPE_CONTROL=1",
                           "LOUPE_CONTROL_OUTPUT=" + (runtime / "out"), "OTEL_SERVICE_NAME=checkout"});
    return spawned_program(LOUPE_LISTENING_PROGRAM_PATH, {}, env);
}

TEST(CliOtlp, StartWithOtlpSendsWhileRunningAndStopSaysWhatWasAccepted) {
    otlp_receiver receiver({}, std::chrono::seconds(120));
    temp_folder runtime("cli_otlp");
    spawned_program program = checkout_program(runtime, {"OTEL_EXPORTER_OTLP_HEADERS=api-key=k1"});
    ASSERT_NE(program.read_line(), "not listening");
    const std::string pid = std::to_string(program.pid());

    const run_result start = run_loupe_in(
        runtime.path(), "start " + pid + " -o live.loupe --name live --kinds zones --otlp " + receiver.url());
    ASSERT_EQ(start.status, 0) << start.err;
    EXPECT_NE(start.out.find("writing " + (runtime / "out/live.loupe") + ", sending to " + receiver.url()),
              std::string::npos)
        << start.out;
    // Spans arrive while the session runs (2-4 s after they end).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (receiver.accepted_bodies().empty() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_FALSE(receiver.accepted_bodies().empty()) << "nothing arrived while the session ran";
    const run_result status = run_loupe_in(runtime.path(), "status " + pid);
    ASSERT_EQ(status.status, 0) << status.err;
    EXPECT_NE(status.out.find("otlp " + receiver.url() + ": "), std::string::npos) << status.out;

    const run_result stop = run_loupe_in(runtime.path(), "stop " + pid + " live");
    ASSERT_EQ(stop.status, 0) << stop.err;
    unsigned long long accepted = 0, spans = 0;
    ASSERT_TRUE(accepted_of(stop.out, "otlp " + receiver.url(), accepted, spans)) << stop.out;
    EXPECT_EQ(accepted, spans);
    EXPECT_NE(stop.out.find("sink failures 0"), std::string::npos) << stop.out;

    // What arrived is what the file holds: every zone, as the process's service.
    const auto got = received(receiver);
    EXPECT_EQ(got.size(), spans);
    EXPECT_EQ(got.size(), zones_in(runtime / "out/live.loupe"));
    for (const auto& [service, span] : got) {
        EXPECT_EQ(service, "checkout");
        EXPECT_EQ(span.name, "work");
        EXPECT_EQ(span.attrs.count("loupe.arg.seq"), 1u);
    }
    for (const auto& r : receiver.requests()) EXPECT_EQ(r.headers.at("api-key"), "k1");

    program.close_stdin();
    EXPECT_EQ(program.wait(), 0) << program.error_output();
}

TEST(CliOtlp, RecordSendsEveryProcessAndSaysSoPerProcess) {
    otlp_receiver receiver({}, std::chrono::seconds(120));
    temp_folder runtime("cli_otlp_record");
    spawned_program program = checkout_program(runtime);
    ASSERT_NE(program.read_line(), "not listening");
    const std::string pid = std::to_string(program.pid());
    const run_result r = run_loupe_in(runtime.path(), "record --pids " + pid + " --for 300ms --kinds zones -o '" +
                                                          (runtime / "run") + "' --otlp " + receiver.url());
    ASSERT_EQ(r.status, 0) << r.err;
    unsigned long long accepted = 0, spans = 0;
    ASSERT_TRUE(accepted_of(r.out, "  otlp " + receiver.url(), accepted, spans)) << r.out;
    EXPECT_EQ(accepted, spans);
    EXPECT_GT(spans, 0u);
    EXPECT_EQ(received(receiver).size(), spans);
    program.close_stdin();
    EXPECT_EQ(program.wait(), 0) << program.error_output();
}

TEST(CliOtlp, BadUrlIsRefusedBeforeAnythingStarts) {
    temp_folder runtime("cli_otlp_bad");
    const run_result r = run_loupe_in(runtime.path(), "start 1 -o x.loupe --otlp https://collector:4318/v1/traces");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--otlp 'https://collector:4318/v1/traces' (argument 6): position 1"), std::string::npos)
        << r.err;
    const run_result set = run_loupe_in(runtime.path(), "set 1 live --otlp http://127.0.0.1:4318/v1/traces");
    EXPECT_EQ(set.status, 2);
    EXPECT_NE(set.err.find("--otlp"), std::string::npos) << set.err;
}

}  // namespace
