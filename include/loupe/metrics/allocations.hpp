// Allocation metrics: the push metrics `alloc_bytes`, `alloc_count`,
// `free_bytes` and `free_count` (metrics/metric.hpp), charged to the thread that
// allocates or frees, like any push metric.
//
// Two ways in:
// - `loupe::counting_allocator<T>` for the containers you choose:
//
//       std::vector<row, loupe::counting_allocator<row>> rows;
//
// - `LOUPE_COUNT_GLOBAL_ALLOCATIONS()` for every allocation of the program:
//   it replaces the global operator new and delete. Write it once, at global
//   scope, in exactly one .cpp file of the program (a second one is a
//   duplicate-symbol link error):
//
//       #include <loupe/metrics/allocations.hpp>
//       LOUPE_COUNT_GLOBAL_ALLOCATIONS()
//
// Bytes are the sizes requested, not the heap's overhead; a block counts the
// same bytes when freed as when allocated, whichever form of delete frees it.
// Not counted: loupe's own allocations (detail::internal_allocation_scope)
// and anything on loupe's collector thread.
//
// Thread-safety: both may be used from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "loupe/base/config.hpp"
#include "loupe/metrics/detail/allocation_counting.hpp"

namespace loupe {

/// A standard allocator that allocates like std::allocator<T> and adds to
/// the allocation metrics: n * sizeof(T) to `alloc_bytes` and one to
/// `alloc_count` per allocate(n), the same to `free_bytes` and `free_count`
/// per deallocate(p, n). Stateless: all instances compare equal, whatever
/// their T. Under LOUPE_COUNT_GLOBAL_ALLOCATIONS an allocation through it is
/// counted once, here, not again by the global operator new.
///
/// Cost: std::allocator<T>'s plus two metric_add per call, whether or not a
/// session runs (bench/metrics_bench.cpp: allocating and freeing 64 ints
/// takes about 17 ns more than with std::allocator<int>, 24 ns instead of 7).
/// Not affected by LOUPE_ENABLED=0 (it is a class, see config.hpp).
/// Thread-safety: any thread; memory may be freed on another thread than the
/// one that allocated it (each thread is charged what it did).
template <class T>
class counting_allocator {
public:
    using value_type = T;

    counting_allocator() noexcept = default;
    template <class U>
    counting_allocator(const counting_allocator<U>&) noexcept {}

    /// Storage for `n` objects of T, aligned for T; throws std::bad_alloc
    /// (or std::bad_array_new_length) like std::allocator<T>.
    [[nodiscard]] T* allocate(std::size_t n) {
        T* p;
        {
            detail::internal_allocation_scope counted_below;  // not by a replaced operator new
            p = std::allocator<T>{}.allocate(n);
        }
        detail::count_allocation(n * sizeof(T));
        return p;
    }

    /// Frees what allocate(n) returned (same `n`).
    void deallocate(T* p, std::size_t n) noexcept {
        {
            detail::internal_allocation_scope counted_below;
            std::allocator<T>{}.deallocate(p, n);
        }
        detail::count_free(n * sizeof(T));
    }
};

template <class T, class U>
bool operator==(const counting_allocator<T>&, const counting_allocator<U>&) noexcept {
    return true;
}
template <class T, class U>
bool operator!=(const counting_allocator<T>&, const counting_allocator<U>&) noexcept {
    return false;
}

}  // namespace loupe

// ThreadSanitizer's runtime defines operator new/delete too, and clang links
// it statically and whole: under TSan the replacements are weak so that the
// program links. With clang the sanitizer's operators then win (new/delete
// are not counted); with GCC's shared runtime the replacements still do.
#if defined(__SANITIZE_THREAD__)
#    define LOUPE_DETAIL_REPLACEMENT __attribute__((weak))
#elif defined(__has_feature)
#    if __has_feature(thread_sanitizer)
#        define LOUPE_DETAIL_REPLACEMENT __attribute__((weak))
#    endif
#endif
#ifndef LOUPE_DETAIL_REPLACEMENT
#    define LOUPE_DETAIL_REPLACEMENT
#endif

// One pair of replaced forms, `op_new` and `op_delete` being `new`/`delete`
// or `new[]`/`delete[]`: the four operator new and six operator delete of
// C++17 for that pair.
#define LOUPE_DETAIL_REPLACE_GLOBAL_NEW_DELETE(op_new, op_delete)                                                     \
    LOUPE_DETAIL_REPLACEMENT void* operator op_new(::std::size_t size) {                                              \
        return ::loupe::detail::counted_heap::allocate(size);                                                         \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void* operator op_new(::std::size_t size, ::std::align_val_t align) {                    \
        return ::loupe::detail::counted_heap::allocate(size, static_cast<::std::size_t>(align));                      \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void* operator op_new(::std::size_t size, const ::std::nothrow_t&) noexcept {            \
        return ::loupe::detail::counted_heap::allocate_nothrow(size);                                                 \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void* operator op_new(::std::size_t size, ::std::align_val_t align,                      \
                                                   const ::std::nothrow_t&) noexcept {                                \
        return ::loupe::detail::counted_heap::allocate_nothrow(size, static_cast<::std::size_t>(align));              \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void operator op_delete(void* p) noexcept {                                              \
        ::loupe::detail::counted_heap::deallocate(p);                                                                 \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void operator op_delete(void* p, ::std::size_t) noexcept {                               \
        ::loupe::detail::counted_heap::deallocate(p);                                                                 \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void operator op_delete(void* p, ::std::align_val_t) noexcept {                          \
        ::loupe::detail::counted_heap::deallocate(p);                                                                 \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void operator op_delete(void* p, ::std::size_t, ::std::align_val_t) noexcept {           \
        ::loupe::detail::counted_heap::deallocate(p);                                                                 \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void operator op_delete(void* p, const ::std::nothrow_t&) noexcept {                     \
        ::loupe::detail::counted_heap::deallocate(p);                                                                 \
    }                                                                                                                 \
    LOUPE_DETAIL_REPLACEMENT void operator op_delete(void* p, ::std::align_val_t, const ::std::nothrow_t&) noexcept { \
        ::loupe::detail::counted_heap::deallocate(p);                                                                 \
    }

#if LOUPE_ENABLED

/// Replaces every global operator new and delete (plain and array; nothrow,
/// sized and std::align_val_t forms) with ones that count into the
/// allocation metrics. Write it once at global scope in one .cpp file.
///
/// The heap underneath is std::malloc/std::free with a 16-byte header in
/// front of each block (for an over-aligned new, inside an over-allocation
/// of the alignment more): that is how an unsized delete knows the bytes it
/// frees. Throwing forms call the new-handler, then throw std::bad_alloc;
/// nothrow forms return null. delete of null does nothing.
/// Cost: malloc/free, the header, and two metric_add per call; the first
/// allocation of a thread also attaches its metric block (once).
/// With LOUPE_ENABLED=0 it expands to nothing: the standard operators stay.
/// Under ThreadSanitizer built with clang, whose runtime brings its own
/// operator new/delete, those stay and only counting_allocator counts.
/// Thread-safety: the replaced operators may be called from any thread.
#    define LOUPE_COUNT_GLOBAL_ALLOCATIONS()                \
        LOUPE_DETAIL_REPLACE_GLOBAL_NEW_DELETE(new, delete) \
        LOUPE_DETAIL_REPLACE_GLOBAL_NEW_DELETE(new[], delete[])

#else

#    define LOUPE_COUNT_GLOBAL_ALLOCATIONS()

#endif
