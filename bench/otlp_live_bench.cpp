// The live OTLP sink's cost to the host (sinks/otlp_http_sink.hpp): a
// recorded zone while a session sends its spans to a collector on
// 127.0.0.1 (the tests' receiver, bodies read and thrown away), next to
// BM_Zone_Recorded (zone_bench.cpp, a null sink) in the same run. The
// conversion and the sending run on loupe's collector and the sink's
// sender thread, not on the host's: the pair should be equal. Counters:
// dropped_pct (events the collector could not keep: it converts while the
// rings fill), sent_pct (spans the collector accepted, of those
// converted; the rest were dropped with the queue full, counted),
// converted_per_s and accepted_per_s (spans the collector thread
// converted and the receiver accepted per second, session start to stop).
#include <benchmark/benchmark.h>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/sinks/otlp_http_sink.hpp>

#include <chrono>
#include <memory>
#include <optional>

#include "support/otlp_receiver.hpp"

namespace {

loupe_test::otlp_receiver& receiver() {
    static loupe_test::otlp_receiver* r = [] {
        auto* made = new loupe_test::otlp_receiver({}, std::chrono::seconds(24 * 3600));
        made->keep_bodies(false);
        return made;
    }();
    return *r;
}

void BM_Zone_Recorded_LiveOtlp(benchmark::State& state) {
    std::shared_ptr<loupe::sinks::otlp_http_sink> sink;
    std::optional<loupe::session> session;
    if (state.thread_index() == 0) {
        loupe::sinks::otlp_http_sink_options options;
        options.http.endpoint = receiver().url();
        sink = std::make_shared<loupe::sinks::otlp_http_sink>(options);
        loupe::session_config cfg;
        cfg.name = "bench-otlp";
        cfg.sinks = {sink};
        session.emplace(loupe::start_session(cfg));
    }
    const auto started = std::chrono::steady_clock::now();
    for (auto _ : state) {
        LOUPE_ZONE("recorded");
        benchmark::ClobberMemory();
    }
    if (!session) return;
    const loupe::session_stats stats = session->stop();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double total = static_cast<double>(stats.delivered + stats.dropped);
    state.counters["dropped_pct"] = total > 0 ? 100.0 * static_cast<double>(stats.dropped) / total : 0.0;
    const loupe::sinks::otlp_http_sink_stats sent = sink->stats();
    state.counters["sent_pct"] =
        sent.spans > 0 ? 100.0 * static_cast<double>(sent.spans_accepted) / static_cast<double>(sent.spans) : 0.0;
    state.counters["converted_per_s"] = static_cast<double>(sent.spans) / seconds;
    state.counters["accepted_per_s"] = static_cast<double>(sent.spans_accepted) / seconds;
}
BENCHMARK(BM_Zone_Recorded_LiveOtlp);
BENCHMARK(BM_Zone_Recorded_LiveOtlp)->Threads(2);

}  // namespace
