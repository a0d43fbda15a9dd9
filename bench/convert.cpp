// Viewer-format conversion speed and size: what `loupe convert` costs.
//
// A server-like trace is recorded once (4 threads; per request a context
// change, a handle_request zone with three nested zones, a counter and a
// flow point; flow points are not counted as events), then:
//   BM_ReadTrace          .loupe bytes -> loupe::trace (the reader's share)
//   BM_WritePerfetto      loupe::trace -> Perfetto protobuf
//   BM_WriteChromeJson    loupe::trace -> Chrome JSON
//   BM_ConvertToPerfetto  .loupe bytes -> Perfetto, one thread at a time (what
//                         `loupe convert` does besides file I/O): the figure for
//                         the 5 M events/s target
//   BM_ConvertToChromeJson  the same for Chrome JSON
//   BM_WriteOtlp          loupe::trace -> OTLP spans in 4 MiB batches;
//                         items_per_second counts spans (zones; the counters
//                         and flow points ride on them): the figure for the
//                         1 M spans/s target
// items_per_second counts trace events; bytes_per_event and size_vs_loupe
// give the output size against the .loupe input.
//
// usage: loupe_bench_convert [--requests=N] [benchmark flags]
#include <benchmark/benchmark.h>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/otlp.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int requests_per_thread = 50000;

const std::vector<unsigned char>& server_trace() {
    static const std::vector<unsigned char> bytes = [] {
        const std::string path = "/tmp/loupe_bench_convert_" + std::to_string(::getpid()) + ".loupe";
        loupe::session_config cfg;
        cfg.name = "convert-bench";
        cfg.overflow = loupe::overflow_policy::block;
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        auto session = loupe::start_session(cfg);
        std::vector<std::thread> workers;
        for (int t = 0; t < 4; ++t) {
            workers.emplace_back([t] {
                LOUPE_THREAD_NAME("worker-" + std::to_string(t));
                static const char* const users[] = {"alice", "bob", "carol"};
                for (int i = 0; i < requests_per_thread; ++i) {
                    const std::string request = "r" + std::to_string(t) + "-" + std::to_string(i);
                    loupe::context_scope who({{loupe::context_field::user, users[i % 3]},
                                              {loupe::context_field::request, request},
                                              {loupe::context_field::app, "shop"}});
                    LOUPE_ZONE("handle_request");
                    LOUPE_FLOW("picked up", loupe::new_flow_id());
                    { LOUPE_ZONE("parse"); }
                    {
                        LOUPE_ZONE("query");
                        LOUPE_COUNTER("rows", i % 17);
                    }
                    { LOUPE_ZONE("render"); }
                }
            });
        }
        for (auto& w : workers) w.join();
        session.stop();
        std::vector<unsigned char> out = loupe::read_file_bytes(path);
        std::remove(path.c_str());
        return out;
    }();
    return bytes;
}

const loupe::trace& server_model() {
    static const loupe::trace t = loupe::read_trace(server_trace().data(), server_trace().size());
    return t;
}

// Events in the server trace (counted without building the model).
std::size_t server_events() {
    static const std::size_t n = [] {
        struct counter : loupe::trace_visitor {
            std::size_t n = 0;
            void on_event(std::uint64_t, const loupe::trace_event&) override { ++n; }
        } c;
        loupe::decode_trace(server_trace().data(), server_trace().size(), c);
        return c.n;
    }();
    return n;
}

void report(benchmark::State& state, std::size_t output_bytes) {
    const double events = static_cast<double>(server_events());
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * server_events()));
    state.counters["events"] = events;
    if (output_bytes != 0) {
        state.counters["bytes_per_event"] = static_cast<double>(output_bytes) / events;
        state.counters["size_vs_loupe"] = static_cast<double>(output_bytes) / static_cast<double>(server_trace().size());
    } else {
        state.counters["bytes_per_event"] = static_cast<double>(server_trace().size()) / events;
    }
}

void BM_ReadTrace(benchmark::State& state) {
    const auto& bytes = server_trace();
    for (auto _ : state) {
        loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());
        benchmark::DoNotOptimize(t.events.data());
    }
    report(state, 0);
}
BENCHMARK(BM_ReadTrace)->Unit(benchmark::kMillisecond);

void BM_WritePerfetto(benchmark::State& state) {
    const loupe::trace& t = server_model();
    std::size_t size = 0;
    for (auto _ : state) {
        std::string out = loupe::viewer::to_perfetto(t);
        size = out.size();
        benchmark::DoNotOptimize(out.data());
    }
    report(state, size);
}
BENCHMARK(BM_WritePerfetto)->Unit(benchmark::kMillisecond);

void BM_WriteChromeJson(benchmark::State& state) {
    const loupe::trace& t = server_model();
    std::size_t size = 0;
    for (auto _ : state) {
        std::string out = loupe::viewer::to_chrome_json(t);
        size = out.size();
        benchmark::DoNotOptimize(out.data());
    }
    report(state, size);
}
BENCHMARK(BM_WriteChromeJson)->Unit(benchmark::kMillisecond);

void BM_ConvertToPerfetto(benchmark::State& state) {
    const auto& bytes = server_trace();
    std::size_t size = 0;
    for (auto _ : state) {
        std::string out;
        loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out);
        size = out.size();
        benchmark::DoNotOptimize(out.data());
    }
    report(state, size);
}
BENCHMARK(BM_ConvertToPerfetto)->Unit(benchmark::kMillisecond)->UseRealTime();  // uses worker threads

void BM_ConvertToChromeJson(benchmark::State& state) {
    const auto& bytes = server_trace();
    std::size_t size = 0;
    for (auto _ : state) {
        std::string out;
        loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), out);
        size = out.size();
        benchmark::DoNotOptimize(out.data());
    }
    report(state, size);
}
BENCHMARK(BM_ConvertToChromeJson)->Unit(benchmark::kMillisecond);

void BM_WriteOtlp(benchmark::State& state) {
    const loupe::trace& t = server_model();
    loupe::viewer::otlp_result result;
    for (auto _ : state) {
        result = loupe::viewer::write_otlp(t, [](std::string_view batch) { benchmark::DoNotOptimize(batch.data()); });
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * result.spans));
    state.counters["spans"] = static_cast<double>(result.spans);
    state.counters["batches"] = static_cast<double>(result.batches);
    state.counters["bytes_per_span"] = static_cast<double>(result.bytes) / static_cast<double>(result.spans);
}
BENCHMARK(BM_WriteOtlp)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--requests=", 11) == 0) requests_per_thread = std::atoi(argv[i] + 11);
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
