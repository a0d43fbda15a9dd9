// loupe_bench_throughput [threads] [events-per-thread] [drop|block] [file]
//
// Records zones as fast as possible from N threads into a file sink and
// prints what was produced, written and dropped, the rate, and the file's
// bytes per event. Checks the accounting identity produced = written + dropped
// and exits 1 if it does not hold.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct options {
    unsigned threads = 2;
    unsigned long long events_per_thread = 1000000;
    loupe::overflow_policy policy = loupe::overflow_policy::drop;
    std::string path = "loupe_throughput.loupe";
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "loupe_bench_throughput: %s\n"
                 "usage: loupe_bench_throughput [threads] [events-per-thread] [drop|block] [file]\n",
                 why);
    std::exit(2);
}

unsigned long long parse_count(const char* text, const char* what) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v == 0) {
        usage((std::string(what) + " '" + text + "': expected a positive whole number").c_str());
    }
    return v;
}

options parse(int argc, char** argv) {
    options o;
    if (argc > 1) o.threads = static_cast<unsigned>(parse_count(argv[1], "threads"));
    if (argc > 2) o.events_per_thread = parse_count(argv[2], "events-per-thread");
    if (argc > 3) {
        if (std::strcmp(argv[3], "drop") == 0) {
            o.policy = loupe::overflow_policy::drop;
        } else if (std::strcmp(argv[3], "block") == 0) {
            o.policy = loupe::overflow_policy::block;
        } else {
            usage((std::string("policy '") + argv[3] + "': expected drop or block").c_str());
        }
    }
    if (argc > 4) o.path = argv[4];
    if (argc > 5) usage("too many arguments");
    return o;
}

void produce(unsigned long long n) {
    for (unsigned long long i = 0; i < n; ++i) {
        LOUPE_ZONE("throughput");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    loupe::session_config cfg;
    cfg.name = "throughput";
    cfg.kinds = loupe::kinds::zones;
    cfg.overflow = o.policy;
    try {
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(o.path)};
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "loupe_bench_throughput: %s\n", e.what());
        return 1;
    }
    loupe::session session = loupe::start_session(cfg);

    const auto begin = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < o.threads; ++t) workers.emplace_back(produce, o.events_per_thread);
    for (auto& w : workers) w.join();
    const loupe::session_stats stats = session.stop();  // includes draining and writing
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

    struct stat st {};
    ::stat(o.path.c_str(), &st);
    const unsigned long long produced = o.events_per_thread * o.threads;
    const bool identity = produced == stats.delivered + stats.dropped;
    std::printf("threads          %u\n", o.threads);
    std::printf("policy           %s\n", o.policy == loupe::overflow_policy::block ? "block" : "drop");
    std::printf("produced         %llu\n", produced);
    std::printf("written          %llu\n", static_cast<unsigned long long>(stats.delivered));
    std::printf("dropped          %llu\n", static_cast<unsigned long long>(stats.dropped));
    std::printf("identity         %s (produced = written + dropped)\n", identity ? "holds" : "BROKEN");
    std::printf("seconds          %.3f\n", seconds);
    std::printf("events/s         %.2f M\n", static_cast<double>(produced) / seconds / 1e6);
    std::printf("file bytes       %lld\n", static_cast<long long>(st.st_size));
    std::printf("bytes/event      %.2f\n",
                stats.delivered ? static_cast<double>(st.st_size) / static_cast<double>(stats.delivered) : 0.0);
    std::printf("sink failures    %llu\n", static_cast<unsigned long long>(stats.sink_failures));
    return identity && stats.sink_failures == 0 ? 0 : 1;
}
