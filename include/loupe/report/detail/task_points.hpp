// The first step of the task join (task_join.hpp): the task points of one
// input, kept compactly, paired into the sides of calls (each side stored
// once, as recorded, its join key beside it).
//
// A client side is a CALL_OUT and the RETURN_IN that answers it: points of
// one input with the same trace id and call id. A server side is a
// REQUEST_IN and its RETURN_OUT: same input, trace id, call id and span (the
// handler's). Copies of one key (a retry resends the same traceparent) pair
// in time order, first in first out; a return with no first point is a side
// whose beginning is unknown, a first point with no return a side that is
// open.
//
// Memory: 80 bytes per point, 56 per side, 16 per key, and per distinct
// trace id 16 bytes and 4 to 8 of hash table. Cost: pairing sorts the
// input's points, O(p log p). Thread-safety: the functions touch their
// arguments only; the tables are not shared.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/format/decoder.hpp"
#include "loupe/report/task_tree.hpp"

namespace loupe::report::detail {

/// One task point of the input being added, its strings interned.
struct compact_point {
    std::uint64_t trace_high = 0;
    std::uint64_t trace_low = 0;
    std::uint64_t call_id = 0;
    std::uint64_t span_id = 0;
    std::uint64_t echoed_id = 0;
    std::uint64_t time_ns = 0;
    std::uint64_t thread_id = 0;
    std::int64_t status = 0;
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

/// A W3C trace id: {first 16 hex digits, last 16}; compares as the id.
using trace_id = std::pair<std::uint64_t, std::uint64_t>;

/// The trace ids of the sides, each stored once, numbered as first seen
/// (a key holds the number, 4 bytes, instead of the id, 16). Open
/// addressing: the ids in a vector, a power-of-two table of their numbers
/// + 1 (0: empty), at most half full.
class trace_id_table {
public:
    std::uint32_t intern(const trace_id& id) {
        if (2 * (ids_.size() + 1) > slots_.size()) grow();
        for (std::size_t k = slot(id);; k = (k + 1) & (slots_.size() - 1)) {
            if (slots_[k] == 0) {
                ids_.push_back(id);
                slots_[k] = static_cast<std::uint32_t>(ids_.size());
                return slots_[k] - 1;
            }
            if (ids_[slots_[k] - 1] == id) return slots_[k] - 1;
        }
    }
    std::size_t size() const noexcept { return ids_.size(); }
    /// The ids in ascending order; `rank[n]` becomes the place there of the
    /// id numbered n. The table is left empty.
    std::vector<trace_id> take_sorted(std::vector<std::uint32_t>& rank) {
        slots_ = std::vector<std::uint32_t>();
        std::vector<std::uint32_t> order(ids_.size());
        for (std::uint32_t n = 0; n < order.size(); ++n) order[n] = n;
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return ids_[a] < ids_[b]; });
        rank.assign(ids_.size(), 0);
        std::vector<trace_id> sorted(ids_.size());
        for (std::uint32_t r = 0; r < order.size(); ++r) {
            rank[order[r]] = r;
            sorted[r] = ids_[order[r]];
        }
        ids_ = std::vector<trace_id>();
        return sorted;
    }

private:
    std::size_t slot(const trace_id& id) const noexcept {
        const std::uint64_t h = (id.first ^ (id.second * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
        return static_cast<std::size_t>(h >> 32) & (slots_.size() - 1);
    }
    void grow() {
        slots_.assign(slots_.empty() ? 64 : 2 * slots_.size(), 0);
        for (std::uint32_t n = 0; n < ids_.size(); ++n) {
            std::size_t k = slot(ids_[n]);
            while (slots_[k] != 0) k = (k + 1) & (slots_.size() - 1);
            slots_[k] = n + 1;
        }
    }

    std::vector<trace_id> ids_;
    std::vector<std::uint32_t> slots_;
};

inline bool is_client(task_point_kind k) noexcept {
    return k == task_point_kind::call_out || k == task_point_kind::return_in;
}
inline bool is_first(task_point_kind k) noexcept {
    return k == task_point_kind::call_out || k == task_point_kind::request_in;
}

/// The (input, thread) pairs that sides ran on, each stored once: a side
/// holds the index of its pair (4 bytes, not 12). Few: the threads of each
/// input. Inputs are added one after the other.
class place_table {
public:
    std::uint32_t intern(std::uint32_t input, std::uint64_t thread_id) {
        if (input != input_) {
            input_ = input;
            of_input_.clear();
        }
        const auto [it, fresh] = of_input_.try_emplace(thread_id, static_cast<std::uint32_t>(places_.size()));
        if (fresh) places_.emplace_back(input, thread_id);
        return it->second;
    }
    std::uint32_t input(std::uint32_t place) const noexcept { return places_[place].first; }
    std::uint64_t thread_id(std::uint32_t place) const noexcept { return places_[place].second; }

private:
    std::vector<std::pair<std::uint32_t, std::uint64_t>> places_;
    std::uint32_t input_ = no_input;
    std::unordered_map<std::uint64_t, std::uint32_t> of_input_;  // the threads of input_
};

/// A side as its trace recorded it: a task_side without the times placed
/// on the merged timeline, which the join computes, its input and thread
/// an index into a place_table (56 bytes, not 80). The joiner keeps these
/// until finish().
struct recorded_side {
    std::uint64_t begin_recorded = 0;
    std::uint64_t end_recorded = 0;
    std::uint64_t span_id = 0;
    std::uint64_t echoed_id = 0;
    std::int64_t status = 0;
    std::uint32_t place = 0;  ///< input and thread
    std::uint32_t name = 0;
    std::uint32_t peer = 0;
    bool has_begin = false;
    bool has_end = false;
    bool tagged = false;
};

/// The task_side of `s`, not placed yet (begin_ns, end_ns 0).
inline task_side to_task_side(const recorded_side& s, const place_table& places) noexcept {
    task_side t;
    t.thread_id = places.thread_id(s.place);
    t.begin_recorded = s.begin_recorded;
    t.end_recorded = s.end_recorded;
    t.span_id = s.span_id;
    t.echoed_id = s.echoed_id;
    t.status = s.status;
    t.input = places.input(s.place);
    t.name = s.name;
    t.peer = s.peer;
    t.has_begin = s.has_begin;
    t.has_end = s.has_end;
    t.tagged = s.tagged;
    return t;
}

/// Which side (an index into the joiner's sides, then task_forest::sides)
/// and the key it joins on: what the join sorts, 16 bytes, instead of the
/// side itself. `trace` numbers the trace id: as first seen while the
/// inputs are added (trace_id_table), then by rank, so that keys compare as
/// their trace ids do.
struct side_key {
    std::uint32_t trace = 0;
    std::uint32_t side = 0;
    std::uint64_t call_id = 0;
};

// Fills `s` (a side of input `input`) from the first point and/or the
// return (either may be null).
inline void make_side(recorded_side& s, std::uint32_t input, const compact_point* first, const compact_point* back,
                      place_table& places) {
    const compact_point& any = first ? *first : *back;
    s.place = places.intern(input, any.thread_id);
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

/// The tables the sides' keys and places index.
struct side_tables {
    trace_id_table traces;
    place_table places;
};

/// Pairs the points in [first, last) (all of one side: client points, or
/// server points, of input `input`) into sides, appended to `sides`, and
/// their keys, appended to `keys`. Client points pair on (trace, call id),
/// server points also on the span. Sorts the range.
template <class Iterator>
void pair_points(Iterator first, Iterator last, bool server, std::uint32_t input, std::vector<recorded_side>& sides,
                 std::vector<side_key>& keys, side_tables& tables) {
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
    std::uint32_t trace = 0;  // the number of the trace id of the group at hand
    const auto add = [&](const compact_point* first_point, const compact_point* back) {
        const compact_point& any = first_point ? *first_point : *back;
        keys.push_back({trace, static_cast<std::uint32_t>(sides.size()), any.call_id});
        sides.emplace_back();
        make_side(sides.back(), input, first_point, back, tables.places);
    };
    std::deque<const compact_point*> waiting;  // first points not answered yet, oldest first
    for (Iterator i = first; i != last;) {
        Iterator end = i + 1;
        while (end != last && key(*end) == key(*i)) ++end;
        trace = tables.traces.intern({i->trace_high, i->trace_low});
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
