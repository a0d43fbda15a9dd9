// A session's metrics: the names it asked for resolved to ids (with their
// availability on this machine), the baselines taken at start, and the
// per-thread and per-CPU totals computed at stop.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "loupe/core/zone_metrics.hpp"
#include "loupe/metrics/registry.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/metric_types.hpp"

namespace loupe::detail {

class session_metrics {
public:
    /// Resolves `names` (session_config::metrics) on the calling thread,
    /// probing pull metrics. Throws loupe::error naming an unknown or
    /// repeated name.
    static session_metrics resolve(const std::string& session, const std::vector<std::string>& names) {
        session_metrics out;
        metric_registry& registry = metrics_registry();
        for (std::size_t i = 0; i < names.size(); ++i) {
            const std::string where = "session '" + session + "': metrics[" + std::to_string(i) + "] = \"" + names[i] + "\"";
            const long found = registry.find(names[i]);
            if (found < 0) throw error(where + ": no such metric; known: " + registry.names());
            const auto id = static_cast<metric_id>(found);
            for (const metric_info& m : out.infos_) {
                if (m.id == id) throw error(where + ": listed twice");
            }
            const metric_definition& def = registry.definition(id);
            metric_info info;
            info.id = id;
            info.name = out.keep(def.name);
            info.unit = out.keep(def.unit);
            info.source = def.source;
            if (def.source == metric_source::pull) {
                const std::string why = pull_metric_unavailable(id, def.name);
                info.available = why.empty();
                info.unavailable_reason = out.keep(why);
            }
            out.infos_.push_back(info);
            if (def.source != metric_source::wall && info.available) out.zone_mask_ |= std::uint64_t{1} << id;
            if (def.source == metric_source::push) out.push_ids_.push_back(id);
            if (def.source != metric_source::wall && info.available) out.thread_ids_.push_back(id);
        }
        return out;
    }

    const std::vector<metric_info>& infos() const noexcept { return infos_; }
    /// Metric ids (bits) this session's zones carry.
    std::uint64_t zone_mask() const noexcept { return zone_mask_; }
    bool empty() const noexcept { return infos_.empty(); }

    /// At start, with the registry's mutex held: what every existing thread
    /// and CPU has accumulated so far, so totals count only the session's
    /// share.
    void take_baselines(metric_registry& registry) {
        if (thread_ids_.empty()) return;
        registry.for_each_thread_locked([&](thread_metrics& b) {
            block_index_.emplace(&b, block_base_.size());
            for (metric_id id : thread_ids_) block_base_.push_back(thread_value(b, id));
        });
        for (std::size_t c = 0; c <= registry.cpus(); ++c) {
            for (metric_id id : push_ids_) cpu_base_.push_back(registry.cpu_value(c, id));
        }
    }

    /// At stop (and periodically): calls `on_thread(block, values)` for each
    /// thread with a non-zero total since the start (push and pull metrics),
    /// and `on_cpu(cpu, values)` for each CPU row that added to a push
    /// metric.
    template <class OnThread, class OnCpu>
    void totals(metric_registry& registry, OnThread&& on_thread, OnCpu&& on_cpu) const {
        if (thread_ids_.empty()) return;
        std::vector<metric_value> values;
        std::vector<std::pair<thread_metrics*, std::vector<metric_value>>> threads;
        std::unique_lock<std::mutex> lock(registry.mutex());
        registry.for_each_thread_locked([&](thread_metrics& b) {
            const auto known = block_index_.find(&b);  // threads that had a block at start
            values.clear();
            for (std::size_t k = 0; k < thread_ids_.size(); ++k) {
                const metric_id id = thread_ids_[k];
                const std::int64_t base = known != block_index_.end() ? block_base_[known->second + k]
                                          : registry.definition(id).source == metric_source::pull
                                              ? metric_registry::pull_origin(b, id)
                                              : 0;
                const std::int64_t v = thread_value(b, id) - base;
                if (v != 0) values.push_back({id, v});
            }
            if (!values.empty()) threads.emplace_back(&b, values);
        });
        lock.unlock();
        for (auto& [block, v] : threads) on_thread(*block, v);
        for (std::size_t c = 0; c <= registry.cpus(); ++c) {
            values.clear();
            for (std::size_t k = 0; k < push_ids_.size(); ++k) {
                const std::int64_t v = registry.cpu_value(c, push_ids_[k]) - cpu_base_[c * push_ids_.size() + k];
                if (v != 0) values.push_back({push_ids_[k], v});
            }
            if (!values.empty()) on_cpu(static_cast<std::uint32_t>(c), values);
        }
    }

private:
    // A thread's current value of `id`; the registry's mutex is held.
    static std::int64_t thread_value(const thread_metrics& b, metric_id id) noexcept {
        return metrics_registry().definition(id).source == metric_source::push
                   ? b.value[id].load(std::memory_order_relaxed)
                   : metric_registry::pull_value_locked(b, id);
    }

    std::string_view keep(std::string text) {
        texts_.push_back(std::move(text));
        return texts_.back();
    }

    std::vector<metric_info> infos_;
    std::deque<std::string> texts_;  // what infos_ views (a deque never moves its elements)
    std::uint64_t zone_mask_ = 0;
    std::vector<metric_id> push_ids_;    // totals per thread and per CPU
    std::vector<metric_id> thread_ids_;  // totals per thread: push_ids_ and the available pull metrics
    std::unordered_map<const thread_metrics*, std::size_t> block_index_;  // → first value in block_base_
    std::vector<std::int64_t> block_base_;  // per block: thread_ids_.size() values
    std::vector<std::int64_t> cpu_base_;    // (cpus + 1) × push_ids_.size()
};

}  // namespace loupe::detail
