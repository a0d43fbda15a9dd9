// Parses the comma-separated key=value lists of the OpenTelemetry
// environment (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): the
// W3C Baggage syntax without properties. Spaces around keys and values are
// trimmed, values are percent-decoded (%HH), empty members (",,") are
// skipped. A key must be a token (RFC 7230: letters, digits and
// !#$%&'*+-.^_`|~), a decoded value must hold no control character (no CR
// or LF, so a header cannot be split in two). A key given twice keeps its
// last value, at its first place.
//
// Cost: linear in the text. Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loupe::detail::http {

using key_value_list = std::vector<std::pair<std::string, std::string>>;

/// What parse_key_values found wrong: a message and the 1-based position of
/// the character it is about.
struct key_value_error {
    std::string what;
    std::size_t position = 0;
    explicit operator bool() const noexcept { return !what.empty(); }
};

inline bool is_token_char(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

inline int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Parses `text` into `out` (cleared first); returns what is wrong, or an
/// empty error.
inline key_value_error parse_key_values(std::string_view text, key_value_list& out) {
    out.clear();
    const auto is_space = [](char c) { return c == ' ' || c == '\t'; };
    std::size_t i = 0;
    while (i <= text.size()) {
        std::size_t end = text.find(',', i);
        if (end == std::string_view::npos) end = text.size();
        std::size_t b = i, e = end;
        while (b < e && is_space(text[b])) ++b;
        while (e > b && is_space(text[e - 1])) --e;
        if (b < e) {
            const std::size_t eq = text.find('=', b);
            if (eq == std::string_view::npos || eq >= e) return {"expected key=value", b + 1};
            std::size_t ke = eq;
            while (ke > b && is_space(text[ke - 1])) --ke;
            if (ke == b) return {"empty key before '='", eq + 1};
            for (std::size_t k = b; k < ke; ++k) {
                if (!is_token_char(text[k])) return {std::string("unexpected '") + text[k] + "' in a key", k + 1};
            }
            std::size_t vb = eq + 1;
            while (vb < e && is_space(text[vb])) ++vb;
            std::string value;
            for (std::size_t k = vb; k < e; ++k) {
                const std::size_t at = k;
                char c = text[k];
                if (c == '%') {
                    const int hi = k + 2 < e ? hex_digit(text[k + 1]) : -1;
                    const int lo = k + 2 < e ? hex_digit(text[k + 2]) : -1;
                    if (hi < 0 || lo < 0) return {"'%' not followed by two hex digits", at + 1};
                    c = static_cast<char>(hi * 16 + lo);
                    k += 2;
                }
                const auto u = static_cast<unsigned char>(c);
                if (u < 0x20 || u == 0x7f) return {"a control character in a value", at + 1};
                value.push_back(c);
            }
            std::string key(text.substr(b, ke - b));
            bool replaced = false;
            for (auto& kv : out) {
                if (kv.first == key) {
                    kv.second = value;
                    replaced = true;
                }
            }
            if (!replaced) out.emplace_back(std::move(key), std::move(value));
        }
        i = end + 1;
    }
    return {};
}

}  // namespace loupe::detail::http
