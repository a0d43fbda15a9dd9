// A thread's context as a value: the six annotated fields (client, user,
// session, request, app, component), each at most 63 bytes of UTF-8 cut at a
// character boundary, and the task the thread serves (W3C trace context,
// base/task_context.hpp; invalid when none). Threads set it with the scopes
// of core/context.hpp and tasks/task_scope.hpp; records and traces carry it
// as this value.
//
// Thread-safety: a plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "loupe/base/task_context.hpp"

namespace loupe {

namespace detail {
inline constexpr std::size_t context_fields = 6;
inline constexpr std::size_t max_context_value = 63;  ///< bytes; longer values are cut
inline constexpr std::uint8_t value_truncated = 0x80;  ///< flag bit in a length byte

/// Cuts `v` to at most max_context_value bytes at a UTF-8 character boundary;
/// returns the kept length, with value_truncated set if something was cut.
inline std::uint8_t clamp_context_value(std::string_view v) noexcept {
    if (v.size() <= max_context_value) return static_cast<std::uint8_t>(v.size());
    std::size_t n = max_context_value;
    while (n > 0 && (static_cast<unsigned char>(v[n]) & 0xC0) == 0x80) --n;
    return static_cast<std::uint8_t>(n | value_truncated);
}

}  // namespace detail

/// The annotated fields, in the order traces store them.
enum class context_field : std::uint8_t { client = 0, user = 1, session = 2, request = 3, app = 4, component = 5 };

inline constexpr std::size_t context_field_count = detail::context_fields;
/// Longest value kept, in bytes.
inline constexpr std::size_t max_context_value = detail::max_context_value;

/// "client", "user", "session", "request", "app", "component".
inline const char* context_field_name(context_field f) noexcept {
    static const char* const names[] = {"client", "user", "session", "request", "app", "component"};
    return names[static_cast<unsigned>(f) % context_field_count];
}

/// A copy of a thread's context: a plain value (about 1 KiB, no heap; a
/// copy copies only the tracestate characters in use) that can be stored,
/// passed to another thread and adopted there.
class context {
public:
    std::string_view get(context_field f) const noexcept {
        const auto i = static_cast<unsigned>(f);
        return {values_[i], static_cast<std::size_t>(length_[i] & ~detail::value_truncated)};
    }
    /// True when the value was cut to max_context_value bytes.
    bool truncated(context_field f) const noexcept {
        return (length_[static_cast<unsigned>(f)] & detail::value_truncated) != 0;
    }
    /// Sets one field (empty: unset), cutting it as the scopes do. `truncated`
    /// marks a value that was already cut elsewhere.
    void set(context_field f, std::string_view value, bool truncated = false) noexcept {
        const auto i = static_cast<unsigned>(f);
        length_[i] = detail::clamp_context_value(value);
        std::memcpy(values_[i], value.data(), length_[i] & ~detail::value_truncated);
        if (truncated) length_[i] |= detail::value_truncated;
    }
    /// The task the thread served (not valid() when none).
    const tasks::task_context& task() const noexcept { return task_; }
    /// Sets the task (an invalid one: none).
    void set_task(const tasks::task_context& t) noexcept { task_ = t.valid() ? t : tasks::task_context{}; }
    /// True when no field is set and there is no task.
    bool empty() const noexcept {
        for (auto n : length_) {
            if (n != 0) return false;
        }
        return !task_.valid();
    }
    friend bool operator==(const context& a, const context& b) noexcept {
        for (unsigned i = 0; i < context_field_count; ++i) {
            const auto f = static_cast<context_field>(i);
            if (a.get(f) != b.get(f)) return false;
        }
        return a.task_ == b.task_;
    }
    friend bool operator!=(const context& a, const context& b) noexcept { return !(a == b); }

private:
    char values_[context_field_count][max_context_value] = {};
    std::uint8_t length_[context_field_count] = {};
    tasks::task_context task_;
};

}  // namespace loupe
