// Text and JSON pieces shared by the metric reports (cost_reports.hpp,
// totals_reports.hpp): the heading line, a metric's title and JSON object,
// a metric's value as a text cell (time_format), JSON arrays. The report
// files build their rows from these.
// Cost: proportional to the text produced.
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"
#include "loupe/report/detail/trace_metrics.hpp"
#include "loupe/report/zone_stats.hpp"

namespace loupe::report {

/// How the text forms of the metric reports (format_tree_report,
/// format_flat_report, format_callers_report, format_per_thread_report)
/// print the values of a metric whose unit is "ns" (wall_time, cpu_time,
/// ...). Values of other units are always integers; so are the JSON forms'.
enum class time_format : std::uint8_t {
    raw_ns,  ///< integers, in ns: "213696002"
    human,   ///< three significant digits, as format_zone_stats: "214 ms", "12.3 us"
};

}  // namespace loupe::report

namespace loupe::report::detail {

// `value` of metric `m` as a text cell: in human units when `m` counts ns and
// `times` asks for them, else the integer.
inline std::string metric_value_text(std::int64_t value, const trace_metric& m, time_format times) {
    if (times != time_format::human || m.unit != "ns") return std::to_string(value);
    const double magnitude = value < 0 ? -static_cast<double>(value) : static_cast<double>(value);
    return (value < 0 ? "-" : "") + human_duration(magnitude);
}

inline std::string metric_title(const trace_metric& m) {
    return m.name + (m.unit.empty() ? "" : " (" + m.unit + ")") + ", " + metric_source_name(m.source) + " metric";
}

inline void append_metric_json(std::string& out, const trace_metric& m) {
    out += "{\"id\":" + std::to_string(m.id) + ",\"name\":" + json::quote(m.name) + ",\"unit\":" + json::quote(m.unit) +
           ",\"source\":\"" + metric_source_name(m.source) + "\"}";
}

template <class T, class Append>
void append_array_json(std::string& out, const std::vector<T>& items, Append append) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        append(out, items[i]);
    }
    out += ']';
}

// `{"session":"..."` and, with a metric, `,"metric":{...}` (left open).
inline std::string report_head_json(const std::string& session) { return "{\"session\":" + json::quote(session); }
inline std::string report_head_json(const std::string& session, const trace_metric& m) {
    std::string out = report_head_json(session) + ",\"metric\":";
    append_metric_json(out, m);
    return out;
}

// `session "name": what` and, with a metric, ` of ticks (unit), push metric`.
inline std::string report_head(const std::string& session, const std::string& what) {
    return "session \"" + printable(session) + "\": " + what + "\n\n";
}
inline std::string report_head(const std::string& session, const std::string& what, const trace_metric& m) {
    return report_head(session, what + " of " + printable(metric_title(m)));
}

}  // namespace loupe::report::detail
