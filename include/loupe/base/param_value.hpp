// A traced parameter value as readers and sinks see it: its kind (a value or
// the status of the chain that could not produce one, named as in
// US 9,129,056) and the `param_value` view. The record vocabulary shared by
// the sinks and the `.loupe` format; parameter tracing itself is params/.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

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

/// One traced value, as a view. `text` (string, type_name) points into
/// storage owned by whoever produced the view (a writer, a record, a trace).
struct param_value {
    std::uint32_t spec = 0;  ///< index of the spec that produced it in its session (stable order)
    value_kind kind = value_kind::unknown;
    bool truncated = false;          ///< string/type_name cut to the value budget
    std::uint32_t original_size = 0;  ///< string/type_name/redacted: size in bytes before truncation
    std::uint64_t bits = 0;          ///< boolean (0/1), integer, unsigned, double bits, object id, hash
    std::string_view text;           ///< string, type_name

    bool as_bool() const noexcept { return bits != 0; }
    std::int64_t as_int() const noexcept { return static_cast<std::int64_t>(bits); }
    std::uint64_t as_uint() const noexcept { return bits; }
    double as_double() const noexcept {
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
    }
};

/// Formats a value for people: `true`, `-3`, `2.5`, the text (followed by
/// `…` when truncated), `<redacted 12 B>`, `#1f2e…` for hashes, `@0x…` for
/// object ids, or the status name. Not the hot path.
inline std::string format_value(const param_value& v) {
    char buf[64];
    switch (v.kind) {
        case value_kind::boolean: return v.as_bool() ? "true" : "false";
        case value_kind::integer: return std::to_string(v.as_int());
        case value_kind::unsigned_integer: return std::to_string(v.as_uint());
        case value_kind::floating: {
            std::snprintf(buf, sizeof buf, "%.17g", v.as_double());
            return buf;
        }
        case value_kind::string:
        case value_kind::type_name: return v.truncated ? std::string(v.text) + "\xE2\x80\xA6" : std::string(v.text);
        case value_kind::object_id:
            std::snprintf(buf, sizeof buf, "@0x%llx", static_cast<unsigned long long>(v.bits));
            return buf;
        case value_kind::hash:
            std::snprintf(buf, sizeof buf, "#%016llx", static_cast<unsigned long long>(v.bits));
            return buf;
        case value_kind::redacted:
            std::snprintf(buf, sizeof buf, "<redacted %u B>", v.original_size);
            return buf;
        default: return to_string(v.kind);
    }
}

}  // namespace loupe
