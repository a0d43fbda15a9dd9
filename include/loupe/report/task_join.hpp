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
// (finish(task_detail::counts): the counts and the clock alignment only).
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
// Since tasks never mix, finish() joins them one at a time: the keys of
// every side are sorted once, the clocks aligned from every complete call
// (rule 3), then each task's calls are made, nested, placed and ordered on
// their own.
//
// Cost: O(p log p) in the task points (add(bytes) also decodes and checks
// every record, O(size)). Memory: the points of the trace being added (80
// bytes each, freed once paired into sides) and the sides of every trace
// added, as recorded (56 bytes each, and a 16-byte key; their trace ids
// stored once, about 24 bytes each): about 36 bytes per task point (a side
// per two points) and 24 per task. finish(task_detail::counts) adds one
// task's calls at a time; finish(task_detail::trees) makes the model from
// them: sides of 80 bytes (the recorded ones freed once copied), calls of
// 72 (a call per three points), 64 bytes per task point, 76 while the
// sides are copied.
// Thread-safety: a task_joiner is not shared; join_tasks is pure.
#pragma once

#include <algorithm>
#include <cstddef>
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

/// What task_joiner::finish keeps of the join.
enum class task_detail : std::uint8_t {
    /// The whole model: nodes, sides, children and tasks (what the task
    /// reports and the viewers read).
    trees,
    /// The inputs, the clock alignment and the counts only: every task is
    /// joined as for `trees`, counted, then dropped, so that memory holds
    /// one task's calls at a time (what `loupe merge -o X.loupe` prints).
    counts,
};

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
    /// `read`, when given, is told what was read (read_progress: the bytes
    /// are read twice, the framing to count the task points, then all).
    std::uint32_t add(const void* data, std::size_t size, decode_options options = {},
                      const read_progress& read = {}) {
        const std::uint32_t input = begin_input();
        make_room(static_cast<std::size_t>(count_records(data, size, loupe::detail::format::rec_task, read)));
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
            complete = decode_trace(data, size, r, options, read).complete;
        } catch (...) {
            abandon_input();
            throw;
        }
        end_input(complete, complete ? std::max(r.end, inputs_.back().start_ns) : r.latest);
        return input;
    }

    std::uint32_t inputs() const noexcept { return static_cast<std::uint32_t>(inputs_.size()); }

    /// Joins everything added (see the top of this file), keeping `kept`.
    /// The joiner is left empty.
    task_forest finish(task_detail kept = task_detail::trees);

private:
    struct build;  // the steps of finish()

    // Room for an input of `n` task points: its points, and its sides and
    // their keys (at most one per point), made before any point is read, so
    // that sides which move are copied while the points take no memory. The
    // points are freed once paired (end_input).
    void make_room(std::size_t n) {
        points_.reserve(n);
        detail::reserve_more(sides_, n);
        detail::reserve_more(clients_, n);
        detail::reserve_more(servers_, n);
    }
    std::uint32_t begin_input() {
        inputs_.emplace_back();
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
        const auto input = static_cast<std::uint32_t>(inputs_.size() - 1);
        const auto servers = std::partition(points_.begin(), points_.end(),
                                            [](const detail::compact_point& p) { return detail::is_client(p.kind); });
        const std::size_t first = sides_.size();  // room made by make_room
        detail::pair_points(points_.begin(), servers, false, input, sides_, clients_, tables_);
        detail::pair_points(servers, points_.end(), true, input, sides_, servers_, tables_);
        points_ = std::vector<detail::compact_point>();
        for (std::size_t k = first; k < sides_.size(); ++k) {
            detail::recorded_side& side = sides_[k];
            if (!side.has_begin) side.begin_recorded = std::min(in.start_ns, side.end_recorded);
            if (!side.has_end) side.end_recorded = std::max(in.end_ns, side.begin_recorded);
        }
    }
    void abandon_input() {
        counts_ = counts_before_;
        inputs_.pop_back();
        points_ = std::vector<detail::compact_point>();
    }

    std::vector<task_input> inputs_;
    std::vector<detail::compact_point> points_;  // of the input being added
    std::vector<detail::recorded_side> sides_;   // of every input so far, as recorded
    std::vector<detail::side_key> clients_;      // the client sides' keys
    std::vector<detail::side_key> servers_;      // the server sides' keys
    detail::side_tables tables_;                 // the trace ids the keys number, the sides' places
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

// Calls `each(c, nc, s, ns)` for every call key (trace, call id) of the
// sorted keys `clients` and `servers`, in key order: its client sides are
// clients[c, c + nc), its server sides servers[s, s + ns) (either may be
// none).
template <class Each>
void for_each_call(const std::vector<side_key>& clients, std::size_t c, std::size_t c_end,
                   const std::vector<side_key>& servers, std::size_t s, std::size_t s_end, Each&& each) {
    const auto key = [](const side_key& k) { return std::make_pair(k.trace, k.call_id); };
    while (c < c_end || s < s_end) {
        const bool take_client = s == s_end || (c < c_end && key(clients[c]) <= key(servers[s]));
        const auto k = take_client ? key(clients[c]) : key(servers[s]);
        std::size_t nc = 0, ns = 0;
        while (c + nc < c_end && key(clients[c + nc]) == k) ++nc;
        while (s + ns < s_end && key(servers[s + ns]) == k) ++ns;
        each(c, nc, s, ns);
        c += nc;
        s += ns;
    }
}

// Puts `v` in the order `old_of` gives (element k becomes the old element
// old_of[k]) in place, one cycle of the permutation at a time.
template <class T>
void apply_order(std::vector<T>& v, const std::vector<std::uint32_t>& old_of) {
    std::vector<bool> placed(v.size(), false);
    for (std::uint32_t start = 0; start < v.size(); ++start) {
        if (placed[start]) continue;
        T moving = std::move(v[start]);
        std::uint32_t k = start;
        for (;;) {
            placed[k] = true;
            const std::uint32_t from = old_of[k];
            if (from == start) {
                v[k] = std::move(moving);
                break;
            }
            v[k] = std::move(v[from]);
            k = from;
        }
    }
}

}  // namespace detail

// Joins one task at a time (rules 2 and 4 to 8): its sides are copied in,
// its calls made, nested, placed and put in order; then they are appended
// to the forest (task_detail::trees) or only counted. Indexes of sides and
// nodes are the task's own until then.
struct task_joiner::build {
    build(task_forest& forest, bool keeping, const std::vector<detail::recorded_side>& recorded_sides,
          const detail::place_table& side_places, const std::vector<detail::trace_id>& ids)
        : f(forest), keep(keeping), recorded(recorded_sides), places(side_places), trace_ids(ids) {}

    task_forest& f;  // inputs and alignment made; with `keep`, f.sides too
    const bool keep;
    const std::vector<detail::recorded_side>& recorded;  // the sides, unless `keep`
    const detail::place_table& places;                   // of the recorded sides
    const std::vector<detail::trace_id>& trace_ids;      // by rank
    // Where each task begins (its earliest root): the tasks go by it.
    std::vector<std::int64_t> task_begin;

    // The task at hand.
    std::uint32_t trace = 0;  // its trace id's rank
    std::vector<task_side> sides;
    std::vector<std::uint32_t> side_of;  // per side, its index in the joiner's sides (then f.sides)
    std::vector<task_node> nodes;        // client, server: indexes into `sides`
    std::vector<std::uint32_t> parent;   // per node
    struct copy_group {                  // rule 4's copies of one call id wait
        std::uint64_t call_id;
        std::vector<std::uint32_t> clients, servers;
    };
    std::vector<copy_group> copies;
    std::size_t copy_count = 0;
    copy_group group;  // the sides of a call id with no copies

    // Work space of join_task, kept from task to task.
    struct entry {
        std::uint32_t input;
        std::uint64_t span;
        std::uint64_t begin;
        std::uint32_t node;
    };
    struct interval {
        std::int64_t begin, end;
        std::uint32_t node;
    };
    struct top2 {
        std::int64_t end1, end2;
        std::uint32_t node1;
    };
    std::vector<entry> handlers;
    std::vector<interval> opaque, requests;
    std::vector<top2> latest_ends;
    std::vector<std::uint8_t> state;
    std::vector<std::uint32_t> path, first_child, kids, fill, stack, roots, new_index, old_of, depth;
    std::vector<std::int64_t> server_shift;
    std::vector<bool> seen;  // per input

    std::uint32_t domain(std::uint32_t input) const { return f.alignment.domain_of[input]; }
    std::int64_t aligned_begin(const task_side& s) const { return f.alignment.to_timeline(s.input, s.begin_recorded); }
    std::int64_t aligned_end(const task_side& s) const { return f.alignment.to_timeline(s.input, s.end_recorded); }
    const task_side& client_side(const task_node& n) const { return n.client != no_task_side ? sides[n.client] : none(); }
    const task_side& server_side(const task_node& n) const { return n.server != no_task_side ? sides[n.server] : none(); }
    static const task_side& none() {
        static const task_side absent;
        return absent;
    }

    // Copies in the side the joiner numbered `index`; returns its index here.
    std::uint32_t take_side(std::uint32_t index) {
        sides.push_back(keep ? f.sides[index] : detail::to_task_side(recorded[index], places));
        side_of.push_back(index);
        return static_cast<std::uint32_t>(sides.size() - 1);
    }

    std::uint32_t add_node(task_node_kind kind, std::uint64_t call_id, std::uint32_t client, std::uint32_t server) {
        task_node n;
        n.kind = kind;
        n.call_id = call_id;
        n.client = client;
        n.server = server;
        for (const task_side* side : {&client_side(n), &server_side(n)}) {
            if (!side->present()) continue;
            if (!side->has_begin) n.flags |= task_flag::begin_unknown;
            if (!side->has_end) n.flags |= task_flag::open;
        }
        nodes.push_back(n);
        parent.push_back(no_task_node);
        return static_cast<std::uint32_t>(nodes.size() - 1);
    }

    // Rule 2 for the calls of trace `rank`: clients[c0, c1) and servers[s0,
    // s1) (sorted keys) hold its sides. The copies wait for rule 4.
    void make_calls(std::uint32_t rank, const std::vector<detail::side_key>& clients, std::size_t c0,
                    std::size_t c1, const std::vector<detail::side_key>& servers, std::size_t s0, std::size_t s1) {
        trace = rank;
        sides.clear();
        side_of.clear();
        nodes.clear();
        parent.clear();
        copy_count = 0;
        const auto take = [&](const detail::side_key* k, std::size_t n, std::vector<std::uint32_t>& into) {
            into.clear();
            for (std::size_t i = 0; i < n; ++i) into.push_back(take_side(k[i].side));
        };
        detail::for_each_call(clients, c0, c1, servers, s0, s1, [&](std::size_t c, std::size_t nc, std::size_t s,
                                                                      std::size_t ns) {
            const std::uint64_t call_id = nc != 0 ? clients[c].call_id : servers[s].call_id;
            const bool copied = call_id != 0 && nc != 0 && ns != 0 && (nc > 1 || ns > 1);
            if (copied && copies.size() == copy_count) copies.emplace_back();
            copy_group& g = copied ? copies[copy_count++] : group;
            g.call_id = call_id;
            take(clients.data() + c, nc, g.clients);
            take(servers.data() + s, ns, g.servers);
            if (copied) return;
            if (call_id == 0) {  // no context came in (client points never have call id 0)
                for (const std::uint32_t server : g.servers) add_node(task_node_kind::root, 0, no_task_side, server);
            } else if (ns == 0) {
                for (const std::uint32_t client : g.clients) {
                    const std::uint32_t n = add_node(task_node_kind::opaque, call_id, client, no_task_side);
                    if (nc > 1) nodes[n].flags |= task_flag::duplicate;
                }
            } else if (nc == 0) {
                for (const std::uint32_t server : g.servers) {
                    const std::uint32_t n = add_node(task_node_kind::unlinked, call_id, no_task_side, server);
                    if (ns > 1) nodes[n].flags |= task_flag::duplicate;
                }
            } else {
                add_node(task_node_kind::call, call_id, g.clients[0], g.servers[0]);
            }
        });
    }

    // Rule 4: the copies of one call id, paired on the timeline.
    void pair_copies(copy_group& g) {
        std::vector<std::uint32_t>& clients = g.clients;
        std::vector<std::uint32_t>& servers = g.servers;
        const auto by_begin = [&](std::uint32_t a, std::uint32_t b) {
            const task_side& x = sides[a];
            const task_side& y = sides[b];
            const std::int64_t bx = aligned_begin(x), by = aligned_begin(y);
            return bx != by ? bx < by : x.input < y.input;
        };
        std::stable_sort(clients.begin(), clients.end(), by_begin);
        std::stable_sort(servers.begin(), servers.end(), by_begin);
        std::vector<bool> used(clients.size(), false);
        const bool small = clients.size() * servers.size() <= (1u << 16);
        std::size_t in_order = 0;
        for (const std::uint32_t s : servers) {
            std::size_t pick = clients.size();
            if (small) {  // the latest copy sent before it arrived, else the earliest left
                const std::int64_t arrived = aligned_begin(sides[s]);
                for (std::size_t k = clients.size(); k-- > 0;) {
                    if (!used[k] && aligned_begin(sides[clients[k]]) <= arrived) {
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
                n = add_node(task_node_kind::call, g.call_id, clients[pick], s);
            } else {
                n = add_node(task_node_kind::unlinked, g.call_id, no_task_side, s);
            }
            nodes[n].flags |= task_flag::duplicate;
        }
        for (std::size_t k = 0; k < clients.size(); ++k) {
            if (used[k]) continue;
            const std::uint32_t n = add_node(task_node_kind::opaque, g.call_id, clients[k], no_task_side);
            nodes[n].flags |= task_flag::duplicate;
        }
    }

    // Rule 5: parents by span.
    void link_by_span() {
        std::vector<entry>& servers = handlers;
        servers.clear();
        for (std::uint32_t i = 0; i < nodes.size(); ++i) {
            const task_side& s = server_side(nodes[i]);
            if (s.present()) servers.push_back({s.input, s.span_id, s.begin_recorded, i});
        }
        const auto key = [](const entry& e) { return std::make_pair(e.input, e.span); };
        std::sort(servers.begin(), servers.end(), [&](const entry& a, const entry& b) {
            return key(a) != key(b) ? key(a) < key(b) : a.begin != b.begin ? a.begin < b.begin : a.node < b.node;
        });
        for (std::uint32_t i = 0; i < nodes.size(); ++i) {
            const task_side& c = client_side(nodes[i]);
            if (!c.present()) continue;
            const entry probe{c.input, c.span_id, 0, 0};
            auto it = std::lower_bound(servers.begin(), servers.end(), probe,
                                       [&](const entry& a, const entry& b) { return key(a) < key(b); });
            // The handler running at t1 (the latest to start by then), else the first one.
            std::uint32_t best = no_task_node, first = no_task_node;
            for (; it != servers.end() && key(*it) == key(probe); ++it) {
                if (it->node == i) continue;
                if (first == no_task_node) first = it->node;
                const task_side& s = server_side(nodes[it->node]);
                if (s.begin_recorded <= c.begin_recorded && c.begin_recorded <= s.end_recorded) best = it->node;
            }
            parent[i] = best != no_task_node ? best : first;
        }
    }

    // Rule 5's inference: an unlinked request inside exactly one opaque call.
    void infer_via_unprofiled() {
        opaque.clear();
        requests.clear();
        for (std::uint32_t i = 0; i < nodes.size(); ++i) {
            const task_node& n = nodes[i];
            const task_side& client = client_side(n);
            const task_side& server = server_side(n);
            if (n.kind == task_node_kind::opaque && client.has_begin && client.has_end) {
                opaque.push_back({aligned_begin(client), aligned_end(client), i});
            } else if (n.kind == task_node_kind::unlinked && n.call_id != 0 && !n.has(task_flag::duplicate) &&
                       server.has_begin && server.has_end) {
                requests.push_back({aligned_begin(server), aligned_end(server), i});
            }
        }
        if (opaque.empty() || requests.empty()) return;
        const auto order = [](const interval& a, const interval& b) {
            return std::tie(a.begin, a.node) < std::tie(b.begin, b.node);
        };
        std::sort(opaque.begin(), opaque.end(), order);
        // Per prefix of the opaque calls (by begin): the two latest ends, to
        // count up to two calls containing an interval.
        latest_ends.resize(opaque.size());
        for (std::size_t k = 0; k < opaque.size(); ++k) {
            top2 t = k > 0 ? latest_ends[k - 1] : top2{detail::time_min, detail::time_min, no_task_node};
            if (opaque[k].end > t.end1) {
                t.end2 = t.end1;
                t.end1 = opaque[k].end;
                t.node1 = opaque[k].node;
            } else if (opaque[k].end > t.end2) {
                t.end2 = opaque[k].end;
            }
            latest_ends[k] = t;
        }
        for (const interval& r : requests) {
            // The last opaque call beginning at or before r.
            const interval probe{r.begin, 0, no_task_node};
            const auto after = std::upper_bound(opaque.begin(), opaque.end(), probe, order);
            if (after == opaque.begin()) continue;
            const top2& t = latest_ends[static_cast<std::size_t>(after - opaque.begin()) - 1];
            if (t.end1 >= r.end && t.end2 < r.end) {
                nodes[r.node].kind = task_node_kind::via_unprofiled;
                parent[r.node] = t.node1;
            }
        }
    }

    // Cuts the parent links that close cycles (damaged traces only).
    void break_cycles() {
        state.assign(nodes.size(), 0);  // 0 new, 1 on the current path, 2 done
        for (std::uint32_t i = 0; i < nodes.size(); ++i) {
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
                nodes[lowest].flags |= task_flag::cycle;
            }
            for (const std::uint32_t u : path) state[u] = 2;
        }
    }

    // Rule 6, for node `i` whose parent is placed.
    void place(std::uint32_t i) {
        task_node& n = nodes[i];
        const std::uint32_t p = parent[i];
        std::int64_t client_shift = 0;
        if (n.client != no_task_side) {
            task_side& client = sides[n.client];
            if (p != no_task_node) {
                const task_side& caller = server_side(nodes[p]);
                if (caller.present() && caller.input == client.input) client_shift = server_shift[p];
            }
            client.begin_ns = detail::sat_add(aligned_begin(client), client_shift);
            client.end_ns = detail::sat_add(aligned_end(client), client_shift);
        }
        if (n.server != no_task_side) {
            task_side& server = sides[n.server];
            // The interval it must fit in: its client's, or for an inferred
            // request the opaque call around it.
            const task_side* window = n.client != no_task_side ? &sides[n.client] : nullptr;
            std::int64_t window_shift = client_shift;
            if (!window && n.kind == task_node_kind::via_unprofiled && p != no_task_node) {
                window = &client_side(nodes[p]);
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
        const task_side& shown = n.client != no_task_side ? sides[n.client] : sides[n.server];
        n.begin_ns = shown.begin_ns;
        n.end_ns = std::max(shown.end_ns, shown.begin_ns);
    }

    // Rules 4 to 8 for the task whose calls make_calls made; then the task
    // is counted into `k` and, with `keep`, appended to the forest (its
    // nodes' parents and its roots relative to its first node, for
    // finish() to put in order).
    void join_task(task_counts& k) {
        for (std::size_t g = 0; g < copy_count; ++g) pair_copies(copies[g]);

        // 5. Nesting.
        link_by_span();
        infer_via_unprofiled();
        break_cycles();

        // Children lists.
        const std::uint32_t count = static_cast<std::uint32_t>(nodes.size());
        first_child.assign(count + 1, 0);
        kids.resize(count);
        for (std::uint32_t i = 0; i < count; ++i) {
            if (parent[i] != no_task_node) ++first_child[parent[i] + 1];
        }
        for (std::uint32_t i = 0; i < count; ++i) first_child[i + 1] += first_child[i];
        fill.assign(first_child.begin(), first_child.end() - 1);
        for (std::uint32_t i = 0; i < count; ++i) {
            if (parent[i] != no_task_node) kids[fill[parent[i]]++] = i;
        }

        // 6. Placing, top down from the roots (any order that places a
        // parent before its children).
        server_shift.assign(count, 0);
        for (std::uint32_t r = 0; r < count; ++r) {
            if (parent[r] != no_task_node) continue;
            stack.assign(1, r);
            while (!stack.empty()) {
                const std::uint32_t i = stack.back();
                stack.pop_back();
                place(i);
                for (std::uint32_t c = first_child[i]; c < first_child[i + 1]; ++c) stack.push_back(kids[c]);
            }
        }

        // Children by begin, then call id, then index: deterministic.
        const auto earlier = [&](std::uint32_t x, std::uint32_t y) {
            const task_node& a = nodes[x];
            const task_node& d = nodes[y];
            if (a.begin_ns != d.begin_ns) return a.begin_ns < d.begin_ns;
            if (a.call_id != d.call_id) return a.call_id < d.call_id;
            return x < y;
        };
        for (std::uint32_t i = 0; i < count; ++i) {
            std::sort(kids.begin() + first_child[i], kids.begin() + first_child[i + 1], earlier);
        }

        // Self time: the duration minus the union of the children's
        // intervals, each clipped to the node's (children come by begin).
        for (std::uint32_t i = 0; i < count; ++i) {
            task_node& n = nodes[i];
            std::uint64_t covered = 0;
            std::int64_t reach = n.begin_ns;  // the union so far ends here
            for (std::uint32_t c = first_child[i]; c < first_child[i + 1]; ++c) {
                const task_node& ch = nodes[kids[c]];
                const std::int64_t from = std::max(ch.begin_ns, reach);
                const std::int64_t to = std::min(ch.end_ns, n.end_ns);
                if (to > from) {
                    covered += detail::length(from, to);
                    reach = to;
                }
            }
            const std::uint64_t duration = detail::length(n.begin_ns, n.end_ns);
            n.self_ns = static_cast<std::int64_t>(duration - std::min<std::uint64_t>(covered, duration));
        }

        // 8. The task's trees in depth-first order, roots by begin.
        roots.clear();
        for (std::uint32_t i = 0; i < count; ++i) {
            if (parent[i] == no_task_node) roots.push_back(i);
        }
        std::sort(roots.begin(), roots.end(), earlier);
        new_index.assign(count, no_task_node);
        old_of.clear();  // new index -> old
        depth.assign(count, 0);
        for (const std::uint32_t root : roots) {
            stack.assign(1, root);
            while (!stack.empty()) {
                const std::uint32_t i = stack.back();
                stack.pop_back();
                new_index[i] = static_cast<std::uint32_t>(old_of.size());
                old_of.push_back(i);
                for (std::uint32_t c = first_child[i + 1]; c-- > first_child[i];) {
                    depth[kids[c]] = depth[i] + 1;
                    stack.push_back(kids[c]);
                }
            }
        }
        // Nodes a damaged trace left outside every tree cannot exist: each
        // has a root above it once the cycles are cut.

        task_tree tree;
        tree.trace_high = trace_ids[trace].first;
        tree.trace_low = trace_ids[trace].second;
        tree.node_count = count;
        tree.begin_ns = detail::time_max;
        tree.end_ns = detail::time_min;
        seen.assign(f.inputs.size(), false);
        for (std::uint32_t j = 0; j < count; ++j) {
            const std::uint32_t i = old_of[j];
            task_node& n = nodes[i];
            n.parent = parent[i] == no_task_node ? no_task_node : new_index[parent[i]];
            n.depth = depth[i];
            n.children_count = first_child[i + 1] - first_child[i];
            if (n.parent == no_task_node) tree.roots.push_back(j);
            tree.begin_ns = std::min(tree.begin_ns, n.begin_ns);
            tree.end_ns = std::max(tree.end_ns, n.end_ns);
            tree.flags |= n.flags;
            for (const task_side* side : {&client_side(n), &server_side(n)}) {
                if (side->present() && !seen[side->input]) {
                    seen[side->input] = true;
                    ++tree.processes;
                }
            }
            ++k.calls;
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
        ++k.tasks;
        if (!keep) return;
        std::stable_sort(tree.roots.begin(), tree.roots.end(), [&](std::uint32_t x, std::uint32_t y) {
            return nodes[old_of[x]].begin_ns < nodes[old_of[y]].begin_ns;
        });
        tree.first_node = static_cast<std::uint32_t>(f.nodes.size());
        for (std::uint32_t j = 0; j < count; ++j) {
            task_node n = nodes[old_of[j]];
            for (std::uint32_t* side : {&n.client, &n.server}) {
                if (*side == no_task_side) continue;
                task_side& placed = f.sides[side_of[*side]];
                placed.begin_ns = sides[*side].begin_ns;
                placed.end_ns = sides[*side].end_ns;
                *side = side_of[*side];
            }
            f.nodes.push_back(n);
        }
        task_begin.push_back(nodes[roots.front()].begin_ns);
        f.tasks.push_back(std::move(tree));
    }
};

inline task_forest task_joiner::finish(task_detail kept) {
    task_forest f;
    f.inputs = std::move(inputs_);
    inputs_.clear();
    f.counts = counts_;
    counts_ = {};
    detail::label_inputs(f.inputs);
    f.strings = strings_.take();

    // 1. Sides (paired as each input was added) and their keys, trace ids
    // numbered by rank; the keys sorted.
    std::vector<detail::recorded_side> recorded = std::move(sides_);
    std::vector<detail::side_key> clients = std::move(clients_);
    std::vector<detail::side_key> servers = std::move(servers_);
    sides_ = std::vector<detail::recorded_side>();
    clients_ = std::vector<detail::side_key>();
    servers_ = std::vector<detail::side_key>();
    const detail::place_table places = std::move(tables_.places);
    tables_.places = detail::place_table();
    std::vector<detail::trace_id> trace_ids;
    {
        std::vector<std::uint32_t> rank;
        trace_ids = tables_.traces.take_sorted(rank);
        for (detail::side_key& k : clients) k.trace = rank[k.trace];
        for (detail::side_key& k : servers) k.trace = rank[k.trace];
    }
    const auto by_key = [&](const detail::side_key& a, const detail::side_key& c) {
        if (a.trace != c.trace) return a.trace < c.trace;
        if (a.call_id != c.call_id) return a.call_id < c.call_id;
        const detail::recorded_side& x = recorded[a.side];
        const detail::recorded_side& y = recorded[c.side];
        const std::uint32_t x_input = places.input(x.place), y_input = places.input(y.place);
        if (x_input != y_input) return x_input < y_input;
        return x.begin_recorded < y.begin_recorded;
    };
    std::sort(clients.begin(), clients.end(), by_key);
    std::sort(servers.begin(), servers.end(), by_key);

    // 3. Clocks: the samples are the calls with one copy of each side
    // (rule 4's copies wait) and all four times. Meanwhile, the calls are
    // counted: one per server side, and per client side left over.
    std::size_t calls = 0;
    {
        std::vector<clock_sample> samples;
        const auto sample = [&](std::size_t c, std::size_t nc, std::size_t s, std::size_t ns) {
            calls += std::max(nc, ns);
            if (nc != 1 || ns != 1) return;
            const detail::recorded_side& client = recorded[clients[c].side];
            const detail::recorded_side& server = recorded[servers[s].side];
            if (client.has_begin && client.has_end && server.has_begin && server.has_end) {
                samples.push_back({places.input(client.place), places.input(server.place), client.begin_recorded,
                                   server.begin_recorded, server.end_recorded, client.end_recorded});
            }
        };
        detail::for_each_call(clients, 0, clients.size(), servers, 0, servers.size(), sample);
        std::vector<std::string> domains;
        domains.reserve(f.inputs.size());
        for (const task_input& in : f.inputs) domains.push_back(in.clock_domain);
        f.alignment = align_clocks(domains, samples);
    }

    // The model's sides, from the recorded ones (then freed).
    const bool keep = kept == task_detail::trees;
    if (keep) {
        f.sides.reserve(recorded.size());
        for (const detail::recorded_side& s : recorded) f.sides.push_back(detail::to_task_side(s, places));
        recorded = std::vector<detail::recorded_side>();
        f.nodes.reserve(calls);
        f.tasks.reserve(trace_ids.size());
    }

    // 2, 4 to 8: task after task (the keys of one trace id are together).
    build b(f, keep, recorded, places, trace_ids);
    task_counts& k = f.counts;
    for (std::size_t c = 0, s = 0; c < clients.size() || s < servers.size();) {
        const std::uint32_t rank = s == servers.size() || (c < clients.size() && clients[c].trace < servers[s].trace)
                                       ? clients[c].trace
                                       : servers[s].trace;
        std::size_t c_end = c, s_end = s;
        while (c_end < clients.size() && clients[c_end].trace == rank) ++c_end;
        while (s_end < servers.size() && servers[s_end].trace == rank) ++s_end;
        b.make_calls(rank, clients, c, c_end, servers, s, s_end);
        b.join_task(k);
        c = c_end;
        s = s_end;
    }
    if (!keep) return f;
    clients = std::vector<detail::side_key>();
    servers = std::vector<detail::side_key>();

    // Tasks by begin (their earliest root), then trace id (they were made in
    // its order); each task's nodes move with it.
    std::vector<std::uint32_t> order(f.tasks.size());
    for (std::uint32_t t = 0; t < order.size(); ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t x, std::uint32_t y) { return b.task_begin[x] < b.task_begin[y]; });
    {
        std::vector<std::uint32_t> old_of;  // new node index -> old
        old_of.reserve(f.nodes.size());
        for (const std::uint32_t t : order) {
            const task_tree& tree = f.tasks[t];
            for (std::uint32_t j = 0; j < tree.node_count; ++j) old_of.push_back(tree.first_node + j);
        }
        detail::apply_order(f.nodes, old_of);
        detail::apply_order(f.tasks, order);
    }
    // Node and children indexes, from each task's own to the forest's.
    std::uint32_t first = 0;
    for (std::uint32_t t = 0; t < f.tasks.size(); ++t) {
        task_tree& tree = f.tasks[t];
        tree.first_node = first;
        for (std::uint32_t& root : tree.roots) root += first;
        for (std::uint32_t j = first; j < first + tree.node_count; ++j) {
            task_node& n = f.nodes[j];
            n.task = t;
            if (n.parent != no_task_node) n.parent += first;
        }
        first += tree.node_count;
    }
    // A node's children, by begin, got the next indexes after it in that
    // order (depth first): they are the nodes naming it their parent, in
    // index order.
    std::uint32_t next = 0;
    for (task_node& n : f.nodes) {
        n.children_begin = next;
        next += n.children_count;
        n.children_count = 0;
    }
    f.children.assign(next, 0);
    for (std::uint32_t j = 0; j < f.nodes.size(); ++j) {
        const std::uint32_t p = f.nodes[j].parent;
        if (p == no_task_node) continue;
        task_node& up = f.nodes[p];
        f.children[up.children_begin + up.children_count++] = j;
    }
    return f;
}

}  // namespace loupe::report
