// Cost of a flow point: idle (compiled in, no session) next to the empty
// loop, recorded next to an instant (the same work: one timestamp and one
// ring write), and of making a flow id.
#include <benchmark/benchmark.h>

#include "bench_support.hpp"

namespace {

void BM_Flow_Idle(benchmark::State& state) {
    std::uint64_t id = 1;
    for (auto _ : state) {
        LOUPE_FLOW("idle", id);
        benchmark::DoNotOptimize(++id);
    }
}
BENCHMARK(BM_Flow_Idle);

// The same loop without the flow point: the idle floor.
void BM_Flow_IdleFloor(benchmark::State& state) {
    std::uint64_t id = 1;
    for (auto _ : state) {
        benchmark::DoNotOptimize(++id);
    }
}
BENCHMARK(BM_Flow_IdleFloor);

void BM_Flow_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    std::uint64_t id = 1;
    for (auto _ : state) {
        LOUPE_FLOW("recorded", id);
        benchmark::DoNotOptimize(++id);
    }
}
BENCHMARK(BM_Flow_Recorded);
BENCHMARK(BM_Flow_Recorded)->Threads(2);

// An instant recorded in the same loop: what a flow point should cost.
void BM_Flow_InstantFloor(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    std::uint64_t id = 1;
    for (auto _ : state) {
        LOUPE_INSTANT("instant");
        benchmark::DoNotOptimize(++id);
    }
}
BENCHMARK(BM_Flow_InstantFloor);

void BM_Flow_NewId(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(loupe::new_flow_id());
    }
}
BENCHMARK(BM_Flow_NewId);
BENCHMARK(BM_Flow_NewId)->Threads(2);

}  // namespace
