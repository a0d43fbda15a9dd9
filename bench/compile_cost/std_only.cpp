// Compile-cost baseline (bench/compile_cost.sh): the standard headers an
// instrumenting file needs and the same small amount of work as
// instrumenting.cpp, without loupe.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

std::size_t compile_cost_work(const char* name) {
    static std::atomic<std::uint64_t> calls{0};
    calls.fetch_add(1, std::memory_order_relaxed);
    std::string label(name);
    return label.size() + std::strlen(name);
}
