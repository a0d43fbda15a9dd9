// Joining the task points of several traces into the tasks they served: the
// calls of each task, across processes, as trees on one timeline
// (task_tree.hpp). What `loupe merge` and `loupe report --tasks` compute.
//
//     std::vector<loupe::trace> traces = ...;  // one per process (read_trace_set_file)
//     loupe::report::task_forest tasks = loupe::report::join_tasks(traces);
//
// or, to hold one trace at a time:
//
//     loupe::report::task_joiner joiner;
//     for (const std::string& path : paths) joiner.add(loupe::read_trace_file(path));
//     loupe::report::task_forest tasks = joiner.finish();
//
// The rules, in order:
// 1. Sides. In each trace, a CALL_OUT and its RETURN_IN (same trace id and
//    call id) are the client side of a call, t1 and t4; a REQUEST_IN and its
//    RETURN_OUT (same trace id, call id and span) the server side, t2 and
//    t3 (detail/task_points.hpp). Points with a zero trace id, and client
//    points with call id 0, are ignored (counted).
// 2. Calls. Client and server sides with the same trace id and call id, in
//    any traces (the same one too: a call within one process), are one call.
//    A client side with no server side is an opaque call: its callee is not
//    profiled, and it lasts what its caller saw. A server side with call id
//    0 (no valid context came in) is a root: the task starts there. A server
//    side whose call id no client side has is unlinked (its caller, say an
//    unprofiled intermediary, is in no trace): a root of its own, never
//    guessed — but for rule 5.
// 3. Clocks. Calls with one copy of each side and all four times are the
//    samples that place every trace on one timeline (clock_alignment.hpp).
// 4. Copies. When a call id has several copies of a side (a retry resends
//    the same traceparent), the copies are paired on that timeline in time
//    order: each server side with the latest client copy sent before it
//    arrived; copies left over are opaque calls or unlinked requests. All
//    of them are flagged duplicate.
// 5. Nesting. A call's parent is the call whose server side, in the
//    caller's trace, runs as the span the CALL_OUT names; with none, the
//    call is a root (its process started the task). One inference: an
//    unlinked request (call id not 0) whose [t2, t3] lies inside exactly one
//    opaque call of the same trace id (on the timeline) is nested under it
//    and marked via_unprofiled — the opaque callee spoke W3C and called
//    back into a profiled process. It rests on the trace id and the time
//    containment alone, so it is made only when unique; otherwise the
//    request stays unlinked.
// 6. Placing. Top down, each client side is placed by its trace's offset
//    plus whatever moved the server side it runs in; each server side by
//    its own offset, then moved (shifted, never stretched) by the least
//    amount that keeps t1 ≤ t2′ ≤ t3′ ≤ t4 (flagged clamped), so that the
//    calls it makes move with it. A server side longer than its client's
//    interval starts with it (flagged overlong). Sides in domains no call
//    related are not moved (flagged unaligned).
// 7. Ends. A side with no return lasts to its trace's end (the END record's
//    time; for a cut-short trace the latest time the join saw in it: its
//    task points, and its events when the trace has them) and is flagged
//    open; a side with no first point starts at its trace's start, flagged
//    begin_unknown.
// 8. Tasks. A task is a trace id: concurrent tasks never mix, whatever their
//    times, since every key above includes it. Tasks by begin time (then
//    trace id), roots by begin, children by begin (then call id).
// A parent link that would close a cycle (only in damaged traces) is cut
// and the node made a root (flagged cycle).
//
// Cost: O(p log p) in the task points (add(bytes) also decodes and checks
// every record, O(size)). Memory: the points of the trace being added (88
// bytes each, in a buffer kept for the next trace unless over twice its
// need), the sides of all traces added (80 bytes each, kept as the model's,
// and a 32-byte key each, freed once the calls are made), then the model's
// calls (72 bytes each, and 12 of work): at the peak about 85 bytes per task
// point (a side per two points, a call per three), 64 in the model.
// Thread-safety: a task_joiner is not shared; join_tasks is pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/report/clock_alignment.hpp"
#include "loupe/report/detail/task_points.hpp"
#include "loupe/report/detail/task_time.hpp"
#include "loupe/report/task_tree.hpp"

namespace loupe::report {

class task_joiner {
public:
    /// Adds one trace: its identity and task points are copied (not its
    /// events), so the trace may go away. Returns its input index.
    std::uint32_t add(const trace& t) {
        const std::uint32_t input = begin_input();
        identify(t.session);
        make_room(t.task_points.size());
        std::uint64_t latest = t.session.start_ns;
        if (!t.complete) {
            for (const trace_event& e : t.events) latest = std::max(latest, e.end_ns);
        }
        for (const trace_task_point& p : t.task_points) add_point(p, latest);
        inputs_.back().events = t.complete && t.events.empty() ? t.end.events_written : t.events.size();
        end_input(t.complete, t.complete ? std::max(t.session.start_ns, t.end.end_ns) : latest);
        return input;
    }

    /// Adds the trace in [data, data + size) without building its model:
    /// every record is decoded and checked as read_trace does, only the
    /// identity and the task points are kept. Throws loupe::trace_error
    /// (offsets in [data, data + size)); the joiner is then as before.
    std::uint32_t add(const void* data, std::size_t size, decode_options options = {}) {
        const std::uint32_t input = begin_input();
        make_room(static_cast<std::size_t>(count_records(data, size, loupe::detail::format::rec_task)));
        struct reader final : trace_visitor {
            task_joiner& j;
            std::uint64_t latest = 0;
            std::uint64_t end = 0;
            explicit reader(task_joiner& joiner) : j(joiner) {}
            void on_session(std::uint64_t, const trace_session_info& s) override {
                j.identify(s);
                latest = s.start_ns;
            }
            void on_process(std::uint64_t, std::string_view program) override {
                j.inputs_.back().program = std::string(program);
            }
            void on_host(std::uint64_t, const trace_session_info& s) override { j.identify(s); }
            void on_event(std::uint64_t, const trace_event& e) override {
                latest = std::max(latest, e.end_ns);
                ++j.inputs_.back().events;
            }
            void on_task_point(std::uint64_t, const trace_task_point& p) override { j.add_point(p, latest); }
            void on_end(std::uint64_t, const trace_end_info& e) override { end = e.end_ns; }
        } r(*this);
        bool complete = false;
        try {
            complete = decode_trace(data, size, r, options).complete;
        } catch (...) {
            abandon_input();
            throw;
        }
        end_input(complete, complete ? std::max(r.end, inputs_.back().start_ns) : r.latest);
        return input;
    }

    std::uint32_t inputs() const noexcept { return static_cast<std::uint32_t>(inputs_.size()); }

    /// Joins everything added (see the top of this file). The joiner is
    /// left empty.
    task_forest finish();

private:
    struct build;  // the steps of finish()

    // Room for an input of `n` task points: its points, and its sides and
    // their keys (at most one per point), made before any point is read, so
    // that sides which move are copied while the points take no memory. The
    // points buffer serves input after input (freed and allocated anew, it
    // would leave holes in the heap that stay resident) unless it is over
    // twice this input's need: then it goes, so that a large input's does
    // not stay.
    void make_room(std::size_t n) {
        if (points_.capacity() > 2 * n) points_ = std::vector<detail::compact_point>();
        detail::reserve_more(points_, n);
        detail::reserve_more(sides_, n);
        detail::reserve_more(clients_, n);
        detail::reserve_more(servers_, n);
    }
    std::uint32_t begin_input() {
        inputs_.emplace_back();
        points_.clear();
        counts_before_ = counts_;
        return static_cast<std::uint32_t>(inputs_.size() - 1);
    }
    // The identity fields of a SESSION (or HOST, or a model's session).
    void identify(const trace_session_info& s) {
        task_input& in = inputs_.back();
        if (!s.program.empty()) in.program = s.program;
        in.session = s.name;
        in.pid = s.pid;
        in.host = s.host;
        in.clock_domain = s.clock_domain;
        in.start_ns = s.start_ns;
    }
    void add_point(const trace_task_point& p, std::uint64_t& latest) {
        ++counts_.points;
        ++inputs_.back().task_points;
        latest = std::max(latest, p.time_ns);
        const bool client = detail::is_client(p.kind);
        if ((p.trace_high | p.trace_low) == 0 || (client && p.call_id == 0) || static_cast<unsigned>(p.kind) < 1 ||
            static_cast<unsigned>(p.kind) > 4) {
            ++counts_.points_ignored;
            return;
        }
        detail::compact_point c;
        c.trace_high = p.trace_high;
        c.trace_low = p.trace_low;
        c.call_id = p.call_id;
        c.span_id = p.span_id;
        c.echoed_id = p.echoed_id;
        c.time_ns = p.time_ns;
        c.thread_id = p.thread_id;
        c.status = p.status;
        c.input = static_cast<std::uint32_t>(inputs_.size() - 1);
        c.order = static_cast<std::uint32_t>(points_.size());
        c.name = strings_.intern(p.name);
        c.peer = strings_.intern(p.peer);
        c.kind = p.kind;
        c.tagged = p.tagged;
        points_.push_back(c);
    }
    // Rule 1 for the input's points, then rule 7: the times its sides lack.
    void end_input(bool complete, std::uint64_t end_ns) {
        task_input& in = inputs_.back();
        in.complete = complete;
        in.end_ns = std::max(end_ns, in.start_ns);
        const auto servers = std::partition(points_.begin(), points_.end(),
                                            [](const detail::compact_point& p) { return detail::is_client(p.kind); });
        const std::size_t first = sides_.size();  // room made by make_room
        detail::pair_points(points_.begin(), servers, false, sides_, clients_);
        detail::pair_points(servers, points_.end(), true, sides_, servers_);
        points_.clear();
        for (std::size_t k = first; k < sides_.size(); ++k) {
            task_side& side = sides_[k];
            if (!side.has_begin) side.begin_recorded = std::min(in.start_ns, side.end_recorded);
            if (!side.has_end) side.end_recorded = std::max(in.end_ns, side.begin_recorded);
        }
    }
    void abandon_input() {
        counts_ = counts_before_;
        inputs_.pop_back();
        points_.clear();
    }

    std::vector<task_input> inputs_;
    std::vector<detail::compact_point> points_;  // of the input being added (the buffer is reused)
    std::vector<task_side> sides_;               // of every input so far: finish() makes them task_forest::sides
    std::vector<detail::side_key> clients_;      // the client sides' keys
    std::vector<detail::side_key> servers_;      // the server sides' keys
    detail::string_table strings_;
    task_counts counts_;
    task_counts counts_before_;  // when the input being added began
};

/// The tasks of `traces` (input i is traces[i]). See the top of this file.
inline task_forest join_tasks(const std::vector<trace>& traces) {
    task_joiner joiner;
    for (const trace& t : traces) joiner.add(t);
    return joiner.finish();
}

/// The tasks of the traces `traces` points at.
inline task_forest join_tasks(const std::vector<const trace*>& traces) {
    task_joiner joiner;
    for (const trace* t : traces) joiner.add(*t);
    return joiner.finish();
}

namespace detail {

// What reports call each input: its program (else its session's name, else
// "pid N"); when two inputs would share one, ":pid" is added, then "#k"
// (k: the input's index, from 1).
inline void label_inputs(std::vector<task_input>& inputs) {
    const auto base = [](const task_input& in) {
        if (!in.program.empty()) return in.program;
        if (!in.session.empty()) return in.session;
        return "pid " + std::to_string(in.pid);
    };
    const auto count = [&](const std::string& label, auto&& of) {
        std::size_t n = 0;
        for (const task_input& in : inputs) n += of(in) == label;
        return n;
    };
    const auto with_pid = [&](const task_input& in) { return base(in) + ":" + std::to_string(in.pid); };
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        task_input& in = inputs[i];
        in.label = base(in);
        if (count(in.label, base) > 1) {
            in.label = with_pid(in);
            if (count(in.label, with_pid) > 1) in.label += "#" + std::to_string(i + 1);
        }
    }
}

}  // namespace detail

struct task_joiner::build {
    task_forest& f;
    // The trace ids of the tasks, ascending (the join meets them in key
    // order): per node an index into them, which compares as the ids do.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> trace_ids;
    std::vector<std::uint32_t> trace_of;  // per node
    std::vector<std::uint32_t> parent;    // per node, before renumbering

    std::uint32_t domain(std::uint32_t input) const { return f.alignment.domain_of[input]; }

    // The index of the trace id of `k`, not smaller than any before it.
    std::uint32_t trace_index(const detail::side_key& k) {
        if (trace_ids.empty() || trace_ids.back() != std::make_pair(k.trace_high, k.trace_low)) {
            trace_ids.emplace_back(k.trace_high, k.trace_low);
        }
        return static_cast<std::uint32_t>(trace_ids.size() - 1);
    }

    std::uint32_t add_node(task_node_kind kind, std::uint32_t trace, const detail::side_key* client,
                           const detail::side_key* server) {
        task_node n;
        n.kind = kind;
        const detail::side_key& any = client ? *client : *server;
        n.call_id = any.call_id;
        if (client) n.client = client->side;
        if (server) n.server = server->side;
        for (const task_side* side : {&f.client_side(n), &f.server_side(n)}) {
            if (!side->present()) continue;
            if (!side->has_begin) n.flags |= task_flag::begin_unknown;
            if (!side->has_end) n.flags |= task_flag::open;
        }
        f.nodes.push_back(n);
        trace_of.push_back(trace);
        parent.push_back(no_task_node);
        return static_cast<std::uint32_t>(f.nodes.size() - 1);
    }

    std::int64_t aligned_begin(const task_side& s) const { return f.alignment.to_timeline(s.input, s.begin_recorded); }
    std::int64_t aligned_end(const task_side& s) const { return f.alignment.to_timeline(s.input, s.end_recorded); }

    // Rule 4: the copies of one call id, paired on the timeline.
    void pair_copies(std::uint32_t trace, std::vector<detail::side_key>& clients,
                     std::vector<detail::side_key>& servers) {
        const auto by_begin = [&](const detail::side_key& a, const detail::side_key& b) {
            const task_side& x = f.sides[a.side];
            const task_side& y = f.sides[b.side];
            const std::int64_t bx = aligned_begin(x), by = aligned_begin(y);
            return bx != by ? bx < by : x.input < y.input;
        };
        std::stable_sort(clients.begin(), clients.end(), by_begin);
        std::stable_sort(servers.begin(), servers.end(), by_begin);
        std::vector<bool> used(clients.size(), false);
        const bool small = clients.size() * servers.size() <= (1u << 16);
        std::size_t in_order = 0;
        for (const detail::side_key& s : servers) {
            std::size_t pick = clients.size();
            if (small) {  // the latest copy sent before it arrived, else the earliest left
                const std::int64_t arrived = aligned_begin(f.sides[s.side]);
                for (std::size_t k = clients.size(); k-- > 0;) {
                    if (!used[k] && aligned_begin(f.sides[clients[k].side]) <= arrived) {
                        pick = k;
                        break;
                    }
                }
                for (std::size_t k = 0; pick == clients.size() && k < clients.size(); ++k) {
                    if (!used[k]) pick = k;
                }
            } else {  // thousands of copies of one id: in order
                while (in_order < clients.size() && used[in_order]) ++in_order;
                pick = in_order;
            }
            std::uint32_t n;
            if (pick < clients.size()) {
                used[pick] = true;
                n = add_node(task_node_kind::call, trace, &clients[pick], &s);
            } else {
                n = add_node(task_node_kind::unlinked, trace, nullptr, &s);
            }
            f.nodes[n].flags |= task_flag::duplicate;
        }
        for (std::size_t k = 0; k < clients.size(); ++k) {
            if (used[k]) continue;
            const std::uint32_t n = add_node(task_node_kind::opaque, trace, &clients[k], nullptr);
            f.nodes[n].flags |= task_flag::duplicate;
        }
    }

    // Rule 5: parents by span.
    void link_by_span() {
        struct entry {
            std::uint32_t input, trace;
            std::uint64_t span;
            std::uint64_t begin;
            std::uint32_t node;
        };
        std::vector<entry> servers;
        servers.reserve(static_cast<std::size_t>(std::count_if(
            f.nodes.begin(), f.nodes.end(), [](const task_node& n) { return n.server != no_task_side; })));
        for (std::uint32_t i = 0; i < f.nodes.size(); ++i) {
            const task_side& s = f.server_side(f.nodes[i]);
            if (s.present()) servers.push_back({s.input, trace_of[i], s.span_id, s.begin_recorded, i});
        }
        const auto key = [](const entry& e) { return std::make_tuple(e.input, e.trace, e.span); };
        std::sort(servers.begin(), servers.end(), [&](const entry& a, const entry& b) {
            return key(a) != key(b) ? key(a) < key(b) : a.begin != b.begin ? a.begin < b.begin : a.node < b.node;
        });
        for (std::uint32_t i = 0; i < f.nodes.size(); ++i) {
            const task_side& c = f.client_side(f.nodes[i]);
            if (!c.present()) continue;
            const entry probe{c.input, trace_of[i], c.span_id, 0, 0};
            auto it = std::lower_bound(servers.begin(), servers.end(), probe,
                                       [&](const entry& a, const entry& b) { return key(a) < key(b); });
            // The handler running at t1 (the latest to start by then), else the first one.
            std::uint32_t best = no_task_node, first = no_task_node;
            for (; it != servers.end() && key(*it) == key(probe); ++it) {
                if (it->node == i) continue;
                if (first == no_task_node) first = it->node;
                const task_side& s = f.server_side(f.nodes[it->node]);
                if (s.begin_recorded <= c.begin_recorded && c.begin_recorded <= s.end_recorded) best = it->node;
            }
            parent[i] = best != no_task_node ? best : first;
        }
    }

    // Rule 5's inference: an unlinked request inside exactly one opaque call.
    void infer_via_unprofiled() {
        struct interval {
            std::uint32_t trace;
            std::int64_t begin, end;
            std::uint32_t node;
        };
        std::vector<interval> opaque, requests;
        for (std::uint32_t i = 0; i < f.nodes.size(); ++i) {
            const task_node& n = f.nodes[i];
            const task_side& client = f.client_side(n);
            const task_side& server = f.server_side(n);
            if (n.kind == task_node_kind::opaque && client.has_begin && client.has_end) {
                opaque.push_back({trace_of[i], aligned_begin(client), aligned_end(client), i});
            } else if (n.kind == task_node_kind::unlinked && n.call_id != 0 && !n.has(task_flag::duplicate) &&
                       server.has_begin && server.has_end) {
                requests.push_back({trace_of[i], aligned_begin(server), aligned_end(server), i});
            }
        }
        if (opaque.empty() || requests.empty()) return;
        const auto order = [](const interval& a, const interval& b) {
            return std::tie(a.trace, a.begin, a.node) < std::tie(b.trace, b.begin, b.node);
        };
        std::sort(opaque.begin(), opaque.end(), order);
        // Per prefix of each trace's opaque calls (by begin): the two latest
        // ends, to count up to two calls containing an interval.
        struct top2 {
            std::int64_t end1, end2;
            std::uint32_t node1;
        };
        std::vector<top2> best(opaque.size());
        for (std::size_t k = 0; k < opaque.size(); ++k) {
            const bool same = k > 0 && opaque[k - 1].trace == opaque[k].trace;
            top2 t = same ? best[k - 1] : top2{detail::time_min, detail::time_min, no_task_node};
            if (opaque[k].end > t.end1) {
                t.end2 = t.end1;
                t.end1 = opaque[k].end;
                t.node1 = opaque[k].node;
            } else if (opaque[k].end > t.end2) {
                t.end2 = opaque[k].end;
            }
            best[k] = t;
        }
        for (const interval& r : requests) {
            // The last opaque call of r's trace beginning at or before r.
            const interval probe{r.trace, r.begin, 0, no_task_node};
            const auto after = std::upper_bound(opaque.begin(), opaque.end(), probe, order);
            if (after == opaque.begin()) continue;
            const std::size_t k = static_cast<std::size_t>(after - opaque.begin()) - 1;
            if (opaque[k].trace != r.trace) continue;
            const top2& t = best[k];
            if (t.end1 >= r.end && t.end2 < r.end) {
                task_node& n = f.nodes[r.node];
                n.kind = task_node_kind::via_unprofiled;
                parent[r.node] = t.node1;
            }
        }
    }

    // Cuts the parent links that close cycles (damaged traces only).
    void break_cycles() {
        std::vector<std::uint8_t> state(f.nodes.size(), 0);  // 0 new, 1 on the current path, 2 done
        std::vector<std::uint32_t> path;
        for (std::uint32_t i = 0; i < f.nodes.size(); ++i) {
            if (state[i] != 0) continue;
            path.clear();
            std::uint32_t v = i;
            while (v != no_task_node && state[v] == 0) {
                state[v] = 1;
                path.push_back(v);
                v = parent[v];
            }
            if (v != no_task_node && state[v] == 1) {  // a cycle through v: cut at its lowest index
                std::uint32_t lowest = v;
                for (std::uint32_t u = parent[v]; u != v; u = parent[u]) lowest = std::min(lowest, u);
                parent[lowest] = no_task_node;
                f.nodes[lowest].flags |= task_flag::cycle;
            }
            for (const std::uint32_t u : path) state[u] = 2;
        }
    }

    // Rule 6, for node `i` whose parent is placed.
    void place(std::uint32_t i, std::vector<std::int64_t>& server_shift) {
        task_node& n = f.nodes[i];
        const std::uint32_t p = parent[i];
        std::int64_t client_shift = 0;
        if (n.client != no_task_side) {
            task_side& client = f.sides[n.client];
            if (p != no_task_node) {
                const task_side& caller = f.server_side(f.nodes[p]);
                if (caller.present() && caller.input == client.input) client_shift = server_shift[p];
            }
            client.begin_ns = detail::sat_add(aligned_begin(client), client_shift);
            client.end_ns = detail::sat_add(aligned_end(client), client_shift);
        }
        if (n.server != no_task_side) {
            task_side& server = f.sides[n.server];
            // The interval it must fit in: its client's, or for an inferred
            // request the opaque call around it.
            const task_side* window = n.client != no_task_side ? &f.sides[n.client] : nullptr;
            std::int64_t window_shift = client_shift;
            if (!window && n.kind == task_node_kind::via_unprofiled && p != no_task_node) {
                window = &f.client_side(f.nodes[p]);
                window_shift = detail::sat_sub(window->begin_ns, aligned_begin(*window));
            }
            const bool same_domain = window && domain(window->input) == domain(server.input);
            const std::int64_t s0 = same_domain ? window_shift : 0;
            std::int64_t s = s0;
            const std::int64_t begin = aligned_begin(server), end = aligned_end(server);
            const bool comparable =
                window && (same_domain || (f.alignment.aligned(window->input) && f.alignment.aligned(server.input)));
            if (window && !comparable) n.flags |= task_flag::unaligned;
            if (comparable && window->has_begin && window->has_end && server.has_begin && server.has_end) {
                const std::int64_t b = detail::sat_add(begin, s0), e = detail::sat_add(end, s0);
                if (detail::sat_sub(e, b) > detail::sat_sub(window->end_ns, window->begin_ns)) {
                    s = detail::sat_add(s0, detail::sat_sub(window->begin_ns, b));
                    n.flags |= task_flag::overlong;
                } else if (b < window->begin_ns) {
                    s = detail::sat_add(s0, detail::sat_sub(window->begin_ns, b));
                } else if (e > window->end_ns) {
                    s = detail::sat_add(s0, detail::sat_sub(window->end_ns, e));
                }
            }
            if (s != s0) n.flags |= task_flag::clamped;
            n.shift_ns = detail::sat_sub(s, s0);
            server_shift[i] = s;
            server.begin_ns = detail::sat_add(begin, s);
            server.end_ns = detail::sat_add(end, s);
        }
        const task_side& shown = n.client != no_task_side ? f.sides[n.client] : f.sides[n.server];
        n.begin_ns = shown.begin_ns;
        n.end_ns = std::max(shown.end_ns, shown.begin_ns);
    }
};

inline task_forest task_joiner::finish() {
    task_forest f;
    f.inputs = std::move(inputs_);
    inputs_.clear();
    f.counts = counts_;
    counts_ = {};
    detail::label_inputs(f.inputs);
    build b{f, {}, {}, {}};

    // 1. Sides (paired as each input was added): the forest's from now on;
    // the join sorts their keys.
    f.sides = std::move(sides_);
    sides_ = std::vector<task_side>();
    std::vector<detail::side_key> clients = std::move(clients_);
    std::vector<detail::side_key> servers = std::move(servers_);
    clients_ = std::vector<detail::side_key>();
    servers_ = std::vector<detail::side_key>();
    points_ = std::vector<detail::compact_point>();
    f.strings = strings_.take();

    // 2. Calls: group both sides by (trace, call id).
    const auto key = [](const detail::side_key& s) { return std::make_tuple(s.trace_high, s.trace_low, s.call_id); };
    const auto by_key = [&](const detail::side_key& a, const detail::side_key& c) {
        if (key(a) != key(c)) return key(a) < key(c);
        const task_side& x = f.sides[a.side];
        const task_side& y = f.sides[c.side];
        if (x.input != y.input) return x.input < y.input;
        return x.begin_recorded < y.begin_recorded;
    };
    std::sort(clients.begin(), clients.end(), by_key);
    std::sort(servers.begin(), servers.end(), by_key);
    // At most one node per side (pages never touched cost nothing).
    f.nodes.reserve(clients.size() + servers.size());
    b.trace_of.reserve(clients.size() + servers.size());
    b.parent.reserve(clients.size() + servers.size());
    // The copies of rule 4 wait, kept aside (with their trace id's index).
    struct copy_group {
        std::uint32_t trace;
        std::vector<detail::side_key> clients, servers;
    };
    std::vector<copy_group> copies;
    for (std::size_t c = 0, s = 0; c < clients.size() || s < servers.size();) {
        // The next key, and how many sides of each kind have it.
        const bool take_client = s == servers.size() || (c < clients.size() && key(clients[c]) <= key(servers[s]));
        const auto k = take_client ? key(clients[c]) : key(servers[s]);
        std::size_t nc = 0, ns = 0;
        while (c + nc < clients.size() && key(clients[c + nc]) == k) ++nc;
        while (s + ns < servers.size() && key(servers[s + ns]) == k) ++ns;
        const detail::side_key* cs = clients.data() + c;
        const detail::side_key* ss = servers.data() + s;
        const std::uint32_t trace = b.trace_index(take_client ? *cs : *ss);
        if (std::get<2>(k) == 0) {  // no context came in (client points never have call id 0)
            for (std::size_t i = 0; i < ns; ++i) b.add_node(task_node_kind::root, trace, nullptr, &ss[i]);
        } else if (ns == 0) {
            for (std::size_t i = 0; i < nc; ++i) {
                const std::uint32_t n = b.add_node(task_node_kind::opaque, trace, &cs[i], nullptr);
                if (nc > 1) f.nodes[n].flags |= task_flag::duplicate;
            }
        } else if (nc == 0) {
            for (std::size_t i = 0; i < ns; ++i) {
                const std::uint32_t n = b.add_node(task_node_kind::unlinked, trace, nullptr, &ss[i]);
                if (ns > 1) f.nodes[n].flags |= task_flag::duplicate;
            }
        } else if (nc == 1 && ns == 1) {
            b.add_node(task_node_kind::call, trace, cs, ss);
        } else {
            copies.push_back(
                {trace, std::vector<detail::side_key>(cs, cs + nc), std::vector<detail::side_key>(ss, ss + ns)});
        }
        c += nc;
        s += ns;
    }
    clients = std::vector<detail::side_key>();
    servers = std::vector<detail::side_key>();

    // 3. Clocks: the samples are the calls made so far (the copies wait)
    // with all four times.
    const auto sample = [&](const task_node& n) {
        const task_side& client = f.client_side(n);
        const task_side& server = f.server_side(n);
        return n.kind == task_node_kind::call && client.has_begin && client.has_end && server.has_begin &&
               server.has_end;
    };
    std::vector<clock_sample> samples;
    samples.reserve(static_cast<std::size_t>(std::count_if(f.nodes.begin(), f.nodes.end(), sample)));
    for (const task_node& n : f.nodes) {
        if (!sample(n)) continue;
        const task_side& client = f.client_side(n);
        const task_side& server = f.server_side(n);
        samples.push_back({client.input, server.input, client.begin_recorded, server.begin_recorded,
                           server.end_recorded, client.end_recorded});
    }
    std::vector<std::string> domains;
    domains.reserve(f.inputs.size());
    for (const task_input& in : f.inputs) domains.push_back(in.clock_domain);
    f.alignment = align_clocks(domains, samples);
    samples = std::vector<clock_sample>();

    // 4. Copies, on the timeline.
    for (copy_group& g : copies) b.pair_copies(g.trace, g.clients, g.servers);
    copies = std::vector<copy_group>();

    // 5. Nesting.
    b.link_by_span();
    b.infer_via_unprofiled();
    b.break_cycles();

    // 8. Tasks: nodes grouped by trace id; children lists.
    const std::uint32_t count = static_cast<std::uint32_t>(f.nodes.size());
    std::vector<std::uint32_t> first_child(count + 1, 0), kids(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        if (b.parent[i] != no_task_node) ++first_child[b.parent[i] + 1];
    }
    for (std::uint32_t i = 0; i < count; ++i) first_child[i + 1] += first_child[i];
    {
        std::vector<std::uint32_t> fill(first_child.begin(), first_child.end() - 1);
        for (std::uint32_t i = 0; i < count; ++i) {
            if (b.parent[i] != no_task_node) kids[fill[b.parent[i]]++] = i;
        }
    }

    // 6. Placing, top down from the roots (any order that places a parent
    // before its children).
    std::vector<std::uint32_t> stack;
    {
        std::vector<std::int64_t> server_shift(count, 0);
        for (std::uint32_t r = 0; r < count; ++r) {
            if (b.parent[r] != no_task_node) continue;
            stack.push_back(r);
            while (!stack.empty()) {
                const std::uint32_t i = stack.back();
                stack.pop_back();
                b.place(i, server_shift);
                for (std::uint32_t k = first_child[i]; k < first_child[i + 1]; ++k) stack.push_back(kids[k]);
            }
        }
    }

    // Children by begin, then call id, then index: deterministic.
    const auto earlier = [&](std::uint32_t x, std::uint32_t y) {
        const task_node& a = f.nodes[x];
        const task_node& d = f.nodes[y];
        if (a.begin_ns != d.begin_ns) return a.begin_ns < d.begin_ns;
        if (a.call_id != d.call_id) return a.call_id < d.call_id;
        return x < y;
    };
    for (std::uint32_t i = 0; i < count; ++i) {
        std::sort(kids.begin() + first_child[i], kids.begin() + first_child[i + 1], earlier);
    }

    // Self time: the duration minus the union of the children's intervals,
    // each clipped to the node's (children come by begin).
    for (std::uint32_t i = 0; i < count; ++i) {
        task_node& n = f.nodes[i];
        std::uint64_t covered = 0;
        std::int64_t reach = n.begin_ns;  // the union so far ends here
        for (std::uint32_t k = first_child[i]; k < first_child[i + 1]; ++k) {
            const task_node& ch = f.nodes[kids[k]];
            const std::int64_t from = std::max(ch.begin_ns, reach);
            const std::int64_t to = std::min(ch.end_ns, n.end_ns);
            if (to > from) {
                covered += detail::length(from, to);
                reach = to;
            }
        }
        n.self_ns = static_cast<std::int64_t>(detail::length(n.begin_ns, n.end_ns) - std::min<std::uint64_t>(covered, detail::length(n.begin_ns, n.end_ns)));
    }

    // Tasks: trace ids in order of their earliest begin; then each task's
    // trees in depth-first order, roots by begin.
    std::vector<std::uint32_t> roots;
    for (std::uint32_t i = 0; i < count; ++i) {
        if (b.parent[i] == no_task_node) roots.push_back(i);
    }
    std::sort(roots.begin(), roots.end(), [&](std::uint32_t x, std::uint32_t y) {
        if (b.trace_of[x] != b.trace_of[y]) return b.trace_of[x] < b.trace_of[y];
        return earlier(x, y);
    });
    struct task_range {
        std::size_t first_root, end_root;
        std::int64_t begin;
    };
    std::vector<task_range> ranges;
    for (std::size_t r = 0; r < roots.size();) {
        std::size_t e = r + 1;
        while (e < roots.size() && b.trace_of[roots[e]] == b.trace_of[roots[r]]) ++e;
        ranges.push_back({r, e, f.nodes[roots[r]].begin_ns});
        r = e;
    }
    std::stable_sort(ranges.begin(), ranges.end(), [&](const task_range& x, const task_range& y) {
        if (x.begin != y.begin) return x.begin < y.begin;
        return b.trace_of[roots[x.first_root]] < b.trace_of[roots[y.first_root]];
    });
    std::vector<std::uint32_t> new_index(count, no_task_node);
    std::vector<std::uint32_t> old_of;  // new index -> old
    old_of.reserve(count);
    std::vector<std::uint32_t> depth(count, 0);
    f.tasks.reserve(ranges.size());
    for (std::size_t t = 0; t < ranges.size(); ++t) {
        task_tree tree;
        tree.trace_high = b.trace_ids[b.trace_of[roots[ranges[t].first_root]]].first;
        tree.trace_low = b.trace_ids[b.trace_of[roots[ranges[t].first_root]]].second;
        tree.first_node = static_cast<std::uint32_t>(old_of.size());
        for (std::size_t r = ranges[t].first_root; r < ranges[t].end_root; ++r) {
            stack.assign(1, roots[r]);
            while (!stack.empty()) {
                const std::uint32_t i = stack.back();
                stack.pop_back();
                new_index[i] = static_cast<std::uint32_t>(old_of.size());
                old_of.push_back(i);
                for (std::uint32_t k = first_child[i + 1]; k-- > first_child[i];) {
                    depth[kids[k]] = depth[i] + 1;
                    stack.push_back(kids[k]);
                }
            }
        }
        tree.node_count = static_cast<std::uint32_t>(old_of.size()) - tree.first_node;
        f.tasks.push_back(std::move(tree));
    }
    // Nodes a damaged trace left outside every tree cannot exist: each has
    // a root above it once the cycles are cut.
    f.children.clear();
    f.children.reserve(count);
    for (std::uint32_t k = 0; k < old_of.size(); ++k) {
        const std::uint32_t i = old_of[k];
        task_node& n = f.nodes[i];
        n.parent = b.parent[i] == no_task_node ? no_task_node : new_index[b.parent[i]];
        n.depth = depth[i];
        n.children_begin = static_cast<std::uint32_t>(f.children.size());
        n.children_count = first_child[i + 1] - first_child[i];
        for (std::uint32_t j = first_child[i]; j < first_child[i + 1]; ++j) f.children.push_back(new_index[kids[j]]);
    }
    // Into the new order in place (node k is old node old_of[k]), one cycle
    // of the permutation at a time.
    {
        std::vector<bool> placed(count, false);
        for (std::uint32_t start = 0; start < count; ++start) {
            if (placed[start]) continue;
            task_node moving = std::move(f.nodes[start]);
            std::uint32_t k = start;
            for (;;) {
                placed[k] = true;
                const std::uint32_t from = old_of[k];
                if (from == start) {
                    f.nodes[k] = std::move(moving);
                    break;
                }
                f.nodes[k] = std::move(f.nodes[from]);
                k = from;
            }
        }
    }

    for (std::uint32_t t = 0; t < f.tasks.size(); ++t) {
        task_tree& tree = f.tasks[t];
        std::vector<bool> seen(f.inputs.size(), false);
        tree.begin_ns = detail::time_max;
        tree.end_ns = detail::time_min;
        for (std::uint32_t k = tree.first_node; k < tree.first_node + tree.node_count; ++k) {
            task_node& n = f.nodes[k];
            n.task = t;
            if (n.parent == no_task_node) tree.roots.push_back(k);
            tree.begin_ns = std::min(tree.begin_ns, n.begin_ns);
            tree.end_ns = std::max(tree.end_ns, n.end_ns);
            tree.flags |= n.flags;
            for (const task_side* side : {&f.client_side(n), &f.server_side(n)}) {
                if (side->present() && !seen[side->input]) {
                    seen[side->input] = true;
                    ++tree.processes;
                }
            }
        }
        std::stable_sort(tree.roots.begin(), tree.roots.end(), [&](std::uint32_t x, std::uint32_t y) {
            return f.nodes[x].begin_ns < f.nodes[y].begin_ns;
        });
    }

    task_counts& k = f.counts;
    k.tasks = f.tasks.size();
    k.calls = f.nodes.size();
    for (const task_node& n : f.nodes) {
        k.joined += n.kind == task_node_kind::call;
        k.opaque += n.kind == task_node_kind::opaque;
        k.roots += n.kind == task_node_kind::root;
        k.unlinked += n.kind == task_node_kind::unlinked;
        k.via_unprofiled += n.kind == task_node_kind::via_unprofiled;
        k.clamped += n.has(task_flag::clamped);
        k.open += n.has(task_flag::open);
        k.duplicates += n.has(task_flag::duplicate);
        k.unaligned += n.has(task_flag::unaligned);
        k.cycles += n.has(task_flag::cycle);
    }
    return f;
}

}  // namespace loupe::report
