// The runtime's side of one session: configuration, lifecycle and counts.
// Shared between the handle the host holds and the runtime's slot table.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "loupe/core/params_backend.hpp"
#include "loupe/core/detail/session_metrics.hpp"
#include "loupe/base/error.hpp"
#include "loupe/core/session_config.hpp"
#include "loupe/core/sink.hpp"

namespace loupe::detail {

class runtime;

enum class session_phase : std::uint8_t { starting, active, stopping, stopped };

struct session_state {
    // Immutable after start.
    std::string name;
    std::uint32_t kinds = 0;
    overflow_policy overflow = overflow_policy::drop;
    std::size_t ring_bytes = 0;
    std::size_t memory_budget = 0;
    runtime* owner = nullptr;  ///< the runtime (process incarnation) that runs it
    int slot = -1;
    std::uint64_t start_ticks = 0;
    session_info info;  ///< info.name views `name`, info.metrics views `metrics`
    session_metrics metrics;
    /// Parameter specs: every spec the session had and its pending apply
    /// errors (null when it records no methods).
    std::shared_ptr<session_param_log> param_log;
    std::size_t param_value_bytes = 256;

    // Guarded by the runtime mutex.
    session_phase phase = session_phase::starting;
    bool filtered = false;  ///< has a thread filter (the filter itself is in the runtime)
    std::uint64_t stop_ticks = 0;

    // Collector thread only.
    struct sink_slot {
        std::shared_ptr<sink> target;
        bool failed = false;
        bool batches = true;  ///< takes write_batch (until it first declines)
    };
    std::vector<sink_slot> sinks;
    bool begun = false;
    std::size_t param_specs_sent = 0;  ///< copy of param_log->sent, read without its lock
    std::chrono::milliseconds metric_totals_interval{0};     // immutable after start
    std::chrono::steady_clock::time_point next_metric_totals;  // collector: when to write them next

    // Written by the collector, read by anyone.
    std::atomic<std::uint64_t> delivered{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<std::uint64_t> sink_failures{0};
    std::atomic<std::uint64_t> undelivered{0};

    session_stats stats() const noexcept {
        session_stats s;
        s.delivered = delivered.load(std::memory_order_acquire);
        s.dropped = dropped.load(std::memory_order_acquire);
        s.sink_failures = sink_failures.load(std::memory_order_acquire);
        s.records_undelivered = undelivered.load(std::memory_order_acquire);
        return s;
    }

    /// Collector thread: hands `r` to every sink that has not failed. A sink
    /// that throws is reported once and skipped from then on.
    void send(const record& r) noexcept {
        for (auto& s : sinks) {
            if (s.failed) {
                undelivered.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            if (!guarded(s, [&r](sink& k) { k.write(r); })) {
                undelivered.fetch_add(1, std::memory_order_relaxed);
            }
        }
    }

    /// Collector thread: hands the `count` records at `rs` (plain events, at
    /// most sink::max_batch_records) to every sink that has not failed, as
    /// one batch to a sink that takes batches and one by one to the others.
    void send_batch(const record* rs, std::size_t count) noexcept {
        for (auto& s : sinks) {
            if (s.failed) {
                undelivered.fetch_add(count, std::memory_order_relaxed);
                continue;
            }
            if (s.batches) {
                bool taken = false;
                if (!guarded(s, [&](sink& k) { taken = k.write_batch(rs, count); })) {
                    undelivered.fetch_add(count, std::memory_order_relaxed);
                    continue;
                }
                if (taken) continue;
                s.batches = false;
            }
            for (std::size_t i = 0; i < count; ++i) {
                if (!guarded(s, [&](sink& k) { k.write(rs[i]); })) {
                    undelivered.fetch_add(count - i, std::memory_order_relaxed);
                    break;
                }
            }
        }
    }

    /// Collector thread: flushes every sink that has not failed.
    void flush_sinks() noexcept {
        for (auto& s : sinks) {
            if (!s.failed) guarded(s, [](sink& k) { k.flush(); });
        }
    }

    /// Collector thread: closes every sink (a failed one too: it may hold a file).
    void close_sinks() noexcept {
        for (auto& s : sinks) guarded(s, [](sink& k) { k.close(); });
    }

private:
    // Runs f on the sink; false if it threw. The first failure of a sink is
    // counted and reported; a sink that failed once is not written again.
    template <class F>
    bool guarded(sink_slot& s, F&& f) noexcept {
        try {
            f(*s.target);
            return true;
        } catch (const std::exception& e) {
            fail(s, e.what());
        } catch (...) {
            fail(s, "unknown exception");
        }
        return false;
    }

    void fail(sink_slot& s, const char* why) noexcept {
        if (s.failed) return;
        s.failed = true;
        sink_failures.fetch_add(1, std::memory_order_relaxed);
        try {
            report_error("session '" + name + "': a sink failed: " + why +
                         "; later records for that sink are counted as undelivered");
        } catch (...) {  // no memory for the message: the count above still tells
        }
    }
};

}  // namespace loupe::detail
