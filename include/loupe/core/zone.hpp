// Zones, instants and counters: the hot path.
//
// Cost (measured in bench/, see README "Overhead"):
// - nothing recording: one relaxed load of a global word and a branch
//   predicted not taken; no TLS access, no call.
// - recording: two timestamp reads and one 32-byte store into the calling
//   thread's own ring; no lock, no allocation, no system call.
// - recording with metrics (session_config::metrics): also a call at entry
//   and exit that reads each metric (a load for push metrics, a system call
//   for CPU time and perf counters), and 32 more bytes in the ring for the
//   first metric, 32 for each 4 more.
//
// The macros in loupe.hpp are the usual way in; these classes are the
// macro-free equivalents. Unlike the macros, calls to them are not removed
// by LOUPE_ENABLED=0 and their arguments are always evaluated.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/site.hpp"
#include "loupe/core/recorder.hpp"

namespace loupe {

struct zone_arg_site;  // core/zone_arg.hpp

namespace detail {
/// Interns a zone name given at run time: the site named `name` at the call
/// site `where` (the same site for the same name there, never freed), or
/// `where` itself when loupe keeps no more names. Installed by
/// core/detail/site_interner.hpp (with <loupe/session.hpp>: where a session
/// exists, so does the interner). Slow path: a lock and a hash lookup.
using site_interner_fn = const site* (*)(const site& where, std::string_view name) noexcept;
LOUPE_API inline std::atomic<site_interner_fn> g_site_interner{nullptr};
}  // namespace detail


/// RAII zone: records [construction, destruction) on the calling thread for
/// every session that records zones from it when the zone begins. A zone that
/// began recorded ends recorded, even if a session stops in between. When a
/// session records metrics, the zone carries the delta of each between its
/// entry and exit on this thread (metrics/metric.hpp).
///
/// `where` must have static storage duration (see `site`).
/// Thread-safety: create and destroy on one thread (a zone cannot migrate).
/// Exceptions: none; nested zones unwind in order during stack unwinding.
///
///     static constexpr loupe::site s{"parse", __FILE__, __func__, __LINE__, loupe::site_kind::zone};
///     loupe::zone_scope z(s);
class zone_scope {
public:
    LOUPE_ALWAYS_INLINE explicit zone_scope(const site& where) noexcept : where_(&where) {
        if (LOUPE_UNLIKELY(detail::armed() & kinds::zones)) {
            sessions_ = detail::sessions_for(site_kind::zone);
            if (sessions_ != 0) begin_recording();
        }
    }
    /// A zone named at run time (LOUPE_ZONE_NAMED): recorded as the site
    /// named `name` (anything a std::string_view is made from: std::string,
    /// string_view, a C string) at the call site `where` (interned: one site
    /// per name and call site; the interning happens only when the zone is
    /// recorded). `name` is read during the constructor only, and not at all
    /// when nothing records. Past loupe's limit of distinct names
    /// (core/detail/site_interner.hpp) the zone keeps `where`'s own name.
    /// Cost when nothing records: as above; when recording: the name
    /// compared with the thread's last one, or a lock and a hash lookup.
    template <class Name>
    LOUPE_ALWAYS_INLINE zone_scope(const site& where, const Name& name) noexcept : where_(&where) {
        if (LOUPE_UNLIKELY(detail::armed() & kinds::zones)) enter_named(std::string_view(name));
    }
    LOUPE_ALWAYS_INLINE ~zone_scope() {
        if (LOUPE_UNLIKELY(sessions_ != 0)) detail::end_zone(where_, t0_, sessions_, plan_);
    }
    zone_scope(const zone_scope&) = delete;
    zone_scope& operator=(const zone_scope&) = delete;
    zone_scope(zone_scope&&) = delete;
    zone_scope& operator=(zone_scope&&) = delete;
    static void* operator new(std::size_t) = delete;  // a zone lives on the stack

    /// True when this zone is being recorded by at least one session.
    bool recording() const noexcept { return sessions_ != 0; }

    /// Records an argument of this zone: `key` (a zone_arg_site) and a bool,
    /// integer, enum, floating-point or text `value`; nothing when the zone
    /// is not recorded. Defined in core/zone_arg.hpp (with loupe.hpp's
    /// LOUPE_ZONE_ARG, the usual way in).
    template <class T>
    void arg(const zone_arg_site& key, const T& value) noexcept;

private:
    // The entry time, and the metrics' entry values when a session records
    // metrics: after sessions_ was found non-zero.
    LOUPE_ALWAYS_INLINE void begin_recording() noexcept {
        t0_ = detail::read_ticks();
        plan_ = detail::t_state.plan;
        if (LOUPE_UNLIKELY(plan_ != nullptr)) plan_ = detail::enter_zone_metrics(plan_);
    }

    LOUPE_NOINLINE void enter_named(std::string_view name) noexcept {
        sessions_ = detail::sessions_for(site_kind::zone);
        if (sessions_ == 0) return;
        if (const detail::site_interner_fn intern = detail::g_site_interner.load(std::memory_order_acquire)) {
            where_ = intern(*where_, name);
        }
        begin_recording();
    }

    const site* where_;
    std::uint64_t sessions_ = 0;
    std::uint64_t t0_ = 0;
    const detail::metric_plan* plan_ = nullptr;  // its entry values are on the thread's stack
};

/// Records a point in time at `where` (a site of kind `instant`).
/// Cost and thread-safety as `zone_scope`; any thread.
LOUPE_ALWAYS_INLINE void instant(const site& where) noexcept {
    if (LOUPE_UNLIKELY(detail::armed() & kinds::instants)) {
        const std::uint64_t sessions = detail::sessions_for(site_kind::instant);
        if (sessions != 0) detail::push(&where, detail::read_ticks(), 0, sessions);
    }
}

namespace detail {
/// Pushes `value` of the counter at `where` for `sessions` (from sessions_for).
LOUPE_ALWAYS_INLINE void push_counter(const site& where, std::uint64_t sessions, double value) noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    push(&where, read_ticks(), bits, sessions);
}
}  // namespace detail

/// Records `value` of the counter at `where` (a site of kind `counter`).
/// Cost and thread-safety as `zone_scope`; any thread. `value` is computed
/// by the caller whether or not anything records; LOUPE_COUNTER computes it
/// only when a session records counters from the calling thread.
LOUPE_ALWAYS_INLINE void counter(const site& where, double value) noexcept {
    if (LOUPE_UNLIKELY(detail::armed() & kinds::counters)) {
        const std::uint64_t sessions = detail::sessions_for(site_kind::counter);
        if (sessions != 0) detail::push_counter(where, sessions, value);
    }
}

}  // namespace loupe
