// The allocation metrics: loupe::counting_allocator and the global operator
// new/delete that LOUPE_COUNT_GLOBAL_ALLOCATIONS() puts in this binary (its
// own executable: the replacement covers the whole program, gtest included).
//
// gtest allocates too, so every test reads the calling thread's metrics just
// before and just after the code under test and asserts on the difference
// afterwards.
#include <loupe/metrics/allocations.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <list>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

LOUPE_COUNT_GLOBAL_ALLOCATIONS()

namespace {

// Values of the four allocation metrics, or differences of them.
struct heap_metrics {
    std::int64_t alloc_bytes = 0, alloc_count = 0, free_bytes = 0, free_count = 0;
};

heap_metrics this_thread_heap_metrics() noexcept {
    return {loupe::thread_metric(loupe::metrics::alloc_bytes), loupe::thread_metric(loupe::metrics::alloc_count),
            loupe::thread_metric(loupe::metrics::free_bytes), loupe::thread_metric(loupe::metrics::free_count)};
}

// The calling thread's allocation metrics at construction; since() gives
// what changed from then (read it before asserting: gtest allocates).
class heap_delta {
public:
    heap_metrics since() const noexcept {
        const heap_metrics now = this_thread_heap_metrics();
        return {now.alloc_bytes - start_.alloc_bytes, now.alloc_count - start_.alloc_count,
                now.free_bytes - start_.free_bytes, now.free_count - start_.free_count};
    }

private:
    heap_metrics start_ = this_thread_heap_metrics();
};

// Keeps the compiler from removing a new/delete pair whose memory is unused
// (the standard lets it, even for replaced operators).
void escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

bool aligned_to(const void* p, std::size_t alignment) { return reinterpret_cast<std::uintptr_t>(p) % alignment == 0; }

struct alignas(64) cache_line {
    char bytes[64];
};

// ------------------------------------------------------ concurrent threads

constexpr int blocks_per_thread = 1000;

// Blocks of `n` bytes from new[] or from counting_allocator<char>.
struct array_new {
    static char* allocate(std::size_t n) { return new char[n]; }
    static void deallocate(char* p, std::size_t) { delete[] p; }
};
struct through_counting_allocator {
    static char* allocate(std::size_t n) { return loupe::counting_allocator<char>{}.allocate(n); }
    static void deallocate(char* p, std::size_t n) { loupe::counting_allocator<char>{}.deallocate(p, n); }
};

// Two threads allocate and free 1000 blocks each at once, of 64 and 128
// bytes: each is charged exactly its own bytes, and the process total grows
// by the sum.
template <class Heap>
void expect_each_thread_charged_its_own_bytes() {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    auto allocate_blocks = [&](std::size_t size, heap_metrics& out) {
        std::vector<char*> blocks;
        blocks.reserve(blocks_per_thread);
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        heap_delta d;
        for (int i = 0; i < blocks_per_thread; ++i) {
            blocks.push_back(Heap::allocate(size));
            escape(blocks.back());
        }
        for (char* b : blocks) Heap::deallocate(b, size);
        out = d.since();
    };
    heap_metrics small, large;
    std::thread a(allocate_blocks, 64, std::ref(small));
    std::thread b(allocate_blocks, 128, std::ref(large));
    while (ready.load() != 2) std::this_thread::yield();
    const std::int64_t total_before = loupe::metric_total(loupe::metrics::alloc_bytes);
    go.store(true, std::memory_order_release);
    a.join();
    b.join();
    // Nothing else allocated meanwhile: this thread waited in join.
    const std::int64_t total_delta = loupe::metric_total(loupe::metrics::alloc_bytes) - total_before;

    EXPECT_EQ(small.alloc_bytes, 64 * blocks_per_thread);
    EXPECT_EQ(small.alloc_count, blocks_per_thread);
    EXPECT_EQ(small.free_bytes, 64 * blocks_per_thread);
    EXPECT_EQ(large.alloc_bytes, 128 * blocks_per_thread);
    EXPECT_EQ(large.alloc_count, blocks_per_thread);
    EXPECT_EQ(large.free_bytes, 128 * blocks_per_thread);
    EXPECT_EQ(total_delta, (64 + 128) * blocks_per_thread);
}

// --------------------------------------------------------- counting_allocator

TEST(CountingAllocator, VectorReserveCountsItsBufferOnceAndItsFree) {
    heap_delta d;
    heap_metrics reserved;
    {
        std::vector<int, loupe::counting_allocator<int>> v;
        v.reserve(1000);
        escape(v.data());
        reserved = d.since();
    }
    const heap_metrics destroyed = d.since();
    // Counted by the allocator, not a second time by the replaced operator new.
    EXPECT_EQ(reserved.alloc_bytes, 4000);
    EXPECT_EQ(reserved.alloc_count, 1);
    EXPECT_EQ(reserved.free_bytes, 0);
    EXPECT_EQ(reserved.free_count, 0);
    EXPECT_EQ(destroyed.alloc_bytes, 4000);
    EXPECT_EQ(destroyed.free_bytes, 4000);
    EXPECT_EQ(destroyed.free_count, 1);
}

TEST(CountingAllocator, ReboundForListNodesCountsEveryNode) {
    heap_delta d;
    std::int64_t bytes_while_alive;
    {
        std::list<std::uint64_t, loupe::counting_allocator<std::uint64_t>> l{1, 2, 3};
        escape(&l);
        bytes_while_alive = d.since().alloc_bytes;
    }
    const heap_metrics c = d.since();
    EXPECT_EQ(c.alloc_count, 3);
    EXPECT_EQ(c.free_count, 3);
    EXPECT_GE(bytes_while_alive, static_cast<std::int64_t>(3 * (sizeof(std::uint64_t) + 2 * sizeof(void*))));
    EXPECT_EQ(bytes_while_alive % 3, 0) << "three nodes of one size";
    EXPECT_EQ(c.free_bytes, bytes_while_alive);
}

TEST(CountingAllocator, InstancesOfAnyTypeCompareEqual) {
    const loupe::counting_allocator<int> ints;
    const loupe::counting_allocator<double> doubles(ints);
    EXPECT_TRUE(ints == doubles);
    EXPECT_FALSE(ints != doubles);
    EXPECT_TRUE(std::allocator_traits<loupe::counting_allocator<int>>::is_always_equal::value);
}

TEST(CountingAllocator, OverAlignedTypeGetsAlignedStorage) {
    loupe::counting_allocator<cache_line> a;
    heap_delta d;
    cache_line* p = a.allocate(3);
    const heap_metrics allocated = d.since();
    const bool aligned = aligned_to(p, 64);
    std::memset(p, 0xab, 3 * sizeof(cache_line));
    a.deallocate(p, 3);
    const heap_metrics freed = d.since();
    EXPECT_TRUE(aligned);
    EXPECT_EQ(allocated.alloc_bytes, 192);
    EXPECT_EQ(allocated.alloc_count, 1);
    EXPECT_EQ(freed.free_bytes, 192);
    EXPECT_EQ(freed.free_count, 1);
}

TEST(CountingAllocator, ConcurrentThreadsAreEachChargedTheirOwnBytes) {
    expect_each_thread_charged_its_own_bytes<through_counting_allocator>();
}

// ------------------------------------------------ the replaced operator new

// Whether this program's operator new is the one LOUPE_COUNT_GLOBAL_ALLOCATIONS
// defined: not under clang's ThreadSanitizer, whose runtime brings its own.
bool replacement_in_effect() {
    heap_delta d;
    ::operator delete(::operator new(1));
    return d.since().alloc_count == 1;
}

class GlobalAllocations : public testing::Test {
protected:
    void SetUp() override {
        if (!replacement_in_effect()) GTEST_SKIP() << "operator new is the sanitizer runtime's (see allocations.hpp)";
    }
};

TEST_F(GlobalAllocations, ArrayNewAndDeleteCountExactBytes) {
    heap_delta d;
    char* p = new char[100];
    escape(p);
    const heap_metrics allocated = d.since();
    delete[] p;
    const heap_metrics freed = d.since();
    EXPECT_EQ(allocated.alloc_bytes, 100);
    EXPECT_EQ(allocated.alloc_count, 1);
    EXPECT_EQ(allocated.free_count, 0);
    EXPECT_EQ(freed.free_bytes, 100);
    EXPECT_EQ(freed.free_count, 1);
}

TEST_F(GlobalAllocations, LongStringCountsObjectAndBuffer) {
    heap_delta d;
    auto* s = new std::string(200, 'x');
    escape(s);
    const heap_metrics allocated = d.since();
    const std::size_t capacity = s->capacity();
    delete s;
    const heap_metrics freed = d.since();
    // The string object, and its buffer of capacity + 1 (the terminator).
    const auto expected = static_cast<std::int64_t>(sizeof(std::string) + capacity + 1);
    EXPECT_GE(capacity, 200u);
    EXPECT_EQ(allocated.alloc_bytes, expected);
    EXPECT_EQ(allocated.alloc_count, 2);
    EXPECT_EQ(freed.free_bytes, expected);
    EXPECT_EQ(freed.free_count, 2);
}

TEST_F(GlobalAllocations, OverAlignedNewIsAlignedAndCounted) {
    heap_delta d;
    auto* one = new cache_line;
    auto* three = new cache_line[3];
    escape(one);
    escape(three);
    const heap_metrics allocated = d.since();
    const bool aligned = aligned_to(one, 64) && aligned_to(three, 64);
    std::memset(three, 0, 3 * sizeof(cache_line));
    delete one;
    delete[] three;
    const heap_metrics freed = d.since();
    EXPECT_TRUE(aligned);
    EXPECT_EQ(allocated.alloc_bytes, 64 + 192);
    EXPECT_EQ(allocated.alloc_count, 2);
    EXPECT_EQ(freed.free_bytes, 64 + 192);
    EXPECT_EQ(freed.free_count, 2);
}

TEST_F(GlobalAllocations, EveryAlignmentAndSizeIsAlignedAndUsable) {
    for (std::size_t alignment : {1, 8, 16, 32, 64, 128, 4096}) {
        for (std::size_t size : {0, 1, 17, 100, 5000}) {
            heap_delta d;
            void* p = ::operator new(size, std::align_val_t{alignment});
            const bool aligned = aligned_to(p, alignment);
            std::memset(p, 0x5a, size);  // ASan: the whole range is ours
            ::operator delete(p, std::align_val_t{alignment});
            const heap_metrics c = d.since();
            EXPECT_TRUE(aligned) << alignment << " " << size;
            EXPECT_EQ(c.alloc_bytes, static_cast<std::int64_t>(size)) << alignment << " " << size;
            EXPECT_EQ(c.free_bytes, static_cast<std::int64_t>(size)) << alignment << " " << size;
        }
    }
    void* plain = ::operator new(24);
    const bool default_aligned = aligned_to(plain, __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    ::operator delete(plain);
    EXPECT_TRUE(default_aligned);
}

TEST_F(GlobalAllocations, EveryDeleteFormFreesTheBytesAllocated) {
    std::int64_t freed[6];
    {
        heap_delta d;
        ::operator delete(::operator new(123));
        freed[0] = d.since().free_bytes;
    }
    {
        heap_delta d;
        ::operator delete(::operator new(123), std::size_t{123});
        freed[1] = d.since().free_bytes;
    }
    {
        heap_delta d;
        ::operator delete[](::operator new[](123), std::nothrow);
        freed[2] = d.since().free_bytes;
    }
    {
        heap_delta d;
        ::operator delete(::operator new(123, std::align_val_t{128}), std::align_val_t{128});
        freed[3] = d.since().free_bytes;
    }
    {
        heap_delta d;
        ::operator delete[](::operator new[](123, std::align_val_t{128}), std::size_t{123}, std::align_val_t{128});
        freed[4] = d.since().free_bytes;
    }
    {
        heap_delta d;
        ::operator delete(::operator new(123, std::align_val_t{128}, std::nothrow), std::align_val_t{128},
                           std::nothrow);
        freed[5] = d.since().free_bytes;
    }
    for (std::int64_t f : freed) EXPECT_EQ(f, 123);
}

TEST_F(GlobalAllocations, DeleteOfNullDoesNothing) {
    heap_delta d;
    ::operator delete(nullptr);
    ::operator delete[](nullptr);
    ::operator delete(nullptr, std::size_t{8});
    ::operator delete(nullptr, std::align_val_t{64});
    ::operator delete[](nullptr, std::size_t{8}, std::align_val_t{64});
    ::operator delete(nullptr, std::nothrow);
    const heap_metrics c = d.since();
    EXPECT_EQ(c.free_count, 0);
    EXPECT_EQ(c.free_bytes, 0);
}

// An impossible size, hidden from the compiler's size warnings.
std::size_t impossible_size() {
    volatile std::size_t n = std::numeric_limits<std::size_t>::max() - 8;
    return n;
}

TEST_F(GlobalAllocations, NothrowNewCountsOrReturnsNull) {
    heap_delta d;
    char* p = new (std::nothrow) char[50];
    escape(p);
    void* impossible = ::operator new(impossible_size(), std::nothrow);
    void* impossible_aligned = ::operator new[](impossible_size(), std::align_val_t{64}, std::nothrow);
    const heap_metrics c = d.since();
    const bool allocated = p != nullptr;
    delete[] p;
    EXPECT_TRUE(allocated);
    EXPECT_EQ(impossible, nullptr);
    EXPECT_EQ(impossible_aligned, nullptr);
    EXPECT_EQ(c.alloc_bytes, 50);
    EXPECT_EQ(c.alloc_count, 1);
}

int handler_calls = 0;

TEST_F(GlobalAllocations, FailedNewCallsTheNewHandlerThenThrowsBadAlloc) {
    handler_calls = 0;
    std::set_new_handler([] {
        if (++handler_calls == 2) std::set_new_handler(nullptr);  // gives up: the next failure throws
    });
    EXPECT_THROW(escape(::operator new(impossible_size())), std::bad_alloc);
    EXPECT_EQ(handler_calls, 2);
    EXPECT_EQ(std::get_new_handler(), nullptr);
    handler_calls = 0;
    EXPECT_THROW(escape(::operator new(impossible_size(), std::align_val_t{64})), std::bad_alloc);
    EXPECT_EQ(handler_calls, 0);
}

TEST_F(GlobalAllocations, LoupeInternalAllocationsAreNotCounted) {
    heap_delta d;
    {
        loupe::detail::internal_allocation_scope internal;
        char* p = new char[100];
        escape(p);
        delete[] p;
        std::vector<int, loupe::counting_allocator<int>> v(10);
        escape(v.data());
    }
    const heap_metrics c = d.since();
    EXPECT_EQ(c.alloc_count, 0);
    EXPECT_EQ(c.alloc_bytes, 0);
    EXPECT_EQ(c.free_count, 0);
    EXPECT_EQ(c.free_bytes, 0);
}

TEST_F(GlobalAllocations, CollectorThreadAllocationsAreNotCounted) {
    std::int64_t counted = -1;
    std::thread([&] {
        ++loupe::detail::t_metric_thread.quiet;  // what the collector thread does first (collector.hpp)
        heap_delta d;
        char* p = new char[100];
        escape(p);
        delete[] p;
        const heap_metrics c = d.since();
        counted = c.alloc_count + c.free_count;
    }).join();
    EXPECT_EQ(counted, 0);
}

// The first allocation of a thread attaches its metric block from inside
// operator new, allocating when there is no block of an exited thread to
// reuse (always for the process's first allocation, before main): counted
// once, without recursion.
TEST_F(GlobalAllocations, FirstAllocationOfAThreadIsCountedOnce) {
    std::int64_t bytes = -1, count = -1;
    std::thread([&] {
        char* p = new char[10];
        escape(p);
        bytes = loupe::thread_metric(loupe::metrics::alloc_bytes);
        count = loupe::thread_metric(loupe::metrics::alloc_count);
        delete[] p;
    }).join();
    EXPECT_EQ(bytes, 10);
    EXPECT_EQ(count, 1);
}

TEST_F(GlobalAllocations, ConcurrentThreadsAreEachChargedTheirOwnBytes) {
    expect_each_thread_charged_its_own_bytes<array_new>();
}

}  // namespace
