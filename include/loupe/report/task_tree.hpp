// The task model (US 9,619,273: one task followed through several
// processes): the calls of every task found in a set of traces, joined
// across processes into trees on one timeline. Built by join_tasks
// (task_join.hpp); read by the task reports (task_report.hpp) and by
// add_task_slices (task_slices.hpp) for the viewers.
//
// A task is one W3C trace id. A node is one call of it:
// - its client side: CALL_OUT (t1) to RETURN_IN (t4) in the caller's trace;
// - its server side: REQUEST_IN (t2) to RETURN_OUT (t3) in the callee's;
// joined on (trace id, call id). A node's parent is the call whose server
// side made it: the server side, in the caller's trace, whose span is the
// CALL_OUT's span. Which nodes there are (task_node_kind) and the rules that
// make them are in task_join.hpp.
//
// Times. Every side keeps its times as recorded (on its trace's clock) and
// as placed on the merged timeline (clock_alignment.hpp), where the server
// side of a call may have been moved to fit inside what its client saw
// (task_flag::clamped). A node's interval is its client's [t1, t4] when it
// has a client side (the duration its caller saw, network included), else
// its server's [t2, t3]. Its self time is its duration minus the union of
// its children's intervals (clipped to its own), so that children running
// in parallel are counted once.
//
// Memory: 72 bytes per call and 80 per side (each stored once: a call has
// one or two); names and peers are interned.
// Thread-safety: a task_forest is a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loupe/report/clock_alignment.hpp"
#include "loupe/report/detail/task_time.hpp"

namespace loupe::report {

inline constexpr std::uint32_t no_task_node = 0xffffffffu;
inline constexpr std::uint32_t no_input = 0xffffffffu;
inline constexpr std::uint32_t no_task_side = 0xffffffffu;

enum class task_node_kind : std::uint8_t {
    call,            ///< both sides: the client's call and the server's handling of it
    opaque,          ///< client side only: no input holds a request with its call id (the callee is not profiled)
    root,            ///< server side only, the request carried no context (call id 0): the task starts there
    unlinked,        ///< server side only, its caller is in no input: a root of its own, never guessed
    via_unprofiled,  ///< server side only, nested under the one opaque call that contains it (task_join.hpp)
};

/// "call", "opaque", "root", "unlinked", "via_unprofiled".
inline const char* task_node_kind_name(task_node_kind k) noexcept {
    switch (k) {
        case task_node_kind::call: return "call";
        case task_node_kind::opaque: return "opaque";
        case task_node_kind::root: return "root";
        case task_node_kind::unlinked: return "unlinked";
        case task_node_kind::via_unprofiled: return "via_unprofiled";
    }
    return "call";
}

/// Bits of task_node::flags.
namespace task_flag {
/// The server side was moved to keep t1 ≤ t2′ ≤ t3′ ≤ t4 (task_node::shift_ns
/// says by how much, relative to what its process's offset gave).
constexpr std::uint16_t clamped = 1;
/// A side has no end (no RETURN_IN or RETURN_OUT: the call was in flight
/// when its trace ended): it is taken to last until that trace's end, so its
/// duration is a lower bound.
constexpr std::uint16_t open = 2;
/// A side has no beginning (a RETURN_IN or RETURN_OUT whose first point is
/// not in the trace: the session started during the call): it is taken to
/// start at the trace's start.
constexpr std::uint16_t begin_unknown = 4;
/// Its call id came in several copies (a retry resends the same
/// traceparent); the copies were paired in time order.
constexpr std::uint16_t duplicate = 8;
/// Its two sides are in clock domains that no call related: their times
/// are not comparable, and nothing was clamped.
constexpr std::uint16_t unaligned = 16;
/// The server side lasted longer than the client saw (clocks running at
/// different rates): it was placed to start with the client, and ends after it.
constexpr std::uint16_t overlong = 32;
/// Its parent link closed a cycle (only in damaged traces): it was made a root.
constexpr std::uint16_t cycle = 64;
}  // namespace task_flag

/// One side of a call: the two points one process recorded.
struct task_side {
    std::uint64_t thread_id = 0;       ///< thread of the first point (CALL_OUT, REQUEST_IN; else the return's)
    std::uint64_t begin_recorded = 0;  ///< t1 or t2, on the trace's clock
    std::uint64_t end_recorded = 0;    ///< t4 or t3, on the trace's clock
    std::int64_t begin_ns = 0;         ///< placed on the merged timeline
    std::int64_t end_ns = 0;
    std::uint64_t span_id = 0;       ///< client: the caller's span; server: the handler's span
    std::uint64_t echoed_id = 0;     ///< from the return point (trace_task_point::echoed_id)
    std::int64_t status = 0;         ///< from the return point
    std::uint32_t input = no_input;  ///< index of the trace; no_input: this side is not in any input
    std::uint32_t name = 0;          ///< index into task_forest::strings (0: "")
    std::uint32_t peer = 0;          ///< likewise
    bool has_begin = false;          ///< its first point is in the trace
    bool has_end = false;            ///< its return point is in the trace
    bool tagged = false;             ///< client: the call carried the context
    bool present() const noexcept { return input != no_input; }
};

struct task_node {
    task_node_kind kind = task_node_kind::call;
    std::uint16_t flags = 0;  ///< task_flag bits
    std::uint32_t task = 0;   ///< index into task_forest::tasks
    std::uint32_t parent = no_task_node;
    std::uint32_t depth = 0;  ///< 0 for a root
    /// Children: task_forest::children[children_begin, + children_count),
    /// by placed begin time.
    std::uint32_t children_begin = 0;
    std::uint32_t children_count = 0;
    /// Its sides: indexes into task_forest::sides (task_forest::client_side
    /// and server_side read them); no_task_side: it has none of that kind.
    std::uint32_t client = no_task_side;
    std::uint32_t server = no_task_side;
    std::uint64_t call_id = 0;  ///< the id on the wire (0 for a root)
    std::int64_t begin_ns = 0;  ///< the node's interval on the merged timeline (see the top of this file)
    std::int64_t end_ns = 0;
    std::int64_t self_ns = 0;   ///< duration minus the union of the children's intervals
    std::int64_t shift_ns = 0;  ///< how far the clamp moved the server side (0: not moved)
    std::int64_t duration_ns() const noexcept { return end_ns > begin_ns ? detail::sat_sub(end_ns, begin_ns) : 0; }
    bool has(std::uint16_t flag) const noexcept { return (flags & flag) != 0; }
};

/// One task: a trace id and the trees of its calls.
struct task_tree {
    std::uint64_t trace_high = 0;  ///< W3C trace id, first 16 hex digits
    std::uint64_t trace_low = 0;
    /// Its nodes are task_forest::nodes[first_node, + node_count), each tree
    /// in depth-first order (a parent before its children); roots by begin.
    std::uint32_t first_node = 0;
    std::uint32_t node_count = 0;
    std::vector<std::uint32_t> roots;  ///< node indexes, by begin time
    std::int64_t begin_ns = 0;         ///< earliest begin of its nodes
    std::int64_t end_ns = 0;           ///< latest end
    std::uint32_t processes = 0;       ///< distinct inputs its calls touch
    std::uint16_t flags = 0;           ///< the OR of its nodes' flags
};

/// One input trace, as the task model names it.
struct task_input {
    std::string label;    ///< what reports call it: the program (else the session name, else "pid N"), made unique
    std::string program;  ///< trace_session_info::program
    std::string session;  ///< the session's name
    std::uint32_t pid = 0;
    std::string host;
    std::string clock_domain;
    std::uint64_t start_ns = 0;  ///< session start, on its clock
    std::uint64_t end_ns = 0;    ///< END's time; for a cut-short trace the latest time the join saw
    bool complete = true;
    std::uint64_t events = 0;       ///< events it holds (END's count; of a cut-short trace, those read)
    std::uint64_t task_points = 0;  ///< TASK records it holds
};

/// Counts over every task (what `loupe merge` summarizes).
struct task_counts {
    std::uint64_t points = 0;          ///< task points read
    std::uint64_t points_ignored = 0;  ///< points with a zero trace id, or a client point with call id 0
    std::uint64_t tasks = 0;
    std::uint64_t calls = 0;  ///< nodes
    std::uint64_t joined = 0;  ///< kind call
    std::uint64_t opaque = 0;
    std::uint64_t roots = 0;  ///< kind root
    std::uint64_t unlinked = 0;
    std::uint64_t via_unprofiled = 0;
    std::uint64_t clamped = 0;
    std::uint64_t open = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t unaligned = 0;
    std::uint64_t cycles = 0;
};

/// Every task of a set of traces (see the top of this file).
struct task_forest {
    std::vector<task_input> inputs;
    clock_alignment alignment;
    std::vector<std::string> strings;  ///< call names and peers; strings[0] is ""
    std::vector<task_node> nodes;      ///< per task (tasks order), depth-first
    std::vector<task_side> sides;      ///< the nodes' sides, each stored once (in no particular order)
    std::vector<std::uint32_t> children;  ///< see task_node::children_begin
    std::vector<task_tree> tasks;       ///< by begin time, then trace id
    task_counts counts;

    const std::string& text(std::uint32_t id) const noexcept { return strings[id < strings.size() ? id : 0]; }
    /// sides[i]; for no_task_side (or any index past the end) a side that is
    /// not present().
    const task_side& side(std::uint32_t i) const noexcept {
        static const task_side none;
        return i < sides.size() ? sides[i] : none;
    }
    /// A call's client side (not present() when it has none).
    const task_side& client_side(const task_node& n) const noexcept { return side(n.client); }
    /// A call's server side (not present() when it has none).
    const task_side& server_side(const task_node& n) const noexcept { return side(n.server); }
    /// A call's name: its server side's (the handler's own name for it) when
    /// it has one and it is not empty, else its client side's.
    const std::string& name_of(const task_node& n) const noexcept {
        const task_side& server = server_side(n);
        if (server.present() && server.name != 0) return text(server.name);
        return text(client_side(n).name);
    }
    /// Where a call ran: the label of its server side's input; for an
    /// opaque call, "[peer]" ("[not profiled]" when the client named none).
    std::string process_of(const task_node& n) const {
        const task_side& server = server_side(n);
        if (server.present()) return inputs[server.input].label;
        const std::string& peer = text(client_side(n).peer);
        return "[" + (peer.empty() ? std::string("not profiled") : peer) + "]";
    }
    /// Who made the call: the label of its client side's input, "" when it
    /// has none (a root, an unlinked or inferred request).
    std::string caller_of(const task_node& n) const {
        const task_side& client = client_side(n);
        return client.present() ? inputs[client.input].label : std::string();
    }
    /// The children of node `i`, by begin time.
    const std::uint32_t* children_of(const task_node& n) const noexcept { return children.data() + n.children_begin; }
};

/// The 32 lowercase hex digits of a trace id.
inline std::string trace_id_text(std::uint64_t high, std::uint64_t low) {
    static const char digits[] = "0123456789abcdef";
    std::string s(32, '0');
    for (int i = 0; i < 16; ++i) {
        s[static_cast<std::size_t>(15 - i)] = digits[(high >> (4 * i)) & 15];
        s[static_cast<std::size_t>(31 - i)] = digits[(low >> (4 * i)) & 15];
    }
    return s;
}

}  // namespace loupe::report
