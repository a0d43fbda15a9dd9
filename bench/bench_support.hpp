// Shared by the benchmark files: a session that discards what it records
// (optionally with a thread filter, metrics, parameter specs and the block
// overflow policy), started by thread 0 before the timed loop and stopped
// after it.
#pragma once

#include <benchmark/benchmark.h>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loupe_bench {

class discarding_session {
public:
    explicit discarding_session(benchmark::State& state, std::uint32_t kinds = loupe::kinds::all,
                                std::string filter = {}, std::vector<std::string> metrics = {},
                                std::string params = {},
                                loupe::overflow_policy overflow = loupe::overflow_policy::drop)
        : state_(state) {
        if (state_.thread_index() != 0) return;
        loupe::session_config cfg;
        cfg.name = "bench";
        cfg.kinds = kinds;
        cfg.filter = std::move(filter);
        cfg.metrics = std::move(metrics);
        cfg.params = std::move(params);
        cfg.overflow = overflow;
        cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
        session_.emplace(loupe::start_session(cfg));
    }
    // Reports what share of the events the collector could not keep up with
    // (dropped events cost a little less than recorded ones).
    ~discarding_session() {
        if (!session_) return;
        auto stats = session_->stop();
        const double total = static_cast<double>(stats.delivered + stats.dropped);
        state_.counters["dropped_pct"] = total > 0 ? 100.0 * static_cast<double>(stats.dropped) / total : 0.0;
    }

private:
    benchmark::State& state_;
    std::optional<loupe::session> session_;
};

}  // namespace loupe_bench
