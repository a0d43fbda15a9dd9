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

#include "loupe/base/value_kind.hpp"

namespace loupe {

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
