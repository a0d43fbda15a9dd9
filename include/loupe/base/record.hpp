// The record vocabulary: what a session delivers to its sinks (`record` and
// the structs it points at), shared by the sinks (core/sink.hpp) and the
// `.loupe` format (format/). Plain data; no behaviour.
//
// Pointers in a record are valid only during the sink's `write` call; copy
// what you keep. `site` pointers are the exception: they point at static
// call-site metadata and stay valid while the program runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loupe/base/clock_source.hpp"
#include "loupe/base/io_types.hpp"
#include "loupe/base/metric_types.hpp"
#include "loupe/base/param_value.hpp"
#include "loupe/base/site.hpp"

namespace loupe {

class context;  // base/context.hpp

/// A session as its sinks see it.
struct session_info {
    std::string_view name;
    std::uint64_t start_ns = 0;        ///< loupe monotonic clock at start
    std::uint64_t wall_anchor_ns = 0;  ///< CLOCK_REALTIME (ns since 1970) read at start_ns
    std::uint32_t pid = 0;
    clock_source clock = clock_source::steady_clock;
    /// The metrics the session records besides wall time (session_config::metrics),
    /// with their availability on this machine.
    const metric_info* metrics = nullptr;
    std::size_t metric_count = 0;
    std::string_view program;  ///< the recording program's name (no directory); "" when unknown
    std::string_view host;     ///< host name; "" when unknown
    std::string_view boot_id;  ///< the kernel's boot id; "" when unknown
    /// Sessions with equal, non-empty clock domains share one clock: their
    /// times compare directly (core/detail/process_identity.hpp).
    std::string_view clock_domain;
    std::uint64_t process_start_ns = 0;  ///< process start since boot, ns (0: unknown)
};

/// A thread as its sinks see it. A rename shows as a new `name_version` on the
/// thread's next record; sinks that keep thread tables compare it.
struct thread_info {
    std::uint64_t id = 0;      ///< loupe thread id, unique for the process lifetime (≥ 1)
    std::uint64_t os_tid = 0;  ///< kernel thread id (gettid) where available
    std::string_view name;     ///< current name, may be empty
    std::uint32_t name_version = 0;  ///< bumps on every rename
};

enum class record_kind : std::uint8_t {
    session_begin,  ///< first record of a session
    zone,           ///< `where`, `thread`, `begin_ns`..`end_ns`
    instant,        ///< `where`, `thread`, `begin_ns` (= `end_ns`)
    counter,        ///< `where`, `thread`, `begin_ns`, `value`
    dropped,        ///< `thread` (null: threads without a ring), `count` events lost
    session_end,    ///< `end_ns` = stop time, `count` = events delivered, `dropped_total`
    context,        ///< `thread`'s context from `begin_ns` on: `context` (see context.hpp)
    io,             ///< `thread`, `begin_ns`..`end_ns`, `io` (an I/O operation, io.hpp)
    io_resource,    ///< `thread`, `resource`: what later `io` records' resource_id means; sent before a
                    ///< thread's first operation on it in the session (so once per thread, at least)
    metric_totals,  ///< at session end, before `session_end`: `metrics` = what `thread` (or, when
                    ///< `thread` is null, CPU `cpu`) added to each push metric during the session
    param_spec,     ///< `spec`: a parameter spec of the session, sent before the first value it produced
                    ///< (and when the session's specs change); `param_value::spec` refers to its index
    param_apply_error,  ///< `where` (a method site), `apply_error`: a spec that matched the method but
                        ///< did not fit its parameter types; its values there read EnableFailed.
                        ///< Once per (site, spec) and session.
    flow,  ///< `where` (its kind: site_kind::flow starts or continues, flow_end ends), `thread`,
           ///< `begin_ns` (= `end_ns`), `flow_id`: a point of a flow (flow.hpp)
    zone_arg,  ///< `thread`, `begin_ns` (= `end_ns`) = the begin time of the zone it belongs to, `arg`: a
               ///< key and value of that zone (LOUPE_ZONE_ARG), sent before the zone's own record
    task_point,  ///< `thread`, `begin_ns` (= `end_ns`), `task`: an interception point of a call between
                 ///< processes (tasks/call_scopes.hpp)
};

/// Where in a call between processes a task point was taken (US 9,619,273
/// FIG.2 and FIG.3: the four interception points).
enum class task_point_kind : std::uint8_t {
    call_out = 1,    ///< client: the call leaves (t1)
    return_in = 2,   ///< client: its return arrived, or the call ended without one (t4)
    request_in = 3,  ///< server: a request arrived (t2)
    return_out = 4,  ///< server: its return leaves (t3)
};

/// A task point as sinks see it (record_kind::task_point). `call_id` is the
/// id on the wire (the client made it and sent it as traceparent's
/// parent-id; the server received it; 0 on a server: no valid context came
/// in). `span_id` is the local call: on the client, the span of the code
/// that made the call; on the server, the span its handler runs as.
struct task_point {
    task_point_kind kind = task_point_kind::call_out;
    std::uint64_t trace_high = 0;  ///< W3C trace id, first 16 hex digits
    std::uint64_t trace_low = 0;
    std::uint64_t call_id = 0;
    std::uint64_t span_id = 0;
    /// return_in: the id the return echoed (0: none); return_out: the id echoed.
    std::uint64_t echoed_id = 0;
    std::int64_t status = 0;  ///< return points: the result (an HTTP status; < 0 failed)
    bool tagged = false;      ///< client points: the call carried the context
    /// call_out: the destination; request_in: the caller when known. Return
    /// points carry none (their call's first point has it).
    std::string_view peer;
    std::string_view name;  ///< call_out, request_in: the call's name; return points: none
};

/// What a method call carries besides its zone (record_kind::zone whose
/// `method` is set): the values its parameter specs produced at entry, in
/// spec order (ascending `param_value::spec`, then chain order).
struct method_call {
    const param_value* values = nullptr;
    std::size_t value_count = 0;
    bool exceptional = false;  ///< the call left by an exception
    bool has_cpu = false;      ///< a spec asked for `data=cpu`: the thread CPU clock below is set
    std::uint64_t cpu_begin_ns = 0;  ///< thread CPU time at entry (after the chains ran)
    std::uint64_t cpu_end_ns = 0;    ///< thread CPU time at exit
    /// Some of the call's values are missing: they did not fit one call's
    /// 4 KiB payload, or the thread's value stack was too deep for a frame.
    bool values_lost = false;
};

/// A zone argument as sinks see it (record_kind::zone_arg): `value.kind` is
/// boolean, integer, unsigned_integer, floating or string; `value.spec` is 0.
struct zone_argument {
    std::string_view key;
    param_value value;
};

/// A parameter spec as sinks see it (record_kind::param_spec).
struct param_spec_info {
    std::uint32_t index = 0;  ///< what `param_value::spec` refers to; stable for the session
    std::string_view text;    ///< the spec's line as given (session_config::params)
    std::string_view name;    ///< its `name=` (or the compile-time chain's name), may be empty
};

/// A spec that matched a method but could not be bound to its parameters
/// (record_kind::param_apply_error). Timing of the method is still recorded.
struct param_apply_error {
    std::uint32_t spec = 0;  ///< index of the spec
    std::string_view reason;  ///< e.g. "modifier 2 `field(nosuch)`: shop::Item has no field 'nosuch'"
};

/// One record, as a view. Fields that a kind does not use are zero.
struct record {
    record_kind kind = record_kind::zone;
    const session_info* session = nullptr;  ///< always set
    const thread_info* thread = nullptr;
    const site* where = nullptr;
    std::uint64_t begin_ns = 0;
    std::uint64_t end_ns = 0;
    double value = 0.0;
    std::uint64_t count = 0;
    std::uint64_t dropped_total = 0;
    const loupe::context* context = nullptr;  ///< for record_kind::context
    const io_operation* io = nullptr;         ///< for record_kind::io
    const io_resource* resource = nullptr;    ///< for record_kind::io_resource
    /// zone: the delta of each of the session's metrics between the zone's
    /// entry and exit, charged to its thread (none when the session records
    /// no metrics); metric_totals: the totals.
    const metric_value* metrics = nullptr;
    std::size_t metric_count = 0;
    /// metric_totals without a thread: the CPU number (the number of
    /// configured CPUs stands for any CPU beyond them).
    std::uint32_t cpu = 0;
    /// zone of a method site (LOUPE_METHOD, LOUPE_FUNCTION_PARAMS): its
    /// parameter values and exit details; null for other zones.
    const method_call* method = nullptr;
    const param_spec_info* spec = nullptr;         ///< for record_kind::param_spec
    const param_apply_error* apply_error = nullptr;  ///< for record_kind::param_apply_error
    std::uint64_t flow_id = 0;                       ///< for record_kind::flow: never 0
    const zone_argument* arg = nullptr;                  ///< for record_kind::zone_arg
    const task_point* task = nullptr;                    ///< for record_kind::task_point
};

}  // namespace loupe
