// Test helper: traces of processes that called each other, built in memory
// (the session's identity and its TASK points; no events), for the task
// join and its reports (report/task_join.hpp).
#pragma once

#include <loupe/format/reader.hpp>
#include <loupe/report/task_tree.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace loupe_test {

/// A trace id for tests: {high, low}.
struct test_trace_id {
    std::uint64_t high = 0;
    std::uint64_t low = 0;
};

/// One process's trace: a complete session from `start` to `end` on its own
/// clock, in clock domain `domain` ("" for none).
inline loupe::trace process_trace(const std::string& program, std::uint32_t pid, const std::string& domain,
                                  std::uint64_t start = 0, std::uint64_t end = 1'000'000'000,
                                  const std::string& host = "host") {
    loupe::trace t;
    t.session.program = program;
    t.session.name = program + "-session";
    t.session.pid = pid;
    t.session.host = host;
    t.session.clock_domain = domain;
    t.session.start_ns = start;
    t.complete = true;
    t.end.end_ns = end;
    return t;
}

/// Appends a task point to `t`.
inline void add_point(loupe::trace& t, loupe::task_point_kind kind, std::uint64_t time, test_trace_id trace,
                      std::uint64_t call_id, std::uint64_t span_id, const std::string& name,
                      std::uint64_t thread = 1, const std::string& peer = {}) {
    loupe::trace_task_point p;
    p.kind = kind;
    p.thread_id = thread;
    p.time_ns = time;
    p.trace_high = trace.high;
    p.trace_low = trace.low;
    p.call_id = call_id;
    p.span_id = span_id;
    p.name = name;
    p.peer = peer;
    p.tagged = kind == loupe::task_point_kind::call_out || kind == loupe::task_point_kind::return_in;
    t.task_points.push_back(p);
}

/// The client side of a call: CALL_OUT at t1 (from span `span`), RETURN_IN at t4.
inline void client_call(loupe::trace& t, test_trace_id trace, std::uint64_t call_id, std::uint64_t span,
                        std::uint64_t t1, std::uint64_t t4, const std::string& name, std::uint64_t thread = 1,
                        const std::string& peer = {}) {
    add_point(t, loupe::task_point_kind::call_out, t1, trace, call_id, span, name, thread, peer);
    add_point(t, loupe::task_point_kind::return_in, t4, trace, call_id, span, name, thread, peer);
}

/// The server side of a call: REQUEST_IN at t2, RETURN_OUT at t3, the
/// handler running as span `span`.
inline void server_call(loupe::trace& t, test_trace_id trace, std::uint64_t call_id, std::uint64_t span,
                        std::uint64_t t2, std::uint64_t t3, const std::string& name, std::uint64_t thread = 1) {
    add_point(t, loupe::task_point_kind::request_in, t2, trace, call_id, span, name, thread);
    add_point(t, loupe::task_point_kind::return_out, t3, trace, call_id, span, name, thread);
}

/// The trees of task `task` as lines: two spaces per depth, then the
/// process, the call's name, "<- caller" when it has one, and the kind
/// when it is not a plain call ("A GET /", "  B /b <- A", "    [e] /e
/// (opaque)").
inline std::vector<std::string> tree_lines(const loupe::report::task_forest& f, std::size_t task) {
    std::vector<std::string> out;
    const loupe::report::task_tree& tree = f.tasks[task];
    for (std::uint32_t i = tree.first_node; i < tree.first_node + tree.node_count; ++i) {
        const loupe::report::task_node& n = f.nodes[i];
        std::string line(2 * n.depth, ' ');
        line += f.process_of(n) + " " + f.name_of(n);
        if (f.client_side(n).present()) line += " <- " + f.caller_of(n);
        if (n.kind != loupe::report::task_node_kind::call) {
            line += std::string(" (") + loupe::report::task_node_kind_name(n.kind) + ")";
        }
        out.push_back(line);
    }
    return out;
}

}  // namespace loupe_test
