// Header fields as the carriers (carrier.hpp) read them: case-insensitive
// names, and the fields of a raw HTTP header block.
#pragma once

#include <cstddef>
#include <string_view>

#include "loupe/text/ascii.hpp"

namespace loupe::tasks::detail {

using loupe::text::iequals;

constexpr std::string_view trim_ows(std::string_view s) noexcept {
    std::size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
    return s.substr(b, e - b);
}

/// Calls `f(name, value)` for each field of an HTTP/1.x header block:
/// lines ending in "\r\n" (or "\n"), up to the first empty line or the end.
/// A line with no ':' (the request or status line), with an empty name or
/// with whitespace in its name (RFC 7230 §3.2.4 forbids it) is skipped, and
/// so is a line starting with a space or tab (obsolete line folding, which
/// RFC 7230 deprecates: its text is not joined to the field above). The
/// value is trimmed of spaces and tabs.
template <class F>
void for_each_header_field(std::string_view block, F&& f) {
    std::size_t pos = 0;
    while (pos < block.size()) {
        const std::size_t nl = block.find('\n', pos);
        const std::size_t end = nl == std::string_view::npos ? block.size() : nl;
        std::string_view line = block.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) return;
        if (line[0] == ' ' || line[0] == '\t') continue;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) continue;
        const std::string_view name = line.substr(0, colon);
        if (name.find_first_of(" \t") != std::string_view::npos) continue;
        f(name, trim_ows(line.substr(colon + 1)));
    }
}

}  // namespace loupe::tasks::detail
