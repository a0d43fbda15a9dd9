// quickstart: a few worker threads handle "requests" of users alice, bob and
// carol with nested zones. Each request runs under a context scope (user +
// request id). Two sessions run at once: one records everything to
// quickstart.loupe, the other only alice's requests (a thread filter) to
// quickstart-alice.loupe. Then the first trace is read back and per-zone
// statistics are printed per thread and per user (what `loupe stats
// quickstart.loupe [--by user]` shows).
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/zone_stats.hpp>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void spin_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

void parse_request(std::mt19937& rng) {
    LOUPE_ZONE("parse");
    spin_for(std::chrono::microseconds(5 + rng() % 10));
}

void query_database(std::mt19937& rng) {
    LOUPE_ZONE("query");
    spin_for(std::chrono::microseconds(20 + rng() % 80));
    LOUPE_COUNTER("rows", rng() % 100);
}

void render_response(std::mt19937& rng) {
    LOUPE_ZONE("render");
    spin_for(std::chrono::microseconds(10 + rng() % 20));
}

void worker(int id, int requests) {
    LOUPE_THREAD_NAME("worker-" + std::to_string(id));
    std::mt19937 rng(static_cast<unsigned>(id));
    const char* const users[] = {"alice", "bob", "carol"};
    for (int i = 0; i < requests; ++i) {
        const std::string request = std::to_string(id) + "-" + std::to_string(i);
        loupe::context_scope who({{loupe::context_field::user, users[(id + i) % 3]},
                                  {loupe::context_field::request, request}});
        LOUPE_ZONE("handle_request");
        parse_request(rng);
        query_database(rng);
        render_response(rng);
    }
    LOUPE_INSTANT("worker_done");
}

loupe::session start(const std::string& name, const std::string& path, const std::string& filter) {
    loupe::session_config config;
    config.name = name;
    config.filter = filter;
    config.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};  // throws if unwritable
    return loupe::start_session(config);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "quickstart.loupe";
    const std::string alice_path = path.substr(0, path.rfind(".loupe")) + "-alice.loupe";
    try {
        loupe::session everything = start("quickstart", path, "");
        loupe::session only_alice = start("alice-only", alice_path, R"(user == "alice")");

        std::vector<std::thread> workers;
        for (int id = 1; id <= 3; ++id) workers.emplace_back(worker, id, 200);
        for (auto& w : workers) w.join();

        const loupe::session_stats all = everything.stop();
        const loupe::session_stats alice = only_alice.stop();
        std::printf("recorded %llu events (%llu dropped) into %s\n",
                    static_cast<unsigned long long>(all.delivered), static_cast<unsigned long long>(all.dropped),
                    path.c_str());
        std::printf("recorded %llu events of alice's requests only into %s\n\n",
                    static_cast<unsigned long long>(alice.delivered), alice_path.c_str());

        const loupe::trace trace = loupe::read_trace_file(path);
        std::fputs(loupe::report::format_zone_stats(loupe::report::zone_stats(trace)).c_str(), stdout);
        std::fputs("\n", stdout);
        const auto by_user = loupe::report::zone_stats(trace, loupe::report::group_by::user);
        std::fputs(loupe::report::format_zone_stats(by_user).c_str(), stdout);
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "quickstart: %s\n", e.what());
        return 1;
    }
    return 0;
}
