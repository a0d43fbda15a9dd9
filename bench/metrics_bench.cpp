// Cost of the metrics (metrics.hpp, allocations.hpp), each next to the floor
// it should be compared with:
// - BM_CountingAllocator / BM_StdAllocator: allocate and free 64 ints through
//   loupe::counting_allocator and through std::allocator.
#include <benchmark/benchmark.h>

#include <loupe/allocations.hpp>

#include <memory>

namespace {

template <class Allocator>
void allocate_and_free_64(benchmark::State& state) {
    using traits = std::allocator_traits<Allocator>;
    Allocator allocator;
    for (auto _ : state) {
        typename traits::pointer p = traits::allocate(allocator, 64);
        benchmark::DoNotOptimize(p);
        traits::deallocate(allocator, p, 64);
        benchmark::ClobberMemory();
    }
}

void BM_StdAllocator(benchmark::State& state) { allocate_and_free_64<std::allocator<int>>(state); }
BENCHMARK(BM_StdAllocator);
BENCHMARK(BM_StdAllocator)->Threads(2);

void BM_CountingAllocator(benchmark::State& state) { allocate_and_free_64<loupe::counting_allocator<int>>(state); }
BENCHMARK(BM_CountingAllocator);
BENCHMARK(BM_CountingAllocator)->Threads(2);

}  // namespace
