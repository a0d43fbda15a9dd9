// ASCII text helpers for protocol fields (HTTP header names, W3C Trace
// Context keys): case-insensitive equality without the locale.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace loupe::text {

/// ASCII case-insensitive equality (header names: RFC 7230 §3.2); bytes
/// outside A-Z compare as they are.
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

}  // namespace loupe::text
