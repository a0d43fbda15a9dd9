// Cost of annotating a thread (nothing recording) and of a zone under a
// filtered session, on a thread the filter rejects and on one it accepts.
// Compare with BM_Empty and BM_Zone_Recorded in zone_bench.cpp (same binary).
#include <benchmark/benchmark.h>

#include "bench_support.hpp"

namespace {

using loupe::context_field;

void BM_Annotate_OneField(benchmark::State& state) {
    for (auto _ : state) {
        loupe::field_scope request(context_field::request, "req-0123456789");
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Annotate_OneField);
BENCHMARK(BM_Annotate_OneField)->Threads(2);

void BM_Annotate_FourFields(benchmark::State& state) {
    for (auto _ : state) {
        loupe::context_scope request({{context_field::user, "alice"},
                                      {context_field::session, "s-4711"},
                                      {context_field::request, "req-0123456789"},
                                      {context_field::app, "shop"}});
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Annotate_FourFields);
BENCHMARK(BM_Annotate_FourFields)->Threads(2);

// A zone under a session whose filter is `user == "alice"`, on a thread
// serving `user`.
void zone_under_alice_filter(benchmark::State& state, const char* user) {
    loupe_bench::discarding_session session(state, loupe::kinds::all, R"(user == "alice")");
    loupe::field_scope scope(context_field::user, user);
    for (auto _ : state) {
        LOUPE_ZONE("filtered");
        benchmark::ClobberMemory();
    }
}

// One session is active, but its filter does not match this thread.
void BM_Zone_FilteredOut(benchmark::State& state) { zone_under_alice_filter(state, "bob"); }
BENCHMARK(BM_Zone_FilteredOut);
BENCHMARK(BM_Zone_FilteredOut)->Threads(2);

// The same session, and its filter matches this thread.
void BM_Zone_FilteredIn(benchmark::State& state) { zone_under_alice_filter(state, "alice"); }
BENCHMARK(BM_Zone_FilteredIn);
BENCHMARK(BM_Zone_FilteredIn)->Threads(2);

}  // namespace
