// Compile cost of the smallest instrumented file (bench/compile_cost.sh):
// std_only.cpp's work inside one LOUPE_ZONE. compiled_out.cpp is this file
// with LOUPE_ENABLED=0.
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
    static std::atomic<std::uint64_t> calls{0};
    calls.fetch_add(1, std::memory_order_relaxed);
    std::string label(name);
    return label.size() + std::strlen(name);
}
