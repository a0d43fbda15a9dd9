// Compile cost of a file that instruments (bench/compile_cost.sh): the
// everyday macros and scopes of <loupe/loupe.hpp>, plus std_only.cpp's work.
// The standard headers are std_only.cpp's, so that the difference is loupe's
// alone.
#include <loupe/loupe.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

std::size_t compile_cost_work(const char* name) {
    LOUPE_ZONE("compile_cost_work");
    loupe::context_scope request({{loupe::context_field::user, "alice"}, {loupe::context_field::request, "r-1"}});
    loupe::field_scope component(loupe::context_field::component, "checkout");
    static std::atomic<std::uint64_t> calls{0};
    const std::uint64_t n = calls.fetch_add(1, std::memory_order_relaxed);
    LOUPE_INSTANT("work started");
    LOUPE_COUNTER("calls", n);
    const std::uint64_t flow = loupe::new_flow_id();
    LOUPE_FLOW("work handed over", flow);
    std::string label(name);
    return label.size() + std::strlen(name);
}
