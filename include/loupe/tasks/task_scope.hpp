// The task the calling thread serves: part of its context (core/context.hpp),
// so it is written to the trace with the other fields, tested by filters
// (`trace == "4bf9…"`, `trace exists`), and carried across thread pools by
// capture_context() and context_scope.
//
//     loupe::tasks::task_scope task(incoming);   // this request's task, for the block
//     ...
//     loupe::tasks::current_trace_id();          // a load
//
// incoming_request (tasks/call_scopes.hpp) sets it for a handler; set it
// yourself where a task starts without a request (a batch job, a timer).
//
// Cost: setting or ending a scope, a few ns (the ids, and the tracestate
// text copied into the thread's fixed context arena; never allocates);
// reading the ids, a load. Thread-safety: the calling thread's task only.
#pragma once

#include <cstdint>

#include "loupe/base/task_context.hpp"
#include "loupe/core/context.hpp"

namespace loupe::tasks {

/// Makes `task` the calling thread's task for the enclosing block (an
/// invalid one: no task inside the block); the previous task returns when
/// it ends. Nests with context_scope and field_scope (last in, first out).
/// Non-copyable, non-movable.
class task_scope {
public:
    explicit task_scope(const task_context& task) noexcept
        : token_(loupe::detail::push_context(loupe::detail::task_bit, nullptr, 0, &task)) {}
    ~task_scope() { loupe::detail::pop_context(token_); }
    task_scope(const task_scope&) = delete;
    task_scope& operator=(const task_scope&) = delete;
    static void* operator new(std::size_t) = delete;

private:
    loupe::detail::context_token token_;
};

/// The calling thread's task (invalid when it serves none). Cost: copies
/// the ids and the tracestate text in use.
inline task_context current_task() noexcept { return loupe::detail::t_context.task_value(); }

/// The calling thread's trace id (all zero when it serves no task). Cost:
/// two loads.
inline trace_id current_trace_id() noexcept { return loupe::detail::t_context.task.trace(); }

/// The calling thread's current call (span) id (0 when it serves no task).
/// Cost: a load.
inline std::uint64_t current_span_id() noexcept { return loupe::detail::t_context.task.span; }

}  // namespace loupe::tasks
