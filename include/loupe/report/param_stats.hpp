// Call durations of traced methods by parameter value: what
// `loupe stats FILE --params` prints.
//
//   auto report = loupe::report::param_stats(loupe::read_trace_file("out.loupe"), 10);
//   std::cout << loupe::report::format_param_stats(report);   // or param_stats_json(report)
//
// For every method (a zone site whose calls carry parameter values) and every
// parameter spec that produced values there, the calls are grouped by the
// value the spec produced: count, total, mean and max of their wall durations
// (end - begin, nested calls included), sorted by total, the top N kept.
// Values are compared as shown (loupe::format_value) and by kind: a status
// ("NullInCall", "EnableFailed") is a value of its own; a truncated string
// ends in "…" and groups with the strings cut to the same text. A call whose
// spec produced several values (several chains) counts once under each
// distinct one.
//
// Specs that recorded nothing are listed apart: a spec with `param=` that
// produced no value in any call and no apply error matched no method the
// session recorded (a typo in `method=`, or code that did not run), with
// the recorded methods spelled close to its selector (text/close_matches.hpp).
// Cost: O(values log values). Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/close_matches.hpp"
#include "loupe/text/printable.hpp"
#include "loupe/report/zone_stats.hpp"

namespace loupe::report {

/// The calls of one method in which a spec produced one value.
struct param_value_stats {
    std::string value;  ///< as loupe::format_value shows it
    std::string kind;   ///< loupe::to_string(value_kind): "int", "string", "NullInCall", ...
    std::uint64_t count = 0;
    std::uint64_t total_ns = 0;
    double mean_ns = 0;
    std::uint64_t max_ns = 0;
};

/// One spec's values at one method, by total descending (the top N).
struct param_spec_stats {
    std::uint32_t spec = 0;
    std::string label;                ///< the spec's name, or "param<index>"
    std::string text;                 ///< the spec's line ("" when the trace does not define it)
    std::uint64_t calls = 0;          ///< calls in which the spec produced a value
    std::size_t distinct_values = 0;  ///< values seen (shown or not)
    std::vector<param_value_stats> values;
};

struct method_param_stats {
    std::string method;  ///< the site's name: the method's signature
    std::string file;
    std::uint32_t line = 0;
    std::uint64_t calls = 0;  ///< calls recorded with their parameters
    std::uint64_t total_ns = 0;
    std::uint64_t exceptional = 0;        ///< calls that left by an exception
    std::vector<param_spec_stats> specs;  ///< by spec index
};

struct param_apply_error_row {
    std::string method;
    std::uint32_t spec = 0;
    std::string label;
    std::string reason;
};

/// A spec with `param=` that produced no value and no apply error.
struct param_unmatched_row {
    std::uint32_t spec = 0;
    std::string label;
    std::string text;
    std::string method;                      ///< its `method=` selector
    std::vector<std::string> close_matches;  ///< recorded methods spelled close to it, nearest first
};

struct param_report {
    std::string session;
    bool complete = true;
    std::size_t top = 10;                             ///< values kept per (method, spec); 0: all
    std::uint64_t method_calls = 0;                   ///< calls with a METHOD_CALL record
    std::vector<method_param_stats> methods;          ///< by total descending
    std::uint64_t zones_with_args = 0;                ///< zones that carry arguments (LOUPE_ZONE_ARG)
    /// Zones by argument value: one row per zone site, one "spec" per key
    /// (`label` = the key, `spec` = 0, `text` = ""), by total descending.
    std::vector<method_param_stats> zone_args;
    std::vector<param_apply_error_row> apply_errors;  ///< in file order
    std::vector<param_unmatched_row> unmatched;       ///< by spec index
};

namespace detail {

/// The value of item `key` ("method", "param") of a spec line, or "" when
/// the line has none (items are `key=value` separated by ';').
inline std::string spec_item(std::string_view line, std::string_view key) {
    while (!line.empty()) {
        const std::size_t end = std::min(line.find(';'), line.size());
        std::string_view item = line.substr(0, end);
        line.remove_prefix(end == line.size() ? end : end + 1);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        auto trim = [](std::string_view s) {
            while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
            while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
            return s;
        };
        if (trim(item.substr(0, eq)) == key) return std::string(trim(item.substr(eq + 1)));
    }
    return {};
}

/// Zones or method calls grouped by site, then by key (a spec, an argument
/// key), then by value as shown: count, total, max of their durations. A
/// call with several values of one key counts once under each distinct one.
template <class Key>
struct value_groups {
    struct group {
        std::uint64_t count = 0, total = 0, max = 0;
    };
    struct key_groups {
        std::uint64_t calls = 0;
        std::map<std::pair<std::string, value_kind>, group> values;
    };
    struct site {
        std::uint64_t calls = 0, total = 0, exceptional = 0;
        std::map<Key, key_groups> keys;
        std::vector<std::tuple<Key, std::string, value_kind>> seen;  // the current call's (key, value) pairs
    };
    std::map<std::uint64_t, site> by_site;

    site& add_call(const trace_event& e) {
        site& s = by_site[e.site_id];
        ++s.calls;
        s.total += e.end_ns - e.begin_ns;
        s.seen.clear();
        return s;
    }
    void add_value(site& s, const Key& key, const param_value& v, const trace_event& e) {
        std::tuple<Key, std::string, value_kind> pair{key, format_value(v), v.kind};
        if (std::find(s.seen.begin(), s.seen.end(), pair) != s.seen.end()) return;
        const bool key_seen =
            std::any_of(s.seen.begin(), s.seen.end(), [&](const auto& k) { return std::get<0>(k) == key; });
        key_groups& k = s.keys[key];
        if (!key_seen) ++k.calls;
        group& g = k.values[{std::get<1>(pair), v.kind}];
        const std::uint64_t duration = e.end_ns - e.begin_ns;
        ++g.count;
        g.total += duration;
        g.max = std::max(g.max, duration);
        s.seen.push_back(std::move(pair));
    }
    /// One row per site, by total descending; `describe(key, stats)` names
    /// each key's stats. Each key keeps its `top` values by total (all: 0).
    template <class Describe>
    std::vector<method_param_stats> rows(const trace& t, std::size_t top, Describe&& describe) const {
        std::vector<method_param_stats> out;
        for (const auto& [site_id, s] : by_site) {
            const trace_site* where = t.find_site(site_id);
            method_param_stats ms;
            ms.method = where ? where->name : "site " + std::to_string(site_id);
            if (where) {
                ms.file = where->file;
                ms.line = where->line;
            }
            ms.calls = s.calls;
            ms.total_ns = s.total;
            ms.exceptional = s.exceptional;
            for (const auto& [key, k] : s.keys) {
                param_spec_stats ss;
                describe(key, ss);
                ss.calls = k.calls;
                ss.distinct_values = k.values.size();
                for (const auto& [value, g] : k.values) {
                    param_value_stats v;
                    v.value = value.first;
                    v.kind = to_string(value.second);
                    v.count = g.count;
                    v.total_ns = g.total;
                    v.mean_ns = static_cast<double>(g.total) / static_cast<double>(g.count);
                    v.max_ns = g.max;
                    ss.values.push_back(std::move(v));
                }
                // By total, then count (a stable order for equal rows).
                std::stable_sort(ss.values.begin(), ss.values.end(),
                                 [](const param_value_stats& a, const param_value_stats& b) {
                                     if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
                                     return a.count > b.count;
                                 });
                if (top != 0 && ss.values.size() > top) ss.values.resize(top);
                ms.specs.push_back(std::move(ss));
            }
            out.push_back(std::move(ms));
        }
        std::stable_sort(out.begin(), out.end(),
                         [](const method_param_stats& a, const method_param_stats& b) { return a.total_ns > b.total_ns; });
        return out;
    }
};

}  // namespace detail

/// Groups the method calls of `t` by parameter value; keeps the `top`
/// values (by total time) of each (method, spec), all when 0.
inline param_report param_stats(const trace& t, std::size_t top = 10) {
    param_report r;
    r.session = t.session.name;
    r.complete = t.complete;
    r.top = top;
    // Method calls by (site, spec), zones by (site, key): the values each
    // produced, counted once per call or zone.
    detail::value_groups<std::uint32_t> methods;
    detail::value_groups<std::string> zones;
    for (const trace_event& e : t.events) {
        if (const trace_method_call* call = t.method_of(e)) {
            ++r.method_calls;
            detail::value_groups<std::uint32_t>::site& m = methods.add_call(e);
            m.exceptional += call->exceptional;
            for (const param_value& v : t.params_of(e)) methods.add_value(m, v.spec, v, e);
        }
        if (e.args_count != 0) {
            ++r.zones_with_args;
            detail::value_groups<std::string>::site& z = zones.add_call(e);
            for (const trace_zone_argument& a : t.args_of(e)) zones.add_value(z, std::string(a.key), a.value, e);
        }
    }
    r.methods = methods.rows(t, top, [&](std::uint32_t spec, param_spec_stats& ss) {
        ss.spec = spec;
        ss.label = t.param_label(spec);
        if (const trace_param_spec* def = t.find_param_spec(spec)) ss.text = def->text;
    });
    r.zone_args = zones.rows(t, top, [](const std::string& key, param_spec_stats& ss) { ss.label = key; });
    const auto& by_site = methods.by_site;
    for (const trace_apply_error& e : t.apply_errors) {
        const trace_site* site = t.find_site(e.site_id);
        r.apply_errors.push_back(
            {site ? site->name : "site " + std::to_string(e.site_id), e.spec, t.param_label(e.spec), e.reason});
    }
    std::vector<std::string> recorded_methods;
    for (const auto& entry : by_site) {
        if (const trace_site* site = t.find_site(entry.first)) recorded_methods.push_back(site->name);
    }
    for (const trace_param_spec& def : t.param_specs) {
        if (detail::spec_item(def.text, "param").empty()) continue;  // timing or compile-time chains: no value to expect
        const bool valued = std::any_of(by_site.begin(), by_site.end(),
                                        [&](const auto& m) { return m.second.keys.count(def.index) != 0; });
        const bool failed = std::any_of(t.apply_errors.begin(), t.apply_errors.end(),
                                        [&](const trace_apply_error& e) { return e.spec == def.index; });
        if (valued || failed) continue;
        param_unmatched_row u;
        u.spec = def.index;
        u.label = t.param_label(def.index);
        u.text = def.text;
        u.method = detail::spec_item(def.text, "method");
        u.close_matches = closest_spellings(u.method, recorded_methods, 3);
        r.unmatched.push_back(std::move(u));
    }
    std::sort(r.unmatched.begin(), r.unmatched.end(),
              [](const param_unmatched_row& a, const param_unmatched_row& b) { return a.spec < b.spec; });
    return r;
}

namespace detail {
/// The text tables of format_param_stats: per site a header line, per spec
/// (`with_spec`) or argument key its values as rows (count, total, mean,
/// max, value); `unit` is what a site's count counts ("call", "zone").
inline void append_value_tables(std::string& out, const std::vector<method_param_stats>& sites, const char* unit,
                                bool with_spec) {
    const char* const row = "    %9s %10s %10s %10s  %s\n";
    char line[512];
    for (const method_param_stats& m : sites) {
        std::snprintf(line, sizeof line, "\n%s", printable(m.method).c_str());
        out += line;
        if (!m.file.empty()) out += "  (" + printable(m.file) + ":" + std::to_string(m.line) + ")";
        out += "\n  " + std::to_string(m.calls) + " " + unit + (m.calls == 1 ? ", total " : "s, total ") +
               human_duration(static_cast<double>(m.total_ns));
        if (m.exceptional != 0) out += ", " + std::to_string(m.exceptional) + " exceptional";
        out += '\n';
        for (const param_spec_stats& s : m.specs) {
            out += "  " + printable(s.label);
            if (with_spec) {
                out += " (spec " + std::to_string(s.spec);
                if (!s.text.empty()) out += ": " + printable(s.text);
                out += ")";
            }
            out += ", " + std::to_string(s.calls) + " " + unit + (s.calls == 1 ? ", " : "s, ") +
                   std::to_string(s.distinct_values) + (s.distinct_values == 1 ? " value\n" : " values\n");
            std::snprintf(line, sizeof line, row, "count", "total", "mean", "max", "value");
            out += line;
            for (const param_value_stats& v : s.values) {
                std::snprintf(line, sizeof line, row, std::to_string(v.count).c_str(),
                              human_duration(static_cast<double>(v.total_ns)).c_str(),
                              human_duration(v.mean_ns).c_str(),
                              human_duration(static_cast<double>(v.max_ns)).c_str(), "");
                out.append(line, std::strlen(line) - 1);  // the value may be long: appended whole
                out += printable(v.value) + "\n";
            }
            if (s.values.size() < s.distinct_values) {
                out += "    (" + std::to_string(s.distinct_values - s.values.size()) + " more values)\n";
            }
        }
    }
}
}  // namespace detail

/// Text: per method a header line, per spec its values as rows
/// (count, total, mean, max, value), then the spec errors.
inline std::string format_param_stats(const param_report& r) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "session \"%s\": %llu method calls with parameters%s\n",
                  printable(r.session).c_str(), static_cast<unsigned long long>(r.method_calls),
                  r.complete ? "" : " (trace cut short)");
    out += line;
    if (r.methods.empty()) {
        out += "no parameter values recorded (no method calls with parameter specs in this trace)\n";
    }
    detail::append_value_tables(out, r.methods, "call", true);
    if (!r.zone_args.empty()) {
        out += "\nzone arguments: " + std::to_string(r.zones_with_args) +
               (r.zones_with_args == 1 ? " zone" : " zones") + " by argument value\n";
        detail::append_value_tables(out, r.zone_args, "zone", false);
    }
    if (!r.apply_errors.empty()) out += "\nspecs that did not fit a method (their values read EnableFailed):\n";
    for (const param_apply_error_row& e : r.apply_errors) {
        out += "  " + printable(e.method) + ": spec " + std::to_string(e.spec) + " (" + printable(e.label) +
               "): " + printable(e.reason) + "\n";
    }
    if (!r.unmatched.empty()) out += "\nspecs that matched no recorded method:\n";
    for (const param_unmatched_row& u : r.unmatched) {
        out += "  spec " + std::to_string(u.spec) + " (" + printable(u.label) + "): " + printable(u.text) + "\n";
        if (u.close_matches.empty()) continue;
        out += "    did you mean:";
        for (std::size_t i = 0; i < u.close_matches.size(); ++i) {
            out += (i ? ", " : " ") + printable(u.close_matches[i]);
        }
        out += "\n";
    }
    return out;
}

namespace detail {
/// The JSON of append_value_tables: one object per site, its specs or keys
/// with their value rows.
inline void append_value_tables_json(std::string& out, const std::vector<method_param_stats>& sites) {
    for (std::size_t i = 0; i < sites.size(); ++i) {
        const method_param_stats& m = sites[i];
        if (i) out += ',';
        out += "{\"method\":" + json::quote(m.method) + ",\"file\":" + json::quote(m.file) +
               ",\"line\":" + std::to_string(m.line) + ",\"calls\":" + json::number(m.calls) +
               ",\"total_ns\":" + json::number(m.total_ns) + ",\"exceptional\":" + json::number(m.exceptional) +
               ",\"specs\":[";
        for (std::size_t j = 0; j < m.specs.size(); ++j) {
            const param_spec_stats& s = m.specs[j];
            if (j) out += ',';
            out += "{\"spec\":" + std::to_string(s.spec) + ",\"label\":" + json::quote(s.label) +
                   ",\"text\":" + json::quote(s.text) + ",\"calls\":" + json::number(s.calls) +
                   ",\"distinct_values\":" + std::to_string(s.distinct_values) + ",\"values\":[";
            for (std::size_t k = 0; k < s.values.size(); ++k) {
                const param_value_stats& v = s.values[k];
                if (k) out += ',';
                out += "{\"value\":" + json::quote(v.value) + ",\"kind\":" + json::quote(v.kind) +
                       ",\"count\":" + json::number(v.count) + ",\"total_ns\":" + json::number(v.total_ns) +
                       ",\"mean_ns\":" + json::number(v.mean_ns) + ",\"max_ns\":" + json::number(v.max_ns) + "}";
            }
            out += "]}";
        }
        out += "]}";
    }
}
}  // namespace detail

/// The report as one JSON object (durations in integer ns, mean as a number).
inline std::string param_stats_json(const param_report& r) {
    std::string out = "{\"session\":" + json::quote(r.session) + ",\"complete\":" + (r.complete ? "true" : "false") +
                      ",\"top\":" + std::to_string(r.top) + ",\"method_calls\":" + json::number(r.method_calls) +
                      ",\"methods\":[";
    detail::append_value_tables_json(out, r.methods);
    out += "],\"zones_with_args\":" + json::number(r.zones_with_args) + ",\"zone_args\":[";
    detail::append_value_tables_json(out, r.zone_args);
    out += "],\"apply_errors\":[";
    for (std::size_t i = 0; i < r.apply_errors.size(); ++i) {
        const param_apply_error_row& e = r.apply_errors[i];
        if (i) out += ',';
        out += "{\"method\":" + json::quote(e.method) + ",\"spec\":" + std::to_string(e.spec) +
               ",\"label\":" + json::quote(e.label) + ",\"reason\":" + json::quote(e.reason) + "}";
    }
    out += "],\"unmatched\":[";
    for (std::size_t i = 0; i < r.unmatched.size(); ++i) {
        const param_unmatched_row& u = r.unmatched[i];
        if (i) out += ',';
        out += "{\"spec\":" + std::to_string(u.spec) + ",\"label\":" + json::quote(u.label) +
               ",\"text\":" + json::quote(u.text) + ",\"method\":" + json::quote(u.method) + ",\"close_matches\":[";
        for (std::size_t k = 0; k < u.close_matches.size(); ++k) {
            if (k) out += ',';
            out += json::quote(u.close_matches[k]);
        }
        out += "]}";
    }
    out += "]}\n";
    return out;
}

}  // namespace loupe::report
