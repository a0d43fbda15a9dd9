// Profiling sessions: start and stop recording while the program runs.
//
//     auto file = std::make_shared<loupe::sinks::file_sink>("run.loupe");
//     loupe::session_config cfg;
//     cfg.name = "checkout-slowness";
//     cfg.sinks = {file};
//     loupe::session s = loupe::start_session(cfg);
//     ...                       // every thread's zones are recorded
//     loupe::session_stats st = s.stop();  // drained, written, closed
//
// Up to 64 sessions run at once, each with its own kinds, sinks, overflow
// policy and thread filter; an event wanted by two sessions reaches both.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "loupe/core/detail/runtime.hpp"
#include "loupe/core/detail/site_interner.hpp"
#include "loupe/base/error.hpp"
#include "loupe/core/session_config.hpp"

namespace loupe {

/// RAII handle of a running session; stops it when destroyed. Move-only.
/// Thread-safety: `stop`, `stats` and `active` may be called from any thread
/// except loupe's collector (i.e. not from inside a sink); calling `stop` from
/// two threads at once is safe.
class session {
public:
    session() noexcept = default;
    explicit session(std::shared_ptr<detail::session_state> state) noexcept : state_(std::move(state)) {}
    session(session&&) noexcept = default;
    session& operator=(session&& other) noexcept {
        if (this != &other) {
            stop_quietly();
            state_ = std::move(other.state_);
        }
        return *this;
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    ~session() { stop_quietly(); }

    /// Stops recording for this session, waits until everything recorded
    /// before the call is delivered, writes the session's end, flushes and
    /// closes its sinks, and returns the final counts. Idempotent. In a child
    /// process after fork() a session of the parent is only released: the
    /// child never writes to the parent's sinks.
    /// Cost: one collector pass (about a millisecond).
    session_stats stop() {
        if (!state_) return {};
        detail::runtime* current = detail::runtime_pointer().load(std::memory_order_acquire);
        if (state_->owner != current) return state_->stats();  // inherited across fork
        return state_->owner->stop(*state_);
    }

    /// Replaces the session's thread filter (text as in session_config::filter;
    /// empty: every thread) while it runs. Each thread applies the new filter
    /// from its next event; a zone that began recorded still ends recorded.
    /// Throws loupe::error naming the column for invalid text (the old filter
    /// stays) or when the session is not running.
    /// Cost: a parse, two mutexes; every thread re-evaluates once.
    /// Thread-safety: any thread except the collector.
    void set_filter(std::string_view text) {
        if (!state_ || state_->owner != detail::runtime_pointer().load(std::memory_order_acquire)) {
            throw error("cannot change the filter of a session that is not running");
        }
        state_->owner->set_filter(*state_, text);
    }

    /// Replaces the session's task rules (text as in session_config::task_rules;
    /// empty: tag every call) while it runs; outgoing calls from now on follow
    /// them. Throws loupe::error naming the line and column for invalid text
    /// (the old rules stay) or when the session is not running.
    /// Cost: a parse and two mutexes. Thread-safety: any thread.
    void set_task_rules(std::string_view text) {
        if (!state_ || state_->owner != detail::runtime_pointer().load(std::memory_order_acquire)) {
            throw error("cannot change the task rules of a session that is not running");
        }
        state_->owner->set_task_rules(*state_, text);
    }

    /// Replaces the session's parameter specs (text as in
    /// session_config::params; empty: none) while it runs. Calls that enter
    /// from now on use them; a call already inside keeps the values it entered
    /// with. Throws loupe::error naming the line and column for invalid text
    /// (the old specs stay), or when the session does not record
    /// `kinds::methods` or is not running.
    /// Cost: a parse and two mutexes; each method site rebinds on its next call.
    /// Thread-safety: any thread except the collector.
    void set_params(std::string_view text) {
        if (!state_ || state_->owner != detail::runtime_pointer().load(std::memory_order_acquire)) {
            throw error("cannot change the parameter specs of a session that is not running");
        }
        state_->owner->set_params(*state_, text);
    }

    /// Counts so far (final after `stop`).
    session_stats stats() const noexcept { return state_ ? state_->stats() : session_stats{}; }

    /// True between a successful start and stop.
    bool active() const noexcept {
        if (!state_ || state_->owner != detail::runtime_pointer().load(std::memory_order_acquire)) return false;
        std::lock_guard<std::mutex> lock(state_->owner->mutex());
        return state_->phase == detail::session_phase::starting || state_->phase == detail::session_phase::active;
    }

    const std::string& name() const noexcept {
        static const std::string none;
        return state_ ? state_->name : none;
    }

private:
    void stop_quietly() noexcept {
        try {
            stop();
        } catch (...) {  // only possible from the collector thread: nothing to do there
        }
    }

    std::shared_ptr<detail::session_state> state_;
};

/// Starts a session. Throws `loupe::error` naming the field and what was
/// expected when `config` is invalid (no sinks, a null sink, no kinds, a ring
/// size out of range), when 64 sessions are already active, when the
/// process is exiting, or when called from inside a sink. Sinks that open
/// files do so when constructed, so an unwritable path fails there, before
/// the session starts.
/// Cost: the first start in a process calibrates the clock (~20 ms) and
/// starts the collector thread; later starts take a mutex and wake it.
/// Thread-safety: any thread except loupe's collector (i.e. not from inside
/// a sink), while other threads record.
inline session start_session(session_config config) {
    return session(detail::rt().start(std::move(config)));
}

}  // namespace loupe
