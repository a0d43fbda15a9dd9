// Cost of a zone, an instant and a counter: idle (compiled in, no session)
// and recorded, each next to the floor it should be compared with.
#include <benchmark/benchmark.h>

#include <string>

#include "bench_support.hpp"

namespace {

void BM_Empty(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Empty);
BENCHMARK(BM_Empty)->Threads(2);

// The physical floor of a recorded zone: two TSC reads and one 32-byte store
// into a thread-local ring, with nothing else.
void BM_Floor_TwoTscRingWrite(benchmark::State& state) {
    static constexpr loupe::site where{"floor", "", "", 0, loupe::site_kind::zone};
    thread_local loupe::detail::raw_record ring[4096];
    std::size_t i = 0;
    for (auto _ : state) {
        const std::uint64_t t0 = loupe::detail::tick_clock::rdtsc();
        const std::uint64_t t1 = loupe::detail::tick_clock::rdtsc();
        loupe::detail::raw_record* slot = &ring[i++ & 4095];
        *slot = loupe::detail::raw_record{&where, t0, t1, 1};
        benchmark::DoNotOptimize(slot);  // the store is observable
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Floor_TwoTscRingWrite);
BENCHMARK(BM_Floor_TwoTscRingWrite)->Threads(2);

void BM_Zone_Idle(benchmark::State& state) {
    for (auto _ : state) {
        LOUPE_ZONE("idle");
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Zone_Idle);
BENCHMARK(BM_Zone_Idle)->Threads(2);

void BM_Zone_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    for (auto _ : state) {
        LOUPE_ZONE("recorded");
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Zone_Recorded);
BENCHMARK(BM_Zone_Recorded)->Threads(2);

// A zone named at run time, by a name already interned (the usual case: an
// endpoint's name repeats): the pair with BM_Zone_Recorded.
void BM_Zone_Named_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    const std::string endpoint = "GET /orders/{id}";
    for (auto _ : state) {
        LOUPE_ZONE_NAMED(endpoint);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Zone_Named_Recorded);
BENCHMARK(BM_Zone_Named_Recorded)->Threads(2);

// A zone named at run time with two arguments (an integer and a short
// text): four ring records where a zone takes one.
void named_zone_with_two_args(benchmark::State& state) {
    const std::string endpoint = "GET /orders/{id}";
    std::int64_t rows = 0;
    for (auto _ : state) {
        LOUPE_ZONE_NAMED_AS(zone, endpoint);
        LOUPE_ZONE_ARG(zone, "rows", ++rows);
        LOUPE_ZONE_ARG(zone, "table", "orders");
        benchmark::ClobberMemory();
    }
}

// The pair with BM_Zone_Recorded.
void BM_Zone_NamedTwoArgs_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    named_zone_with_two_args(state);
}
BENCHMARK(BM_Zone_NamedTwoArgs_Recorded);

void BM_Zone_NamedTwoArgs_Idle(benchmark::State& state) { named_zone_with_two_args(state); }
BENCHMARK(BM_Zone_NamedTwoArgs_Idle);

// Two numeric arguments: one record each.
void BM_Zone_TwoNumberArgs_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    std::int64_t rows = 0;
    for (auto _ : state) {
        LOUPE_ZONE_AS(zone, "query");
        LOUPE_ZONE_ARG(zone, "rows", ++rows);
        LOUPE_ZONE_ARG(zone, "ratio", 0.5);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Zone_TwoNumberArgs_Recorded);

void BM_Zone_Named_Idle(benchmark::State& state) {
    const std::string endpoint = "GET /orders/{id}";
    for (auto _ : state) {
        LOUPE_ZONE_NAMED(endpoint);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Zone_Named_Idle);

void BM_Instant_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    for (auto _ : state) {
        LOUPE_INSTANT("instant");
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Instant_Recorded);
BENCHMARK(BM_Instant_Recorded)->Threads(2);

void BM_Counter_Recorded(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    std::int64_t value = 0;
    for (auto _ : state) {
        LOUPE_COUNTER("counter", ++value);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Counter_Recorded);
BENCHMARK(BM_Counter_Recorded)->Threads(2);

}  // namespace
