// The terms thread filters are made of: the keys a filter tests, the
// subject it is evaluated against, its limits and its error, and the node
// vocabulary the parser and the filter share (core/filter.hpp has the
// filter itself, core/detail/filter_parser.hpp the parser).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "loupe/base/context.hpp"
#include "loupe/base/error.hpp"
#include "loupe/core/detail/glob.hpp"

namespace loupe {

/// Keys a filter can test. The first six are the context fields, in this
/// order; their integer values index `filter_subject::fields`.
enum class filter_key : std::uint8_t {
    client = 0,
    user = 1,
    session = 2,
    request = 3,
    app = 4,
    component = 5,
    thread = 6,
    process = 7,
    trace = 8,  ///< the thread's task: its W3C trace id as 32 lowercase hex digits (tasks/task_scope.hpp)
};

// context_field_count (the keys client .. component) comes from base/context.hpp.
/// How many keys there are.
inline constexpr std::size_t filter_key_count = 9;

/// Limits of one filter (see docs/filters.md). They bound the parser's
/// recursion and the cost of `filter::matches`.
inline constexpr std::size_t filter_max_text_bytes = 4096;  ///< filter text, and its canonical form
inline constexpr std::size_t filter_max_depth = 32;         ///< nested '(' and '!'
inline constexpr std::size_t filter_max_tests = 256;        ///< tests (`user == "x"`, `app in [...]`, ...)
inline constexpr std::size_t filter_max_value_bytes = 63;   ///< one string literal; context values are cut to this

/// The name of a key as the filter language spells it: "client", "user",
/// "session", "request", "app", "component", "thread", "process", "trace"; "?" for a
/// value outside the enum. Cost: a switch. Thread-safety: pure function.
inline const char* filter_key_name(filter_key k) noexcept {
    switch (k) {
        case filter_key::client: return "client";
        case filter_key::user: return "user";
        case filter_key::session: return "session";
        case filter_key::request: return "request";
        case filter_key::app: return "app";
        case filter_key::component: return "component";
        case filter_key::thread: return "thread";
        case filter_key::process: return "process";
        case filter_key::trace: return "trace";
    }
    return "?";
}

/// What a filter looks at: one thread's context, thread name and process
/// name. An empty value means "unset". The views must stay valid while
/// `filter::matches` runs.
struct filter_subject {
    std::string_view fields[context_field_count];  ///< indexed by `filter_key` (client .. component)
    std::string_view thread;                       ///< thread name
    std::string_view process;                      ///< process name
    std::string_view trace;                        ///< trace id (32 hex digits), empty without a task

    /// The value a key tests; empty when unset. Cost: a branch.
    std::string_view value(filter_key k) const noexcept {
        const auto i = static_cast<std::size_t>(k);
        if (i < context_field_count) {
            return fields[i];
        }
        if (k == filter_key::thread) {
            return thread;
        }
        if (k == filter_key::process) {
            return process;
        }
        if (k == filter_key::trace) {
            return trace;
        }
        return {};
    }
};

/// A filter text that does not parse. `what()` is
/// "filter column <c>: <what was expected>, found <what was found>", always
/// printable ASCII (other bytes of the text are shown as `\xHH`).
class filter_error : public error {
public:
    filter_error(std::size_t column, const std::string& message)
        : error("filter column " + std::to_string(column) + ": " + message), column_(column) {}

    /// 1-based byte offset into the text (text size + 1 means "at the end").
    std::size_t column() const noexcept { return column_; }

private:
    std::size_t column_;
};

class filter;
namespace where {
struct key_ref;
}

namespace detail {
template <class Filter>
class filter_parser;

/// One node of a filter, stored in post-order (children before parents).
enum class filter_op : std::uint8_t { eq, ne, in, glob, not_, and_, or_ };

struct filter_node {
    filter_op op;
    filter_key key;       ///< tests only
    std::uint32_t first;  ///< tests: index of the first value in filter::values_
    std::uint32_t count;  ///< tests: number of values; and/or: number of children; not: 1
    std::uint32_t size;   ///< nodes in this subtree, this one included
};

inline bool filter_is_test(filter_op op) noexcept { return op <= filter_op::glob; }

/// The key spelled `name`, if any.
inline bool filter_key_from_name(std::string_view name, filter_key& out) noexcept {
    for (std::size_t i = 0; i < filter_key_count; ++i) {
        if (name == filter_key_name(static_cast<filter_key>(i))) {
            out = static_cast<filter_key>(i);
            return true;
        }
    }
    return false;
}

/// "'c'" for a printable ASCII byte, "'\xHH'" for any other.
inline std::string filter_describe_byte(unsigned char c) {
    if (c >= 0x20 && c < 0x7f) {
        return std::string("'") + static_cast<char>(c) + "'";
    }
    static const char hex[] = "0123456789abcdef";
    return std::string("'\\x") + hex[c >> 4] + hex[c & 15] + "'";
}

/// What a missing value of `k` is called in error messages.
inline std::string filter_value_noun(filter_key k) {
    if (k == filter_key::thread || k == filter_key::process) {
        return std::string("a ") + filter_key_name(k) + " name";
    }
    return std::string(k == filter_key::app ? "an " : "a ") + filter_key_name(k);
}

/// Checks one string literal (already unescaped) of a test on `k`. Returns
/// an empty string when it is acceptable, else the "expected ..., found ..."
/// message; `offset` is then the byte of `value` the problem is at, or npos
/// when it is about the literal as a whole.
inline std::string filter_literal_problem(filter_key k, std::string_view value, bool glob, std::size_t& offset) {
    offset = std::string_view::npos;
    if (value.empty()) {
        return std::string("expected a non-empty string, found \"\"; unset fields never match, use !(") +
               filter_key_name(k) + " ~ \"*\") to select threads without " + filter_value_noun(k);
    }
    if (k == filter_key::trace && !glob) {
        for (std::size_t i = 0; i < value.size() && i < 32; ++i) {
            const char c = value[i];
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                offset = i;
                return "expected a trace id of 32 lowercase hex digits, found " + filter_describe_byte(static_cast<unsigned char>(c));
            }
        }
        if (value.size() != 32) {
            return "expected a trace id of 32 lowercase hex digits, found " + std::to_string(value.size()) + " characters";
        }
    }
    if (value.size() > filter_max_value_bytes) {
        return "expected at most " + std::to_string(filter_max_value_bytes) + " bytes, found a string of " +
               std::to_string(value.size()) + " bytes";
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (c < 0x20 && c != '\n' && c != '\t') {
            offset = i;
            return "expected no control bytes other than newline and tab, found " + filter_describe_byte(c);
        }
    }
    if (glob) {
        const std::size_t bad = glob_invalid_escape(value);
        if (bad != std::string_view::npos) {
            offset = bad;
            return "expected '*', '?' or '\\' after '\\' in a glob pattern, found " +
                   (bad + 1 < value.size() ? filter_describe_byte(static_cast<unsigned char>(value[bad + 1]))
                                           : std::string("the end of the pattern"));
        }
    }
    return {};
}

/// Appends `v` as a string literal of the filter language.
inline void filter_append_quoted(std::string& out, std::string_view v) {
    out += '"';
    for (const char c : v) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default: out += c;
        }
    }
    out += '"';
}
}  // namespace detail

}  // namespace loupe
