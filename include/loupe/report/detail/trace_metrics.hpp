// The metrics of a trace as the metric reports (call_tree.hpp) see them:
// wall_time first, then the trace's METRIC records; lookup by name with an
// error that says what the trace has. Used by the call-tree model and
// builder and by report_per_cpu.
// Cost: linear in the trace's metrics (at most max_metrics).
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/format/reader.hpp"

namespace loupe::report::detail {

inline const char* metric_source_name(metric_source s) noexcept {
    return s == metric_source::wall ? "wall" : s == metric_source::push ? "push" : "pull";
}

inline std::string metric_list(const std::vector<trace_metric>& metrics) {
    std::string out;
    for (const trace_metric& m : metrics) {
        if (!out.empty()) out += ", ";
        out += m.name;
        if (!m.available) out += " (unavailable)";
    }
    return out;
}

// wall_time first (the trace's record when the session listed it), then the
// trace's other metrics.
inline std::vector<trace_metric> metrics_of(const trace& t) {
    std::vector<trace_metric> out(1);
    out[0].id = wall_time_metric_id;
    out[0].name = "wall_time";
    out[0].unit = "ns";
    out[0].source = metric_source::wall;
    for (const trace_metric& m : t.metrics) {
        if (m.id == wall_time_metric_id) {
            out[0] = m;
        } else {
            out.push_back(m);
        }
    }
    return out;
}

inline std::size_t find_metric_index(const std::vector<trace_metric>& metrics, std::string_view name) {
    for (std::size_t i = 0; i < metrics.size(); ++i) {
        if (metrics[i].name != name) continue;
        if (!metrics[i].available) {
            throw error("metric \"" + std::string(name) + "\" was unavailable when the trace was recorded: " +
                        (metrics[i].unavailable_reason.empty() ? "no reason given" : metrics[i].unavailable_reason));
        }
        return i;
    }
    throw error("no metric \"" + std::string(name) + "\" in this trace; it has: " + metric_list(metrics));
}

}  // namespace loupe::report::detail
