// Cost of the metrics (metrics.hpp, allocations.hpp), each next to the floor
// it should be compared with:
// - BM_CountingAllocator / BM_StdAllocator: allocate and free 64 ints through
//   loupe::counting_allocator and through std::allocator.
// - BM_MetricAdd: one push-metric delta (thread + CPU row; the process total
//   is the sum of the rows).
// - BM_Zone_Recorded_PushMetric / _CpuTime / _TaskClock / _Cycles: a zone
//   carrying one metric's delta, to compare with BM_Zone_Recorded
//   (zone_bench.cpp) in the same run.
// - BM_ThreadCpuTime_*: the candidate sources of a thread's CPU time, read
//   once: clock_gettime(CLOCK_THREAD_CPUTIME_ID), a perf task-clock counter
//   read(2), getrusage(RUSAGE_THREAD).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <loupe/metrics/allocations.hpp>
#include <loupe/metrics/metric.hpp>

#include <memory>
#include <string>

#include "bench_support.hpp"

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

void BM_MetricAdd(benchmark::State& state) {
    static const loupe::metric_id id = loupe::metric("bench.rows");
    for (auto _ : state) {
        loupe::metric_add(id, 3);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_MetricAdd);
BENCHMARK(BM_MetricAdd)->Threads(2);

void zone_with_metric(benchmark::State& state, const char* metric) {
    const auto id = static_cast<loupe::metric_id>(loupe::find_metric(metric));
    if (loupe::detail::metrics_registry().definition(id).source == loupe::metric_source::pull &&
        !loupe::detail::pull_metric_unavailable(id, metric).empty()) {
        state.SkipWithError((std::string(metric) + " is unavailable on this machine").c_str());
        return;
    }
    loupe_bench::discarding_session session(state, loupe::kinds::all, {}, {metric});
    for (auto _ : state) {
        LOUPE_ZONE("recorded");
        benchmark::ClobberMemory();
    }
}

void BM_Zone_Recorded_PushMetric(benchmark::State& state) {
    loupe::metric("bench.rows");
    zone_with_metric(state, "bench.rows");
}
BENCHMARK(BM_Zone_Recorded_PushMetric);
BENCHMARK(BM_Zone_Recorded_PushMetric)->Threads(2);

void BM_Zone_Recorded_CpuTime(benchmark::State& state) { zone_with_metric(state, "cpu_time"); }
BENCHMARK(BM_Zone_Recorded_CpuTime);

void BM_Zone_Recorded_TaskClock(benchmark::State& state) { zone_with_metric(state, "task_clock"); }
BENCHMARK(BM_Zone_Recorded_TaskClock);

void BM_Zone_Recorded_Cycles(benchmark::State& state) { zone_with_metric(state, "cycles"); }
BENCHMARK(BM_Zone_Recorded_Cycles);

void BM_ThreadCpuTime_ClockGettime(benchmark::State& state) {
    for (auto _ : state) {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        benchmark::DoNotOptimize(ts);
    }
}
BENCHMARK(BM_ThreadCpuTime_ClockGettime);

void BM_ThreadCpuTime_PerfTaskClockRead(benchmark::State& state) {
    const int fd = loupe::detail::open_perf_counter(loupe::metrics::task_clock);
    if (fd < 0) {
        state.SkipWithError("perf task_clock is unavailable on this machine");
        return;
    }
    for (auto _ : state) {
        std::uint64_t value = 0;
        benchmark::DoNotOptimize(::read(fd, &value, sizeof value));
        benchmark::DoNotOptimize(value);
    }
    ::close(fd);
}
BENCHMARK(BM_ThreadCpuTime_PerfTaskClockRead);

void BM_ThreadCpuTime_Getrusage(benchmark::State& state) {
    for (auto _ : state) {
        rusage usage;
        getrusage(RUSAGE_THREAD, &usage);
        benchmark::DoNotOptimize(usage);
    }
}
BENCHMARK(BM_ThreadCpuTime_Getrusage);

}  // namespace
