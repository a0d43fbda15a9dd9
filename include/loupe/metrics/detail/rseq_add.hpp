// A per-CPU add without a locked instruction: a restartable sequence (rseq,
// Linux 4.18+, registered for every thread by glibc >= 2.35). The add is the
// commit instruction of a critical section that first checks the thread
// still runs on the CPU whose row it adds to; if the thread is preempted,
// migrated or signalled inside it, the kernel restarts it at the abort label
// and the caller tries again. This is the patent's "update a per processor
// variable as a single atomic instruction before releasing the processor"
// (US 6,904,594, FIG. 28), done in user space.
//
// Available on x86-64 with glibc's rseq registration (LOUPE_HAS_RSEQ_ADD);
// elsewhere, and when the kernel refused registration (valgrind, old
// kernels, glibc.pthread.rseq=0), callers use an atomic add instead.
#pragma once

#include "loupe/base/config.hpp"

#include <cstddef>
#include <cstdint>

#if LOUPE_OS_LINUX && defined(__x86_64__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#    define LOUPE_HAS_RSEQ_ADD 1
extern "C" {
extern const std::ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
}
#else
#    define LOUPE_HAS_RSEQ_ADD 0
#endif

namespace loupe::detail {

#if LOUPE_HAS_RSEQ_ADD

/// True when glibc registered an rseq area for the threads of this process.
inline bool rseq_registered() noexcept { return &__rseq_size != nullptr && __rseq_size != 0; }

/// The CPU the calling thread runs on, from its rseq area (cpu_id, at offset
/// 4); a value >= 2^31 means the thread has no registered area.
LOUPE_ALWAYS_INLINE std::uint32_t rseq_cpu_id() noexcept {
    std::uint32_t cpu;
    __asm__ volatile("movl %%fs:4(%1), %0" : "=r"(cpu) : "r"(__rseq_offset));
    return cpu;
}

/// *cell += delta if the calling thread still runs on `cpu` when the add
/// commits; false if the sequence was aborted (the add did not happen).
/// The signature before the abort label is glibc's RSEQ_SIG for x86.
LOUPE_ALWAYS_INLINE bool rseq_add_on_cpu(std::int64_t* cell, std::int64_t delta, std::uint32_t cpu) noexcept {
    __asm__ goto(
        ".pushsection __rseq_cs, \"aw\"\n\t"
        ".balign 32\n\t"
        "3:\n\t"
        ".long 0x0, 0x0\n\t"              // version, flags
        ".quad 1f, (2f - 1f), 4f\n\t"     // start, length up to the commit's end, abort
        ".popsection\n\t"
        "leaq 3b(%%rip), %%rax\n\t"
        "movq %%rax, %%fs:8(%[offset])\n\t"  // rseq->rseq_cs = the descriptor above
        "1:\n\t"
        "cmpl %[cpu], %%fs:4(%[offset])\n\t"  // still on `cpu`?
        "jnz 4f\n\t"
        "addq %[delta], %[cell]\n\t"  // commit
        "2:\n\t"
        ".pushsection __rseq_failure, \"ax\"\n\t"
        ".byte 0x0f, 0xb9, 0x3d\n\t"
        ".long 0x53053053\n\t"  // RSEQ_SIG
        "4:\n\t"
        "jmp %l[aborted]\n\t"
        ".popsection\n\t"
        :
        : [cpu] "r"(cpu), [offset] "r"(__rseq_offset), [cell] "m"(*cell), [delta] "er"(delta)
        : "memory", "cc", "rax"
        : aborted);
    return true;
aborted:
    return false;
}

#endif

}  // namespace loupe::detail
