// The calling thread's context (client, user, session, request, app,
// component) as a fixed-size, thread-local stack of scope frames.
//
// Why this shape: annotating happens on every request, recorded or not, so it
// must cost a short copy and never allocate; memory must stay bounded however
// many distinct values (request ids) pass through. Values live in a per-thread
// arena used as a stack: a scope appends its new values, remembers where the
// previous ones were, and gives the arena space back when it ends. Frames carry
// a serial so that a scope outliving a reset_context() becomes a no-op, and a
// "dead" flag so that a scope destroyed out of LIFO order is popped only when
// the scopes above it end: the context is never left pointing at a value that
// no live scope set.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "loupe/base/config.hpp"
#include "loupe/base/context.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/task_context.hpp"
#include "loupe/core/detail/thread_state.hpp"

namespace loupe::detail {

inline constexpr std::size_t max_context_depth = 32;  ///< nested scopes per thread
inline constexpr std::size_t context_arena_bytes = 2048;
/// The bit of a frame's mask that says it set the task.
inline constexpr std::uint8_t task_bit = 1u << context_fields;

/// The thread's task: ids and flags (the tracestate text is in the arena).
/// Plain integers: context_state must stay trivially constructible, or
/// every access to t_context would call a TLS init function.
struct task_slot {
    std::uint64_t trace_high;
    std::uint64_t trace_low;
    std::uint64_t span;
    std::uint16_t state_offset;
    std::uint16_t state_length;
    std::uint8_t flags;
    bool valid() const noexcept { return (trace_high | trace_low) != 0; }
    tasks::trace_id trace() const noexcept { return {trace_high, trace_low}; }
};

struct context_frame {
    std::uint32_t serial;
    std::uint16_t arena_mark;  ///< arena top before this frame's values
    std::uint8_t mask;         ///< fields this frame set (and task_bit)
    std::uint8_t dead;         ///< destroyed out of order; pop with the frame above
    std::uint16_t saved_offset[context_fields];
    std::uint8_t saved_length[context_fields];
    // A frame with task_bit keeps the task it replaced at the start of its
    // arena space (arena_mark), so frames stay small for the common scopes.
};

/// Trivially constructible, so thread_local access needs no guard (a
/// static_assert below keeps it so).
struct context_state {
    std::uint32_t generation;  ///< bumps on every change of the values
    std::uint32_t next_serial;
    std::uint32_t depth;
    std::uint32_t arena_top;
    std::uint16_t offset[context_fields];  ///< where each current value starts in arena
    std::uint8_t length[context_fields];   ///< its length | value_truncated
    context_frame frames[max_context_depth];
    char arena[context_arena_bytes];
    task_slot task;  ///< trace all zero: none (after the arena: the hot fields keep their places)

    std::string_view value(std::size_t field) const noexcept {
        return {arena + offset[field], static_cast<std::size_t>(length[field] & ~value_truncated)};
    }
    std::string_view tracestate() const noexcept { return {arena + task.state_offset, task.state_length}; }
    /// The task as a value (an invalid one when none).
    tasks::task_context task_value() const noexcept {
        tasks::task_context t;
        if (!task.valid()) return t;
        t.trace = task.trace();
        t.span = task.span;
        t.flags = task.flags;
        t.state.assign(tracestate());
        return t;
    }
    bool truncated(std::size_t field) const noexcept { return (length[field] & value_truncated) != 0; }
};

static_assert(std::is_trivially_default_constructible_v<context_state>,
              "t_context needs no TLS init function only while context_state is trivial");
LOUPE_API inline thread_local context_state t_context;

enum class context_misuse : unsigned { too_deep, foreign_thread, out_of_order };

/// Reports a misuse through the error handler, once per kind per process.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_API LOUPE_COLD LOUPE_DETAIL_SHARED_PART void report_context_misuse(context_misuse kind) noexcept {
    static const char* const messages[] = {
        "context scopes nested deeper than 32 levels or holding more than 2 KiB of values on one thread; "
        "the innermost scope is ignored",
        "a context scope was destroyed on another thread than the one that created it; it is ignored "
        "(use loupe::capture_context and loupe::context_scope to move a context)",
        "context scopes were destroyed out of order (not last-in, first-out); the scope's values stay "
        "until the scopes opened after it end",
    };
    static std::atomic<bool> reported[3] = {};
    const auto i = static_cast<unsigned>(kind);
    if (!reported[i].exchange(true, std::memory_order_relaxed)) report_error(messages[i]);
}
#else
// Compiled by the implementation file alone (base/config.hpp).
LOUPE_API LOUPE_COLD void report_context_misuse(context_misuse kind) noexcept;
#endif

/// A frame handle kept by a scope: which frame, and which thread owns it.
struct context_token {
    context_state* owner = nullptr;  ///< nullptr: the scope changed nothing
    std::uint32_t index = 0;
    std::uint32_t serial = 0;
};

/// The thread's context changed: filters must be evaluated again before its
/// next event, and its context written again to the sessions recording it.
inline void context_changed() noexcept {
    ++t_context.generation;
    t_state.epoch = 0;
}

/// The values a scope sets, by field: only those in the scope's mask are
/// read (left uninitialized otherwise). Pointers and sizes apart, each
/// written and read as one word: a scope's values cross a call in memory,
/// and a read that spans or splits the stores that wrote it waits for them.
struct context_values {
    const char* data[context_fields];
    std::size_t size[context_fields];
    void set(unsigned f, std::string_view v) noexcept {
        data[f] = v.data();
        size[f] = v.size();
    }
};

/// Pushes a frame that sets the fields in `mask` to their `values`; fields in
/// `truncated` are flagged as cut even if they fit. With task_bit in `mask`,
/// the frame also sets the task to `*task` (an invalid one: none).
/// Out of line, its loops over the set fields only: every scope calls the
/// same copy, so a file with many scopes compiles it once.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART context_token push_context(std::uint8_t mask, const context_values* values,
                                                                   std::uint8_t truncated = 0,
                                                                   const tasks::task_context* task = nullptr) noexcept {
    context_state& c = t_context;
    std::uint8_t lengths[context_fields] = {};
    std::size_t bytes = 0;
    if (task == nullptr) mask = static_cast<std::uint8_t>(mask & ~task_bit);
    const bool set_task = (mask & task_bit) != 0 && task->valid();
    if (mask & task_bit) bytes += sizeof(task_slot) + (set_task ? task->state.size() : 0);
    const unsigned fields = mask & (task_bit - 1u);
    for (unsigned m = fields; m != 0; m &= m - 1) {
        const unsigned f = static_cast<unsigned>(__builtin_ctz(m));
        lengths[f] = clamp_context_value(std::string_view(values->data[f], values->size[f]));
        if (truncated & (1u << f)) lengths[f] |= value_truncated;
        bytes += lengths[f] & ~value_truncated;
    }
    if (LOUPE_UNLIKELY(c.depth == max_context_depth || c.arena_top + bytes > context_arena_bytes)) {
        report_context_misuse(context_misuse::too_deep);
        return {};
    }
    context_frame& fr = c.frames[c.depth];
    fr.serial = ++c.next_serial;
    fr.arena_mark = static_cast<std::uint16_t>(c.arena_top);
    fr.mask = mask;
    fr.dead = 0;
    if (mask & task_bit) {
        std::memcpy(c.arena + c.arena_top, &c.task, sizeof(task_slot));
        c.arena_top += static_cast<std::uint32_t>(sizeof(task_slot));
    }
    for (unsigned m = fields; m != 0; m &= m - 1) {
        const unsigned f = static_cast<unsigned>(__builtin_ctz(m));
        fr.saved_offset[f] = c.offset[f];
        fr.saved_length[f] = c.length[f];
        const std::size_t n = lengths[f] & ~value_truncated;
        copy_payload_bytes(reinterpret_cast<unsigned char*>(c.arena + c.arena_top), values->data[f], n);
        c.offset[f] = static_cast<std::uint16_t>(c.arena_top);
        c.length[f] = lengths[f];
        c.arena_top += static_cast<std::uint32_t>(n);
    }
    if (mask & task_bit) {
        c.task = task_slot{};
        if (set_task) {
            const std::string_view state = task->state.view();
            if (!state.empty()) std::memcpy(c.arena + c.arena_top, state.data(), state.size());
            c.task = task_slot{task->trace.high, task->trace.low, task->span, static_cast<std::uint16_t>(c.arena_top),
                               static_cast<std::uint16_t>(state.size()), task->flags};
            c.arena_top += static_cast<std::uint32_t>(state.size());
        }
    }
    const context_token token{&c, c.depth, fr.serial};
    ++c.depth;
    context_changed();
    return token;
}
#else
// Compiled by the implementation file alone (base/config.hpp).
context_token push_context(std::uint8_t mask, const context_values* values,
                           std::uint8_t truncated = 0,
                           const tasks::task_context* task = nullptr) noexcept;
#endif

/// push_context for one field: the common case, kept short.
inline context_token push_field(std::size_t f, std::string_view value) noexcept {
    context_state& c = t_context;
    const std::uint8_t length = clamp_context_value(value);
    const std::size_t n = length & ~value_truncated;
    if (LOUPE_UNLIKELY(c.depth == max_context_depth || c.arena_top + n > context_arena_bytes)) {
        report_context_misuse(context_misuse::too_deep);
        return {};
    }
    context_frame& fr = c.frames[c.depth];
    fr.serial = ++c.next_serial;
    fr.arena_mark = static_cast<std::uint16_t>(c.arena_top);
    fr.mask = static_cast<std::uint8_t>(1u << f);
    fr.dead = 0;
    fr.saved_offset[f] = c.offset[f];
    fr.saved_length[f] = c.length[f];
    std::memcpy(c.arena + c.arena_top, value.data(), n);
    c.offset[f] = static_cast<std::uint16_t>(c.arena_top);
    c.length[f] = length;
    c.arena_top += static_cast<std::uint32_t>(n);
    const context_token token{&c, c.depth, fr.serial};
    ++c.depth;
    context_changed();
    return token;
}

// Out of line, so that pop_context stays small enough to inline.
LOUPE_NOINLINE inline void restore_task(context_state& c, const context_frame& fr) noexcept {
    std::memcpy(&c.task, c.arena + fr.arena_mark, sizeof(task_slot));
}

inline void restore_frame(context_state& c, const context_frame& fr) noexcept {
    unsigned mask = fr.mask;
    if (LOUPE_UNLIKELY(mask & task_bit)) {
        restore_task(c, fr);
        mask &= ~unsigned{task_bit};
    }
    for (; mask != 0; mask &= mask - 1) {
        const unsigned f = static_cast<unsigned>(__builtin_ctz(mask));
        c.offset[f] = fr.saved_offset[f];
        c.length[f] = fr.saved_length[f];
    }
    c.arena_top = fr.arena_mark;
}

/// pop_context for a scope that changed something: out of line, so that a
/// scope's end (twice in a function that may throw) stays a test and a call.
#if LOUPE_DETAIL_DEFINES_SHARED_PARTS
LOUPE_NOINLINE LOUPE_DETAIL_SHARED_PART void pop_frame(context_token token) noexcept {
    context_state& c = t_context;
    if (LOUPE_UNLIKELY(token.owner != &c)) {
        report_context_misuse(context_misuse::foreign_thread);
        return;
    }
    if (token.index >= c.depth || c.frames[token.index].serial != token.serial) return;  // reset since
    if (LOUPE_UNLIKELY(token.index + 1 != c.depth)) {
        report_context_misuse(context_misuse::out_of_order);
        c.frames[token.index].dead = 1;
        return;
    }
    do {
        --c.depth;
        restore_frame(c, c.frames[c.depth]);
    } while (c.depth > 0 && c.frames[c.depth - 1].dead);
    context_changed();
}
#else
// Compiled by the implementation file alone (base/config.hpp).
void pop_frame(context_token token) noexcept;
#endif

/// Ends the frame of `token`. LIFO is the normal case; anything else is
/// reported once and handled without corrupting the context.
LOUPE_ALWAYS_INLINE void pop_context(const context_token& token) noexcept {
    if (token.owner != nullptr) pop_frame(token);
}

/// pop_context for a frame that push_field made (one field, no task): the
/// usual case (the top frame, nothing dead below it) inline, the rest as
/// pop_context.
LOUPE_ALWAYS_INLINE void pop_field(const context_token& token) noexcept {
    if (token.owner == nullptr) return;
    context_state& c = t_context;
    const std::uint32_t i = token.index;
    if (LOUPE_LIKELY(token.owner == &c && i + 1 == c.depth && c.frames[i].serial == token.serial &&
                     (i == 0 || !c.frames[i - 1].dead))) {
        const context_frame& fr = c.frames[i];
        c.depth = i;
        // Kept apart from the store to arena_top next to it: merged into one
        // 8-byte store, the next push's 4-byte loads of either half would
        // wait for it (no store-to-load forwarding on AMD Zen; 3 ns a scope).
        std::atomic_signal_fence(std::memory_order_seq_cst);
        const unsigned f = static_cast<unsigned>(__builtin_ctz(fr.mask));
        c.offset[f] = fr.saved_offset[f];
        c.length[f] = fr.saved_length[f];
        c.arena_top = fr.arena_mark;
        context_changed();
        return;
    }
    pop_frame(token);
}

/// Clears every field and every open frame of the calling thread.
inline void clear_context() noexcept {
    context_state& c = t_context;
    c.depth = 0;
    c.arena_top = 0;
    std::memset(c.length, 0, sizeof c.length);
    std::memset(c.offset, 0, sizeof c.offset);
    c.task = task_slot{};
    context_changed();
}

}  // namespace loupe::detail
