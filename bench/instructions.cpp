// loupe_bench_instructions: runs each hot-path case for exactly N iterations
// in its own non-inlined function, so `valgrind --tool=callgrind` gives exact
// instruction counts per iteration (bench/callgrind.sh does the arithmetic).
// Run natively it only checks that every case works.
#include <fcntl.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/params.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/tasks.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "header_slot.hpp"

namespace {

constexpr long iterations = 1000000;
constexpr long io_iterations = 100000;  // system calls are slow under valgrind

#define LOUPE_BENCH_CASE __attribute__((noinline)) void

LOUPE_BENCH_CASE case_empty() {
    for (long i = 0; i < iterations; ++i) asm volatile("" ::: "memory");
}

LOUPE_BENCH_CASE case_zone_idle() {
    for (long i = 0; i < iterations; ++i) {
        LOUPE_ZONE("idle");
        asm volatile("" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_floor_two_tsc_ring_write() {
    static constexpr loupe::site where{"floor", "", "", 0, loupe::site_kind::zone};
    static thread_local loupe::detail::raw_record ring[4096];
    for (long i = 0; i < iterations; ++i) {
        const std::uint64_t t0 = loupe::detail::tick_clock::rdtsc();
        const std::uint64_t t1 = loupe::detail::tick_clock::rdtsc();
        loupe::detail::raw_record* slot = &ring[i & 4095];
        *slot = loupe::detail::raw_record{&where, t0, t1, 1};
        asm volatile("" : : "r"(slot) : "memory");  // the store is observable
    }
}

LOUPE_BENCH_CASE case_zone_recorded() {
    for (long i = 0; i < iterations; ++i) {
        LOUPE_ZONE("recorded");
        asm volatile("" ::: "memory");
    }
}

// A zone named at run time (an interned name) with an integer and a text
// argument: the pair with case_zone_recorded.
const std::string endpoint_name = "GET /orders/{id}";
LOUPE_BENCH_CASE case_zone_named_two_args() {
    for (long i = 0; i < io_iterations; ++i) {
        LOUPE_ZONE_NAMED_AS(zone, endpoint_name);
        LOUPE_ZONE_ARG(zone, "rows", i);
        LOUPE_ZONE_ARG(zone, "table", "orders");
        asm volatile("" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_flow_idle() {
    for (long i = 0; i < iterations; ++i) {
        LOUPE_FLOW("idle", 1);
        asm volatile("" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_flow_recorded() {
    for (long i = 0; i < iterations; ++i) {
        LOUPE_FLOW("recorded", 1);
        asm volatile("" ::: "memory");
    }
}

using loupe_bench::header_slot;

LOUPE_BENCH_CASE case_outgoing_call_idle() {
    header_slot headers;
    for (long i = 0; i < iterations; ++i) {
        loupe::tasks::outgoing_call call("inventory", "GET /stock", headers);
        call.returned(200);
        asm volatile("" ::: "memory");
    }
}

// Inside a task: a new call id, the traceparent written, CALL_OUT and RETURN_IN.
LOUPE_BENCH_CASE case_outgoing_call_recorded() {
    loupe::tasks::task_scope task(loupe::tasks::new_task());
    header_slot headers;
    for (long i = 0; i < io_iterations; ++i) {
        loupe::tasks::outgoing_call call("inventory", "GET /stock", headers);
        call.returned(200);
        asm volatile("" ::: "memory");
    }
}

// A zone carrying the delta of one push metric (a session with metrics).
LOUPE_BENCH_CASE case_zone_recorded_push_metric() {
    for (long i = 0; i < iterations; ++i) {
        LOUPE_ZONE("recorded-with-metric");
        asm volatile("" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_zone_filtered_out() {
    for (long i = 0; i < iterations; ++i) {
        LOUPE_ZONE("filtered-out");
        asm volatile("" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_annotate_one_field() {
    for (long i = 0; i < iterations; ++i) {
        loupe::field_scope request(loupe::context_field::request, "req-0123456789");
        asm volatile("" ::: "memory");
    }
}

// I/O: user-space instructions only (callgrind does not see the kernel).
int zero_fd = -1;
char zero_byte;

LOUPE_BENCH_CASE case_io_read_plain() {
    for (long i = 0; i < io_iterations; ++i) {
        ::read(zero_fd, &zero_byte, 1);
        asm volatile("# plain" ::: "memory");
    }
}

// Distinct asm markers keep the compiler from folding identical cases into one.
LOUPE_BENCH_CASE case_io_read_wrapped_idle() {
    for (long i = 0; i < io_iterations; ++i) {
        loupe::io::read(zero_fd, &zero_byte, 1);
        asm volatile("# idle" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_io_read_wrapped_recorded() {
    for (long i = 0; i < io_iterations; ++i) {
        loupe::io::read(zero_fd, &zero_byte, 1);
        asm volatile("# recorded" ::: "memory");
    }
}

LOUPE_BENCH_CASE case_io_openclose_plain() {
    for (long i = 0; i < io_iterations; ++i) ::close(::open("/proc/self/../../dev/zero", O_RDONLY));
}

LOUPE_BENCH_CASE case_io_openclose_wrapped() {
    for (long i = 0; i < io_iterations; ++i) loupe::io::close(loupe::io::open("/proc/self/../../dev/zero", O_RDONLY));
}

// Method sites (params.hpp): idle, and recorded with three values through
// compile-time chains and through runtime chains. Recorded calls take six
// ring records each, so they run io_iterations times.
struct method_item {
    std::string sku;
};
struct method_cart {
    __attribute__((always_inline)) inline void add(const method_item& item, const std::string& note, int qty) {
        LOUPE_METHOD_CHAINS("bench::Cart::add(Item const&,std::string const&,int)", (item, note, qty),
                            loupe::named("qty", loupe::arg<3>),
                            loupe::named("note", loupe::arg<2> | loupe::truncate(16)),
                            loupe::named("sku", loupe::arg<1> | loupe::field(&method_item::sku)));
        total += qty;
        asm volatile("" ::: "memory");
    }
    // The same method without its site: the floor of method_idle.
    __attribute__((always_inline)) inline void add_plain(const method_item&, const std::string&, int qty) {
        total += qty;
        asm volatile("" ::: "memory");
    }
    int total = 0;
};
const method_item bench_item{"SKU-0001-ABCDEFGH"};
const std::string bench_note = "deliver to the back door, ring twice";
const std::string runtime_note = bench_note;  // the runtime case's own copy: its code must not fold into the compiled case's

LOUPE_BENCH_CASE case_method_plain() {
    method_cart cart;
    asm volatile("" : : "r"(&cart) : "memory");  // the cart lives in memory, as a server's objects do
    for (long i = 0; i < iterations; ++i) cart.add_plain(bench_item, bench_note, static_cast<int>(i & 7));
}

LOUPE_BENCH_CASE case_method_idle() {
    method_cart cart;
    asm volatile("" : : "r"(&cart) : "memory");  // the cart lives in memory, as a server's objects do
    for (long i = 0; i < iterations; ++i) cart.add(bench_item, bench_note, static_cast<int>(i & 7));
}

LOUPE_BENCH_CASE case_method_recorded_three_params() {
    method_cart cart;
    asm volatile("" : : "r"(&cart) : "memory");  // the cart lives in memory, as a server's objects do
    for (long i = 0; i < io_iterations; ++i) cart.add(bench_item, bench_note, static_cast<int>(i & 7));
}

LOUPE_BENCH_CASE case_method_runtime_three_params() {
    method_cart cart;
    asm volatile("" : : "r"(&cart) : "memory");  // the cart lives in memory, as a server's objects do
    for (long i = 0; i < io_iterations; ++i) cart.add(bench_item, runtime_note, static_cast<int>(i & 7));
}

}  // namespace

int main() {
    zero_fd = loupe::io::open("/dev/zero", O_RDONLY);
    case_empty();
    case_zone_idle();
    case_flow_idle();
    case_outgoing_call_idle();
    case_method_plain();
    case_method_idle();
    case_floor_two_tsc_ring_write();
    case_annotate_one_field();
    {
        // A session whose filter rejects this thread.
        loupe::session_config rejecting;
        rejecting.name = "rejecting";
        rejecting.sinks = {std::make_shared<loupe::sinks::null_sink>()};
        rejecting.filter = R"(user == "alice")";
        auto other = loupe::start_session(rejecting);
        loupe::field_scope user(loupe::context_field::user, "bob");
        case_zone_filtered_out();
    }
    // After a session ran, as in a server: the collector thread exists, so
    // glibc takes its multi-threaded system-call path in every case.
    case_io_read_plain();
    case_io_read_wrapped_idle();
    case_io_openclose_plain();
    case_io_openclose_wrapped();
    loupe::session_config cfg;
    cfg.name = "instructions";
    cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
    // A ring that holds every iteration, and block: each iteration takes the
    // plain recording path, never the drop or wait path.
    cfg.overflow = loupe::overflow_policy::block;
    cfg.ring_bytes = std::size_t{128} << 20;  // room for every iteration: no waiting either
    auto session = loupe::start_session(cfg);
    case_zone_recorded();
    case_flow_recorded();
    case_outgoing_call_recorded();
    case_io_read_wrapped_recorded();
    auto stats = session.stop();
    {
        auto args_cfg = cfg;
        args_cfg.name = "instructions-zone-args";
        auto with_args = loupe::start_session(args_cfg);
        std::thread([] { case_zone_named_two_args(); }).join();
        const auto args_stats = with_args.stop();
        if (args_stats.delivered != 3 * io_iterations) {
            std::printf("named zones and arguments recorded: %llu of %ld\n",
                        static_cast<unsigned long long>(args_stats.delivered), 3 * io_iterations);
            return 1;
        }
    }
    {
        loupe::reflect<method_item>("bench::Item").field("sku", &method_item::sku);
        auto params_cfg = cfg;
        params_cfg.name = "instructions-params";
        params_cfg.params = "method=bench::Cart::add(Item const&,std::string const&,int)";
        auto compiled = loupe::start_session(params_cfg);
        std::thread([] { case_method_recorded_three_params(); }).join();
        const auto compiled_stats = compiled.stop();
        params_cfg.params =
            "method=bench::Cart::add(Item const&,std::string const&,int); param=3\n"
            "method=bench::Cart::add(Item const&,std::string const&,int); param=2; chain=truncate(16)\n"
            "method=bench::Cart::add(Item const&,std::string const&,int); param=1; chain=field(sku)\n";
        auto runtime = loupe::start_session(params_cfg);
        std::thread([] { case_method_runtime_three_params(); }).join();
        const auto runtime_stats = runtime.stop();
        if (compiled_stats.delivered != io_iterations || runtime_stats.delivered != io_iterations) {
            std::printf("method calls recorded: %llu and %llu of %ld\n",
                        static_cast<unsigned long long>(compiled_stats.delivered),
                        static_cast<unsigned long long>(runtime_stats.delivered), io_iterations);
            return 1;
        }
    }
    // Zones with one push metric take two records each: a fresh thread gets
    // a ring for all of them.
    cfg.name = "instructions-metrics";
    cfg.metrics = {"bench.rows"};
    cfg.ring_bytes = std::size_t{128} << 20;
    loupe::metric("bench.rows");
    auto with_metrics = loupe::start_session(cfg);
    std::thread([] { case_zone_recorded_push_metric(); }).join();
    const auto metric_stats = with_metrics.stop();
    stats.delivered += metric_stats.delivered - iterations;
    std::printf("iterations %ld, io_iterations %ld, recorded %llu, dropped %llu\n", iterations, io_iterations,
                static_cast<unsigned long long>(stats.delivered), static_cast<unsigned long long>(stats.dropped));
    // A zone and a flow point per iteration, a read per I/O iteration, two
    // task points per outgoing call.
    return stats.delivered == static_cast<unsigned long long>(2 * iterations + 3 * io_iterations) ? 0 : 1;
}
