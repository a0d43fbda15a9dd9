// The process-wide runtime: session slots, the rings of all threads, and the
// collector thread that drains rings and routes records to session sinks.
// This file has the class and its instance; process_hooks.hpp the fork and
// exit hooks, host_slow_paths.hpp what host threads call when the hot path
// cannot finish alone, collector.hpp the collector's members. Include
// runtime.hpp, which has them all.
//
// Why it looks like this:
// - One instance per process, reached through LOUPE_API functions, so shared
//   libraries built with hidden visibility share it (see config.hpp).
// - The heavy object is created on first use (the first session start) and
//   never destroyed: an atexit hook stops sessions and joins the collector
//   instead, so static destructors that still record find a live object.
// - fork(): the child gets a fresh runtime lazily; the parent's sessions,
//   rings and files are abandoned in the child untouched (never flushed or
//   closed there), so the child cannot write into the parent's traces.
#pragma once

#include "loupe/base/config.hpp"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#if LOUPE_OS_LINUX
#    include <sys/syscall.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#if LOUPE_OS_LINUX
#    include <sys/syscall.h>
#endif

#include "loupe/base/clock.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/error_handler.hpp"
#include "loupe/core/detail/context_record.hpp"
#include "loupe/core/detail/hot_state.hpp"
#include "loupe/core/detail/process_identity.hpp"
#include "loupe/core/detail/ring.hpp"
#include "loupe/core/detail/session_metrics.hpp"
#include "loupe/core/detail/session_state.hpp"
#include "loupe/core/detail/thread_state.hpp"
#include "loupe/core/filter.hpp"
#include "loupe/core/os_thread_id.hpp"
#include "loupe/core/params_backend.hpp"
#include "loupe/core/task_rules.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/core/session_config.hpp"
#include "loupe/core/zone_metrics.hpp"
#include "loupe/metrics/registry.hpp"

namespace loupe::detail {


/// Internal counters, for tests and diagnostics.
struct runtime_counters {
    std::uint64_t rings_created = 0;  ///< rings ever allocated by this runtime
    std::uint64_t rings_live = 0;     ///< rings owned by threads or awaiting drain
    std::uint64_t rings_pooled = 0;   ///< drained rings kept for reuse
    std::uint64_t rings_grown = 0;    ///< larger successors made for busy rings (recorder.hpp: adopt_successor)
    std::uint64_t rings_grown_by_thread = 0;  ///< of those, made by the ring's thread, its ring full (ring_growth.hpp)
    std::uint64_t ring_bytes = 0;     ///< bytes of the rings (live and pooled) now
    std::uint64_t ring_bytes_peak = 0;  ///< the most they ever held at once
    std::uint64_t pauses_cut = 0;     ///< collector pauses ended by a ring passing half full (ring::fits_slow)
};

class runtime {
public:
    static constexpr std::size_t max_rings = 4096;    ///< threads recording at once
    static constexpr std::size_t max_pooled_rings = 64;
    static constexpr std::size_t min_ring_bytes = 256;
    static constexpr std::size_t max_ring_bytes = std::size_t{1} << 30;
    static constexpr std::size_t max_memory_budget = std::size_t{1} << 40;

    runtime()
        : clock_(process_clock()),
          pid_(static_cast<std::uint32_t>(::getpid())),
          process_name_(current_process_name()),
          identity_(read_process_identity()) {
        g_hot.use_tsc.store(clock_.uses_tsc(), std::memory_order_relaxed);
        if (pthread_key_create(&exit_key_, &on_thread_exit) != 0) {
            throw error("loupe: cannot create the thread-exit key (pthread_key_create failed)");
        }
    }
    runtime(const runtime&) = delete;
    runtime& operator=(const runtime&) = delete;

    const tick_clock& clock() const noexcept { return clock_; }

    // ------------------------------------------------------------- sessions

    /// Any thread but the collector's. Validates `cfg`, takes a slot and arms
    /// the session.
    std::shared_ptr<session_state> start(session_config cfg) {
        if (t_state.status == thread_collector) {
            throw error("cannot start session '" + cfg.name + "' from inside a sink (collector thread)");
        }
        validate(cfg);
        internal_allocation_scope internal;
        std::shared_ptr<const filter> thread_filter = parse_filter(cfg.name, cfg.filter);
        std::shared_ptr<const task_rules> rules = parse_task_rules(cfg.name, cfg.task_rules);
        auto s = std::make_shared<session_state>();
        s->metrics = session_metrics::resolve(cfg.name, cfg.metrics);
        std::shared_ptr<void> specs;
        if (cfg.kinds & kinds::methods) {
            s->param_log = std::make_shared<session_param_log>();
            s->param_value_bytes = cfg.param_value_bytes;
            if (!cfg.params.empty()) specs = params().compile(cfg.name, cfg.params, cfg.param_value_bytes, *s->param_log);
        }
        s->metric_totals_interval = cfg.metric_totals_interval;
        s->info.metrics = s->metrics.infos().data();
        s->info.metric_count = s->metrics.infos().size();
        s->name = std::move(cfg.name);
        s->kinds = cfg.kinds;
        s->overflow = cfg.overflow;
        s->ring_bytes = cfg.ring_bytes;
        s->memory_budget = cfg.memory_budget;
        s->owner = this;
        for (auto& k : cfg.sinks) s->sinks.push_back({std::move(k), false});
        // The configuration is valid: the sinks may open their files now.
        opened_sinks opened(*s);

        std::unique_lock<std::mutex> lock(mutex_);
        if (shutting_down_) throw error("cannot start session '" + s->name + "': the process is exiting");
        int slot = -1;
        for (int i = 0; i < max_sessions; ++i) {
            if (!slots_[i]) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            throw error("cannot start session '" + s->name + "': " + std::to_string(max_sessions) +
                        " sessions are active; stop one first");
        }
        check_zone_metrics_locked(*s);
        ensure_collector_locked();
        s->slot = slot;
        s->start_ticks = clock_.now_ticks();
        s->info.name = s->name;
        s->info.start_ns = clock_.to_ns(s->start_ticks);
        s->info.wall_anchor_ns = wall_ns();
        s->info.pid = pid_;
        s->info.program = process_name_;
        s->info.host = identity_.host;
        s->info.boot_id = identity_.boot_id;
        s->info.clock_domain = identity_.clock_domain;
        s->info.process_start_ns = identity_.start_ns;
        s->info.clock = clock_.source();
        // Drop counts of this slot start from here: earlier ones belonged to
        // the slot's previous session, which reported them when it finished.
        for (ring* r : live_rings_) r->seen_dropped[slot] = r->dropped(slot);
        ringless_seen_[slot] = ringless_dropped_[slot].load(std::memory_order_relaxed);
        s->filtered = thread_filter != nullptr;
        {
            std::unique_lock<std::shared_mutex> filters(filter_mutex_);
            slot_filters_[slot] = std::move(thread_filter);
            set_slot_task_rules(slot, std::move(rules));
        }
        if (!s->metrics.empty()) {
            metric_registry& registry = metrics_registry();
            std::lock_guard<std::mutex> blocks(registry.mutex());
            s->metrics.take_baselines(registry);
            registry.metric_session_started_locked();
        }
        slots_[slot] = s;
        occupied_slots_.fetch_or(std::uint64_t{1} << slot, std::memory_order_release);
        if (specs) params().publish(slot, std::move(specs), s->param_log);
        // The epoch publish_locked makes (every bump is under mutex_).
        g_hot.slot_start_epoch[slot].store(g_hot.epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        publish_locked();
        lock.unlock();
        opened.keep();
        wake_collector();
        return s;
    }

    /// Any thread but the collector's. Disarms the session, waits until the
    /// collector has drained every ring once more, written the session's end
    /// and closed its sinks. Idempotent.
    session_stats stop(session_state& s) {
        if (t_state.status == thread_collector) {
            throw error("cannot stop session '" + s.name + "' from inside a sink (collector thread)");
        }
        std::unique_lock<std::mutex> lock(mutex_);
        if (s.phase == session_phase::starting || s.phase == session_phase::active) {
            s.phase = session_phase::stopping;
            s.stop_ticks = clock_.now_ticks();
            if (s.param_log) {
                if (const params_backend* b = g_params_backend.load(std::memory_order_acquire)) b->publish(s.slot, nullptr, nullptr);
            }
            publish_locked();
            wake_ = true;
            wake_cv_.notify_one();
        }
        done_cv_.wait(lock, [&] { return s.phase == session_phase::stopped; });
        lock.unlock();
        session_stats stats = s.stats();
        if (s.param_log) {
            if (const params_backend* b = g_params_backend.load(std::memory_order_acquire)) {
                stats.unmatched_specs = b->unmatched(*s.param_log);
            }
        }
        return stats;
    }

    /// Any thread. Replaces the thread filter of a running session; threads
    /// apply it from their next event. Throws loupe::error for invalid text
    /// (the old filter stays) or a session that is not running.
    void set_filter(session_state& s, std::string_view text) {
        std::shared_ptr<const filter> thread_filter = parse_filter(s.name, text);
        std::lock_guard<std::mutex> lock(mutex_);
        if (s.phase != session_phase::starting && s.phase != session_phase::active) {
            throw error("cannot change the filter of session '" + s.name + "': it is not running");
        }
        s.filtered = thread_filter != nullptr;
        {
            std::unique_lock<std::shared_mutex> filters(filter_mutex_);
            slot_filters_[s.slot].swap(thread_filter);
        }
        publish_locked();
        // The old filter is released here, after no refresh can still use it.
    }

    /// Any thread. Replaces the task rules of a running session
    /// (core/task_rules.hpp); calls from now on follow them. Throws
    /// loupe::error for invalid text (the old rules stay) or a session that
    /// is not running.
    void set_task_rules(session_state& s, std::string_view text) {
        std::shared_ptr<const task_rules> rules = parse_task_rules(s.name, text);
        std::lock_guard<std::mutex> lock(mutex_);
        if (s.phase != session_phase::starting && s.phase != session_phase::active) {
            throw error("cannot change the task rules of session '" + s.name + "': it is not running");
        }
        std::unique_lock<std::shared_mutex> filters(filter_mutex_);
        set_slot_task_rules(s.slot, std::move(rules));
    }

    /// Host thread: of the session slots in `sessions`, those whose task
    /// rules tag a call to `peer` named `name` (a session without rules tags
    /// every call: no lock is taken when none of `sessions` has rules).
    std::uint64_t tagging(std::uint64_t sessions, std::string_view peer, std::string_view name) const noexcept {
        std::uint64_t ruled = sessions & g_task_rules_slots.load(std::memory_order_acquire);
        if (ruled == 0) return sessions;
        std::shared_lock<std::shared_mutex> filters(filter_mutex_);
        for (; ruled != 0; ruled &= ruled - 1) {
            const int slot = __builtin_ctzll(ruled);
            const task_rules* r = slot_task_rules_[slot].get();
            if (r != nullptr && !r->tags(peer, name)) sessions &= ~(std::uint64_t{1} << slot);
        }
        return sessions;
    }

    /// Any thread. Replaces the parameter specs of a running session; calls
    /// that enter from now on use them. Throws loupe::error naming the line
    /// and column for invalid text (the old specs stay), or when the session
    /// does not record methods or is not running.
    void set_params(session_state& s, std::string_view text) {
        if (!s.param_log) {
            throw error("cannot set the parameter specs of session '" + s.name +
                        "': it does not record methods (kinds lacks loupe::kinds::methods)");
        }
        std::shared_ptr<void> specs = text.empty() ? nullptr : params().compile(s.name, text, s.param_value_bytes, *s.param_log);
        std::lock_guard<std::mutex> lock(mutex_);
        if (s.phase != session_phase::starting && s.phase != session_phase::active) {
            throw error("cannot change the parameter specs of session '" + s.name + "': it is not running");
        }
        std::shared_ptr<session_param_log> log = specs ? s.param_log : nullptr;
        params().publish(s.slot, std::move(specs), std::move(log));
    }

    /// Host thread, slow path: of the session slots in `candidates`, those
    /// whose filter does not match `subject`.
    std::uint64_t filtered_out(std::uint64_t candidates, const filter_subject& subject) const noexcept {
        std::uint64_t out = 0;
        std::shared_lock<std::shared_mutex> filters(filter_mutex_);
        for (; candidates != 0; candidates &= candidates - 1) {
            const int slot = __builtin_ctzll(candidates);
            const filter* f = slot_filters_[slot].get();
            if (f == nullptr || !f->matches(subject)) out |= std::uint64_t{1} << slot;
        }
        return out;
    }

    /// This process's name, as filters see it (`process == "..."`).
    const std::string& process_name() const noexcept { return process_name_; }

    // ------------------------------------------------------------ threads

    /// Host thread, slow path: gives the calling thread a ring. Null when the
    /// process is exiting, too many threads record at once, or memory is out.
    ring* acquire_ring(thread_state& ts) noexcept {
        internal_allocation_scope internal;
        try {
            std::lock_guard<std::mutex> lock(mutex_);
            if (shutting_down_) return nullptr;
            std::size_t want = ring::records_for_bytes(g_hot.ring_bytes.load(std::memory_order_relaxed));
            ring* r = take_pooled_locked(want);
            if (!r) {
                if (live_rings_.size() >= max_rings) return nullptr;
                r = new_ring_locked(want);
            }
            thread_metrics* const block = t_metric_thread.block;
            r->thread_id = block && block->thread_id.load(std::memory_order_relaxed) != 0
                               ? block->thread_id.load(std::memory_order_relaxed)
                               : ++next_thread_id_;
            if (block) block->thread_id.store(r->thread_id, std::memory_order_relaxed);
            t_metric_thread.thread_id = r->thread_id;
            r->os_tid = current_os_tid();
            r->set_name(ts.pending_name[0] ? ts.pending_name : os_thread_name().c_str());
            live_rings_.push_back(r);
            ts.owned_ring = r;
            ts.status = thread_has_ring;
            pthread_setspecific(exit_key_, r);
            return r;
        } catch (...) {
            return nullptr;
        }
    }

    /// Host thread, its ring `r` full with no successor: makes one now when
    /// the budget has room and the lock is free (never waits for it); the
    /// thread then moves there (adopt_successor). ring_growth.hpp.
    bool grow_full_ring(ring& r) noexcept;

    /// Host thread: counts an event that had no ring to go to.
    void count_ringless(std::uint64_t sessions) noexcept {
        while (sessions != 0) {
            int slot = __builtin_ctzll(sessions);
            sessions &= sessions - 1;
            ringless_dropped_[slot].fetch_add(1, std::memory_order_relaxed);
        }
    }

    bool collector_running() const noexcept { return collector_running_.load(std::memory_order_acquire); }

    void wake_collector() noexcept {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            wake_ = true;
        }
        wake_cv_.notify_one();
    }

    /// A producer's ring passed half full while the collector paused
    /// between passes (hot_state::paused_collector_wake): ends the pause.
    /// Takes no lock: a producer never waits for the collector's. If it
    /// comes in the few instructions between the collector's last look at
    /// `hurried_` and its wait, the pause runs its course (at most
    /// collector_detail::pass_pause, or the 1 ms idle wait).
    static void wake_paused_collector() noexcept;

    runtime_counters counters() {
        std::lock_guard<std::mutex> lock(mutex_);
        runtime_counters c = counters_;
        c.rings_live = live_rings_.size();
        c.rings_pooled = pool_.size();
        return c;
    }

    /// At exit: stops every session (flushing its sinks) and joins the collector.
    void shutdown() noexcept {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (shutting_down_) return;
        }
        stop_all();
        std::thread collector;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            shutting_down_ = true;
            wake_ = true;
            collector = std::move(collector_);
        }
        wake_cv_.notify_one();
        if (collector.joinable()) collector.join();
    }

    /// Any thread but the collector's: stops every running session (each
    /// drained, written and closed, as by `stop`).
    void stop_all() noexcept {
        std::vector<std::shared_ptr<session_state>> active;
        try {
            std::lock_guard<std::mutex> lock(mutex_);
            for (auto& s : slots_) {
                if (s) active.push_back(s);
            }
        } catch (...) {  // out of memory: none stopped here (exit still stops them)
            return;
        }
        for (auto& s : active) {
            try {
                stop(*s);
            } catch (...) {
            }
        }
    }

    // ------------------------------------------------------------- fork

    std::mutex& mutex() noexcept { return mutex_; }
    pthread_key_t exit_key() const noexcept { return exit_key_; }

private:
    // Null for an empty filter (every thread matches).
    static std::shared_ptr<const filter> parse_filter(const std::string& session_name, std::string_view text) {
        try {
            filter parsed = filter::parse(text);
            if (parsed.matches_everything()) return nullptr;
            return std::make_shared<const filter>(std::move(parsed));
        } catch (const filter_error& e) {
            throw error("session '" + session_name + "': " + e.what());
        }
    }

    // Null for empty rules (every call is tagged).
    static std::shared_ptr<const task_rules> parse_task_rules(const std::string& session_name, std::string_view text) {
        try {
            task_rules parsed = task_rules::parse(text);
            if (parsed.empty()) return nullptr;
            return std::make_shared<const task_rules>(std::move(parsed));
        } catch (const error& e) {
            throw error("session '" + session_name + "': " + e.what());
        }
    }

    // Under filter_mutex_ (exclusive).
    void set_slot_task_rules(int slot, std::shared_ptr<const task_rules> rules) noexcept {
        const std::uint64_t bit = std::uint64_t{1} << slot;
        if (rules) {
            g_task_rules_slots.fetch_or(bit, std::memory_order_release);
        } else {
            g_task_rules_slots.fetch_and(~bit, std::memory_order_release);
        }
        slot_task_rules_[slot] = std::move(rules);
    }

    // The parameter backend (params/method.hpp); configuring specs without it is a usage error.
    static const params_backend& params() {
        const params_backend* b = g_params_backend.load(std::memory_order_acquire);
        if (b == nullptr) {
            throw error("parameter specs need <loupe/session.hpp> (or <loupe/params/specs.hpp>) in the program");
        }
        return *b;
    }

    static std::string current_process_name() {
#if LOUPE_OS_LINUX && defined(__GLIBC__)
        return program_invocation_short_name ? program_invocation_short_name : "";
#else
        return {};
#endif
    }

    // A starting session's sinks, opened (sink::open) in order. Unless kept,
    // the session did not start: those that opened are given back
    // (sink::abandon). A sink's refusal throws, naming the session.
    class opened_sinks {
    public:
        explicit opened_sinks(const session_state& s) : sinks_(s.sinks) {
            try {
                for (; opened_ < sinks_.size(); ++opened_) sinks_[opened_].target->open();
            } catch (const error& e) {
                give_back();
                throw error("cannot start session '" + s.name + "': " + e.what());
            } catch (...) {
                give_back();
                throw;
            }
        }
        ~opened_sinks() {
            if (!kept_) give_back();
        }
        opened_sinks(const opened_sinks&) = delete;
        opened_sinks& operator=(const opened_sinks&) = delete;
        void keep() noexcept { kept_ = true; }

    private:
        void give_back() noexcept {
            while (opened_ > 0) sinks_[--opened_].target->abandon();
        }
        const std::vector<session_state::sink_slot>& sinks_;
        std::size_t opened_ = 0;
        bool kept_ = false;
    };

    static void validate(const session_config& cfg) {
        const std::string who = "session '" + cfg.name + "': ";
        if (cfg.kinds == 0 || (cfg.kinds & ~kinds::all) != 0) {
            throw error(who + "kinds = " + std::to_string(cfg.kinds) +
                        ": expected a non-empty OR of loupe::kinds::zones, instants, counters, io, methods, flows");
        }
        if (cfg.sinks.empty()) throw error(who + "sinks is empty: expected at least one sink");
        for (std::size_t i = 0; i < cfg.sinks.size(); ++i) {
            if (!cfg.sinks[i]) throw error(who + "sinks[" + std::to_string(i) + "] is null");
        }
        if (cfg.metric_totals_interval.count() < 0) {
            throw error(who + "metric_totals_interval = " + std::to_string(cfg.metric_totals_interval.count()) +
                        " ms: expected 0 (only at the stop) or a positive interval");
        }
        if (!cfg.params.empty() && !(cfg.kinds & kinds::methods)) {
            throw error(who + "params are given but kinds lacks loupe::kinds::methods: specs apply to method calls");
        }
        if (cfg.param_value_bytes < 8 || cfg.param_value_bytes > 4096) {
            throw error(who + "param_value_bytes = " + std::to_string(cfg.param_value_bytes) + ": expected 8 to 4096");
        }
        if (cfg.ring_bytes < min_ring_bytes || cfg.ring_bytes > max_ring_bytes) {
            throw error(who + "ring_bytes = " + std::to_string(cfg.ring_bytes) + ": expected " +
                        std::to_string(min_ring_bytes) + " to " + std::to_string(max_ring_bytes));
        }
        if (cfg.memory_budget > max_memory_budget) {
            throw error(who + "memory_budget = " + std::to_string(cfg.memory_budget) + ": expected 0 (rings never grow) to " +
                        std::to_string(max_memory_budget));
        }
    }

    static std::string os_thread_name() {
        char buf[64] = {};
#if LOUPE_OS_LINUX
        pthread_getname_np(pthread_self(), buf, sizeof buf);
#endif
        return buf;
    }

    // Makes the hot words describe the sessions that are starting or active.
    // A block session stays in block_slots until it has finished: a thread
    // that has not yet seen the stop still pushes events for it, and must
    // wait for room rather than count them as the session's drops.
    void publish_locked() noexcept {
        std::uint32_t armed = 0;
        std::uint64_t active = 0, block = 0, filtered = 0, ring_bytes = 0, metric_slots = 0, zone_metrics = 0;
        std::size_t budget = 0;
        for (int i = 0; i < max_sessions; ++i) {
            const auto& s = slots_[i];
            if (s && s->phase == session_phase::stopping && s->overflow == overflow_policy::block) {
                block |= std::uint64_t{1} << i;
            }
            bool on = s && (s->phase == session_phase::starting || s->phase == session_phase::active);
            g_hot.slot_kinds[i].store(on ? s->kinds : 0, std::memory_order_relaxed);
            if (!on) continue;
            armed |= s->kinds;
            active |= std::uint64_t{1} << i;
            if (s->overflow == overflow_policy::block) block |= std::uint64_t{1} << i;
            if (s->filtered) filtered |= std::uint64_t{1} << i;
            ring_bytes = std::max<std::uint64_t>(ring_bytes, s->ring_bytes);
            budget = std::max(budget, s->memory_budget);
            if (s->metrics.zone_mask() != 0) metric_slots |= std::uint64_t{1} << i;
            zone_metrics |= s->metrics.zone_mask();
        }
        g_hot.plan.store(plan_for_locked(zone_metrics), std::memory_order_relaxed);
        g_hot.metric_slots.store(metric_slots, std::memory_order_relaxed);
        g_hot.active_slots.store(active, std::memory_order_relaxed);
        g_hot.block_slots.store(block, std::memory_order_relaxed);
        g_hot.filtered_slots.store(filtered, std::memory_order_relaxed);
        if (ring_bytes != 0) g_hot.ring_bytes.store(ring_bytes, std::memory_order_relaxed);
        if (memory_budget_ != budget) ring_room_epoch_.fetch_add(1, std::memory_order_relaxed);
        memory_budget_ = budget;
        g_hot.epoch.fetch_add(1, std::memory_order_release);
        g_hot.armed.store(armed, std::memory_order_release);
    }

    // Start: the metrics zones carry, over this session and the running ones,
    // must fit a zone's unit.
    void check_zone_metrics_locked(const session_state& s) const {
        std::uint64_t all = s.metrics.zone_mask();
        for (const auto& other : slots_) {
            if (other && (other->phase == session_phase::starting || other->phase == session_phase::active)) {
                all |= other->metrics.zone_mask();
            }
        }
        const int n = __builtin_popcountll(all);
        if (n > static_cast<int>(max_zone_metrics)) {
            throw error("cannot start session '" + s.name + "': with the sessions running, zones would carry " +
                        std::to_string(n) + " metrics; at most " + std::to_string(max_zone_metrics));
        }
    }

    // The plan reading the metrics in `mask` (null for none). Plans are kept
    // for the process lifetime (a zone may still hold one), one per distinct
    // set, so there are at most as many as sets ever used.
    const metric_plan* plan_for_locked(std::uint64_t mask) {
        if (mask == 0) return nullptr;
        for (const auto& p : plans_) {
            std::uint64_t m = 0;
            for (std::uint32_t i = 0; i < p->count; ++i) m |= std::uint64_t{1} << p->ids[i];
            if (m == mask) return p.get();
        }
        try {
            auto p = std::make_unique<metric_plan>();
            const metric_registry& registry = metrics_registry();
            for (; mask != 0 && p->count < max_zone_metrics; mask &= mask - 1) {
                const auto id = static_cast<metric_id>(__builtin_ctzll(mask));
                p->ids[p->count] = id;
                p->sources[p->count] = registry.definition(id).source;
                ++p->count;
            }
            plans_.push_back(std::move(p));
            return plans_.back().get();
        } catch (...) {  // out of memory: zones carry no metrics until the next change
            return nullptr;
        }
    }

    // Every ring made and freed goes through these two (counters_.ring_bytes).
    ring* new_ring_locked(std::size_t records) {
        auto* r = new ring(records);
        ++counters_.rings_created;
        counters_.ring_bytes += r->bytes();
        counters_.ring_bytes_peak = std::max(counters_.ring_bytes_peak, counters_.ring_bytes);
        return r;
    }
    void delete_ring_locked(ring* r) noexcept {
        counters_.ring_bytes -= r->bytes();
        ring_room_epoch_.fetch_add(1, std::memory_order_relaxed);
        delete r;
    }

    ring* take_pooled_locked(std::size_t want_records) {
        for (std::size_t i = 0; i < pool_.size(); ++i) {
            ring* r = pool_[i];
            if (r->capacity() == ring::capacity_for(want_records)) {
                pool_[i] = pool_.back();
                pool_.pop_back();
                return r;
            }
        }
        return nullptr;
    }

    void ensure_collector_locked() {
        if (collector_.joinable()) return;
        collector_running_.store(true, std::memory_order_release);
        try {
            collector_ = std::thread([this] { collector_main(); });
        } catch (const std::exception& e) {
            collector_running_.store(false, std::memory_order_release);
            throw error(std::string("cannot start loupe's collector thread: ") + e.what());
        }
    }

    static void on_thread_exit(void* p) noexcept;

    // ------------------------------------------------------------ collector

    void collector_main() noexcept;
    struct drain_result {
        std::size_t consumed = 0;
        bool complete = true;  ///< false: stopped at a record of a session newer than the snapshot
    };
    drain_result drain_ring(ring& r, const std::shared_ptr<session_state>* live, std::uint64_t live_mask) noexcept;
    void grow_rings_locked(const std::vector<ring*>& busy) noexcept;
    bool grow_ring_locked(ring& r, std::size_t& pooled) noexcept;
    std::size_t pooled_bytes_locked() const noexcept;
    void recycle_locked(ring* r) noexcept;
    void pause_locked(std::unique_lock<std::mutex>& lock, std::chrono::microseconds how_long) noexcept;
    class unit_router;
    void send_param_news(session_state& s) noexcept;
    void report_drops(ring* r, session_state& s) noexcept;
    void report_ringless_drops(session_state& s) noexcept;
    void begin_session(session_state& s) noexcept;
    void finish_session(session_state& s, const std::vector<ring*>& rings) noexcept;
    void report_metric_totals(session_state& s, const std::vector<ring*>& rings) noexcept;
    void report_metric_totals_if_due(session_state& s, const std::vector<ring*>& rings) noexcept;

    const tick_clock& clock_;
    const std::uint32_t pid_;
    const std::string process_name_;
    const process_identity identity_;
    // Thread filters by slot. Host threads read them (shared) when they
    // re-evaluate their session masks; start/set_filter replace them.
    mutable std::shared_mutex filter_mutex_;
    std::shared_ptr<const filter> slot_filters_[max_sessions];
    // Task rules by slot (null: tag every call), under filter_mutex_ too;
    // g_task_rules_slots (recorder.hpp) has the bits of the slots that have some.
    std::shared_ptr<const task_rules> slot_task_rules_[max_sessions];
    pthread_key_t exit_key_{};

    std::mutex mutex_;  // guards everything below unless noted
    std::shared_ptr<session_state> slots_[max_sessions];
    std::vector<ring*> live_rings_;
    std::vector<ring*> pool_;
    std::size_t memory_budget_ = 0;  ///< the largest memory_budget among active sessions
    /// Bumped (under mutex_) when a ring is freed or memory_budget_ changes:
    /// a ring whose growth the budget refused may ask again (ring_growth.hpp).
    std::atomic<std::uint64_t> ring_room_epoch_{1};
    std::uint64_t next_thread_id_ = 0;
    std::vector<std::unique_ptr<metric_plan>> plans_;
    runtime_counters counters_;
    bool shutting_down_ = false;
    bool wake_ = false;
    std::atomic<bool> hurried_{false};  ///< set without the lock by wake_paused_collector
    std::condition_variable wake_cv_;
    std::condition_variable done_cv_;
    std::thread collector_;
    std::atomic<bool> collector_running_{false};

    /// Slots holding a session in any phase until the collector finished it
    /// (written under mutex_, read by the collector without it).
    std::atomic<std::uint64_t> occupied_slots_{0};
    std::atomic<std::uint64_t> ringless_dropped_[max_sessions] = {};
    std::uint64_t ringless_seen_[max_sessions] = {};  // collector only
    // Collector only: the deltas a record carries to one session. A member,
    // not a local: a local array is zeroed for every record and session.
    alignas(64) metric_value selected_metrics_[max_zone_metrics];
    // Collector only: a run of plain events (zones, instants, counters, flow
    // points) as its sinks' batch. Only the fields such events vary in are
    // written; the rest keep their defaults. The thread and the session
    // change per ring and per session, not per event: the leading
    // batch_session_filled_ entries name batch_session_ already.
    record event_batch_[sink::max_batch_records];
    const session_info* batch_session_ = nullptr;
    std::size_t batch_session_filled_ = 0;
};

// ------------------------------------------------------------- the instance

LOUPE_API inline std::atomic<runtime*>& runtime_pointer() {
    static std::atomic<runtime*> instance{nullptr};
    return instance;
}

inline void runtime::wake_paused_collector() noexcept {
    if (runtime* r = runtime_pointer().load(std::memory_order_acquire)) {
        r->hurried_.store(true, std::memory_order_release);
        r->wake_cv_.notify_one();
    }
}

LOUPE_API inline std::mutex& runtime_init_mutex() {
    static std::mutex* m = new std::mutex;  // never destroyed: used at exit and in fork handlers
    return *m;
}

// Defined in process_hooks.hpp and host_slow_paths.hpp.
inline void install_process_hooks();
inline void install_recorder_hooks() noexcept;

/// The runtime of this process, created on first use. Thread-safe.
inline runtime& rt() {
    runtime* r = runtime_pointer().load(std::memory_order_acquire);
    if (LOUPE_LIKELY(r != nullptr)) return *r;
    std::lock_guard<std::mutex> lock(runtime_init_mutex());
    r = runtime_pointer().load(std::memory_order_relaxed);
    if (!r) {
        r = new runtime;
        install_recorder_hooks();
        runtime_pointer().store(r, std::memory_order_release);
        install_process_hooks();
    }
    return *r;
}

}  // namespace loupe::detail
