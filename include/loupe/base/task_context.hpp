// The value of a task's context: the W3C trace id, the current call's id,
// the trace flags and the vendors' tracestate, as a thread carries it
// (core/context.hpp, tasks/task_scope.hpp) and as traceparent/tracestate
// carry it between processes (tasks/traceparent.hpp, tasks/carrier.hpp).
// Plain values; tasks/task_context.hpp makes new ids.
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

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

}  // namespace loupe::tasks
