// Flow ids as text, to carry one in a request header or a message field (so
// that the process on the other side continues the flow) and to show one
// where numbers above 2^53 are not safe (JSON). See flow.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace loupe {

/// `id` as 16 lowercase hex digits (the form of a W3C trace context's
/// parent-id). Cost: one 16-byte string. Thread-safety: pure.
inline std::string flow_id_text(std::uint64_t id) {
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, id >>= 4) s[static_cast<std::size_t>(i)] = "0123456789abcdef"[id & 15];
    return s;
}

/// The flow id in `text` (1 to 16 hex digits, either case, nothing else),
/// or 0 ("no flow": LOUPE_FLOW records nothing for it) when `text` is
/// anything else: a header a client got wrong never stops a request.
/// Thread-safety: pure.
inline std::uint64_t parse_flow_id(std::string_view text) noexcept {
    if (text.empty() || text.size() > 16) return 0;
    std::uint64_t id = 0;
    for (const char c : text) {
        unsigned digit;
        if (c >= '0' && c <= '9') {
            digit = static_cast<unsigned>(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            digit = static_cast<unsigned>(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            digit = static_cast<unsigned>(c - 'A' + 10);
        } else {
            return 0;
        }
        id = id << 4 | digit;
    }
    return id;
}

}  // namespace loupe
