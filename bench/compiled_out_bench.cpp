// The same zone as BM_Zone_Idle, compiled with LOUPE_ENABLED=0. Only the
// macros change with the switch (classes and functions keep one definition),
// so mixing this translation unit with enabled ones is ODR-safe.
#undef LOUPE_ENABLED
#define LOUPE_ENABLED 0

#include <benchmark/benchmark.h>

#include <loupe/loupe.hpp>

namespace {

void BM_Zone_CompiledOut(benchmark::State& state) {
    for (auto _ : state) {
        LOUPE_ZONE("compiled-out");
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Zone_CompiledOut);
BENCHMARK(BM_Zone_CompiledOut)->Threads(2);

}  // namespace
