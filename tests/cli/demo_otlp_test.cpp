// The demo sending to a collector while it serves (`app_server --serve
// --otlp URL`, README "OpenTelemetry backends"): a local receiver gets
// alice's requests from the front end and the inventory, a checkout and
// the stock request it made in one trace across the two services; a bad
// URL is named and refused.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/control_child.hpp"
#include "support/otlp_reader.hpp"
#include "support/otlp_receiver.hpp"
#include "support/spawned_program.hpp"

using namespace loupe_test;

namespace {

#ifdef LOUPE_APP_SERVER_PATH

// What the receiver got, by service: the trace ids and the users on spans.
struct collected {
    std::map<std::string, std::set<std::string>> traces;  // service.name -> trace ids
    std::set<std::string> users;                          // enduser.id values seen
    std::size_t spans = 0;

    explicit collected(const otlp_receiver& receiver) {
        for (const std::string& body : receiver.accepted_bodies()) {
            for (const otlp::resource_spans& r : otlp::read_request(body)) {
                const auto service = r.resource.find("service.name");
                const std::string name = service == r.resource.end() ? "" : service->second.text;
                for (const otlp::span& s : r.spans) {
                    ++spans;
                    traces[name].insert(s.trace_id);
                    const auto user = s.attrs.find("enduser.id");
                    if (user != s.attrs.end()) users.insert(user->second.text);
                }
            }
        }
    }
    // A trace with spans from both services.
    bool joined() const {
        const auto f = traces.find("frontend"), i = traces.find("inventory");
        if (f == traces.end() || i == traces.end()) return false;
        for (const std::string& t : f->second) {
            if (i->second.count(t)) return true;
        }
        return false;
    }
};

TEST(DemoOtlp, ServingDemoSendsAlicesRequestsAcrossServicesAsOneTrace) {
    otlp_receiver receiver({}, std::chrono::seconds(120));
    temp_folder runtime("demo_otlp");
    std::filesystem::create_directory(runtime / "out");
    spawned_program server(LOUPE_APP_SERVER_PATH, {"--serve", "--dir", runtime / "out", "--otlp", receiver.url()},
                           {"XDG_RUNTIME_DIR=" + runtime.path()});
    long front = 0;
    const std::string first = server.read_line();
    ASSERT_EQ(std::sscanf(first.c_str(), "serving: front end pid %ld", &front), 1) << first;
    bool announced = false;
    for (int i = 0; i < 6 && !announced; ++i) {
        announced = server.read_line().find("sending alice's requests in frontend and inventory to " +
                                            receiver.url()) != std::string::npos;
    }
    EXPECT_TRUE(announced);
    // Until a checkout and its stock request arrived as one trace (30 s at most).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!collected(receiver).joined() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_EQ(::kill(static_cast<pid_t>(front), SIGINT), 0);
    std::string summary;
    for (int i = 0; i < 4 && summary.empty(); ++i) {
        const std::string line = server.read_line();
        if (line.rfind("frontend: ", 0) == 0) summary = line;
    }
    EXPECT_EQ(server.wait(), 0) << server.error_output();
    const collected got(receiver);
    EXPECT_TRUE(got.joined()) << got.spans << " spans";
    EXPECT_EQ(got.users, std::set<std::string>{"alice"}) << "the sessions record alice's requests only";
    EXPECT_EQ(got.traces.count("payment"), 0u) << "payment does not export";
    // "frontend: N of N spans accepted by URL": everything it sent was taken.
    unsigned long long accepted = 0, sent = 0;
    ASSERT_EQ(std::sscanf(summary.c_str(), "frontend: %llu of %llu spans accepted", &accepted, &sent), 2) << summary;
    EXPECT_EQ(accepted, sent);
    EXPECT_GT(sent, 0u);
    EXPECT_NE(server.error_output().find("inventory: "), std::string::npos) << server.error_output();
}

TEST(DemoOtlp, BadCollectorUrlIsNamed) {
    spawned_program server(LOUPE_APP_SERVER_PATH, {"--serve", "--otlp", "https://collector:4318/v1/traces"}, {});
    EXPECT_EQ(server.wait(), 2);
    const std::string err = server.error_output();
    EXPECT_NE(err.find("--otlp 'https://collector:4318/v1/traces'"), std::string::npos) << err;
    EXPECT_NE(err.find("position 1"), std::string::npos) << err;
}

#endif

}  // namespace
