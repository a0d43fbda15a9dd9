// build_call_tree: the context trees of a trace (call_tree_model.hpp) from
// its zones and its METRIC_TOTALS records.
//
// Zones whose timestamps tie (coarse clocks) nest by file order: of two
// zones with the same begin and end, the one written later (zones are
// written at exit) encloses the other. Dropped zones are missing from the
// tree; with totals, their cost shows in the root's base.
// Cost: O(z log z) in zones plus, per new node, a walk up to its nearest
// ancestor of the same routine. Memory: per node, two int64 per metric.
// Thread-safety: a pure function of the trace; it returns a new call_tree.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/base/metric_types.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/report/call_tree_model.hpp"
#include "loupe/report/detail/trace_metrics.hpp"

namespace loupe::report {

namespace detail {

// "thread main (tid 42)", or "thread 3 (tid 42)" when unnamed.
inline std::string root_label(const trace_thread& th) {
    return "thread " + (th.name.empty() ? std::to_string(th.id) : th.name) + " (tid " + std::to_string(th.os_tid) + ")";
}

// Adds nodes to a call_tree: interns routine names, finds or creates the
// node of a routine under a parent, and charges a thread's zones.
class tree_builder {
public:
    tree_builder(const trace& t, call_tree& out) : t_(t), out_(out) {}

    std::uint32_t routine_of(const trace_event& e) {
        auto cached = by_site_.find(e.site_id);
        if (cached != by_site_.end()) return cached->second;
        const trace_site* site = t_.find_site(e.site_id);
        const std::string name = site ? site->name : "(site " + std::to_string(e.site_id) + ")";
        auto [it, fresh] = by_name_.emplace(name, static_cast<std::uint32_t>(out_.names.size()));
        if (fresh) out_.names.push_back(name);
        by_site_.emplace(e.site_id, it->second);
        return it->second;
    }

    std::size_t add_node(std::uint32_t routine, std::size_t parent) {
        const std::size_t m = out_.metrics.size();
        call_node n;
        n.routine = routine;
        n.parent = parent;
        n.base.assign(m, 0);
        n.cum.assign(m, 0);
        if (parent != call_node::no_parent) {
            const call_node& p = out_.nodes[parent];
            n.level = p.level + 1;
            for (std::size_t a = parent; a != call_node::no_parent; a = out_.nodes[a].parent) {
                if (out_.nodes[a].routine == routine) {
                    n.rl = out_.nodes[a].rl + 1;
                    break;
                }
            }
        }
        out_.nodes.push_back(std::move(n));
        const std::size_t index = out_.nodes.size() - 1;
        if (parent != call_node::no_parent) {
            out_.nodes[parent].children.push_back(index);
            child_.emplace(std::make_pair(parent, routine), index);
        }
        return index;
    }

    std::size_t child(std::size_t parent, std::uint32_t routine) {
        auto it = child_.find({parent, routine});
        return it != child_.end() ? it->second : add_node(routine, parent);
    }

    // The delta of metric `k` a zone carries (0 when it carries none).
    std::int64_t delta(const trace_event& e, std::size_t k) const {
        const trace_metric& m = out_.metrics[k];
        if (m.source == metric_source::wall) return static_cast<std::int64_t>(e.end_ns - e.begin_ns);
        std::int64_t v = 0;
        return t_.metric_of(e, m.id, v) ? v : 0;
    }

    // Charges `zones` (one thread's, in file order) to the nodes below `root`.
    void add_zones(std::size_t root, const std::vector<const trace_event*>& zones) {
        std::vector<std::size_t> order(zones.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const trace_event& x = *zones[a];
            const trace_event& y = *zones[b];
            if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
            if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
            return a > b;  // same interval: the later-written zone encloses
        });
        std::vector<std::pair<std::uint64_t, std::size_t>> open;  // (end_ns, node) of the enclosing zones
        for (const std::size_t i : order) {
            const trace_event& e = *zones[i];
            while (!open.empty() && open.back().first < e.end_ns) open.pop_back();
            const std::size_t node = child(open.empty() ? root : open.back().second, routine_of(e));
            call_node& n = out_.nodes[node];
            ++n.calls;
            for (std::size_t k = 0; k < n.cum.size(); ++k) n.cum[k] += delta(e, k);
            open.emplace_back(e.end_ns, node);
        }
    }

private:
    const trace& t_;
    call_tree& out_;
    std::unordered_map<std::uint64_t, std::uint32_t> by_site_;
    std::unordered_map<std::string, std::uint32_t> by_name_;
    std::map<std::pair<std::size_t, std::uint32_t>, std::size_t> child_;
};

}  // namespace detail

/// Builds the context trees of `t` (see call_tree_model.hpp).
inline call_tree build_call_tree(const trace& t) {
    call_tree out;
    out.session = t.session.name;
    out.metrics = detail::metrics_of(t);
    const std::size_t m = out.metrics.size();
    std::vector<std::size_t> index_of(max_metrics, m);  // metric id -> index into out.metrics
    for (std::size_t k = 0; k < m; ++k) index_of[out.metrics[k].id] = k;

    std::unordered_map<std::uint64_t, std::vector<const trace_event*>> zones;
    for (const trace_event& e : t.events) {
        if (e.type == event_type::zone) zones[e.thread_id].push_back(&e);
    }
    // The recorded per-thread totals, by metric index (a metric a thread
    // did not change has no value).
    std::unordered_map<std::uint64_t, std::vector<std::optional<std::int64_t>>> recorded;
    for (const trace_metric_totals& r : t.metric_totals) {
        if (r.per_cpu) continue;
        std::vector<std::optional<std::int64_t>>& row = recorded[r.thread_id];
        row.resize(m);
        for (const metric_value& v : r.values) {
            if (index_of[v.id] < m) row[index_of[v.id]] = v.value;
        }
    }

    detail::tree_builder builder(t, out);
    for (const trace_thread& th : t.threads) {
        const auto z = zones.find(th.id);
        const auto rec = recorded.find(th.id);
        if (z == zones.end() && rec == recorded.end()) continue;
        call_tree_thread thread;
        thread.thread_id = th.id;
        thread.os_tid = th.os_tid;
        thread.name = th.name;
        // A complete trace has every push metric's totals (0 when not
        // written); a pull metric's total is known where a record has it.
        thread.totals.resize(m);
        for (std::size_t k = 0; k < m; ++k) {
            if (rec != recorded.end() && rec->second[k]) {
                thread.totals[k] = rec->second[k];
            } else if (t.complete && out.metrics[k].source == metric_source::push) {
                thread.totals[k] = 0;
            }
        }
        out.names.push_back(detail::root_label(th));  // never shared with a routine
        thread.root = builder.add_node(static_cast<std::uint32_t>(out.names.size() - 1), call_node::no_parent);
        out.nodes[thread.root].calls = 1;
        if (z != zones.end()) builder.add_zones(thread.root, z->second);
        out.threads.push_back(std::move(thread));
    }

    // base = cum - Σ children's cum; a root's cum is its base (the work
    // outside zones, known from the totals) plus its children's cum.
    for (call_node& n : out.nodes) {
        if (!n.is_root()) n.base = n.cum;
    }
    for (const call_node& n : out.nodes) {
        if (n.is_root()) continue;
        call_node& p = out.nodes[n.parent];
        for (std::size_t k = 0; k < m; ++k) {
            if (p.is_root()) {
                p.cum[k] += n.cum[k];
            } else {
                p.base[k] -= n.cum[k];
            }
        }
    }
    for (const call_tree_thread& th : out.threads) {
        call_node& root = out.nodes[th.root];  // cum: Σ of its children's so far
        for (std::size_t k = 0; k < m; ++k) {
            root.base[k] = th.totals[k] ? *th.totals[k] - root.cum[k] : 0;
            root.cum[k] += root.base[k];
        }
    }
    return out;
}

}  // namespace loupe::report
