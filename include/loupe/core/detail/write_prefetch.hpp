// A hint that this core is about to write a cache line: the line is fetched
// and owned before the stores come, so they reach the cache without waiting
// for it. The recorder uses it for records that fill the ring quickly (see
// ring::prefetch_ahead_for_write).
//
// x86: PREFETCHW, where the CPU has it (CPUID 0x80000001, ECX bit 8: every
// AMD64 CPU, Intel since Broadwell), checked once at start-up; without it,
// nothing. Compiled with -mprfchw (or an -march that implies it), the
// compiler's own prefetch is PREFETCHW and no check is made. Elsewhere, the
// compiler's write prefetch (ARM: PRFM PSTL1KEEP). A prefetch never faults
// and changes no memory.
#pragma once

#include "loupe/base/config.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && !defined(__PRFCHW__)
#    include <cpuid.h>
#    define LOUPE_DETAIL_PREFETCHW_CHECKED 1
#else
#    define LOUPE_DETAIL_PREFETCHW_CHECKED 0
#endif

namespace loupe::detail {

#if LOUPE_DETAIL_PREFETCHW_CHECKED
inline bool cpu_has_prefetchw() noexcept {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (ecx & (1u << 8)) != 0;
}
/// Read on the hot path: false until static initialization has run, so a
/// record made before it only goes without the hint.
inline const bool g_cpu_has_prefetchw = cpu_has_prefetchw();
#endif

/// Asks for the cache line holding `p` to be owned by this core for
/// writing. Cost: a load and a branch, and the prefetch; nothing when the
/// CPU has no such hint.
LOUPE_ALWAYS_INLINE void prefetch_for_write(const void* p) noexcept {
#if LOUPE_DETAIL_PREFETCHW_CHECKED
    if (g_cpu_has_prefetchw) __asm__ volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 1, 3);
#else
    (void)p;
#endif
}

}  // namespace loupe::detail
