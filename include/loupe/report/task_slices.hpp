// The calls of joined tasks (task_join.hpp), added to the traces they were
// recorded in as what the viewer writers draw: slices and flow points. What
// `loupe merge --to perfetto|chrome-json` does before writing the traces
// together (viewer/perfetto.hpp, viewer/chrome_json.hpp, placed on the
// merged timeline by their clock offsets).
//
//     loupe::trace t = ...;  // input i of the forest, with its events
//     loupe::report::add_task_slices(t, i, forest);
//
// What is added to input i's trace:
// - per call whose client side it recorded, a zone from t1 to t4 on the
//   CALL_OUT's thread, named "<call> → <callee>" (the callee's label, or
//   "[peer]" for an opaque call: the client slice is all there is of it);
// - per call whose server side it recorded, a zone from t2 to t3 on the
//   REQUEST_IN's thread, named "<call> ← <caller>" ("?" for an unlinked
//   request, "[peer]" for one nested via an unprofiled callee, nothing for
//   a root);
// - per call with both sides, two flows: "request" from a point at t1 in
//   the client slice to one at t2 in the server slice, "response" from t3 to
//   t4, with ids derived from the call (the same in both traces, so the
//   viewer draws the arrows between processes).
// A slice goes on its thread's track when it nests with the thread's zones
// and I/O operations and the slices placed before it (by begin); otherwise
// (concurrent calls from one thread, a zone that ends inside the call) on a
// lane: a thread of its own named "<thread> calls" ("calls 2", ...) whose
// tid is 2^30 + its id, so that it is not taken for a real thread. Times
// stay as the trace recorded them (the writers move them by the trace's
// offset); the clamp of a call (task_flag::clamped) is the report's, not
// drawn.
//
// Cost: O(n + s log s) for n events and s slices of the trace; the events
// are rearranged in place. Thread-safety: modifies `t` only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/report/task_tree.hpp"

namespace loupe::report {

/// What add_task_slices added.
struct task_slice_counts {
    std::uint64_t slices = 0;       ///< zones added
    std::uint64_t flow_points = 0;  ///< flow points added
    std::uint64_t on_lanes = 0;     ///< slices that did not nest with their thread's zones
    std::uint64_t lanes = 0;        ///< threads added for them
};

namespace detail {

inline std::uint64_t mix64(std::uint64_t x) noexcept {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// The flow id of a call's request (direction 1) or response (2).
inline std::uint64_t call_flow_id(const task_forest& f, std::uint32_t node, unsigned direction) noexcept {
    const task_tree& t = f.tasks[f.nodes[node].task];
    std::uint64_t x = mix64(t.trace_high ^ 0x9e3779b97f4a7c15ull);
    x = mix64(x ^ t.trace_low);
    x = mix64(x ^ f.nodes[node].call_id);
    x = mix64(x ^ (static_cast<std::uint64_t>(node) << 2 | direction));
    return x != 0 ? x : 1;
}

struct planned_slice {
    std::uint64_t thread = 0;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint64_t site = 0;  // site id
    std::uint64_t first_flow = 0, second_flow = 0;  // at begin, at end (0: none)
    bool first_terminates = false;                  // the flow at begin ends there (a server's request)
};

}  // namespace detail

/// Adds the slices and flows of `forest`'s calls recorded by input `input`
/// to `t`, that input's trace (see the top of this file).
inline task_slice_counts add_task_slices(trace& t, std::uint32_t input, const task_forest& forest) {
    task_slice_counts counts;
    loupe::detail::trace_builder definer(t);  // defines sites and threads the way the reader does
    std::uint64_t next_site = 1;
    for (const trace_site& s : t.sites) next_site = std::max(next_site, s.id + 1);
    std::map<std::string, std::uint64_t> site_of;  // slice name -> site id
    const auto define_site = [&](const std::string& name, site_kind kind) {
        const auto [it, fresh] = site_of.try_emplace(name + (kind == site_kind::zone ? "" : "\x01"), next_site);
        if (fresh) {
            trace_site s;
            s.id = next_site++;
            s.kind = kind;
            s.name = name;
            s.file = "loupe merge";
            definer.on_site(0, s);
        }
        return it->second;
    };
    std::uint64_t next_thread = 1;
    for (const trace_thread& th : t.threads) next_thread = std::max(next_thread, th.id + 1);
    const auto ensure_thread = [&](std::uint64_t id) {
        if (t.find_thread(id) == nullptr) definer.on_thread(0, trace_thread{id, 0, {}});
        next_thread = std::max(next_thread, id + 1);
    };

    // The slices, per thread.
    std::vector<detail::planned_slice> planned;
    for (std::uint32_t i = 0; i < forest.nodes.size(); ++i) {
        const task_node& n = forest.nodes[i];
        const std::string& name = forest.name_of(n);
        const task_side& client = forest.client_side(n);
        const task_side& server = forest.server_side(n);
        const bool linked = client.present() && server.present();
        if (client.present() && client.input == input) {
            detail::planned_slice s;
            s.thread = client.thread_id;
            s.begin = client.begin_recorded;
            s.end = std::max(client.end_recorded, s.begin);
            s.site = define_site(name + " \u2192 " + forest.process_of(n), site_kind::zone);
            if (linked) {
                s.first_flow = detail::call_flow_id(forest, i, 1);
                s.second_flow = detail::call_flow_id(forest, i, 2);
            }
            planned.push_back(s);
        }
        if (server.present() && server.input == input) {
            std::string label = name;
            if (client.present()) {
                label += " \u2190 " + forest.caller_of(n);
            } else if (n.kind == task_node_kind::unlinked) {
                label += " \u2190 ?";
            } else if (n.kind == task_node_kind::via_unprofiled && n.parent != no_task_node) {
                label += " \u2190 " + forest.process_of(forest.nodes[n.parent]);
            }
            detail::planned_slice s;
            s.thread = server.thread_id;
            s.begin = server.begin_recorded;
            s.end = std::max(server.end_recorded, s.begin);
            s.site = define_site(label, site_kind::zone);
            if (linked) {
                s.first_flow = detail::call_flow_id(forest, i, 1);
                s.first_terminates = true;
                s.second_flow = detail::call_flow_id(forest, i, 2);
            }
            planned.push_back(s);
        }
    }
    if (planned.empty()) return counts;
    const std::uint64_t request_site = define_site("request", site_kind::instant);
    const std::uint64_t response_site = define_site("response", site_kind::instant);
    for (const detail::planned_slice& s : planned) ensure_thread(s.thread);

    // Per thread: which slices nest with its zones (and I/O operations,
    // which the writers draw as zones) and with the slices before them.
    struct interval {
        std::uint64_t begin, end;
        std::uint32_t slice;  // index into planned; none for a zone
    };
    constexpr std::uint32_t zone = 0xffffffffu;
    std::unordered_map<std::uint64_t, std::vector<interval>> by_thread;
    for (std::uint32_t k = 0; k < planned.size(); ++k) by_thread[planned[k].thread].push_back({planned[k].begin, planned[k].end, k});
    for (const trace_event& e : t.events) {
        if (e.type != event_type::zone) continue;
        const auto it = by_thread.find(e.thread_id);
        if (it != by_thread.end()) it->second.push_back({e.begin_ns, e.end_ns, zone});
    }
    for (const trace_io_op& op : t.io_ops) {
        const auto it = by_thread.find(op.thread_id);
        if (it != by_thread.end()) it->second.push_back({op.begin_ns, op.end_ns, zone});
    }
    std::vector<bool> on_lane(planned.size(), false);
    std::vector<std::uint64_t> thread_of(planned.size());
    for (std::uint32_t k = 0; k < planned.size(); ++k) thread_of[k] = planned[k].thread;
    std::map<std::uint64_t, std::vector<std::uint32_t>> lane_slices;  // per thread, slices that did not nest
    for (auto& [thread, items] : by_thread) {
        std::sort(items.begin(), items.end(), [](const interval& a, const interval& b) {
            if (a.begin != b.begin) return a.begin < b.begin;
            if (a.end != b.end) return a.end > b.end;
            return (a.slice == zone) > (b.slice == zone);  // a zone around a slice of the same interval
        });
        std::vector<const interval*> open;  // enclosing intervals, innermost last
        for (const interval& x : items) {
            while (!open.empty() && open.back()->end <= x.begin) open.pop_back();  // ended before x
            // What is open now began at or before x; one that ends inside x
            // crosses it. A slice gives way: to a zone, or to the slice that
            // began first.
            bool crossing = false;
            while (!open.empty() && open.back()->end < x.end) {
                if (open.back()->slice == zone && x.slice == zone) break;  // zones that cross (a damaged trace)
                if (open.back()->slice != zone && x.slice == zone) {
                    on_lane[open.back()->slice] = true;
                    open.pop_back();
                    continue;
                }
                crossing = true;
                break;
            }
            if (crossing) {
                on_lane[x.slice] = true;
                continue;
            }
            open.push_back(&x);
        }
        for (const interval& x : items) {
            if (x.slice != zone && on_lane[x.slice]) lane_slices[thread].push_back(x.slice);
        }
    }
    // Lanes: threads of their own, each slice on the first lane where it nests.
    for (auto& [thread, slices] : lane_slices) {
        std::sort(slices.begin(), slices.end(), [&](std::uint32_t a, std::uint32_t b) {
            return planned[a].begin != planned[b].begin ? planned[a].begin < planned[b].begin
                                                        : planned[a].end > planned[b].end;
        });
        std::vector<std::vector<std::uint64_t>> lane_ends;  // per lane, the ends of its open slices
        std::vector<std::uint64_t> lane_ids;
        const trace_thread* original = t.find_thread(thread);
        const std::string base = original && !original->name.empty() ? original->name : "thread " + std::to_string(thread);
        for (const std::uint32_t k : slices) {
            std::size_t lane = 0;
            for (; lane < lane_ends.size(); ++lane) {
                std::vector<std::uint64_t>& ends = lane_ends[lane];
                while (!ends.empty() && ends.back() <= planned[k].begin) ends.pop_back();
                if (ends.empty() || ends.back() >= planned[k].end) break;
            }
            if (lane == lane_ends.size()) {
                lane_ends.emplace_back();
                const std::uint64_t id = next_thread++;
                const std::string name = base + " calls" + (lane == 0 ? std::string() : " " + std::to_string(lane + 1));
                definer.on_thread(0, trace_thread{id, (std::uint64_t{1} << 30) + id, name});
                lane_ids.push_back(id);
                ++counts.lanes;
            }
            lane_ends[lane].push_back(planned[k].end);
            thread_of[k] = lane_ids[lane];
            ++counts.on_lanes;
        }
    }

    // The slices into the events, in the order a thread records them (a
    // zone when it ends, an enclosing zone after the zones inside it),
    // merged in place from the back.
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> slices_of;  // per thread, in record order
    for (std::uint32_t k = 0; k < planned.size(); ++k) slices_of[thread_of[k]].push_back(k);
    for (auto& [thread, slices] : slices_of) {
        std::sort(slices.begin(), slices.end(), [&](std::uint32_t a, std::uint32_t b) {
            return planned[a].end != planned[b].end ? planned[a].end < planned[b].end : planned[a].begin > planned[b].begin;
        });
    }
    const auto as_event = [&](std::uint32_t k) {
        trace_event e;
        e.type = event_type::zone;
        e.thread_id = thread_of[k];
        e.site_id = planned[k].site;
        e.begin_ns = planned[k].begin;
        e.end_ns = planned[k].end;
        return e;
    };
    const std::size_t n = t.events.size();
    t.events.resize(n + planned.size());
    std::size_t w = t.events.size();
    for (std::size_t i = n; i-- > 0;) {
        const trace_event e = t.events[i];
        const auto it = slices_of.find(e.thread_id);
        if (it != slices_of.end()) {
            std::vector<std::uint32_t>& mine = it->second;
            const std::uint64_t recorded = e.type == event_type::zone ? e.end_ns : e.begin_ns;
            // A slice comes after the event unless it ends before it, or with
            // it and begins after it (nested in it).
            while (!mine.empty()) {
                const detail::planned_slice& s = planned[mine.back()];
                const bool before = s.end < recorded || (s.end == recorded && s.begin > e.begin_ns);
                if (before) break;
                t.events[--w] = as_event(mine.back());
                mine.pop_back();
            }
        }
        t.events[--w] = e;
    }
    for (auto& [thread, mine] : slices_of) {  // slices before every event of their thread
        while (!mine.empty()) {
            t.events[--w] = as_event(mine.back());
            mine.pop_back();
        }
    }
    counts.slices = planned.size();

    // Flow points, on the slices' threads. Client: the request starts at
    // t1, the response ends at t4; server: the request ends at t2, the
    // response starts at t3.
    for (std::uint32_t k = 0; k < planned.size(); ++k) {
        const detail::planned_slice& s = planned[k];
        if (s.first_flow == 0) continue;
        t.flows.push_back({thread_of[k], request_site, s.begin, s.first_flow, s.first_terminates});
        t.flows.push_back({thread_of[k], response_site, s.end, s.second_flow, !s.first_terminates});
        counts.flow_points += 2;
    }
    return counts;
}

}  // namespace loupe::report
