// loupe's monotonic clock: raw ticks on the hot path, nanoseconds on the
// collector. On x86 with an invariant TSC the ticks are `rdtsc` (about 9 ns
// here, no system call, monotonic across cores); elsewhere they are
// steady_clock nanoseconds. Never a wall clock: the only wall-clock reading is
// the anchor a session takes when it starts.
#pragma once

#include <time.h>

#include <cstdint>

#include "loupe/base/config.hpp"
#include "loupe/base/clock_source.hpp"

#if LOUPE_ARCH_X86
#    include <cpuid.h>
#endif

namespace loupe::detail {

// 128-bit intermediates for tick -> ns scaling (__extension__ keeps
// -Wpedantic quiet in consumers' builds).
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

/// CLOCK_MONOTONIC in nanoseconds: the clock std::chrono::steady_clock reads
/// (read directly so that instrumenting code does not compile <chrono>).
inline std::uint64_t steady_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t wall_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

/// True when the CPU says its TSC runs at a constant rate in every power state
/// (CPUID 0x80000007, EDX bit 8), so TSC deltas measure time.
inline bool has_invariant_tsc() noexcept {
#if LOUPE_ARCH_X86
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u) return false;
    __cpuid(0x80000007u, eax, ebx, ecx, edx);
    return (edx & (1u << 8)) != 0;
#else
    return false;
#endif
}

/// Converts ticks to nanoseconds: ns = anchor_ns + (ticks - anchor_ticks) * mult / 2^32.
/// Built once per process (calibration sleeps ~20 ms); immutable afterwards.
class tick_clock {
public:
    tick_clock() noexcept {
        use_tsc_ = has_invariant_tsc();
        if (!use_tsc_) {
            anchor_ticks_ = anchor_ns_ = 0;
            mult_ = std::uint64_t{1} << 32;
            return;
        }
        std::uint64_t s0 = 0, t0 = 0, s1 = 0, t1 = 0;
        sample(s0, t0);
        const timespec pause{0, 20 * 1000 * 1000};  // 20 ms
        nanosleep(&pause, nullptr);
        sample(s1, t1);
        anchor_ticks_ = t0;
        anchor_ns_ = s0;
        const uint128 mult = t1 > t0 ? (static_cast<uint128>(s1 - s0) << 32) / (t1 - t0) : 0;
        // A TSC that does not advance (or ticks slower than once in 2^31 ns,
        // which to_ns's signed 64-bit factor cannot hold) is no clock.
        if (t1 <= t0 || s1 <= s0 || mult > static_cast<uint128>(INT64_MAX)) {
            use_tsc_ = false;
            anchor_ticks_ = anchor_ns_ = 0;
            mult_ = std::uint64_t{1} << 32;
            return;
        }
        mult_ = static_cast<std::uint64_t>(mult);
    }

    bool uses_tsc() const noexcept { return use_tsc_; }
    clock_source source() const noexcept { return use_tsc_ ? clock_source::tsc : clock_source::steady_clock; }

    /// Current ticks of this clock (the hot path inlines `read_ticks` instead).
    std::uint64_t now_ticks() const noexcept { return use_tsc_ ? rdtsc() : steady_ns(); }

    /// Nanoseconds of `ticks` (before the anchor too). One signed 64x64-bit
    /// multiply: mult_ is below 2^63 (the constructor makes sure).
    std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
        const auto delta = static_cast<int128>(static_cast<std::int64_t>(ticks - anchor_ticks_));
        const auto mult = static_cast<int128>(static_cast<std::int64_t>(mult_));
        return anchor_ns_ + static_cast<std::uint64_t>((delta * mult) >> 32);
    }

    /// Nanoseconds per tick times 2^32 (for diagnostics and tests).
    std::uint64_t mult() const noexcept { return mult_; }

    static std::uint64_t rdtsc() noexcept {
#if LOUPE_ARCH_X86
        return __builtin_ia32_rdtsc();  // <x86intrin.h>'s __rdtsc, without its 70,000 lines
#else
        return steady_ns();
#endif
    }

private:
    // Reads the TSC between two steady_clock readings and keeps the tightest
    // of a few tries, so the pair describes one instant to within ~50 ns.
    static void sample(std::uint64_t& steady, std::uint64_t& tsc) noexcept {
        std::uint64_t best = ~std::uint64_t{0};
        for (int i = 0; i < 5; ++i) {
            std::uint64_t a = steady_ns();
            std::uint64_t t = rdtsc();
            std::uint64_t b = steady_ns();
            if (b - a < best) {
                best = b - a;
                steady = a + (b - a) / 2;
                tsc = t;
            }
        }
    }

    bool use_tsc_ = false;
    std::uint64_t anchor_ticks_ = 0;
    std::uint64_t anchor_ns_ = 0;
    std::uint64_t mult_ = std::uint64_t{1} << 32;
};

}  // namespace loupe::detail
