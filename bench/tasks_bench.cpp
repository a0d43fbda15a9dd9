// Cost of carrying a task's context (W3C Trace Context): parsing and
// formatting a traceparent, parsing a tracestate, extracting both from a
// header map, and making a span id, next to the floor a traceparent cannot
// beat (copying its 55 bytes); and of the call scopes: an outgoing call
// with nothing recording tasks next to the empty loop, and recorded (a new
// id, the traceparent written into a setter, CALL_OUT and RETURN_IN) next
// to a recorded zone in the same binary and to the call's physical floor
// (its records written where another core reads them); setting the
// thread's task.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <loupe/loupe.hpp>
#include <loupe/tasks.hpp>

#include "bench_support.hpp"
#include "header_slot.hpp"

namespace {

namespace tasks = loupe::tasks;

constexpr std::string_view kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::string_view kTracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=opaque-value_1";

// The floor of format and parse: the 55 bytes copied, nothing checked.
void BM_Floor_Memcpy55(benchmark::State& state) {
    char out[tasks::traceparent_size];
    for (auto _ : state) {
        const char* in = kTraceparent.data();
        benchmark::DoNotOptimize(in);
        std::memcpy(out, in, sizeof out);
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Floor_Memcpy55);

void BM_Traceparent_Parse(benchmark::State& state) {
    std::string_view text = kTraceparent;
    for (auto _ : state) {
        benchmark::DoNotOptimize(text);
        const tasks::traceparent_result r = tasks::parse_traceparent(text);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_Traceparent_Parse);

void BM_Traceparent_Format(benchmark::State& state) {
    tasks::task_context c = tasks::new_task(tasks::trace_flags::sampled);
    char out[tasks::traceparent_size];
    for (auto _ : state) {
        benchmark::DoNotOptimize(c);
        tasks::format_traceparent(c, out);
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_Traceparent_Format);

// A realistic list: three members, one of them multi-tenant.
void BM_Tracestate_Parse(benchmark::State& state) {
    std::string_view text = kTracestate;
    for (auto _ : state) {
        benchmark::DoNotOptimize(text);
        const tasks::tracestate_result r = tasks::parse_tracestate(text);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_Tracestate_Parse);

// A request's headers as an HTTP library hands them over: ten fields, two of
// them ours (found by a case-insensitive scan).
void BM_Extract_HeaderMap(benchmark::State& state) {
    const std::map<std::string, std::string> headers = {
        {"accept", "application/json"},
        {"accept-encoding", "gzip, deflate"},
        {"authorization", "Bearer abc.def.ghi"},
        {"content-length", "0"},
        {"content-type", "application/json"},
        {"host", "orders.internal:8080"},
        {"traceparent", std::string(kTraceparent)},
        {"tracestate", std::string(kTracestate)},
        {"user-agent", "client/1.2"},
        {"x-request-id", "r-42"},
    };
    for (auto _ : state) {
        const tasks::extract_result r = tasks::extract(headers);
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_Extract_HeaderMap);

void BM_NewSpanId(benchmark::State& state) {
    for (auto _ : state) {
        const std::uint64_t id = tasks::new_span_id();
        benchmark::DoNotOptimize(id);
    }
}
BENCHMARK(BM_NewSpanId);
BENCHMARK(BM_NewSpanId)->Threads(2);

using loupe_bench::header_slot;

void BM_OutgoingCall_Idle(benchmark::State& state) {
    header_slot headers;
    for (auto _ : state) {
        tasks::outgoing_call call("inventory", "GET /stock", headers);
        call.returned(200);
        benchmark::DoNotOptimize(&call);
    }
}
BENCHMARK(BM_OutgoingCall_Idle);

// The same loop without the call: the idle floor.
void BM_OutgoingCall_IdleFloor(benchmark::State& state) {
    header_slot headers;
    for (auto _ : state) {
        benchmark::DoNotOptimize(&headers);
    }
}
BENCHMARK(BM_OutgoingCall_IdleFloor);

// Recorded calls in a task: a new id, the traceparent into a setter,
// CALL_OUT and RETURN_IN, with the session's `overflow` policy.
void run_recorded_calls(benchmark::State& state, loupe::overflow_policy overflow) {
    loupe_bench::discarding_session session(state, loupe::kinds::all, {}, {}, {}, overflow);
    tasks::task_scope task(tasks::new_task());
    header_slot headers;
    for (auto _ : state) {
        tasks::outgoing_call call("inventory", "GET /stock", headers);
        call.returned(200);
        benchmark::DoNotOptimize(headers.value[3]);
    }
}

void BM_OutgoingCall_Recorded(benchmark::State& state) { run_recorded_calls(state, loupe::overflow_policy::drop); }
BENCHMARK(BM_OutgoingCall_Recorded);

// The same with nothing lost: a full ring makes the caller wait for the
// collector, so the time includes keeping up.
void BM_OutgoingCall_Recorded_Block(benchmark::State& state) {
    run_recorded_calls(state, loupe::overflow_policy::block);
}
BENCHMARK(BM_OutgoingCall_Recorded_Block);

// A recorded zone in the same binary and loop shape: the yardstick.
void BM_OutgoingCall_ZoneFloor(benchmark::State& state) {
    loupe_bench::discarding_session session(state);
    header_slot headers;
    for (auto _ : state) {
        LOUPE_ZONE("zone");
        benchmark::DoNotOptimize(&headers);
    }
}
BENCHMARK(BM_OutgoingCall_ZoneFloor);

// The physical floor of a recorded call: two clock reads and its five
// 32-byte records written into a 1 MiB ring that another thread drains
// (without decoding them) as the collector does: once the ring is half
// full, or after 200 µs. What a host charges for moving cache lines
// between the two vCPUs shows here first: compare the recorded rows with
// this one of the same run. Each word goes from a register into the ring,
// as the recorder writes a record: a record built on the stack and copied
// would be read back 16 bytes at a time from 8-byte stores, a load that
// waits for every older store to reach the cache (no store forwarding),
// which is no part of the floor. It gives no write hint
// (core/detail/write_prefetch.hpp): with its reader a lap behind at most,
// the hint only cost it time (docs/tasks.md#cost).
void BM_OutgoingCall_CrossCoreFloor(benchmark::State& state) {
    constexpr std::uint64_t ring_words = (std::uint64_t{1} << 20) / sizeof(std::uint64_t);  // a power of 2
    const std::unique_ptr<std::uint64_t[]> ring(new std::uint64_t[ring_words]());
    std::atomic<std::uint64_t> head{0};
    std::atomic<bool> stop{false};
    std::thread reader([&] {
        std::uint64_t tail = 0, sum = 0;
        auto last = std::chrono::steady_clock::now();
        while (!stop.load(std::memory_order_relaxed)) {
            std::this_thread::sleep_for(std::chrono::microseconds(10));
            const std::uint64_t h = head.load(std::memory_order_acquire);
            const auto now = std::chrono::steady_clock::now();
            if (h - tail < ring_words / 2 && now - last < std::chrono::microseconds(200)) continue;
            last = now;
            for (; tail != h; ++tail) sum += ring[tail & (ring_words - 1)];
        }
        benchmark::DoNotOptimize(sum);
    });
    std::uint64_t* const words = ring.get();
    const auto write_record = [words](std::uint64_t at, std::uint64_t ticks, std::uint64_t r) {
        std::uint64_t* const w = words + (at & (ring_words - 1));  // a record (4 words) never wraps
        w[0] = ticks;
        w[1] = at;
        w[2] = r;
        w[3] = 0;
    };
    std::uint64_t h = 0;  // in words
    for (auto _ : state) {
        const std::uint64_t t1 = loupe::detail::tick_clock::rdtsc();
        for (std::uint64_t r = 0; r < 3; ++r) write_record(h + 4 * r, t1, r);  // CALL_OUT: header, ids, peer and name
        const std::uint64_t t4 = loupe::detail::tick_clock::rdtsc();
        for (std::uint64_t r = 3; r < 5; ++r) write_record(h + 4 * r, t4, r);  // RETURN_IN: header, ids
        h += 20;
        head.store(h, std::memory_order_release);
    }
    stop.store(true, std::memory_order_relaxed);
    reader.join();
}
BENCHMARK(BM_OutgoingCall_CrossCoreFloor);

void BM_TaskScope(benchmark::State& state) {
    const tasks::task_context task = tasks::new_task();
    for (auto _ : state) {
        tasks::task_scope scope(task);
        benchmark::DoNotOptimize(tasks::current_span_id());
    }
}
BENCHMARK(BM_TaskScope);

}  // namespace
