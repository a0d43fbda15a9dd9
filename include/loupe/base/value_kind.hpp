// What a traced value holds (`value_kind`): the kinds of method parameter
// values and zone arguments, and the statuses of a chain that could not
// produce one. Split from param_value.hpp so that instrumenting code can name
// a kind without the value view's string formatting.
//
// Thread-safety: constants.
#pragma once

#include <cstdint>

namespace loupe {

/// What a traced value holds. Kinds below `null_value` carry a value; the
/// others are the outcome of a chain that could not produce one.
enum class value_kind : std::uint8_t {
    boolean = 0,
    integer = 1,           ///< signed, as int64
    unsigned_integer = 2,  ///< unsigned, as uint64
    floating = 3,          ///< double (NaN and infinities kept)
    string = 4,            ///< UTF-8 text, possibly truncated
    type_name = 5,         ///< a (dynamic) type's name, from `type_of`
    object_id = 6,         ///< from `object_id`: unique among live objects
    hash = 7,              ///< from `hash`: keyed 64-bit hash, stable within one process
    redacted = 8,          ///< from `redact`: only the original size is kept
    // --- statuses (the patent's names in comments) ---
    null_value = 16,         ///< "NullValue": the value to trace is null
    null_in_call = 17,       ///< "NullInCall": a modifier got a null input
    invalid_index = 18,      ///< "InvalidIndex": `at(i)` out of range
    exception_in_call = 19,  ///< "ExceptionInCall": a called getter/function threw
    cast_failed = 20,        ///< "CastFailed": `cast<U>` did not fit the dynamic type
    enable_failed = 21,      ///< "EnableFailed": the spec did not bind to this method
    unknown = 22,            ///< "Unknown": a kind this reader does not know
};

/// True for the status kinds (no value).
constexpr bool is_status(value_kind k) noexcept { return static_cast<std::uint8_t>(k) >= 16; }

/// The kind's name: "bool", "int", "uint", "double", "string", "type",
/// "object_id", "hash", "redacted", or the patent's status name
/// ("NullValue", "NullInCall", "InvalidIndex", "ExceptionInCall",
/// "CastFailed", "EnableFailed", "Unknown").
constexpr const char* to_string(value_kind k) noexcept {
    switch (k) {
        case value_kind::boolean: return "bool";
        case value_kind::integer: return "int";
        case value_kind::unsigned_integer: return "uint";
        case value_kind::floating: return "double";
        case value_kind::string: return "string";
        case value_kind::type_name: return "type";
        case value_kind::object_id: return "object_id";
        case value_kind::hash: return "hash";
        case value_kind::redacted: return "redacted";
        case value_kind::null_value: return "NullValue";
        case value_kind::null_in_call: return "NullInCall";
        case value_kind::invalid_index: return "InvalidIndex";
        case value_kind::exception_in_call: return "ExceptionInCall";
        case value_kind::cast_failed: return "CastFailed";
        case value_kind::enable_failed: return "EnableFailed";
        case value_kind::unknown: return "Unknown";
    }
    return "Unknown";
}

}  // namespace loupe
