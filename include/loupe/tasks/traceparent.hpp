// The `traceparent` header value of W3C Trace Context Level 1, and the
// `traceresponse` value of Level 2 (the same shape, echoed on the way back):
//
//     00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//     version-trace-id-parent-id-trace-flags   (2, 32, 16 and 2 lowercase hex digits)
//
//     auto parsed = loupe::tasks::parse_traceparent(value);
//     if (parsed.ok()) ...parsed.trace, parsed.span, parsed.flags...
//     else ...loupe::tasks::traceparent_error_name(parsed.error), parsed.position...
//     char out[loupe::tasks::traceparent_size];
//     loupe::tasks::format_traceparent(context, out);
//
// The rules, exactly as the spec gives them:
//  - optional whitespace (space, tab) around the value is ignored;
//  - only lowercase hex digits: 'A'-'F' is an error of its own kind;
//  - version ff is invalid; version 00 is exactly 55 characters;
//  - a later version (01..fe) is read by its first four fields: at least 55
//    characters, and when longer the flags must be followed by '-' (what
//    follows is that version's business and is not read);
//  - an all-zero trace id or parent id is invalid.
// Formatting always writes version 00 (the spec's "downgrade the version").
//
// Cost: parse and format each touch the 55 characters once (tens of ns at
// most; docs/tasks.md has the measured figures). Neither allocates nor
// throws. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loupe/base/config.hpp"
#include "loupe/tasks/detail/hex.hpp"
#include "loupe/tasks/detail/id_fields.hpp"
#include "loupe/tasks/task_context.hpp"

namespace loupe::tasks {

/// Characters in a version-00 traceparent (and traceresponse).
inline constexpr std::size_t traceparent_size = 55;

/// Why a traceparent (or traceresponse) value was rejected. Every kind comes
/// with the position of the offending character in the value given.
enum class traceparent_error : std::uint8_t {
    none,
    empty,                ///< nothing but optional whitespace
    too_short,            ///< the value ends before the four fields do (position: where it ends)
    not_hex,              ///< a character that is not a hex digit where one belongs
    upper_case_hex,       ///< 'A'-'F': the spec allows lowercase hex only
    expected_dash,        ///< a field is longer than it should be, or its '-' is missing
    version_ff,           ///< version ff is forbidden
    zero_trace_id,        ///< the trace id is all zeros
    zero_span_id,         ///< the parent (span) id is all zeros
    trailing_characters,  ///< version 00 longer than 55 characters, or a later version whose flags are not followed by
                          ///< '-'
};

/// The kind's name as written above ("upper_case_hex"). Thread-safety: pure.
inline const char* traceparent_error_name(traceparent_error e) noexcept {
    switch (e) {
        case traceparent_error::none:
            return "none";
        case traceparent_error::empty:
            return "empty";
        case traceparent_error::too_short:
            return "too_short";
        case traceparent_error::not_hex:
            return "not_hex";
        case traceparent_error::upper_case_hex:
            return "upper_case_hex";
        case traceparent_error::expected_dash:
            return "expected_dash";
        case traceparent_error::version_ff:
            return "version_ff";
        case traceparent_error::zero_trace_id:
            return "zero_trace_id";
        case traceparent_error::zero_span_id:
            return "zero_span_id";
        case traceparent_error::trailing_characters:
            return "trailing_characters";
    }
    return "?";
}

/// A parsed traceparent: the fields when ok(), else the first problem and
/// where it is (an index into the value as given, whitespace included).
struct traceparent_result {
    trace_id trace;
    std::uint64_t span = 0;  ///< the parent-id: the caller's call
    std::uint8_t flags = 0;  ///< the trace-flags byte as received, all eight bits
    std::uint8_t version = 0;
    traceparent_error error = traceparent_error::empty;
    std::size_t position = 0;

    bool ok() const noexcept { return error == traceparent_error::none; }
};

namespace detail {

constexpr traceparent_error traceparent_error_of(field_error e) noexcept {
    switch (e) {
        case field_error::none:
            return traceparent_error::none;
        case field_error::too_short:
            return traceparent_error::too_short;
        case field_error::not_hex:
            return traceparent_error::not_hex;
        case field_error::upper_case_hex:
            return traceparent_error::upper_case_hex;
        case field_error::expected_dash:
            return traceparent_error::expected_dash;
        case field_error::zero_trace_id:
            return traceparent_error::zero_trace_id;
        case field_error::zero_span_id:
            return traceparent_error::zero_span_id;
    }
    return traceparent_error::not_hex;
}

constexpr bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

}  // namespace detail

/// Parses a traceparent value by the rules at the top of this file.
/// Never allocates or throws. Thread-safety: pure.
inline traceparent_result parse_traceparent(std::string_view value) noexcept {
    traceparent_result r;
    std::size_t begin = 0, end = value.size();
    while (begin < end && detail::is_ows(value[begin])) ++begin;
    while (end > begin && detail::is_ows(value[end - 1])) --end;
    const char* p = value.data() + begin;
    const std::size_t n = end - begin;
    const auto fail = [&](traceparent_error e, std::size_t at) {
        r.error = e;
        r.position = begin + at;
        return r;
    };
    if (n == 0) {
        r.position = 0;
        return r;  // traceparent_error::empty
    }

    std::uint64_t version = 0;
    if (LOUPE_UNLIKELY(n < 3 || detail::decode_hex(p, 2, version) != 2 || version == 0xff || p[2] != '-')) {
        // Something is wrong with the version or its '-': find what, in text order.
        detail::id_fields v;
        if (!detail::hex_field(p, n, 0, 2, version, v)) return fail(detail::traceparent_error_of(v.error), v.position);
        if (version == 0xff) return fail(traceparent_error::version_ff, 0);
        detail::dash_at(p, n, 2, v);
        return fail(detail::traceparent_error_of(v.error), v.position);
    }
    const detail::id_fields f = detail::parse_id_fields(p + 3, n - 3);
    if (f.error != detail::field_error::none) return fail(detail::traceparent_error_of(f.error), 3 + f.position);
    if (n != traceparent_size && (version == 0 || p[traceparent_size] != '-')) {
        return fail(traceparent_error::trailing_characters, traceparent_size);
    }
    r.trace = trace_id{f.trace_high, f.trace_low};
    r.span = f.span;
    r.flags = f.flags;
    r.version = static_cast<std::uint8_t>(version);
    r.error = traceparent_error::none;
    r.position = 0;
    return r;
}

/// A traceresponse value (W3C Trace Context Level 2: the callee's trace id,
/// its own call's id and flags): the same grammar and errors as traceparent.
inline traceparent_result parse_traceresponse(std::string_view value) noexcept { return parse_traceparent(value); }

/// The 55 characters of a version-00 traceparent, with no terminator.
struct traceparent_chars {
    char data[traceparent_size];
    std::string_view view() const noexcept { return {data, traceparent_size}; }
};

/// Writes the version-00 traceparent of (trace, span, flags) into `out`
/// (exactly 55 characters, no terminator). The ids are written as given:
/// format only a valid context (task_context::valid). Thread-safety: pure.
inline void format_traceparent(const trace_id& trace, std::uint64_t span, std::uint8_t flags,
                               char (&out)[traceparent_size]) noexcept {
    out[0] = '0';
    out[1] = '0';
    out[2] = '-';
    detail::write_id_fields(trace.high, trace.low, span, flags, out + 3);
}

inline void format_traceparent(const task_context& c, char (&out)[traceparent_size]) noexcept {
    format_traceparent(c.trace, c.span, c.flags, out);
}

inline traceparent_chars format_traceparent(const task_context& c) noexcept {
    traceparent_chars t;
    format_traceparent(c.trace, c.span, c.flags, t.data);
    return t;
}

/// The traceresponse a callee echoes for the call `c` (its own context): the
/// same text as its traceparent.
inline traceparent_chars format_traceresponse(const task_context& c) noexcept { return format_traceparent(c); }

}  // namespace loupe::tasks
