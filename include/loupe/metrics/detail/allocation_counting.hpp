// The allocation metrics' shared core (allocations.hpp): which allocations
// are counted, the counting itself, and the heap behind the replaced global
// operator new/delete (LOUPE_COUNT_GLOBAL_ALLOCATIONS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "loupe/metrics/metric.hpp"

namespace loupe::detail {

/// Adds `bytes` and one to the metrics `bytes_id` and `count_id`, unless the
/// calling thread is allocating for loupe (internal_allocation_scope) or is
/// loupe's collector. The scope is tested first: metric_add may attach this
/// thread's accumulator block, which allocates inside such a scope and so
/// comes back here without counting (no recursion).
LOUPE_ALWAYS_INLINE void count_heap_event(metric_id bytes_id, metric_id count_id, std::size_t bytes) noexcept {
    if (LOUPE_UNLIKELY(t_metric_thread.quiet != 0)) return;
    metric_add(bytes_id, static_cast<std::int64_t>(bytes));
    metric_add(count_id, 1);
}

/// One allocation of `bytes` (the size requested, not the heap's overhead).
LOUPE_ALWAYS_INLINE void count_allocation(std::size_t bytes) noexcept {
    count_heap_event(metrics::alloc_bytes, metrics::alloc_count, bytes);
}

/// One deallocation of a block of `bytes` (as requested when allocated).
LOUPE_ALWAYS_INLINE void count_free(std::size_t bytes) noexcept {
    count_heap_event(metrics::free_bytes, metrics::free_count, bytes);
}

/// The heap behind LOUPE_COUNT_GLOBAL_ALLOCATIONS: std::malloc and std::free,
/// with a header just before every pointer handed out that holds what
/// malloc returned and the size requested. Every delete form, sized or not,
/// aligned or not, reads the header, so the bytes freed are exactly the
/// bytes allocated.
///
///     default alignment:  [origin|size][user bytes]              (origin = block start)
///     aligned (A > 16):   [padding][origin|size][user bytes]     (user bytes aligned to A)
namespace counted_heap {

struct header {
    void* origin;      ///< what malloc returned: the pointer to free
    std::size_t size;  ///< bytes the caller asked for
};

/// Alignment every operator new without std::align_val_t guarantees.
inline constexpr std::size_t default_alignment = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
/// Space in front of a default-aligned block: the header, rounded up so the
/// pointer after it keeps malloc's alignment (16 bytes on 64-bit targets).
inline constexpr std::size_t prefix = sizeof(header) > default_alignment ? sizeof(header) : default_alignment;
static_assert(prefix % alignof(header) == 0 && prefix % default_alignment == 0);

/// One attempt at `size` bytes aligned to `align` (a power of two): the user
/// pointer, or null when malloc fails or the size overflows. Not counted.
inline void* try_allocate(std::size_t size, std::size_t align) noexcept {
    const std::size_t slack = align <= default_alignment ? prefix : prefix + align;
    if (size > SIZE_MAX - slack) return nullptr;
    void* origin = std::malloc(size + slack);
    if (!origin) return nullptr;
    // Aligned: the first multiple of `align` with room for the header
    // before it, at most prefix + align - 1 bytes into the block.
    const std::uintptr_t after_prefix = reinterpret_cast<std::uintptr_t>(origin) + prefix;
    const std::size_t padding = align <= default_alignment ? 0 : (0 - after_prefix) & (align - 1);
    char* const user = static_cast<char*>(origin) + prefix + padding;
    const header h{origin, size};
    std::memcpy(user - sizeof(header), &h, sizeof h);
    return user;
}

/// operator new's contract: retries through the new-handler while there is
/// one, then throws std::bad_alloc. Counts what it returns.
inline void* allocate(std::size_t size, std::size_t align = default_alignment) {
    for (;;) {
        if (void* p = try_allocate(size, align)) {
            count_allocation(size);
            return p;
        }
        const std::new_handler handler = std::get_new_handler();
        if (!handler) throw std::bad_alloc();
        handler();
    }
}

/// The nothrow forms: null where allocate() would throw.
inline void* allocate_nothrow(std::size_t size, std::size_t align = default_alignment) noexcept {
    try {
        return allocate(size, align);
    } catch (...) {
        return nullptr;
    }
}

/// Every operator delete: counts the size the block was allocated with and
/// frees it. Null is a no-op.
inline void deallocate(void* p) noexcept {
    if (!p) return;
    header h;
    std::memcpy(&h, static_cast<const char*>(p) - sizeof(header), sizeof h);
    count_free(h.size);
    std::free(h.origin);
}

}  // namespace counted_heap
}  // namespace loupe::detail
