// Task context for protocols with no headers: the task token (trace id,
// call id, flags) written in front of a name the protocol does carry (a
// queue or topic name, a method or file name, a job label), and taken off
// again before the application sees the name.
//
//     std::string topic = std::string(loupe::tasks::encode_prefix(call).view()) + "orders.created";
//     ...
//     auto in = loupe::tasks::strip(received_topic);
//     in.rest;                       // "orders.created": what the application sees
//     if (in.found()) ...in.context...
//
// The prefix is exactly 60 characters:
//
//     __lt1-<32 hex trace-id>-<16 hex span-id>-<2 hex flags>__
//     __lt1-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01__orders.created
//
// the marker `__lt1-` (loupe task token, format 1), the three fields of a
// version-00 traceparent in lowercase hex, and `__`. Only [_a-z0-9-]: it
// fits names that allow identifiers with '-'. The tracestate does not
// travel in band.
//
// strip() takes the prefix off only when it is well formed (lowercase hex,
// the dashes, the closing `__`, non-zero ids). A name that starts with the
// marker but is not a well-formed token is left untouched (`rest` is the
// whole name) and counted (propagation_errors.hpp); a name without the
// marker is simply a name.
//
// Works with or without a session: nothing here records. Cost: strip reads
// at most 60 characters; encode_prefix writes them. No allocation, no
// exception. Thread-safety: pure (strip also bumps the error counter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loupe/tasks/detail/id_fields.hpp"
#include "loupe/tasks/propagation_errors.hpp"
#include "loupe/tasks/task_context.hpp"

namespace loupe::tasks {

inline constexpr std::string_view in_band_marker = "__lt1-";
inline constexpr std::string_view in_band_end = "__";
inline constexpr std::size_t in_band_prefix_size = 60;

/// The 60 characters of a prefix, with no terminator.
struct in_band_prefix {
    char data[in_band_prefix_size];
    std::string_view view() const noexcept { return {data, in_band_prefix_size}; }
};

/// Writes the prefix of `c` (its trace id, span id and flags) into `out`.
/// Encode only a valid context (task_context::valid). Thread-safety: pure.
inline void encode_prefix(const task_context& c, char (&out)[in_band_prefix_size]) noexcept {
    for (std::size_t i = 0; i < in_band_marker.size(); ++i) out[i] = in_band_marker[i];
    detail::write_id_fields(c.trace.high, c.trace.low, c.span, c.flags, out + in_band_marker.size());
    out[in_band_prefix_size - 2] = '_';
    out[in_band_prefix_size - 1] = '_';
}

inline in_band_prefix encode_prefix(const task_context& c) noexcept {
    in_band_prefix p;
    encode_prefix(c, p.data);
    return p;
}

/// What strip() found at the start of a name.
enum class in_band_status : std::uint8_t {
    no_token,   ///< the name does not start with the marker
    token,      ///< a well-formed token, taken off
    malformed,  ///< the marker, but not a well-formed token: the name is left as it was (counted)
};

/// Why a token after the marker is malformed.
enum class in_band_error : std::uint8_t {
    none,
    too_short,       ///< the name ends inside the token
    not_hex,         ///< a character that is not a hex digit where one belongs
    upper_case_hex,  ///< 'A'-'F'
    expected_dash,   ///< a field is too long, or its '-' is missing
    zero_trace_id,
    zero_span_id,
    expected_end_marker,  ///< the flags are not followed by "__"
};

inline const char* in_band_error_name(in_band_error e) noexcept {
    switch (e) {
        case in_band_error::none:
            return "none";
        case in_band_error::too_short:
            return "too_short";
        case in_band_error::not_hex:
            return "not_hex";
        case in_band_error::upper_case_hex:
            return "upper_case_hex";
        case in_band_error::expected_dash:
            return "expected_dash";
        case in_band_error::zero_trace_id:
            return "zero_trace_id";
        case in_band_error::zero_span_id:
            return "zero_span_id";
        case in_band_error::expected_end_marker:
            return "expected_end_marker";
    }
    return "?";
}

struct strip_result {
    in_band_status status = in_band_status::no_token;
    /// The token's context (trace id, span id, flags as sent; no tracestate)
    /// when found(); otherwise not valid.
    task_context context;
    /// The name the application sees: after the prefix when found(), else
    /// the whole name.
    std::string_view rest;
    in_band_error error = in_band_error::none;
    std::size_t position = 0;  ///< of the error in the name, when malformed

    bool found() const noexcept { return status == in_band_status::token; }
};

namespace detail {

constexpr in_band_error in_band_error_of(field_error e) noexcept {
    switch (e) {
        case field_error::none:
            return in_band_error::none;
        case field_error::too_short:
            return in_band_error::too_short;
        case field_error::not_hex:
            return in_band_error::not_hex;
        case field_error::upper_case_hex:
            return in_band_error::upper_case_hex;
        case field_error::expected_dash:
            return in_band_error::expected_dash;
        case field_error::zero_trace_id:
            return in_band_error::zero_trace_id;
        case field_error::zero_span_id:
            return in_band_error::zero_span_id;
    }
    return in_band_error::not_hex;
}

}  // namespace detail

/// Takes the task token off the front of `name` (see the top of this file).
inline strip_result strip(std::string_view name) noexcept {
    strip_result r;
    r.rest = name;
    if (name.substr(0, in_band_marker.size()) != in_band_marker) return r;
    const std::size_t at = in_band_marker.size();
    const detail::id_fields f = detail::parse_id_fields(name.data() + at, name.size() - at);
    if (f.error != detail::field_error::none) {
        r.error = detail::in_band_error_of(f.error);
        r.position = at + f.position;
    } else {
        for (std::size_t i = at + detail::id_fields_size; i < in_band_prefix_size; ++i) {
            if (i >= name.size() || name[i] != '_') {
                r.error = i >= name.size() ? in_band_error::too_short : in_band_error::expected_end_marker;
                r.position = i;
                break;
            }
        }
    }
    if (r.error != in_band_error::none) {
        r.status = in_band_status::malformed;
        detail::count_propagation_error();
        return r;
    }
    r.status = in_band_status::token;
    r.context.trace = trace_id{f.trace_high, f.trace_low};
    r.context.span = f.span;
    r.context.flags = f.flags;
    r.rest = name.substr(in_band_prefix_size);
    return r;
}

}  // namespace loupe::tasks
