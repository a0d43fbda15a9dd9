// loupe_bench_throughput [--busy N] [--sink file|null|memory] [--ring-bytes N] [--memory-budget N]
//                        [--events zones|calls] [threads] [events-per-thread] [drop|block] [file]
//
// Records zones (or, with `--events calls`, outgoing calls of a task: two
// task points each, CALL_OUT and RETURN_IN, each a unit the collector
// decodes) as fast as possible from N threads into a file sink (or the
// null sink, or a memory sink, which keeps every event: mind the count)
// and prints what was produced, written and dropped, the rate,
// the file's bytes per event, and the collector's own CPU time per event
// (its thread's time on CPU, from /proc/self/task/TID/schedstat, Linux);
// with the file sink, also its writer thread's (which makes the write(2)
// calls).
// `--busy N` starts N threads that spin for the whole run: the collector
// then competes for the CPUs as on a busy server. `--ring-bytes` and
// `--memory-budget` set the session's (0: rings never grow); the ring memory
// printed is what the rings held when the producers finished, and the most
// they held at once. Checks the accounting identity produced = written +
// dropped and exits 1 if it does not hold.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/tasks.hpp>

#include <dirent.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "header_slot.hpp"

namespace {

struct options {
    unsigned busy = 0;
    unsigned long long ring_bytes = 0;  // 0: the session's default
    long long memory_budget = -1;       // -1: the session's default
    enum sink_kind { file, null, memory } sink = file;  // in the order of sink_names
    bool calls = false;  // outgoing calls (two events each) instead of zones
    unsigned threads = 2;
    unsigned long long events_per_thread = 1000000;
    loupe::overflow_policy policy = loupe::overflow_policy::drop;
    std::string path = "loupe_throughput.loupe";
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "loupe_bench_throughput: %s\n"
                 "usage: loupe_bench_throughput [--busy N] [--sink file|null|memory] [--ring-bytes N] [--memory-budget N]\n"
                 "                              [--events zones|calls] [threads] [events-per-thread] [drop|block] [file]\n",
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

// --sink's values, by options::sink_kind.
constexpr const char* sink_names[] = {"file", "null", "memory"};

// The value of the option at argv[i] (argv[i + 1], taken): its position
// in `choices`; anything else is a usage error that lists them.
template <std::size_t N>
std::size_t parse_choice(int argc, char** argv, int& i, const char* const (&choices)[N]) {
    std::string expected;
    for (std::size_t k = 0; k < N; ++k) {
        if (k != 0) expected += k + 1 == N ? " or " : ", ";
        expected += choices[k];
    }
    const std::string name = argv[i];
    if (i + 1 == argc) usage((name + " needs " + expected).c_str());
    const char* value = argv[++i];
    for (std::size_t k = 0; k < N; ++k) {
        if (std::strcmp(value, choices[k]) == 0) return k;
    }
    usage((name + " '" + value + "': expected " + expected).c_str());
}

options parse(int argc, char** argv) {
    options o;
    std::vector<const char*> positional;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--busy") == 0) {
            if (i + 1 == argc) usage("--busy needs a number of threads");
            const char* n = argv[++i];
            o.busy = std::strcmp(n, "0") == 0 ? 0 : static_cast<unsigned>(parse_count(n, "--busy"));
        } else if (std::strcmp(argv[i], "--ring-bytes") == 0) {
            if (i + 1 == argc) usage("--ring-bytes needs a size in bytes");
            o.ring_bytes = parse_count(argv[++i], "--ring-bytes");
        } else if (std::strcmp(argv[i], "--memory-budget") == 0) {
            if (i + 1 == argc) usage("--memory-budget needs a size in bytes (0: rings never grow)");
            const char* n = argv[++i];
            o.memory_budget = std::strcmp(n, "0") == 0 ? 0 : static_cast<long long>(parse_count(n, "--memory-budget"));
        } else if (std::strcmp(argv[i], "--events") == 0) {
            o.calls = parse_choice(argc, argv, i, {"zones", "calls"}) == 1;
        } else if (std::strcmp(argv[i], "--sink") == 0) {
            o.sink = static_cast<options::sink_kind>(parse_choice(argc, argv, i, sink_names));
        } else {
            positional.push_back(argv[i]);
        }
    }
    if (positional.size() > 0) o.threads = static_cast<unsigned>(parse_count(positional[0], "threads"));
    if (positional.size() > 1) o.events_per_thread = parse_count(positional[1], "events-per-thread");
    if (positional.size() > 2) {
        if (std::strcmp(positional[2], "drop") == 0) {
            o.policy = loupe::overflow_policy::drop;
        } else if (std::strcmp(positional[2], "block") == 0) {
            o.policy = loupe::overflow_policy::block;
        } else {
            usage((std::string("policy '") + positional[2] + "': expected drop or block").c_str());
        }
    }
    if (positional.size() > 3) o.path = positional[3];
    if (positional.size() > 4) usage("too many arguments");
    if (o.calls && o.events_per_thread % 2 != 0) {
        usage((std::to_string(o.events_per_thread) + " events per thread: calls record two events each, expected an even number").c_str());
    }
    return o;
}

// The collector thread's time on CPU so far, in ns (0 when there is no
// collector or no /proc): the first field of its schedstat.
unsigned long long collector_cpu_ns() {
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return 0;
    unsigned long long ns = 0;
    while (const dirent* e = ::readdir(tasks)) {
        if (e->d_name[0] == '.') continue;
        const std::string dir = std::string("/proc/self/task/") + e->d_name;
        char comm[32] = {};
        if (std::FILE* f = std::fopen((dir + "/comm").c_str(), "r")) {
            if (std::fgets(comm, sizeof comm, f) == nullptr) comm[0] = '\0';
            std::fclose(f);
        }
        if (std::strncmp(comm, "loupe-collector", 15) != 0) continue;
        if (std::FILE* f = std::fopen((dir + "/schedstat").c_str(), "r")) {
            if (std::fscanf(f, "%llu", &ns) != 1) ns = 0;
            std::fclose(f);
        }
    }
    ::closedir(tasks);
    return ns;
}

void produce_zones(unsigned long long n) {
    for (unsigned long long i = 0; i < n; ++i) {
        LOUPE_ZONE("throughput");
    }
}

// n events: n / 2 outgoing calls in one task.
void produce_calls(unsigned long long n) {
    loupe::tasks::task_scope task(loupe::tasks::new_task());
    loupe_bench::header_slot header;
    for (unsigned long long i = 0; i < n / 2; ++i) {
        loupe::tasks::outgoing_call call("inventory", "GET /stock", header);
        call.returned(200);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    loupe::session_config cfg;
    cfg.name = "throughput";
    cfg.kinds = o.calls ? loupe::kinds::tasks : loupe::kinds::zones;
    cfg.overflow = o.policy;
    if (o.ring_bytes != 0) cfg.ring_bytes = o.ring_bytes;
    if (o.memory_budget >= 0) cfg.memory_budget = static_cast<std::size_t>(o.memory_budget);
    std::shared_ptr<loupe::sinks::file_sink> file;
    if (o.sink == options::null) {
        cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
    } else if (o.sink == options::memory) {
        cfg.sinks = {std::make_shared<loupe::sinks::memory_sink>()};
    } else {
        file = std::make_shared<loupe::sinks::file_sink>(o.path);
        cfg.sinks = {file};
    }
    std::atomic<bool> spinning{true};
    std::vector<std::thread> busy;
    for (unsigned b = 0; b < o.busy; ++b) {
        busy.emplace_back([&spinning] {
            volatile unsigned long long x = 0;
            while (spinning.load(std::memory_order_relaxed)) x = x + 1;
        });
    }
    loupe::session session;
    try {
        session = loupe::start_session(cfg);
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "loupe_bench_throughput: %s\n", e.what());
        spinning = false;
        for (auto& b : busy) b.join();
        return 1;
    }
    const unsigned long long collector_before = collector_cpu_ns();

    const auto begin = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < o.threads; ++t) workers.emplace_back(o.calls ? produce_calls : produce_zones, o.events_per_thread);
    for (auto& w : workers) w.join();
    const loupe::detail::runtime_counters rings = loupe::detail::rt().counters();  // before the grown rings go
    const loupe::session_stats stats = session.stop();  // includes draining and writing
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    const unsigned long long collector_ns = collector_cpu_ns() - collector_before;
    spinning = false;
    for (auto& b : busy) b.join();

    struct stat st {};
    if (file) ::stat(o.path.c_str(), &st);
    const unsigned long long produced = o.events_per_thread * o.threads;
    const bool identity = produced == stats.delivered + stats.dropped;
    std::printf("threads          %u\n", o.threads);
    std::printf("busy threads     %u\n", o.busy);
    std::printf("events           %s\n", o.calls ? "calls (two task points each)" : "zones");
    std::printf("sink             %s\n", sink_names[o.sink]);
    std::printf("policy           %s\n", o.policy == loupe::overflow_policy::block ? "block" : "drop");
    std::printf("produced         %llu\n", produced);
    std::printf("written          %llu\n", static_cast<unsigned long long>(stats.delivered));
    std::printf("dropped          %llu (%.1f %%)\n", static_cast<unsigned long long>(stats.dropped),
                100.0 * static_cast<double>(stats.dropped) / static_cast<double>(produced));
    std::printf("identity         %s (produced = written + dropped)\n", identity ? "holds" : "BROKEN");
    std::printf("seconds          %.3f\n", seconds);
    std::printf("events/s         %.2f M\n", static_cast<double>(produced) / seconds / 1e6);
    std::printf("file bytes       %lld\n", static_cast<long long>(st.st_size));
    std::printf("bytes/event      %.2f\n",
                stats.delivered ? static_cast<double>(st.st_size) / static_cast<double>(stats.delivered) : 0.0);
    std::printf("collector cpu    %.1f ns/event written (%.3f s on CPU)\n",
                stats.delivered ? static_cast<double>(collector_ns) / static_cast<double>(stats.delivered) : 0.0,
                static_cast<double>(collector_ns) / 1e9);
    if (file) {
        const std::uint64_t writer_ns = file->writer_cpu_ns();
        std::printf("writer cpu       %.1f ns/event written (%.3f s on CPU; the file sink's own thread)\n",
                    stats.delivered ? static_cast<double>(writer_ns) / static_cast<double>(stats.delivered) : 0.0,
                    static_cast<double>(writer_ns) / 1e9);
    }
    std::printf("ring memory      %.1f MiB at the end of the run (peak %.1f MiB, budget %.0f MiB)\n",
                static_cast<double>(rings.ring_bytes) / 1048576.0, static_cast<double>(rings.ring_bytes_peak) / 1048576.0,
                static_cast<double>(cfg.memory_budget) / 1048576.0);
    std::printf("rings grown      %llu (%llu by their thread, its ring full before the collector came by)\n",
                static_cast<unsigned long long>(rings.rings_grown),
                static_cast<unsigned long long>(rings.rings_grown_by_thread));
    std::printf("pauses cut       %llu (collector pauses a ring passing half full ended)\n",
                static_cast<unsigned long long>(rings.pauses_cut));
    std::printf("sink failures    %llu\n", static_cast<unsigned long long>(stats.sink_failures));
    return identity && stats.sink_failures == 0 ? 0 : 1;
}
