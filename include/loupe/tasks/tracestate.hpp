// The `tracestate` header value of W3C Trace Context Level 1: the vendors'
// list of `key=value` members that travels with traceparent. loupe checks
// it and keeps a normalised copy to pass on (task_context::state):
//
//     auto kept = loupe::tasks::parse_tracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE");
//     kept.text.view();   // "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
//
// The rules (Level 1):
//  - members are separated by ','; spaces and tabs around a member are
//    ignored; empty and whitespace-only members are allowed and skipped;
//  - a key is `simple-key` (lcalpha then up to 255 of a-z 0-9 _ - * /) or
//    `tenant@system` (tenant: a-z or digit then up to 240 more, system:
//    lcalpha then up to 13 more), tracestate_problem::bad_key and
//    key_too_long otherwise;
//  - a value is 1 to 256 printable ASCII characters (0x20-0x7E) but ',' and
//    '=', not ending in a space (trailing spaces are optional whitespace and
//    are dropped; leading ones belong to the value);
//  - a key appears once; at most 32 members;
//  - several header fields are one list, in order (RFC 7230 §3.2.2), as if
//    joined by ',' (parse_tracestate over an array of values).
// What is done with a list that breaks them is the tracestate_policy's
// choice (tracestate_problem.hpp): by default invalid members, repeated keys
// (the leftmost stays: it is the most recent) and members beyond the 32nd
// are dropped and the rest kept; discard_on_any_error drops the whole list.
// The kept list is written with ',' and no whitespace. It is cut to 512
// characters (tracestate_text::capacity) by whole members, as the spec
// says: members longer than 128 characters first, from the right, then
// members from the right.
//
// Cost: one pass over the text, plus a comparison of each key with the keys
// kept before it (at most 32). No allocation, no exception. Thread-safety:
// pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "loupe/tasks/detail/tracestate_list.hpp"
#include "loupe/tasks/task_context.hpp"
#include "loupe/tasks/tracestate_problem.hpp"

namespace loupe::tasks {

/// A parsed tracestate: the list to keep, and what was wrong with the input.
struct tracestate_result {
    tracestate_text text;
    tracestate_summary summary;

    /// Nothing was wrong (the text may still have been cut to 512 characters:
    /// summary.members_truncated).
    bool ok() const noexcept { return summary.problem == tracestate_problem::none; }
};

/// Parses the `count` header field values at `values` as one list (see the
/// rules above). Positions in the summary count in the values joined by one
/// ','. Thread-safety: pure.
inline tracestate_result parse_tracestate(const std::string_view* values, std::size_t count,
                                          tracestate_policy policy = tracestate_policy::drop_invalid_members) noexcept {
    detail::tracestate_list list(policy);
    for (std::size_t i = 0; i < count; ++i) list.add_value(values[i]);
    tracestate_result r;
    list.finish(r.text, r.summary);
    return r;
}

/// Parses one tracestate header field value.
inline tracestate_result parse_tracestate(std::string_view value,
                                          tracestate_policy policy = tracestate_policy::drop_invalid_members) noexcept {
    return parse_tracestate(&value, 1, policy);
}

}  // namespace loupe::tasks
