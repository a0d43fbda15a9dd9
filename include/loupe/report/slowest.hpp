// The slowest occurrences of one zone in a trace, each with the thread and
// the context (user, request, ...) it ran in: "which requests were slow,
// and for whom?".
//
//     auto top = loupe::report::slowest(trace, "handle_request", 5);
//     std::cout << loupe::report::format_slowest(top);
//
// Cost: O(n log k) over the trace's events. Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/text/printable.hpp"

namespace loupe::report {

struct slow_zone {
    std::string name;
    std::uint64_t begin_ns = 0;
    std::uint64_t duration_ns = 0;
    std::string thread;                  ///< thread name, or "thread <id>"
    const trace_context* context = nullptr;  ///< points into the trace; null when none
};

/// The `n` longest zones named `zone_name` (all zones when empty), longest
/// first; ties keep file order.
inline std::vector<slow_zone> slowest(const trace& t, std::string_view zone_name, std::size_t n) {
    std::vector<const trace_event*> zones;
    for (const auto& e : t.events) {
        if (e.type != event_type::zone) continue;
        const trace_site* site = t.find_site(e.site_id);
        if (!zone_name.empty() && (!site || site->name != zone_name)) continue;
        zones.push_back(&e);
    }
    const auto longer = [](const trace_event* a, const trace_event* b) {
        return a->end_ns - a->begin_ns > b->end_ns - b->begin_ns;
    };
    const std::size_t k = std::min(n, zones.size());
    std::partial_sort(zones.begin(), zones.begin() + static_cast<std::ptrdiff_t>(k), zones.end(), longer);
    std::vector<slow_zone> out;
    for (std::size_t i = 0; i < k; ++i) {
        const trace_event& e = *zones[i];
        slow_zone z;
        const trace_site* site = t.find_site(e.site_id);
        z.name = site ? site->name : std::string();
        z.begin_ns = e.begin_ns;
        z.duration_ns = e.end_ns - e.begin_ns;
        const trace_thread* th = t.find_thread(e.thread_id);
        z.thread = th && !th->name.empty() ? th->name : "thread " + std::to_string(e.thread_id);
        z.context = t.context_of(e);
        out.push_back(std::move(z));
    }
    return out;
}

/// One line per zone: duration, thread and the context fields that are set.
inline std::string format_slowest(const std::vector<slow_zone>& zones) {
    std::string out;
    char line[128];
    for (const auto& z : zones) {
        std::snprintf(line, sizeof line, "%10.3f ms  %-16s ", static_cast<double>(z.duration_ns) / 1e6,
                      printable(z.thread).c_str());
        out += line;
        out += printable(z.name);
        if (z.context) {
            for (unsigned f = 0; f < context_field_count; ++f) {
                if (z.context->fields[f].empty()) continue;
                out += std::string("  ") + context_field_name(static_cast<context_field>(f)) + "=" +
                       printable(z.context->fields[f]);
            }
        }
        out += '\n';
    }
    return out;
}

}  // namespace loupe::report
