// A trace's flow points grouped into flows, for the readers of flows (the
// viewers, report/flow_stats.hpp). A flow is the points of one id in time
// order (file order on ties); a point that ends a flow (LOUPE_FLOW_END)
// closes it, and a later point with the same id starts another, as in
// Perfetto.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "loupe/format/reader.hpp"

namespace loupe::detail {

struct flow_order {
    /// Indexes into trace::flows, flow after flow.
    std::vector<std::uint32_t> points;
    /// Flow k is points[first[k], first[k + 1]); first.back() == points.size().
    std::vector<std::uint32_t> first;

    /// O(n log n) in the trace's flow points.
    explicit flow_order(const trace& t) {
        const std::vector<trace_flow>& flows = t.flows;
        points.resize(flows.size());
        for (std::uint32_t i = 0; i < points.size(); ++i) points[i] = i;
        std::sort(points.begin(), points.end(), [&](std::uint32_t a, std::uint32_t b) {
            if (flows[a].flow_id != flows[b].flow_id) return flows[a].flow_id < flows[b].flow_id;
            if (flows[a].time_ns != flows[b].time_ns) return flows[a].time_ns < flows[b].time_ns;
            return a < b;
        });
        for (std::uint32_t k = 0; k < points.size(); ++k) {
            const bool starts = k == 0 || flows[points[k]].flow_id != flows[points[k - 1]].flow_id ||
                                flows[points[k - 1]].terminates;
            if (starts) first.push_back(k);
        }
        first.push_back(static_cast<std::uint32_t>(points.size()));
    }
    std::size_t size() const noexcept { return first.size() - 1; }
};

}  // namespace loupe::detail
