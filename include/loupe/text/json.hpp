// Minimal JSON text helpers shared by the report formatters and the CLI.
// Output is RFC 8259 JSON: strings escaped, non-finite numbers as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "loupe/text/printable.hpp"

namespace loupe::report::json {

/// Appends `s` as a JSON string literal (quotes included). Valid UTF-8 is
/// copied; invalid bytes become the text `\xHH` (see report::printable);
/// control characters are escaped.
inline void append_string(std::string& out, std::string_view raw) {
    const std::string s = printable(raw);
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += ch;
                }
        }
    }
    out += '"';
}

inline std::string quote(std::string_view s) {
    std::string out;
    append_string(out, s);
    return out;
}

/// A double as a JSON number that reads back to the same value, or null.
inline std::string number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);  // shortest for most values
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

inline std::string number(std::uint64_t v) { return std::to_string(v); }

}  // namespace loupe::report::json
