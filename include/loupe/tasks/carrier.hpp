// Task context in and out of any header map: inject() writes traceparent
// (and tracestate) through a setter you give it, extract() reads them back
// through a getter, so any HTTP (or gRPC, or message) library fits. Ready
// adapters take a std::map or std::unordered_map of header names to values,
// and a raw HTTP/1.x header block.
//
//     // client: the outgoing call is a child of the current one
//     loupe::tasks::task_context call = loupe::tasks::child_task(current);
//     loupe::tasks::inject(call, [&](std::string_view name, std::string_view value) {
//         request.set_header(std::string(name), std::string(value));
//     });
//
//     // server
//     auto in = loupe::tasks::extract([&](std::string_view name) { return request.header(name); });
//     loupe::tasks::task_context mine = loupe::tasks::child_task(in.context);  // a new task if nothing valid came
//
// The shapes:
//  - setter: `set(std::string_view name, std::string_view value)`, called
//    with the lowercase names "traceparent" and (when the context has one)
//    "tracestate". The views live for the call only: copy them.
//  - getter: `get(std::string_view name)` returns something that tests false
//    when the header is absent and whose `*` converts to std::string_view:
//    std::optional<std::string_view>, std::optional<std::string>, or a
//    pointer to a std::string (null when absent). It is asked for
//    "traceparent" and, only when that is valid, "tracestate" (the spec: a
//    tracestate is not read without a valid traceparent). Name matching is
//    the getter's: HTTP names are case-insensitive. A library whose fields
//    repeat should return them joined by ',' (RFC 7230 §3.2.2): for
//    tracestate that is the combined list, for traceparent an invalid value
//    (several traceparent fields start a new task, as the W3C tests ask).
//
// Bad input never throws and never yields a valid context: extract_result
// says what was wrong and the error is counted (propagation_errors.hpp).
// A missing traceparent is not an error: the task starts here.
//
// Cost: inject formats 55 characters and calls the setter once or twice;
// extract parses them (traceparent.hpp, tracestate.hpp). No allocation but
// the adapters' own strings. Thread-safety: reentrant; the header map is
// yours to guard.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "loupe/tasks/detail/header_fields.hpp"
#include "loupe/tasks/detail/tracestate_list.hpp"
#include "loupe/tasks/propagation_errors.hpp"
#include "loupe/tasks/task_context.hpp"
#include "loupe/tasks/traceparent.hpp"
#include "loupe/tasks/tracestate.hpp"
#include "loupe/tasks/tracestate_problem.hpp"

namespace loupe::tasks {

inline constexpr std::string_view traceparent_header = "traceparent";
inline constexpr std::string_view tracestate_header = "tracestate";
/// W3C Trace Context Level 2's response header (the callee's context).
inline constexpr std::string_view traceresponse_header = "traceresponse";

/// What extract() found.
enum class extract_status : std::uint8_t {
    absent,                 ///< no traceparent: the task starts here (not an error)
    ok,                     ///< a valid traceparent (the tracestate may have lost members: see `tracestate`)
    malformed_traceparent,  ///< `traceparent.error` says why (counted)
    repeated_traceparent,   ///< more than one traceparent field (counted)
};

inline const char* extract_status_name(extract_status s) noexcept {
    switch (s) {
        case extract_status::absent:
            return "absent";
        case extract_status::ok:
            return "ok";
        case extract_status::malformed_traceparent:
            return "malformed_traceparent";
        case extract_status::repeated_traceparent:
            return "repeated_traceparent";
    }
    return "?";
}

struct extract_result {
    /// The caller's context when ok(): its trace id, its call's id (the
    /// `parent-id`), the known flags (trace_flags::known) and the kept
    /// tracestate. Otherwise all zero and not valid.
    task_context context;
    extract_status status = extract_status::absent;
    /// The traceparent's parse: its error and position when malformed.
    traceparent_result traceparent;
    /// What the tracestate lost (when ok()).
    tracestate_summary tracestate;

    bool ok() const noexcept { return status == extract_status::ok; }
};

namespace detail {

template <class Getter>
inline constexpr bool is_getter = std::is_invocable_v<Getter&, std::string_view>;
template <class Setter>
inline constexpr bool is_setter = std::is_invocable_v<Setter&, std::string_view, std::string_view>;
/// The header maps inject() and extract() take.
template <class T>
inline constexpr bool is_header_map = false;
template <class Compare, class Alloc>
inline constexpr bool is_header_map<std::map<std::string, std::string, Compare, Alloc>> = true;
template <class Hash, class Equal, class Alloc>
inline constexpr bool is_header_map<std::unordered_map<std::string, std::string, Hash, Equal, Alloc>> = true;

/// Reads the one traceparent (or traceresponse) value into `r`.
inline void read_traceparent(extract_result& r, std::string_view value) noexcept {
    r.traceparent = parse_traceparent(value);
    if (!r.traceparent.ok()) {
        r.status = extract_status::malformed_traceparent;
        count_propagation_error();
        return;
    }
    r.status = extract_status::ok;
    r.context.trace = r.traceparent.trace;
    r.context.span = r.traceparent.span;
    r.context.flags = static_cast<std::uint8_t>(r.traceparent.flags & trace_flags::known);
}

inline void read_tracestate(extract_result& r, tracestate_list& list) noexcept {
    list.finish(r.context.state, r.tracestate);
    if (r.tracestate.problem != tracestate_problem::none) count_propagation_error();
}

/// extract() over every field: `for_each(f)` calls f(name, value) for each
/// field; it is run twice (traceparent, then tracestate) and the values
/// must stay put in between.
template <class ForEach>
extract_result extract_fields(ForEach&& for_each, std::string_view parent_name, bool with_state,
                              tracestate_policy policy) {
    std::size_t parents = 0;
    std::string_view parent;
    for_each([&](std::string_view name, std::string_view value) {
        if (iequals(name, parent_name) && parents++ == 0) parent = value;
    });
    extract_result r;
    if (parents == 0) return r;
    if (parents > 1) {
        r.status = extract_status::repeated_traceparent;
        count_propagation_error();
        return r;
    }
    read_traceparent(r, parent);
    if (!r.ok() || !with_state) return r;
    tracestate_list list(policy);
    for_each([&](std::string_view name, std::string_view value) {
        if (iequals(name, tracestate_header)) list.add_value(value);
    });
    read_tracestate(r, list);
    return r;
}

template <class Map>
extract_result extract_map(const Map& headers, std::string_view parent_name, bool with_state,
                           tracestate_policy policy) {
    return extract_fields(
        [&](auto&& f) {
            for (const auto& [name, value] : headers) f(std::string_view(name), std::string_view(value));
        },
        parent_name, with_state, policy);
}

/// Sets `name` to `value` in `headers`, after erasing the entries whose
/// names differ from it by case only.
template <class Map>
void set_header(Map& headers, std::string_view name, std::string_view value) {
    for (auto it = headers.begin(); it != headers.end();) {
        if (iequals(it->first, name) && std::string_view(it->first) != name) {
            it = headers.erase(it);
        } else {
            ++it;
        }
    }
    headers[std::string(name)] = std::string(value);
}

template <class Map>
void erase_header(Map& headers, std::string_view name) {
    for (auto it = headers.begin(); it != headers.end();) {
        if (iequals(it->first, name)) {
            it = headers.erase(it);
        } else {
            ++it;
        }
    }
}

/// Writes the valid context `c`, whose traceparent `text` is already
/// formatted, into a header map (as inject() does) or through a setter.
template <class Carrier>
void inject_formatted(const traceparent_chars& text, const task_context& c, Carrier& carrier) {
    if constexpr (is_setter<Carrier>) {
        carrier(traceparent_header, text.view());
        if (!c.state.empty()) carrier(tracestate_header, c.state.view());
    } else {
        set_header(carrier, traceparent_header, text.view());
        if (c.state.empty()) {
            erase_header(carrier, tracestate_header);
        } else {
            set_header(carrier, tracestate_header, c.state.view());
        }
    }
}

template <class Carrier>
bool inject_any(const task_context& c, Carrier& carrier) {
    if (!c.valid()) return false;
    inject_formatted(format_traceparent(c), c, carrier);
    return true;
}

}  // namespace detail

/// Writes `c` through `set` (see the shapes above): traceparent, then
/// tracestate when `c` has one. Returns false, and writes nothing, when `c`
/// is not valid. Thread-safety: reentrant.
template <class Setter, std::enable_if_t<detail::is_setter<Setter>, int> = 0>
bool inject(const task_context& c, Setter&& set) {
    return detail::inject_any(c, set);
}

/// Reads the caller's context through `get` (see the shapes above).
/// Thread-safety: reentrant.
template <class Getter, std::enable_if_t<detail::is_getter<Getter>, int> = 0>
extract_result extract(Getter&& get, tracestate_policy policy = tracestate_policy::drop_invalid_members) {
    extract_result r;
    {
        const auto parent = get(traceparent_header);
        if (!parent) return r;
        detail::read_traceparent(r, std::string_view(*parent));
    }
    if (!r.ok()) return r;
    const auto state = get(tracestate_header);
    detail::tracestate_list list(policy);
    if (state) list.add_value(std::string_view(*state));
    detail::read_tracestate(r, list);
    return r;
}

/// Writes the traceresponse of the call `c` (this side's own context) through
/// `set`, for the caller to link the two sides (W3C Trace Context Level 2).
/// Returns false, and writes nothing, when `c` is not valid.
template <class Setter, std::enable_if_t<detail::is_setter<Setter>, int> = 0>
bool inject_response(const task_context& c, Setter&& set) {
    if (!c.valid()) return false;
    const traceparent_chars text = format_traceresponse(c);
    set(traceresponse_header, text.view());
    return true;
}

/// Reads the callee's traceresponse through `get`: `context` holds the
/// callee's trace id, its call's id and the known flags (no tracestate).
template <class Getter, std::enable_if_t<detail::is_getter<Getter>, int> = 0>
extract_result extract_response(Getter&& get) {
    extract_result r;
    const auto value = get(traceresponse_header);
    if (value) detail::read_traceparent(r, std::string_view(*value));
    return r;
}

// ---- Header maps: std::map and std::unordered_map of name to value ----------
// Names match case-insensitively: entries whose names differ only by case
// are several fields of one name (several traceparents: a new task; several
// tracestates: one list, in the map's order). inject() sets lowercase names
// and first erases the entries that differ from them only by case (and an
// old tracestate when the context has none).

template <class Compare, class Alloc>
bool inject(const task_context& c, std::map<std::string, std::string, Compare, Alloc>& headers) {
    return detail::inject_any(c, headers);
}

template <class Hash, class Equal, class Alloc>
bool inject(const task_context& c, std::unordered_map<std::string, std::string, Hash, Equal, Alloc>& headers) {
    return detail::inject_any(c, headers);
}

template <class Compare, class Alloc>
extract_result extract(const std::map<std::string, std::string, Compare, Alloc>& headers,
                       tracestate_policy policy = tracestate_policy::drop_invalid_members) {
    return detail::extract_map(headers, traceparent_header, true, policy);
}

template <class Hash, class Equal, class Alloc>
extract_result extract(const std::unordered_map<std::string, std::string, Hash, Equal, Alloc>& headers,
                       tracestate_policy policy = tracestate_policy::drop_invalid_members) {
    return detail::extract_map(headers, traceparent_header, true, policy);
}

template <class Compare, class Alloc>
extract_result extract_response(const std::map<std::string, std::string, Compare, Alloc>& headers) {
    return detail::extract_map(headers, traceresponse_header, false, tracestate_policy::drop_invalid_members);
}

template <class Hash, class Equal, class Alloc>
extract_result extract_response(const std::unordered_map<std::string, std::string, Hash, Equal, Alloc>& headers) {
    return detail::extract_map(headers, traceresponse_header, false, tracestate_policy::drop_invalid_members);
}

// ---- A raw HTTP/1.x header block -------------------------------------------
// "Name: value\r\n" lines (a request or status line first is skipped), up to
// the empty line that ends the block; see detail::for_each_header_field for
// what counts as a field. Several traceparent lines: a new task (counted);
// several tracestate lines: one list, in order.

/// Appends "traceparent: ...\r\n" (and "tracestate: ...\r\n") for `c` to
/// `block`. Returns false, and appends nothing, when `c` is not valid.
inline bool inject_header_block(const task_context& c, std::string& block) {
    if (!c.valid()) return false;
    block.append(traceparent_header).append(": ").append(format_traceparent(c).view()).append("\r\n");
    if (!c.state.empty()) block.append(tracestate_header).append(": ").append(c.state.view()).append("\r\n");
    return true;
}

inline extract_result extract_header_block(std::string_view block,
                                           tracestate_policy policy = tracestate_policy::drop_invalid_members) {
    return detail::extract_fields([&](auto&& f) { detail::for_each_header_field(block, f); }, traceparent_header, true,
                                  policy);
}

inline extract_result extract_response_header_block(std::string_view block) {
    return detail::extract_fields([&](auto&& f) { detail::for_each_header_field(block, f); }, traceresponse_header,
                                  false, tracestate_policy::drop_invalid_members);
}

}  // namespace loupe::tasks
