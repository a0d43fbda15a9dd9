// The vocabulary of tracestate parsing (tracestate.hpp): what to do with a
// list that breaks the rules, the kinds of problem and their names, and the
// summary a parse returns besides the text it kept.
#pragma once

#include <cstddef>
#include <cstdint>

namespace loupe::tasks {

/// What to do with a tracestate that breaks the rules.
enum class tracestate_policy : std::uint8_t {
    /// Keep the valid members, drop the others: invalid members, a repeated
    /// key (the leftmost, most recent, entry stays) and members beyond the
    /// 32nd. The spec allows it ("invalid tracestate entries MAY also be
    /// discarded"); it is what loupe does by default.
    drop_invalid_members,
    /// Drop the whole list on any invalid member, repeated key or 33rd
    /// member: what the W3C test suite checks at its strict level (the spec
    /// allows it too: "the vendor MAY discard the entire header").
    discard_on_any_error,
};

/// The first thing wrong with a tracestate.
enum class tracestate_problem : std::uint8_t {
    none,
    missing_equals,       ///< a member with no '='
    bad_key,              ///< a key that is neither simple-key nor tenant@system (a character or the shape)
    key_too_long,         ///< over 256 characters, a tenant over 241 or a system over 14
    empty_value,          ///< nothing after '='
    bad_value_character,  ///< a value character outside 0x20-0x7E, or '='
    value_too_long,       ///< over 256 characters
    duplicate_key,        ///< a key already in the list
    too_many_members,     ///< a 33rd member
};

/// The problem's name as written above ("duplicate_key"). Thread-safety: pure.
inline const char* tracestate_problem_name(tracestate_problem p) noexcept {
    switch (p) {
        case tracestate_problem::none:
            return "none";
        case tracestate_problem::missing_equals:
            return "missing_equals";
        case tracestate_problem::bad_key:
            return "bad_key";
        case tracestate_problem::key_too_long:
            return "key_too_long";
        case tracestate_problem::empty_value:
            return "empty_value";
        case tracestate_problem::bad_value_character:
            return "bad_value_character";
        case tracestate_problem::value_too_long:
            return "value_too_long";
        case tracestate_problem::duplicate_key:
            return "duplicate_key";
        case tracestate_problem::too_many_members:
            return "too_many_members";
    }
    return "?";
}

/// What parsing a tracestate found, besides the text it kept.
struct tracestate_summary {
    tracestate_problem problem = tracestate_problem::none;  ///< the first one, in text order
    std::size_t position = 0;                               ///< of the problem, in the values joined by one ','
    std::uint16_t members_kept = 0;
    std::uint16_t members_dropped =
        0;  ///< invalid, repeated, beyond the 32nd (or every member, by discard_on_any_error)
    std::uint16_t members_truncated = 0;  ///< valid members removed to fit 512 characters
};

}  // namespace loupe::tasks
