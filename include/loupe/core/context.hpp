// Thread annotations: who the calling thread is serving right now.
//
// A server sets the context when it starts serving something and the scope
// restores the previous one when it ends:
//
//     loupe::context_scope request({{loupe::context_field::user, user_name},
//                                   {loupe::context_field::request, request_id}});
//     loupe::field_scope component(loupe::context_field::component, "checkout");
//
// Sessions with a filter (session_config::filter) record only threads whose
// context matches, and traces attribute every event to the context of its
// thread at the event's start.
//
// Values are bytes (UTF-8 expected), at most 63 bytes each; a longer value is
// cut at a character boundary and flagged as truncated. An empty value means
// "unset". Annotating never allocates and holds a fixed 2.5 KiB per thread,
// however many distinct values pass through.
//
// Cost: a scope copies its values (one short memcpy per field) and
// invalidates the thread's cached filter decision: a few ns, recorded or not.
// Thread-safety: every function here reads or changes the calling thread's
// context only.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "loupe/base/context.hpp"
#include "loupe/core/detail/context_state.hpp"

namespace loupe {

/// The calling thread's current context, its task included. Cost: copies
/// up to 6 short values and the task's tracestate.
inline context capture_context() noexcept {
    const detail::context_state& c = detail::t_context;
    context out;
    for (unsigned i = 0; i < context_field_count; ++i) {
        out.set(static_cast<context_field>(i), c.value(i), c.truncated(i));
    }
    if (c.task.valid()) out.set_task(c.task_value());
    return out;
}

/// Clears the calling thread's context (its task included) and forgets its
/// open scopes (they become no-ops). Call it at task boundaries in a thread pool so that one
/// task's user never leaks into the next.
inline void reset_context() noexcept { detail::clear_context(); }

/// Sets one field for the enclosing block. Non-copyable, non-movable.
class field_scope {
public:
    field_scope(context_field f, std::string_view value) noexcept
        : token_(detail::push_field(static_cast<unsigned>(f) % context_field_count, value)) {}
    LOUPE_ALWAYS_INLINE ~field_scope() { detail::pop_field(token_); }
    field_scope(const field_scope&) = delete;
    field_scope& operator=(const field_scope&) = delete;
    static void* operator new(std::size_t) = delete;

private:
    detail::context_token token_;
};

/// Sets several fields for the enclosing block as one change (a filter never
/// sees a half-set context), or adopts a whole captured context, its task
/// included: fields the captured context does not set are unset inside the
/// scope (and the task, when it has none).
///
///     auto ctx = loupe::capture_context();                 // on the submitting thread
///     pool.submit([ctx] { loupe::context_scope adopt(ctx); work(); });
class context_scope {
public:
    context_scope(std::initializer_list<std::pair<context_field, std::string_view>> fields) noexcept {
        detail::context_values values;
        std::uint8_t mask = 0;
        for (const auto& [f, v] : fields) {
            const unsigned i = static_cast<unsigned>(f) % context_field_count;
            values.set(i, v);
            mask = static_cast<std::uint8_t>(mask | (1u << i));
        }
        token_ = detail::push_context(mask, &values);
    }
    explicit context_scope(const context& adopted) noexcept {
        detail::context_values values;
        std::uint8_t truncated = 0;
        for (unsigned i = 0; i < context_field_count; ++i) {
            values.set(i, adopted.get(static_cast<context_field>(i)));
            if (adopted.truncated(static_cast<context_field>(i))) truncated = static_cast<std::uint8_t>(truncated | (1u << i));
        }
        token_ = detail::push_context(detail::task_bit | (detail::task_bit - 1u), &values, truncated, &adopted.task());
    }
    LOUPE_ALWAYS_INLINE ~context_scope() { detail::pop_context(token_); }
    context_scope(const context_scope&) = delete;
    context_scope& operator=(const context_scope&) = delete;
    static void* operator new(std::size_t) = delete;

private:
    detail::context_token token_;
};

}  // namespace loupe
