// Making recorded bytes safe to print. Names and context values are bytes
// from the host program and may be invalid UTF-8; every text output of loupe
// (the stats table, dump, JSON) passes them through `printable` first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loupe::report {

/// Length of the valid UTF-8 sequence at the start of `s` (1..4), or 0 when
/// the first byte does not begin one (stray continuation byte, overlong
/// form, surrogate, beyond U+10FFFF, or cut short).
inline std::size_t utf8_sequence_length(std::string_view s) noexcept {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i) {
        if (b(i) < 0x80 || b(i) > 0xBF) return 0;
    }
    return n;
}

/// `s` with every byte that is not part of valid UTF-8 written as `\xHH`
/// (so the result is valid UTF-8). Control characters are left alone;
/// JSON escaping handles those.
inline std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    static const char hex[] = "0123456789abcdef";
    while (!s.empty()) {
        const std::size_t n = utf8_sequence_length(s);
        if (n == 0) {
            const auto c = static_cast<unsigned char>(s[0]);
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
            s.remove_prefix(1);
        } else {
            out.append(s.data(), n);
            s.remove_prefix(n);
        }
    }
    return out;
}

/// `s` as valid UTF-8 text to embed (a protobuf string field, a label): a
/// view of `s` itself when it is ASCII (the common case: no copy), else of
/// printable(s), kept inside. Cost: one scan of `s`.
class printable_view {
public:
    explicit printable_view(std::string_view s) : view_(s) {
        for (const char c : s) {
            if (static_cast<unsigned char>(c) >= 0x80) {
                fixed_ = printable(s);
                view_ = fixed_;
                break;
            }
        }
    }
    printable_view(const printable_view&) = delete;
    printable_view& operator=(const printable_view&) = delete;
    operator std::string_view() const noexcept { return view_; }

private:
    std::string_view view_;
    std::string fixed_;
};

}  // namespace loupe::report
