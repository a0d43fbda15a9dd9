// Thread filters: which threads a profiling session records.
//
// A thread's context is six fields (client, user, session, request, app,
// component) plus the thread name and the process name. A filter is a boolean
// expression over tests of those values, written as text —
//
//     user == "alice" && (app == "shop" || app in ["billing", "crm"]) && !(request ~ "health*")
//
// — or built in C++ with `loupe::where`. The language, its semantics and its
// limits are specified in docs/filters.md. Filters are evaluated when a
// thread's context or the set of sessions changes, never per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/core/detail/glob.hpp"
#include "loupe/core/context.hpp"
#include "loupe/base/error.hpp"

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
};

// context_field_count (the keys client .. component) comes from context.hpp.
/// How many keys there are.
inline constexpr std::size_t filter_key_count = 8;

/// Limits of one filter (see docs/filters.md). They bound the parser's
/// recursion and the cost of `filter::matches`.
inline constexpr std::size_t filter_max_text_bytes = 4096;  ///< filter text, and its canonical form
inline constexpr std::size_t filter_max_depth = 32;         ///< nested '(' and '!'
inline constexpr std::size_t filter_max_tests = 256;        ///< tests (`user == "x"`, `app in [...]`, ...)
inline constexpr std::size_t filter_max_value_bytes = 63;   ///< one string literal; context values are cut to this

/// The name of a key as the filter language spells it: "client", "user",
/// "session", "request", "app", "component", "thread", "process"; "?" for a
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

/// A parsed thread filter: a regular value type. The default filter (and the
/// one parsed from empty text) matches every thread.
///
/// Thread-safety: const member functions may run concurrently on one object;
/// copies are independent.
class filter {
public:
    /// The empty filter: matches every thread.
    filter() = default;

    /// Parses filter text (grammar in docs/filters.md). Empty or all-blank
    /// text gives the empty filter. Throws `filter_error` naming the column,
    /// what was expected and what was found. Cost: linear in the text.
    /// Defined in loupe/detail/filter_parser.hpp.
    static filter parse(std::string_view text);

    /// Whether a thread with this context is selected. Never allocates or
    /// recurses; costs one pass over the tests (a glob test is O(pattern *
    /// value) in the worst case).
    bool matches(const filter_subject& s) const noexcept {
        if (nodes_.empty()) {
            return true;
        }
        bool stack[filter_max_tests] = {};  // results of subtrees not yet consumed; at most one per test
        std::size_t top = 0;
        for (const detail::filter_node& n : nodes_) {
            if (detail::filter_is_test(n.op)) {
                if (top == filter_max_tests) {
                    return false;  // unreachable: the limits are checked when a filter is made
                }
                stack[top++] = test(n, s.value(n.key));
            } else if (n.op == detail::filter_op::not_) {
                if (top == 0) {
                    return false;
                }
                stack[top - 1] = !stack[top - 1];
            } else {
                if (n.count == 0 || n.count > top) {
                    return false;
                }
                const bool is_and = n.op == detail::filter_op::and_;
                bool result = is_and;
                for (std::size_t i = top - n.count; i < top; ++i) {
                    result = is_and ? (result && stack[i]) : (result || stack[i]);
                }
                top -= n.count;
                stack[top++] = result;
            }
        }
        return top == 1 && stack[0];
    }

    /// True for the empty filter. Does not detect tautologies such as
    /// `user ~ "*" || !(user ~ "*")`. Cost: O(1).
    bool matches_everything() const noexcept { return nodes_.empty(); }

    /// The canonical text of this filter: `parse(to_string())` gives the same
    /// filter. Single spaces around operators, `!(...)` around what a '!'
    /// negates, parentheses only where precedence needs them, `&&` and `||`
    /// chains flattened. "" for the empty filter. Cost: linear; allocates.
    std::string to_string() const {
        std::string out;
        std::size_t depth = 0;
        if (!nodes_.empty()) {
            render(nodes_.size() - 1, out, 0, depth);
        }
        return out;
    }

    /// Both must match. The empty filter is the identity. Throws `loupe::error`
    /// if the result exceeds the limits.
    friend filter operator&&(filter a, filter b) {
        if (a.matches_everything()) {
            return b;
        }
        if (b.matches_everything()) {
            return a;
        }
        filter parts[] = {std::move(a), std::move(b)};
        filter r = join(detail::filter_op::and_, parts, 2);
        r.check_builder_limits();
        return r;
    }

    /// Either must match. With the empty filter the result is the empty
    /// filter. Throws `loupe::error` if the result exceeds the limits.
    friend filter operator||(filter a, filter b) {
        if (a.matches_everything() || b.matches_everything()) {
            return filter();
        }
        filter parts[] = {std::move(a), std::move(b)};
        filter r = join(detail::filter_op::or_, parts, 2);
        r.check_builder_limits();
        return r;
    }

    /// Matches where `a` does not. Throws `loupe::error` for the empty filter
    /// (the language has no filter that matches nothing) and when the result
    /// exceeds the limits.
    friend filter operator!(filter a) {
        if (a.matches_everything()) {
            throw error("filter builder: expected a filter to negate, found the empty filter (it matches everything)");
        }
        filter r = negate(std::move(a));
        r.check_builder_limits();
        return r;
    }

private:
    friend class detail::filter_parser;
    friend struct where::key_ref;

    bool test(const detail::filter_node& n, std::string_view v) const noexcept {
        if (v.empty()) {
            return n.op == detail::filter_op::ne;  // unset never equals, is never in, never matches a glob
        }
        const std::string* values = values_.data() + n.first;
        switch (n.op) {
            case detail::filter_op::eq: return v == values[0];
            case detail::filter_op::ne: return v != values[0];
            case detail::filter_op::in:
                for (std::uint32_t i = 0; i < n.count; ++i) {
                    if (v == values[i]) {
                        return true;
                    }
                }
                return false;
            case detail::filter_op::glob: return detail::glob_match(values[0], v);
            default: return false;
        }
    }

    /// One test, unchecked.
    static filter make_test(detail::filter_op op, filter_key key, std::vector<std::string> values) {
        filter r;
        const auto count = static_cast<std::uint32_t>(values.size());
        r.values_ = std::move(values);
        r.nodes_.push_back(detail::filter_node{op, key, 0, count, 1});
        return r;
    }

    /// `parts[0] op parts[1] op ...` (op is and_ or or_), flattening parts
    /// that already are `op` chains. Parts must not be empty; unchecked.
    static filter join(detail::filter_op op, filter* parts, std::size_t n) {
        if (n == 1) {
            return std::move(parts[0]);
        }
        filter r;
        std::uint32_t children = 0;
        for (std::size_t p = 0; p < n; ++p) {
            filter& part = parts[p];
            const bool same = part.nodes_.back().op == op;
            const std::size_t keep = same ? part.nodes_.size() - 1 : part.nodes_.size();
            const auto base = static_cast<std::uint32_t>(r.values_.size());
            for (std::size_t i = 0; i < keep; ++i) {
                detail::filter_node node = part.nodes_[i];
                if (detail::filter_is_test(node.op)) {
                    node.first += base;
                }
                r.nodes_.push_back(node);
            }
            for (std::string& v : part.values_) {
                r.values_.push_back(std::move(v));
            }
            children += same ? part.nodes_.back().count : 1;
        }
        const auto size = static_cast<std::uint32_t>(r.nodes_.size() + 1);
        r.nodes_.push_back(detail::filter_node{op, filter_key::client, 0, children, size});
        return r;
    }

    /// `!a`; `a` must not be empty; unchecked.
    static filter negate(filter a) {
        const auto size = static_cast<std::uint32_t>(a.nodes_.size() + 1);
        a.nodes_.push_back(detail::filter_node{detail::filter_op::not_, filter_key::client, 0, 1, size});
        return a;
    }

    std::size_t test_count() const noexcept {
        std::size_t n = 0;
        for (const detail::filter_node& node : nodes_) {
            n += detail::filter_is_test(node.op) ? 1 : 0;
        }
        return n;
    }

    /// Appends node `i` to `out`. `depth` is the number of '(' and '!' levels
    /// around it, counted as the parser counts them; `max_depth` collects the
    /// deepest. Recursion is as deep as the filter, which the limits bound.
    void render(std::size_t i, std::string& out, std::size_t depth, std::size_t& max_depth) const {
        const detail::filter_node& n = nodes_[i];
        max_depth = depth > max_depth ? depth : max_depth;
        if (detail::filter_is_test(n.op)) {
            out += filter_key_name(n.key);
            static const char* const ops[] = {" == ", " != ", " in [", " ~ "};
            out += ops[static_cast<std::size_t>(n.op)];
            for (std::uint32_t v = 0; v < n.count; ++v) {
                out += v == 0 ? "" : ", ";
                detail::filter_append_quoted(out, values_[n.first + v]);
            }
            out += n.op == detail::filter_op::in ? "]" : "";
            return;
        }
        if (n.op == detail::filter_op::not_) {
            out += "!(";  // one level: a '(' right after '!' does not add one
            render(i - 1, out, depth + 1, max_depth);
            out += ')';
            return;
        }
        // Children are the subtrees that end at i - 1, then before that one, ...
        std::vector<std::size_t> children(n.count);
        std::size_t c = i - 1;
        for (std::uint32_t k = n.count; k-- > 0;) {
            children[k] = c;
            c -= nodes_[c].size;
        }
        for (std::uint32_t k = 0; k < n.count; ++k) {
            const detail::filter_op child = nodes_[children[k]].op;
            const bool parens = child == n.op || (n.op == detail::filter_op::and_ && child == detail::filter_op::or_);
            out += k == 0 ? "" : (n.op == detail::filter_op::and_ ? " && " : " || ");
            out += parens ? "(" : "";
            render(children[k], out, parens ? depth + 1 : depth, max_depth);
            out += parens ? ")" : "";
        }
    }

    /// The builder's guarantee: what it makes is a filter that `parse` accepts
    /// back from `to_string()`.
    void check_builder_limits() const {
        const std::size_t tests = test_count();
        if (tests > filter_max_tests) {
            throw error("filter builder: expected at most " + std::to_string(filter_max_tests) + " tests, found " +
                        std::to_string(tests));
        }
        std::string text;
        std::size_t depth = 0;
        render(nodes_.size() - 1, text, 0, depth);
        if (depth > filter_max_depth) {
            throw error("filter builder: expected at most " + std::to_string(filter_max_depth) +
                        " nested '(' or '!', found " + std::to_string(depth));
        }
        if (text.size() > filter_max_text_bytes) {
            throw error("filter builder: expected a filter whose text is at most " +
                        std::to_string(filter_max_text_bytes) + " bytes, found " + std::to_string(text.size()) +
                        " bytes");
        }
    }

    std::vector<detail::filter_node> nodes_;  ///< post-order; the root is last
    std::vector<std::string> values_;         ///< string literals of the tests, unescaped
};

/// The filter builder:
///
///     using namespace loupe;
///     filter f = where::user == "alice" && (where::app == "shop" || where::app.in({"billing", "crm"})) &&
///                !where::request.glob("health*");
///
/// builds the same filter as `filter::parse` of the equivalent text. Every
/// function throws `loupe::error` ("filter builder: expected ..., found ...")
/// for a value the language rejects (empty, longer than 63 bytes, control
/// bytes other than newline and tab, a bad glob escape) and for results over
/// the limits. Thread-safety: all are pure functions.
namespace where {
struct key_ref {
    filter_key key;

    /// `key == "v"`: the value is set and equals `v`.
    filter operator==(std::string_view v) const { return make(detail::filter_op::eq, {std::string(v)}); }
    /// `key != "v"`: exactly `!(key == "v")`, so it matches an unset value.
    filter operator!=(std::string_view v) const { return make(detail::filter_op::ne, {std::string(v)}); }
    /// `key in ["a", "b"]`: the value is set and equals one of them (at least one).
    filter in(std::initializer_list<std::string_view> values) const {
        return make(detail::filter_op::in, std::vector<std::string>(values.begin(), values.end()));
    }
    filter in(const std::vector<std::string>& values) const { return make(detail::filter_op::in, values); }
    /// `key ~ "pattern"`: the value is set and matches the glob pattern.
    filter glob(std::string_view pattern) const { return make(detail::filter_op::glob, {std::string(pattern)}); }
    /// `key ~ "*"`: the value is set.
    filter is_set() const { return make(detail::filter_op::glob, {"*"}); }

private:
    filter make(detail::filter_op op, std::vector<std::string> values) const {
        if (values.empty()) {
            throw error(std::string("filter builder: expected at least one value for '") + filter_key_name(key) +
                        " in', found none");
        }
        for (const std::string& v : values) {
            std::size_t offset = 0;
            const std::string problem = detail::filter_literal_problem(key, v, op == detail::filter_op::glob, offset);
            if (!problem.empty()) {
                throw error("filter builder: " + problem);
            }
        }
        filter r = filter::make_test(op, key, std::move(values));
        r.check_builder_limits();
        return r;
    }
};

inline constexpr key_ref client{filter_key::client};
inline constexpr key_ref user{filter_key::user};
inline constexpr key_ref session{filter_key::session};
inline constexpr key_ref request{filter_key::request};
inline constexpr key_ref app{filter_key::app};
inline constexpr key_ref component{filter_key::component};
inline constexpr key_ref thread{filter_key::thread};
inline constexpr key_ref process{filter_key::process};
}  // namespace where

}  // namespace loupe

#include "loupe/core/detail/filter_parser.hpp"  // defines filter::parse
