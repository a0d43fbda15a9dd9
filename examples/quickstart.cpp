// quickstart: a few worker threads handle "requests" with nested zones while
// a session records them to quickstart.loupe; then the trace is read back and
// per-zone statistics are printed (what `loupe stats quickstart.loupe` shows).
#include <loupe/loupe.hpp>
#include <loupe/reader.hpp>
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
    for (int i = 0; i < requests; ++i) {
        LOUPE_ZONE("handle_request");
        parse_request(rng);
        query_database(rng);
        render_response(rng);
    }
    LOUPE_INSTANT("worker_done");
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "quickstart.loupe";

    loupe::session_config config;
    config.name = "quickstart";
    try {
        config.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "quickstart: %s\n", e.what());
        return 1;
    }
    loupe::session session = loupe::start_session(config);

    std::vector<std::thread> workers;
    for (int id = 1; id <= 3; ++id) workers.emplace_back(worker, id, 200);
    for (auto& w : workers) w.join();

    const loupe::session_stats stats = session.stop();
    std::printf("recorded %llu events (%llu dropped) into %s\n\n",
                static_cast<unsigned long long>(stats.delivered), static_cast<unsigned long long>(stats.dropped),
                path.c_str());

    try {
        const loupe::trace trace = loupe::read_trace_file(path);
        std::fputs(loupe::report::format_zone_stats(loupe::report::zone_stats(trace)).c_str(), stdout);
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "quickstart: %s\n", e.what());
        return 1;
    }
    return 0;
}
