// Heap memory that shares no cache line with other objects. The host's hot
// paths read loupe's per-site and per-thread state on every recorded call;
// a neighbour written by another thread (the collector, or the host's own
// objects) would turn each of those reads into a cache miss.
#pragma once

#include <cstddef>
#include <new>

namespace loupe::detail {

inline constexpr std::size_t cache_line_bytes = 64;

/// A std::allocator that aligns every allocation on a cache line and rounds
/// its size up to whole lines.
template <class T>
struct cache_line_allocator {
    using value_type = T;
    cache_line_allocator() noexcept = default;
    template <class U>
    cache_line_allocator(const cache_line_allocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        return static_cast<T*>(::operator new(padded(n), std::align_val_t{cache_line_bytes}));
    }
    // The unsized aligned delete: clang declares the sized one only with
    // -fsized-deallocation.
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{cache_line_bytes}); }
    template <class U>
    bool operator==(const cache_line_allocator<U>&) const noexcept { return true; }
    template <class U>
    bool operator!=(const cache_line_allocator<U>&) const noexcept { return false; }

private:
    static std::size_t padded(std::size_t n) noexcept {
        return (n * sizeof(T) + cache_line_bytes - 1) / cache_line_bytes * cache_line_bytes;
    }
};

}  // namespace loupe::detail
