// What `loupe merge` costs: 8 synthetic traces of 1 M events each (4 hosts,
// 2 processes per host), whose tasks run through three processes each: the
// frontend (input 0) serves a request, calls a service, which calls another
// and a database that is not profiled. Built once through the encoder, then:
//   BM_MergeJoin      the task points of already-read traces joined: sides,
//                     calls, clock alignment, trees, self times
//                     (items_per_second: task points)
//   BM_MergeReadJoin  .loupe bytes -> every trace split from its set and
//                     decoded (events checked, not kept), its task points
//                     joined, the counts kept (task_detail::counts): what
//                     `loupe merge -o X.loupe` does besides copying the
//                     bytes (items_per_second: events, the figure for the
//                     5 M events/s target)
//   BM_MergeReport    the task report of the joined forest (critical paths,
//                     statistics, text) (items_per_second: calls)
// Counters: events, task points, calls and tasks per run, input MB, and
// offset_err_ns (the farthest host's estimated clock offset against the
// skew the inputs were made with).
//
// LOUPE_MERGE_BENCH_TASKS=N makes N tasks instead of 20000 (the 1 M events
// per input stay). LOUPE_MERGE_BENCH_DIR=DIR writes the 8 inputs to DIR/merge-<k>.loupe
// first, to time the command itself (peak memory against the largest
// input: /usr/bin/time -v loupe merge DIR/merge-*.loupe -o out.loupe).
//
// In loupe_bench_convert (bench/CMakeLists.txt), beside the conversions.
#include <benchmark/benchmark.h>

#include <loupe/base/record.hpp>
#include <loupe/format/encoder.hpp>
#include <loupe/format/trace_set.hpp>
#include <loupe/report/task_join.hpp>
#include <loupe/report/task_report.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

namespace {

constexpr int kInputs = 8;
constexpr std::uint64_t kEventsPerInput = 1'000'000;
// Tasks (each: a root, 2 joined calls and 1 opaque call: 12 task points);
// LOUPE_MERGE_BENCH_TASKS=N changes it.
std::uint64_t task_count() {
    static const std::uint64_t n = [] {
        const char* v = std::getenv("LOUPE_MERGE_BENCH_TASKS");
        const long long parsed = v ? std::atoll(v) : 0;
        return parsed > 0 ? static_cast<std::uint64_t>(parsed) : std::uint64_t{20'000};
    }();
    return n;
}

// One process's trace under construction: zones on 4 threads, task points.
class synthetic_process {
public:
    synthetic_process(int index) : index_(index) {
        program_ = "service-" + std::to_string(index);
        host_ = "host-" + std::to_string(index / 2);
        domain_ = "boot-" + std::to_string(index / 2);
        session_.name = program_;
        session_.start_ns = skew();
        session_.wall_anchor_ns = 1'700'000'000'000'000'000ull;
        session_.pid = 1000 + static_cast<std::uint32_t>(index);
        session_.clock = loupe::clock_source::tsc;
        session_.program = program_;
        session_.host = host_;
        session_.clock_domain = domain_;
        for (std::uint64_t t = 0; t < 4; ++t) {
            names_.push_back("worker-" + std::to_string(t));
            threads_.push_back(loupe::thread_info{t + 1, 5000 + t, names_.back(), 1});
        }
        loupe::record r;
        r.session = &session_;
        r.kind = loupe::record_kind::session_begin;
        encoder_.encode(r);
    }
    // Each host's clock is ahead of host 0's by 1.5 ms per host.
    std::uint64_t skew() const { return static_cast<std::uint64_t>(index_ / 2) * 1'500'000; }

    void zone(std::uint64_t thread, std::uint64_t begin, std::uint64_t end) {
        static const loupe::site sites[] = {{"handle", "svc.cpp", "handle", 10, loupe::site_kind::zone},
                                            {"parse", "svc.cpp", "parse", 20, loupe::site_kind::zone},
                                            {"query", "svc.cpp", "query", 30, loupe::site_kind::zone}};
        loupe::record r;
        r.session = &session_;
        r.thread = &threads_[thread];
        r.kind = loupe::record_kind::zone;
        r.where = &sites[events_ % 3];
        r.begin_ns = begin + skew();
        r.end_ns = end + skew();
        encoder_.encode(r);
        ++events_;
    }
    void point(loupe::task_point_kind kind, std::uint64_t thread, std::uint64_t time, std::uint64_t task,
               std::uint64_t call, std::uint64_t span, const char* name, const char* peer = "") {
        loupe::task_point p;
        p.kind = kind;
        p.trace_high = 0x4bf92f3577b34da6;
        p.trace_low = task;
        p.call_id = call;
        p.span_id = span;
        p.name = name;
        p.peer = peer;
        loupe::record r;
        r.session = &session_;
        r.thread = &threads_[thread];
        r.kind = loupe::record_kind::task_point;
        r.begin_ns = r.end_ns = time + skew();
        r.task = &p;
        encoder_.encode(r);
    }
    std::uint64_t events() const { return events_; }
    std::vector<unsigned char> finish(std::uint64_t end) {
        loupe::record r;
        r.session = &session_;
        r.kind = loupe::record_kind::session_end;
        r.end_ns = end + skew();
        r.count = events_;
        encoder_.encode(r);
        encoder_.close_batch();
        return std::move(encoder_.bytes());
    }

private:
    int index_;
    std::string program_, host_, domain_;
    loupe::session_info session_;
    std::deque<std::string> names_;
    std::vector<loupe::thread_info> threads_;
    loupe::detail::trace_encoder encoder_;
    std::uint64_t events_ = 0;
};

struct inputs {
    std::vector<std::vector<unsigned char>> bytes;
    std::uint64_t events = 0;
    std::uint64_t size = 0;
};

// Per task k at time T = k * 40 µs: the frontend's handler (span 1) on
// thread k % 4 calls service a = 1 + k % 7 (call 2), whose handler (span 3)
// calls service b = 1 + (k + 3) % 7 (call 4) and the database (call 5,
// opaque). Zones fill each thread between the points, in end order, up to
// 1 M events per input.
const inputs& synthetic_inputs() {
    static const inputs in = [] {
        std::vector<synthetic_process> p;
        p.reserve(kInputs);
        for (int i = 0; i < kInputs; ++i) p.emplace_back(i);
        const std::uint64_t tasks = task_count();
        for (std::uint64_t k = 0; k < tasks; ++k) {
            const std::uint64_t t = k * 40'000, thread = k % 4;
            const int a = 1 + static_cast<int>(k % 7), b = 1 + static_cast<int>((k + 3) % 7);
            p[0].point(loupe::task_point_kind::request_in, thread, t, k + 1, 0, 1, "GET /");
            p[0].point(loupe::task_point_kind::call_out, thread, t + 1'000, k + 1, 2, 1, "GET /a");
            p[static_cast<std::size_t>(a)].point(loupe::task_point_kind::request_in, thread, t + 1'200, k + 1, 2, 3, "GET /a");
            p[static_cast<std::size_t>(a)].point(loupe::task_point_kind::call_out, thread, t + 2'000, k + 1, 4, 3, "GET /b");
            p[static_cast<std::size_t>(b)].point(loupe::task_point_kind::request_in, thread, t + 2'300, k + 1, 4, 6, "GET /b");
            p[static_cast<std::size_t>(b)].point(loupe::task_point_kind::return_out, thread, t + 9'000, k + 1, 4, 6, "GET /b");
            p[static_cast<std::size_t>(a)].point(loupe::task_point_kind::return_in, thread, t + 9'400, k + 1, 4, 3, "GET /b");
            p[static_cast<std::size_t>(a)].point(loupe::task_point_kind::call_out, thread, t + 10'000, k + 1, 5, 3, "SELECT", "db:5432");
            p[static_cast<std::size_t>(a)].point(loupe::task_point_kind::return_in, thread, t + 20'000, k + 1, 5, 3, "SELECT", "db:5432");
            p[static_cast<std::size_t>(a)].point(loupe::task_point_kind::return_out, thread, t + 21'000, k + 1, 2, 3, "GET /a");
            p[0].point(loupe::task_point_kind::return_in, thread, t + 21'300, k + 1, 2, 1, "GET /a");
            p[0].point(loupe::task_point_kind::return_out, thread, t + 30'000, k + 1, 0, 1, "GET /");
            // Zones: short ones on the task's thread, up to the share of events.
            for (int i = 0; i < kInputs; ++i) {
                synthetic_process& s = p[static_cast<std::size_t>(i)];
                const std::uint64_t target = (k + 1) * kEventsPerInput / tasks;
                for (std::uint64_t z = 0; s.events() < target; ++z) s.zone(thread, t + 100 + 30 * z, t + 120 + 30 * z);
            }
        }
        inputs out;
        for (synthetic_process& s : p) {
            out.events += s.events();
            out.bytes.push_back(s.finish(tasks * 40'000 + 100'000));
            out.size += out.bytes.back().size();
        }
        if (const char* dir = std::getenv("LOUPE_MERGE_BENCH_DIR")) {
            for (std::size_t i = 0; i < out.bytes.size(); ++i) {
                const std::string path = std::string(dir) + "/merge-" + std::to_string(i) + ".loupe";
                if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
                    std::fwrite(out.bytes[i].data(), 1, out.bytes[i].size(), f);
                    std::fclose(f);
                }
            }
        }
        return out;
    }();
    return in;
}

// The traces read without their events (what the join needs).
const std::vector<loupe::trace>& read_inputs() {
    static const std::vector<loupe::trace> traces = [] {
        std::vector<loupe::trace> out;
        for (const auto& b : synthetic_inputs().bytes) out.push_back(loupe::read_trace_without_events(b.data(), b.size()));
        return out;
    }();
    return traces;
}

void count(benchmark::State& state, const loupe::report::task_forest& f) {
    state.counters["events"] = static_cast<double>(synthetic_inputs().events);
    state.counters["points"] = static_cast<double>(f.counts.points);
    state.counters["calls"] = static_cast<double>(f.counts.calls);
    state.counters["tasks"] = static_cast<double>(f.counts.tasks);
    state.counters["input_MB"] = static_cast<double>(synthetic_inputs().size) / 1e6;
    state.counters["offset_err_ns"] = static_cast<double>(std::llabs(f.alignment.domains.back().offset_ns - 4'500'000));
}

void BM_MergeJoin(benchmark::State& state) {
    const std::vector<loupe::trace>& traces = read_inputs();
    loupe::report::task_forest f;
    std::uint64_t points = 0;
    for (auto _ : state) {
        f = loupe::report::join_tasks(traces);
        points += f.counts.points;
        benchmark::DoNotOptimize(f.nodes.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(points));
    count(state, f);
}
BENCHMARK(BM_MergeJoin)->Unit(benchmark::kMillisecond);

void BM_MergeReadJoin(benchmark::State& state) {
    const inputs& in = synthetic_inputs();
    loupe::report::task_forest f;
    for (auto _ : state) {
        loupe::report::task_joiner joiner;
        for (const auto& b : in.bytes) {
            for (const loupe::trace_segment& s : loupe::split_trace_set(b.data(), b.size())) {
                joiner.add(b.data() + s.offset, static_cast<std::size_t>(s.size));
            }
        }
        f = joiner.finish(loupe::report::task_detail::counts);
        benchmark::DoNotOptimize(f.counts);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * in.events));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size));
    count(state, f);
}
BENCHMARK(BM_MergeReadJoin)->Unit(benchmark::kMillisecond);

void BM_MergeReport(benchmark::State& state) {
    const loupe::report::task_forest forest = loupe::report::join_tasks(read_inputs());
    std::size_t bytes = 0;
    for (auto _ : state) {
        const loupe::report::task_report r = loupe::report::report_tasks(forest);
        const std::string text = loupe::report::format_task_report(r);
        bytes = text.size();
        benchmark::DoNotOptimize(text.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * forest.counts.calls));
    state.counters["text_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_MergeReport)->Unit(benchmark::kMillisecond);

}  // namespace
