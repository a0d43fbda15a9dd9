// A task: one request followed through several processes. Its context is
// what W3C Trace Context carries in and out of every call (traceparent.hpp,
// tracestate.hpp, carrier.hpp): the trace id shared by every call of the
// task, the id of the current call (the span id; `parent-id` on the wire),
// the trace flags, and the vendors' `tracestate` list passed on as received.
//
//     loupe::tasks::task_context call = loupe::tasks::new_task();   // a task starts here
//     loupe::tasks::task_context next = loupe::tasks::child_task(call);  // an outgoing call of it
//
// Ids: new_trace_id() and new_span_id() are never zero, never repeat within
// a process (threads included) and look random across processes and forked
// children (detail/id_generator.hpp). Cost: a thread-local increment and
// two or four 64-bit mixes (a few ns), no system call; the first id of a
// process (and of a forked child) reads the kernel's random bytes once.
// Thread-safety: any thread; the types are values (copy them between
// threads as you like).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/task_context.hpp"
#include "loupe/tasks/detail/id_generator.hpp"

namespace loupe::tasks {

/// A new trace id: random-looking, never zero, never repeated in this process.
/// Cost: a few ns. Thread-safety: any thread.
inline trace_id new_trace_id() noexcept {
    for (;;) {
        const detail::id_key key = detail::current_id_key();
        const std::uint64_t c = detail::next_id_counter();
        const trace_id id{detail::trace_high_word(c, key), detail::trace_low_word(c, key)};
        if (LOUPE_LIKELY(id.valid())) return id;
    }
}

/// A new span (call) id: random-looking, never zero, never repeated in this
/// process. Cost: a few ns. Thread-safety: any thread.
inline std::uint64_t new_span_id() noexcept {
    for (;;) {
        const detail::id_key key = detail::current_id_key();
        const std::uint64_t id = detail::span_word(detail::next_id_counter(), key);
        if (LOUPE_LIKELY(id != 0)) return id;
    }
}

/// The context of a task that starts here: new trace and span ids, `flags`,
/// an empty tracestate.
inline task_context new_task(std::uint8_t flags = 0) noexcept {
    task_context c;
    c.trace = new_trace_id();
    c.span = new_span_id();
    c.flags = flags;
    return c;
}

/// The context of a call made within `parent`: its trace id, flags and
/// tracestate with a new span id. When `parent` is not valid (nothing came
/// in, or it was malformed) the task starts here: new_task().
inline task_context child_task(const task_context& parent) noexcept {
    if (!parent.valid()) return new_task();
    task_context c = parent;
    c.span = new_span_id();
    return c;
}

}  // namespace loupe::tasks
