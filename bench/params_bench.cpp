// Cost of a method site (params.hpp), next to the zone it extends
// (BM_Zone_Idle, BM_Zone_Recorded in zone_bench.cpp, same run):
// - BM_Method_Plain: the same method without its site (the floor).
// - BM_Method_Plain_SharedObject: the same, on an object whose address has
//   escaped (as any object other threads or calls can reach): its state then
//   lives in memory, as it must once a site refers to `this`.
// - BM_Method_Idle: no session records methods.
// - BM_Method_FilteredOut: a session with specs whose filter rejects the thread.
// - BM_Method_Recorded_NoParams: recorded, no spec applies (timing only).
// - BM_Method_Recorded_3Params: three compile-time chains — an int, a string
//   through truncate(16), a field — selected by one spec.
// - BM_Method_Runtime_3Params: the same three values through runtime specs
//   (text chains bound through the reflection registry).
#include <benchmark/benchmark.h>

#include <loupe/params.hpp>
#include <loupe/params/reflect.hpp>

#include <string>

#include "bench_support.hpp"

namespace bench_params {

struct Item {
    std::string sku;
    double price;
};

class Cart {
public:
    // Inlined into the loop like a small method of a hot class would be.
    __attribute__((always_inline)) inline void add(const Item& item, const std::string& note, int qty) {
        LOUPE_METHOD_CHAINS("bench_params::Cart::add(Item const&,std::string const&,int)", (item, note, qty),
                            loupe::named("qty", loupe::arg<3>),
                            loupe::named("note", loupe::arg<2> | loupe::truncate(16)),
                            loupe::named("sku", loupe::arg<1> | loupe::field(&Item::sku)));
        total_ += qty;
        benchmark::ClobberMemory();
    }
    // The same method without its site: BM_Method_Idle's floor.
    __attribute__((always_inline)) inline void add_plain(const Item&, const std::string&, int qty) {
        total_ += qty;
        benchmark::ClobberMemory();
    }
    int total() const { return total_; }

private:
    int total_ = 0;
};

const bool reflected = [] {
    loupe::reflect<Item>("bench_params::Item").field("sku", &Item::sku);
    return true;
}();

constexpr const char* compiled_specs = "method=bench_params::Cart::add(Item const&,std::string const&,int)";
constexpr const char* runtime_specs =
    "method=bench_params::Cart::add(Item const&,std::string const&,int); param=3\n"
    "method=bench_params::Cart::add(Item const&,std::string const&,int); param=2; chain=truncate(16)\n"
    "method=bench_params::Cart::add(Item const&,std::string const&,int); param=1; chain=field(sku)\n";

// Calls the method in a loop: with its site (Cart::add) or without it
// (add_plain); with `SharedObject`, on a cart whose address escaped first
// (its member is then read and written in memory, as for any object other
// code can reach).
template <bool WithSite, bool SharedObject = false>
void run(benchmark::State& state) {
    Cart cart;
    if constexpr (SharedObject) benchmark::DoNotOptimize(&cart);
    const Item item{"SKU-0001-ABCDEFGH", 9.5};
    const std::string note = "deliver to the back door, ring twice";
    int qty = 0;
    for (auto _ : state) {
        if constexpr (WithSite) {
            cart.add(item, note, ++qty & 7);
        } else {
            cart.add_plain(item, note, ++qty & 7);
        }
    }
    benchmark::DoNotOptimize(cart.total());
}

void BM_Method_Plain(benchmark::State& state) { run<false>(state); }
BENCHMARK(BM_Method_Plain);

void BM_Method_Plain_SharedObject(benchmark::State& state) { run<false, true>(state); }
BENCHMARK(BM_Method_Plain_SharedObject);

void BM_Method_Idle(benchmark::State& state) { run<true>(state); }
BENCHMARK(BM_Method_Idle);
BENCHMARK(BM_Method_Idle)->Threads(2);

void BM_Method_FilteredOut(benchmark::State& state) {
    loupe_bench::discarding_session session(state, loupe::kinds::all, R"(user == "nobody")", {}, runtime_specs);
    run<true>(state);
}
BENCHMARK(BM_Method_FilteredOut);

void BM_Method_Recorded_NoParams(benchmark::State& state) {
    loupe_bench::discarding_session session(state, loupe::kinds::all);
    run<true>(state);
}
BENCHMARK(BM_Method_Recorded_NoParams);
BENCHMARK(BM_Method_Recorded_NoParams)->Threads(2);

void BM_Method_Recorded_3Params(benchmark::State& state) {
    loupe_bench::discarding_session session(state, loupe::kinds::all, {}, {}, compiled_specs);
    run<true>(state);
}
BENCHMARK(BM_Method_Recorded_3Params);
BENCHMARK(BM_Method_Recorded_3Params)->Threads(2);

void BM_Method_Runtime_3Params(benchmark::State& state) {
    loupe_bench::discarding_session session(state, loupe::kinds::all, {}, {}, runtime_specs);
    run<true>(state);
}
BENCHMARK(BM_Method_Runtime_3Params);
BENCHMARK(BM_Method_Runtime_3Params)->Threads(2);

}  // namespace bench_params
