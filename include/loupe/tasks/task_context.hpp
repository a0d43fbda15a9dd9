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

#include "loupe/tasks/detail/id_generator.hpp"

namespace loupe::tasks {

/// A W3C trace-id: 16 bytes, kept as two 64-bit halves in the text's order
/// (`high` is the first 16 hex digits). All zero is invalid.
struct trace_id {
    std::uint64_t high = 0;
    std::uint64_t low = 0;

    constexpr bool valid() const noexcept { return (high | low) != 0; }
    friend constexpr bool operator==(const trace_id& a, const trace_id& b) noexcept {
        return a.high == b.high && a.low == b.low;
    }
    friend constexpr bool operator!=(const trace_id& a, const trace_id& b) noexcept { return !(a == b); }
};

/// The bits of the trace-flags byte. W3C Trace Context Level 1 defines one,
/// `sampled` (the caller may have recorded this call); the others are
/// reserved and must be sent as zero, so extract() keeps only `known`.
namespace trace_flags {
inline constexpr std::uint8_t sampled = 0x01;
inline constexpr std::uint8_t known = sampled;
}  // namespace trace_flags

/// The `tracestate` text a task carries: the list as parse_tracestate kept it
/// (tracestate.hpp), at most 512 characters, stored inline (no allocation).
/// 512 is what the spec asks every vendor to pass on at least; longer lists
/// are cut down to it by whole members when parsed. Copying copies only the
/// characters in use.
class tracestate_text {
public:
    static constexpr std::size_t capacity = 512;

    tracestate_text() noexcept = default;
    tracestate_text(const tracestate_text& other) noexcept : size_(other.size_) {
        std::memcpy(data_, other.data_, size_);
    }
    tracestate_text& operator=(const tracestate_text& other) noexcept {
        size_ = other.size_;
        std::memmove(data_, other.data_, size_);
        return *this;
    }

    /// Stores `text` as it is (no validation: give it text parse_tracestate
    /// kept, or a list you made by the spec's rules). Returns false, and
    /// leaves the text empty, when `text` is longer than `capacity`.
    bool assign(std::string_view text) noexcept {
        if (text.size() > capacity) {
            size_ = 0;
            return false;
        }
        size_ = static_cast<std::uint16_t>(text.size());
        if (size_ != 0) std::memcpy(data_, text.data(), size_);
        return true;
    }
    void clear() noexcept { size_ = 0; }

    std::string_view view() const noexcept { return {data_, size_}; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    friend bool operator==(const tracestate_text& a, const tracestate_text& b) noexcept { return a.view() == b.view(); }
    friend bool operator!=(const tracestate_text& a, const tracestate_text& b) noexcept { return !(a == b); }

private:
    std::uint16_t size_ = 0;
    char data_[capacity];  // only [0, size_) is ever read
};

/// The context of one call of a task.
struct task_context {
    trace_id trace;          ///< shared by every call of the task
    std::uint64_t span = 0;  ///< this call (the `parent-id` of the calls it makes)
    std::uint8_t flags = 0;  ///< trace_flags bits
    tracestate_text state;   ///< the vendors' list, passed on as received

    /// Both ids non-zero: a context that may be sent. A default-constructed
    /// context, and what extract() returns for a missing or malformed
    /// traceparent, are not valid.
    bool valid() const noexcept { return trace.valid() && span != 0; }
    bool sampled() const noexcept { return (flags & trace_flags::sampled) != 0; }

    friend bool operator==(const task_context& a, const task_context& b) noexcept {
        return a.trace == b.trace && a.span == b.span && a.flags == b.flags && a.state == b.state;
    }
    friend bool operator!=(const task_context& a, const task_context& b) noexcept { return !(a == b); }
};

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
