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

#include "loupe/base/error.hpp"
#include "loupe/core/context.hpp"
#include "loupe/core/detail/filter_parser.hpp"
#include "loupe/core/detail/glob.hpp"
#include "loupe/core/filter_terms.hpp"

namespace loupe {

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
    static filter parse(std::string_view text) { return detail::filter_parser<filter>(text).parse(); }

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
    template <class>
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
inline constexpr key_ref trace{filter_key::trace};
}  // namespace where

}  // namespace loupe

#include "loupe/core/detail/filter_parser.hpp"  // defines filter::parse
