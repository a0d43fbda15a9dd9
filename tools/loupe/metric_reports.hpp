// `loupe report FILE --tree|--flat|--callers|--per-cpu|--per-thread
// [--metric M] [--ns] [--json]`: the metric reports of report/call_tree.hpp
// (cost_reports.hpp, totals_reports.hpp). Times (metrics in ns) print in
// human units, or as integers with --ns.
#pragma once

#include <loupe/base/error.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/call_tree.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace loupe_cli {

enum class metric_report : std::uint8_t { none, tree, flat, callers, per_cpu, per_thread };

inline const char* metric_report_flag(metric_report r) noexcept {
    switch (r) {
        case metric_report::tree: return "--tree";
        case metric_report::flat: return "--flat";
        case metric_report::callers: return "--callers";
        case metric_report::per_cpu: return "--per-cpu";
        case metric_report::per_thread: return "--per-thread";
        default: return "";
    }
}

/// The report a command-line flag selects; none when `flag` is not one.
inline metric_report parse_metric_report(std::string_view flag) noexcept {
    for (auto r : {metric_report::tree, metric_report::flat, metric_report::callers, metric_report::per_cpu,
                   metric_report::per_thread}) {
        if (flag == metric_report_flag(r)) return r;
    }
    return metric_report::none;
}

/// Whether `--ns` applies to report `r` (the text reports with times).
inline bool takes_ns(metric_report r) noexcept {
    return r == metric_report::tree || r == metric_report::flat || r == metric_report::callers ||
           r == metric_report::per_thread;
}

/// Reads `file` and prints report `r` of `metric` (empty: wall_time for the
/// trees, every metric for the totals) to stdout, times as `times` says.
/// Throws loupe::error (prefixed with the file) for an unknown or
/// unavailable metric.
inline int run_metric_report(const std::string& file, const loupe::decode_options& decode, metric_report r,
                             const std::string& metric, bool json, loupe::report::time_format times) {
    namespace rep = loupe::report;
    const loupe::trace t = loupe::read_trace_file(file, decode);
    const std::string tree_metric = metric.empty() ? "wall_time" : metric;
    std::string text;
    try {
        if (r == metric_report::per_cpu) {
            const rep::per_cpu_report report = rep::report_per_cpu(t, metric);
            text = json ? rep::per_cpu_report_json(report) : rep::format_per_cpu_report(report);
        } else {
            const rep::call_tree tree = rep::build_call_tree(t);
            if (r == metric_report::tree) {
                const rep::tree_report report = rep::report_tree(tree, tree_metric);
                if (json) {
                    text = rep::tree_report_json(report);
                } else {  // streamed: a deep tree's text is never held whole
                    rep::write_tree_report(
                        report, [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); },
                        rep::tree_rows_per_piece, times);
                }
            } else if (r == metric_report::flat) {
                const rep::flat_report report = rep::report_flat(tree, tree_metric);
                text = json ? rep::flat_report_json(report) : rep::format_flat_report(report, times);
            } else if (r == metric_report::callers) {
                const rep::callers_report report = rep::report_callers(tree, tree_metric);
                text = json ? rep::callers_report_json(report) : rep::format_callers_report(report, times);
            } else {
                const rep::per_thread_report report = rep::report_per_thread(tree, metric);
                text = json ? rep::per_thread_report_json(report) : rep::format_per_thread_report(report, times);
            }
        }
    } catch (const loupe::error& e) {
        throw loupe::error(file + ": " + e.what());
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace loupe_cli
