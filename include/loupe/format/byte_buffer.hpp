// The byte vector the trace encoder builds a record in: a std::vector whose
// resize leaves the new bytes as they are instead of zeroing them. The
// encoder reserves room for a record, writes every byte of it through a
// pointer and trims what it did not use, so zeroing first was work thrown
// away on every record.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace loupe::detail::format {

/// std::allocator, but value-initialization (`resize(n)`, `vector(n)`)
/// default-initializes: for bytes, nothing is written.
template <class T>
struct default_init_allocator : std::allocator<T> {
    using std::allocator<T>::allocator;
    template <class U>
    struct rebind {
        using other = default_init_allocator<U>;
    };
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

/// Encoded bytes: a resize does not zero what it adds.
using byte_buffer = std::vector<unsigned char, default_init_allocator<unsigned char>>;

}  // namespace loupe::detail::format
