// The totals reports of a trace's metrics, each a struct with a text and a
// JSON form. What `loupe report FILE --per-thread/--per-cpu` prints.
// - report_per_thread (over a call tree, call_tree_model.hpp): per thread
//   and metric, the recorded total (METRIC_TOTALS) next to the sum of the
//   bases of the thread's tree.
// - report_per_cpu (over the trace itself): per CPU, each push metric's
//   total (METRIC_TOTALS).
// Every metric, or only the one named (an unknown or unavailable metric
// throws loupe::error saying so); values are its integers, in its unit
// (format_per_thread_report prints a metric in ns in human units when given
// time_format::human).
// Cost: report_per_thread O(n × m) in nodes and metrics; report_per_cpu
// O(v × m) in the METRIC_TOTALS values and the push metrics reported.
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"
#include "loupe/report/call_tree_model.hpp"
#include "loupe/report/detail/metric_report_output.hpp"
#include "loupe/report/detail/trace_metrics.hpp"

namespace loupe::report {

/// report_per_thread: one metric of one thread.
struct thread_metric_total {
    trace_metric metric;
    std::optional<std::int64_t> total;  ///< the recorded total (METRIC_TOTALS), when there is one
    std::int64_t tree = 0;              ///< Σ base over the thread's nodes, root included (= total when there is one)
    std::int64_t zones = 0;             ///< Σ cum of the thread's outermost zones
    std::int64_t outside = 0;           ///< the root's base: total - zones, 0 without a total
};
struct thread_totals {
    std::uint64_t thread_id = 0;
    std::uint64_t os_tid = 0;
    std::string label;  ///< the root's name
    std::vector<thread_metric_total> metrics;
};
struct per_thread_report {
    std::string session;
    std::vector<thread_totals> threads;
    std::vector<thread_metric_total> all;  ///< per metric, the sums over all threads
};

/// report_per_cpu: what threads added to each push metric while running on
/// each CPU (the last CPU number the session knew collects any beyond it).
struct cpu_totals {
    std::uint32_t cpu = 0;
    std::vector<std::int64_t> values;  ///< per per_cpu_report::metrics
};
struct per_cpu_report {
    std::string session;
    std::vector<trace_metric> metrics;  ///< the push metrics reported
    std::vector<cpu_totals> cpus;       ///< CPUs with a record, by number
    std::vector<std::int64_t> all;      ///< per metric, the sum over the CPUs
};

namespace detail {

inline std::string optional_text(const std::optional<std::int64_t>& v, const trace_metric& m, time_format times) {
    return v ? metric_value_text(*v, m, times) : "-";
}
inline std::string optional_json(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "null"; }

}  // namespace detail

/// Per thread, every available metric (or only `metric`, when given): the
/// recorded total next to the sum of the bases of the thread's tree.
inline per_thread_report report_per_thread(const call_tree& tree, std::string_view metric = {}) {
    std::vector<std::size_t> ks;
    if (!metric.empty()) {
        ks.push_back(tree.metric_index(metric));
    } else {
        for (std::size_t k = 0; k < tree.metrics.size(); ++k) {
            if (tree.metrics[k].available) ks.push_back(k);
        }
    }
    per_thread_report r;
    r.session = tree.session;
    // Σ base per root, per metric: every node's base added to its thread's root.
    std::vector<std::size_t> root_of(tree.nodes.size());
    std::unordered_map<std::size_t, std::vector<std::int64_t>> tree_sum;
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        const call_node& n = tree.nodes[i];
        root_of[i] = n.is_root() ? i : root_of[n.parent];
        std::vector<std::int64_t>& sum = tree_sum[root_of[i]];
        sum.resize(n.base.size());
        for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += n.base[k];
    }
    for (const call_tree_thread& th : tree.threads) {
        const call_node& root = tree.nodes[th.root];
        thread_totals row{th.thread_id, th.os_tid, tree.name_of(root), {}};
        for (const std::size_t k : ks) {
            row.metrics.push_back(
                {tree.metrics[k], th.totals[k], tree_sum[th.root][k], root.cum[k] - root.base[k], root.base[k]});
        }
        r.threads.push_back(std::move(row));
    }
    for (std::size_t j = 0; j < ks.size(); ++j) {
        thread_metric_total all{tree.metrics[ks[j]], std::nullopt, 0, 0, 0};
        bool totals = !r.threads.empty();  // the sum of the totals is known when each is
        std::int64_t total = 0;
        for (const thread_totals& th : r.threads) {
            const thread_metric_total& m = th.metrics[j];
            totals = totals && m.total;
            total += m.total.value_or(0);
            all.tree += m.tree;
            all.zones += m.zones;
            all.outside += m.outside;
        }
        if (totals) all.total = total;
        r.all.push_back(std::move(all));
    }
    return r;
}

/// One row per thread and metric: Total, Tree (Σ base), Zones, Outside;
/// then the sums over all threads. "-": no recorded total. A metric in ns
/// is printed as `times` says.
inline std::string format_per_thread_report(const per_thread_report& r, time_format times = time_format::raw_ns) {
    std::string out = detail::report_head(r.session, "metric totals per thread");
    if (r.threads.empty()) return out + "no threads recorded zones or metrics\n";
    char line[512];
    const char* const fmt = "%-36s %-20s %14s %14s %14s %14s\n";
    std::snprintf(line, sizeof line, fmt, "Thread", "Metric", "Total", "Tree", "Zones", "Outside");
    out += line;
    auto emit = [&](const std::string& label, const std::vector<thread_metric_total>& metrics) {
        for (std::size_t j = 0; j < metrics.size(); ++j) {
            const thread_metric_total& m = metrics[j];
            std::snprintf(line, sizeof line, fmt, j == 0 ? printable(label).c_str() : "",
                          printable(m.metric.name).c_str(), detail::optional_text(m.total, m.metric, times).c_str(),
                          detail::metric_value_text(m.tree, m.metric, times).c_str(),
                          detail::metric_value_text(m.zones, m.metric, times).c_str(),
                          detail::metric_value_text(m.outside, m.metric, times).c_str());
            out += line;
        }
    };
    for (const thread_totals& th : r.threads) emit(th.label, th.metrics);
    emit("all threads", r.all);
    return out;
}

/// {"session", "threads": [{"thread_id", "os_tid", "label", "metrics":
/// [{"metric", "total" (null when none), "tree", "zones", "outside"}]}],
/// "all": [same per metric]}.
inline std::string per_thread_report_json(const per_thread_report& r) {
    auto append_metrics = [](std::string& out, const std::vector<thread_metric_total>& metrics) {
        detail::append_array_json(out, metrics, [](std::string& o, const thread_metric_total& m) {
            o += "{\"metric\":";
            detail::append_metric_json(o, m.metric);
            o += ",\"total\":" + detail::optional_json(m.total) + ",\"tree\":" + std::to_string(m.tree) +
                 ",\"zones\":" + std::to_string(m.zones) + ",\"outside\":" + std::to_string(m.outside) + "}";
        });
    };
    std::string out = detail::report_head_json(r.session) + ",\"threads\":";
    detail::append_array_json(out, r.threads, [&](std::string& o, const thread_totals& th) {
        o += "{\"thread_id\":" + json::number(th.thread_id) + ",\"os_tid\":" + json::number(th.os_tid) +
             ",\"label\":" + json::quote(th.label) + ",\"metrics\":";
        append_metrics(o, th.metrics);
        o += '}';
    });
    out += ",\"all\":";
    append_metrics(out, r.all);
    return out + "}\n";
}

/// Per CPU, every push metric of the trace (or only `metric`, which must be
/// a push metric: others have no per-CPU totals; loupe::error otherwise).
inline per_cpu_report report_per_cpu(const trace& t, std::string_view metric = {}) {
    const std::vector<trace_metric> all = detail::metrics_of(t);
    per_cpu_report r;
    r.session = t.session.name;
    if (!metric.empty()) {
        const trace_metric& m = all[detail::find_metric_index(all, metric)];
        if (m.source != metric_source::push) {
            throw error("metric \"" + m.name + "\" is a " + detail::metric_source_name(m.source) +
                        " metric; per-CPU totals are recorded for push metrics only");
        }
        r.metrics.push_back(m);
    } else {
        for (const trace_metric& m : all) {
            if (m.source == metric_source::push) r.metrics.push_back(m);
        }
    }
    r.all.assign(r.metrics.size(), 0);
    std::map<std::uint32_t, std::vector<std::int64_t>> by_cpu;
    for (const trace_metric_totals& rec : t.metric_totals) {
        if (!rec.per_cpu) continue;
        std::vector<std::int64_t>& row = by_cpu[rec.cpu];
        row.resize(r.metrics.size());
        for (const metric_value& v : rec.values) {
            for (std::size_t j = 0; j < r.metrics.size(); ++j) {
                if (r.metrics[j].id != v.id) continue;
                row[j] += v.value;
                r.all[j] += v.value;
            }
        }
    }
    for (auto& [cpu, values] : by_cpu) r.cpus.push_back({cpu, std::move(values)});
    return r;
}

/// One row per CPU, one column per push metric, then the sum.
inline std::string format_per_cpu_report(const per_cpu_report& r) {
    std::string out = detail::report_head(r.session, "push metric totals per CPU");
    if (r.metrics.empty()) return out + "no push metrics recorded\n";
    if (r.cpus.empty()) return out + "no per-CPU totals in the trace (a session writes them when it stops)\n";
    char cell[64];
    auto row = [&](const std::string& first, const std::vector<std::string>& cells) {
        std::snprintf(cell, sizeof cell, "%-8s", first.c_str());
        out += cell;
        for (const std::string& c : cells) {
            std::snprintf(cell, sizeof cell, " %20s", c.c_str());
            out += cell;
        }
        out += '\n';
    };
    auto numbers = [](const std::vector<std::int64_t>& values) {
        std::vector<std::string> cells;
        for (const std::int64_t v : values) cells.push_back(std::to_string(v));
        return cells;
    };
    std::vector<std::string> names;
    for (const trace_metric& m : r.metrics) names.push_back(printable(m.name));
    row("CPU", names);
    for (const cpu_totals& c : r.cpus) row(std::to_string(c.cpu), numbers(c.values));
    row("all", numbers(r.all));
    return out;
}

/// {"session", "metrics": [metric], "cpus": [{"cpu", "values": [per
/// metric]}], "all": [per metric]}.
inline std::string per_cpu_report_json(const per_cpu_report& r) {
    auto numbers = [](std::string& o, const std::vector<std::int64_t>& values) {
        detail::append_array_json(o, values, [](std::string& s, std::int64_t v) { s += std::to_string(v); });
    };
    std::string out = detail::report_head_json(r.session) + ",\"metrics\":";
    detail::append_array_json(out, r.metrics, detail::append_metric_json);
    out += ",\"cpus\":";
    detail::append_array_json(out, r.cpus, [&](std::string& o, const cpu_totals& c) {
        o += "{\"cpu\":" + std::to_string(c.cpu) + ",\"values\":";
        numbers(o, c.values);
        o += '}';
    });
    out += ",\"all\":";
    numbers(out, r.all);
    return out + "}\n";
}

}  // namespace loupe::report
