// The static metadata of a method site (LOUPE_METHOD, LOUPE_FUNCTION_PARAMS)
// and the binding state parameter specs attach to it (site_binding.hpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "loupe/base/site.hpp"

namespace loupe {

/// Metadata and binding state of one method site (LOUPE_METHOD,
/// LOUPE_FUNCTION_PARAMS). The macros make it a function-local static,
/// constant-initialized (no guard on the hot path).
/// Thread-safety: the mutable members are atomics; binding takes a mutex.
/// Cache-line aligned: every recorded call reads its binding words, so no
/// other static data may share their line.
struct alignas(64) method_site {
    site zone;                       ///< how the call appears: a zone named by the signature
    bool has_receiver;               ///< a member function (index 0 is `this`)
    const char* const* chain_names;  ///< compile-time chains registered at the site (LOUPE_METHOD_CHAINS)
    unsigned chain_count;
    const unsigned* chain_params;  ///< the parameter each compile-time chain starts from

    std::atomic<const void*> binding{nullptr};       ///< const detail::site_binding*
    std::atomic<std::uint64_t> bound_generation{0};  ///< registry generation `binding` was made for

    constexpr method_site(const char* signature, const char* file, const char* function, std::uint32_t line,
                          bool receiver, const char* const* names = nullptr, unsigned count = 0,
                          const unsigned* params = nullptr) noexcept
        : zone{signature, file, function, line, site_kind::zone},
          has_receiver(receiver),
          chain_names(names),
          chain_count(count),
          chain_params(params) {}
    method_site(const method_site&) = delete;
    method_site& operator=(const method_site&) = delete;
};

}  // namespace loupe

