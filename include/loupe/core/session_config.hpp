// What a session records, where it sends it, and what happens when a thread
// produces faster than the collector drains.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loupe/core/sink.hpp"
#include "loupe/base/site.hpp"

namespace loupe {

/// What a thread does when its ring is full.
enum class overflow_policy : std::uint8_t {
    /// Drop the event and count it; the count reaches the trace as a
    /// `dropped` record. The host never waits. The default.
    drop,
    /// Wait until the collector has made room (yield, then short sleeps).
    /// Nothing is lost while the collector runs; if it has stopped (process
    /// exit, after fork) the event is dropped and counted instead.
    block,
};

/// Configuration of one profiling session. Plain data: fill it, then pass it
/// to `loupe::start_session`.
struct session_config {
    /// Shown in traces and error messages.
    std::string name = "loupe";
    /// Event kinds to record: an OR of `loupe::kinds::zones`, `instants`,
    /// `counters`, `io`, `methods`, `flows`, `tasks` (default: all).
    std::uint32_t kinds = loupe::kinds::all;
    /// Where records go; at least one. A sink may be shared by sessions.
    std::vector<std::shared_ptr<sink>> sinks;
    /// Per-thread ring size in bytes (32 bytes per event, rounded down to a
    /// power of two, at least 256 B). Applies to threads that get their ring
    /// while this session is active; the largest value among active sessions
    /// wins. A thread keeps its ring until it exits. Default 1 MiB. A thread's
    /// context (context.hpp) needs up to 416 bytes of ring at once (up to
    /// 1 KiB with a task's long tracestate), an I/O resource up to 320 and a
    /// task point up to 352; rings smaller than 512 B carry zones but not
    /// contexts, and count I/O operations on unannounced resources as dropped.
    std::size_t ring_bytes = std::size_t{1} << 20;
    /// Bytes all threads' rings may take together when busy threads' rings
    /// grow. The collector gives a ring it finds at least half full a
    /// successor four times larger (twice, when four would not fit); the
    /// thread moves to it when its ring is full, so a burst, or a collector
    /// kept off the CPU, is held instead of dropped. Every recording thread
    /// keeps its first ring whatever the budget (it only limits growth); a
    /// grown ring is freed when its thread exits. The largest value among
    /// active sessions wins; 0: rings never grow. Default 64 MiB: two threads
    /// recording flat out (about 1.7 GB/s of records each here) are held
    /// through 8 to 10 ms off the CPU for the collector, a scheduling period
    /// of a busy machine (docs/performance.md).
    std::size_t memory_budget = std::size_t{64} << 20;
    /// What a full ring does with events for this session.
    overflow_policy overflow = overflow_policy::drop;
    /// Which threads to record, in the filter language of filter.hpp (see
    /// docs/filters.md), e.g. `user == "alice" && app in ["shop", "crm"]`.
    /// Empty: every thread. Evaluated against a thread's context when that
    /// context or the set of sessions changes, never per event. An invalid
    /// filter makes start_session throw loupe::error naming the column.
    /// Build one in code with loupe::where and pass `f.to_string()`.
    std::string filter;
    /// Which outgoing calls carry the task's context to their callee
    /// (tasks/call_scopes.hpp), in the rules language of core/task_rules.hpp
    /// (docs/tasks.md), e.g. `tag peer=inventory*; skip all`. Empty: every
    /// call. Invalid rules make start_session throw loupe::error naming the
    /// line and column. Change them while the session runs with
    /// `session::set_task_rules`.
    std::string task_rules;
    /// Metrics every recorded zone carries besides its duration, by name
    /// (metrics/metric.hpp): built-in "cpu_time", "task_clock", "cycles",
    /// "instructions", "alloc_bytes", "alloc_count", "free_bytes",
    /// "free_count", or a name defined with loupe::metric(). An unknown name
    /// makes start_session throw loupe::error naming it; a metric this machine
    /// cannot measure (no hardware counters) is reported in the trace as
    /// unavailable and the session runs without it. At most
    /// `max_zone_metrics` metrics over all sessions running at once.
    std::vector<std::string> metrics;
    /// How often, besides at the stop, the per-thread and per-CPU totals of
    /// the push metrics are written (each a snapshot since the session
    /// start, so a long session's trace holds recent totals even if the
    /// process dies). Zero: only at the stop.
    std::chrono::milliseconds metric_totals_interval{10000};
    /// Parameter specs (params.hpp, docs/params.md), one per line, e.g.
    /// `method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16)`.
    /// Recorded on method calls of threads this session records (`kinds`
    /// must include `kinds::methods`). A syntax error makes start_session
    /// throw loupe::error naming the line and column; a spec that does not
    /// fit a method's parameters is reported in the trace (param_apply_error)
    /// and its values read EnableFailed. Change them while the session runs
    /// with `session::set_params`.
    std::string params;
    /// Bytes of text kept per traced value (strings are cut on a UTF-8
    /// boundary and flagged truncated with their original size). 8 to 4096.
    std::size_t param_value_bytes = 256;
};

/// A parameter spec of a session that matched no method site that ran while
/// it was in force (a typo in `method=`, or code that did not run).
struct unmatched_spec {
    std::string spec;    ///< the spec's line as given
    std::string method;  ///< its `method=` selector
    /// Signatures of sites that ran and are spelled close to `method`
    /// (nearest first, at most 3): what the spec may have meant.
    std::vector<std::string> close_matches;
};

/// Counts of one session. For every session:
/// events sent to it = `delivered` + `dropped`, exactly.
struct session_stats {
    std::uint64_t delivered = 0;  ///< events routed to the session's sinks
    std::uint64_t dropped = 0;    ///< events lost to full rings (also in the trace)
    std::uint64_t sink_failures = 0;        ///< sinks that failed (each reported once)
    std::uint64_t records_undelivered = 0;  ///< records a failed sink did not receive
    /// Filled by `session::stop()`: each parameter spec the session had that
    /// matched no method site that ran.
    std::vector<unmatched_spec> unmatched_specs;
};

}  // namespace loupe
