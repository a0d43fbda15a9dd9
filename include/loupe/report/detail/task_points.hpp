// The first step of the task join (task_join.hpp): the task points of one
// input, kept compactly, paired into the sides of calls (each side stored
// once, its join key beside it).
//
// A client side is a CALL_OUT and the RETURN_IN that answers it: points of
// one input with the same trace id and call id. A server side is a
// REQUEST_IN and its RETURN_OUT: same input, trace id, call id and span (the
// handler's). Copies of one key (a retry resends the same traceparent) pair
// in time order, first in first out; a return with no first point is a side
// whose beginning is unknown, a first point with no return a side that is
// open.
//
// Memory: 88 bytes per point, 80 per side, 32 per key. Cost: pairing sorts
// the input's points, O(p log p). Thread-safety: the functions touch their
// arguments only; a string_table is not shared.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "loupe/format/decoder.hpp"
#include "loupe/report/task_tree.hpp"

namespace loupe::report::detail {

/// One task point of one input, its strings interned.
struct compact_point {
    std::uint64_t trace_high = 0;
    std::uint64_t trace_low = 0;
    std::uint64_t call_id = 0;
    std::uint64_t span_id = 0;
    std::uint64_t echoed_id = 0;
    std::uint64_t time_ns = 0;
    std::uint64_t thread_id = 0;
    std::int64_t status = 0;
    std::uint32_t input = 0;
    std::uint32_t order = 0;  ///< its index among the input's points (ties keep file order)
    std::uint32_t name = 0;
    std::uint32_t peer = 0;
    task_point_kind kind = task_point_kind::call_out;
    bool tagged = false;
};

/// Call names and peers, each stored once; id 0 is "".
class string_table {
public:
    string_table() { ids_.emplace(std::string(), 0); }
    std::uint32_t intern(const std::string& s) {
        if (s.empty()) return 0;
        const auto found = ids_.find(s);
        if (found != ids_.end()) return found->second;
        const auto id = static_cast<std::uint32_t>(ids_.size());
        ids_.emplace(s, id);
        return id;
    }
    /// The strings by id (the table is left empty).
    std::vector<std::string> take() {
        std::vector<std::string> out(ids_.size());
        for (auto& [text, id] : ids_) out[id] = text;
        ids_.clear();
        ids_.emplace(std::string(), 0);
        return out;
    }

private:
    std::unordered_map<std::string, std::uint32_t> ids_;
};

inline bool is_client(task_point_kind k) noexcept {
    return k == task_point_kind::call_out || k == task_point_kind::return_in;
}
inline bool is_first(task_point_kind k) noexcept {
    return k == task_point_kind::call_out || k == task_point_kind::request_in;
}

/// Which side (an index into the joiner's sides, then task_forest::sides)
/// and the key it joins on: what the join sorts, 32 bytes, instead of the
/// side itself.
struct side_key {
    std::uint64_t trace_high = 0;
    std::uint64_t trace_low = 0;
    std::uint64_t call_id = 0;
    std::uint32_t side = 0;
};

// Fills `s` from the first point and/or the return (either may be null).
inline void make_side(task_side& s, const compact_point* first, const compact_point* back) {
    const compact_point& any = first ? *first : *back;
    s.input = any.input;
    s.thread_id = any.thread_id;
    s.span_id = any.span_id;
    s.has_begin = first != nullptr;
    s.has_end = back != nullptr;
    if (first) s.begin_recorded = first->time_ns;
    if (back) {
        s.end_recorded = back->time_ns;
        s.echoed_id = back->echoed_id;
        s.status = back->status;
    }
    s.name = first && first->name != 0 ? first->name : back ? back->name : 0;
    s.peer = first && first->peer != 0 ? first->peer : back ? back->peer : 0;
    s.tagged = first ? first->tagged : back->tagged;
}

/// Room in `v` for `more` elements: none made when it fits, else at least
/// double its capacity (appends stay amortized O(1)).
template <class T>
void reserve_more(std::vector<T>& v, std::size_t more) {
    if (v.capacity() - v.size() < more) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

/// Pairs the points in [first, last) (all of one side: client points, or
/// server points, of one input) into sides, appended to `sides`, and their
/// keys, appended to `keys`. Client points pair on (trace, call id), server
/// points also on the span. Sorts the range.
template <class Iterator>
void pair_points(Iterator first, Iterator last, bool server, std::vector<task_side>& sides,
                 std::vector<side_key>& keys) {
    const auto key = [server](const compact_point& p) {
        return std::make_tuple(p.trace_high, p.trace_low, p.call_id, server ? p.span_id : 0);
    };
    std::sort(first, last, [&](const compact_point& a, const compact_point& b) {
        const auto ka = key(a), kb = key(b);
        if (ka != kb) return ka < kb;
        if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
        // At one time the first point before the return (a call of 0 ns).
        if (is_first(a.kind) != is_first(b.kind)) return is_first(a.kind);
        return a.order < b.order;
    });
    const auto add = [&](const compact_point* first_point, const compact_point* back) {
        const compact_point& any = first_point ? *first_point : *back;
        keys.push_back({any.trace_high, any.trace_low, any.call_id, static_cast<std::uint32_t>(sides.size())});
        sides.emplace_back();
        make_side(sides.back(), first_point, back);
    };
    std::deque<const compact_point*> waiting;  // first points not answered yet, oldest first
    for (Iterator i = first; i != last;) {
        Iterator end = i + 1;
        while (end != last && key(*end) == key(*i)) ++end;
        waiting.clear();
        for (Iterator k = i; k != end; ++k) {
            const compact_point& p = *k;
            if (is_first(p.kind)) {
                waiting.push_back(&p);
            } else if (waiting.empty()) {
                add(nullptr, &p);
            } else {
                add(waiting.front(), &p);
                waiting.pop_front();
            }
        }
        for (const compact_point* p : waiting) add(p, nullptr);
        i = end;
    }
}

}  // namespace loupe::report::detail
