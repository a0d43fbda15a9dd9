// Glob patterns for the filter language's `~` operator (see loupe/filter.hpp
// and docs/filters.md): '*' matches any run of bytes, '?' exactly one byte,
// and '\*', '\?', '\\' match a literal '*', '?', '\'. Matching is byte-exact.
#pragma once

#include <cstddef>
#include <string_view>

namespace loupe::detail {

/// Whether `subject` matches all of `pattern`. Iterative (it remembers the
/// last '*' and retries from there), so it uses no recursion and costs
/// O(pattern.size() * subject.size()) in the worst case. A lone '\' at the end
/// of the pattern (which `glob_invalid_escape` rejects) matches a '\'.
/// Thread-safety: pure function.
inline bool glob_match(std::string_view pattern, std::string_view subject) noexcept {
    constexpr std::size_t none = std::string_view::npos;
    std::size_t p = 0;
    std::size_t s = 0;
    std::size_t star_p = none;  // pattern position just after the last '*'
    std::size_t star_s = 0;     // subject position that '*' was last tried to end at
    while (s < subject.size()) {
        if (p < pattern.size()) {
            char c = pattern[p];
            if (c == '*') {
                star_p = ++p;
                star_s = s;
                continue;
            }
            if (c == '?') {
                ++p;
                ++s;
                continue;
            }
            std::size_t width = 1;
            if (c == '\\' && p + 1 < pattern.size()) {
                c = pattern[p + 1];
                width = 2;
            }
            if (c == subject[s]) {
                p += width;
                ++s;
                continue;
            }
        }
        if (star_p == none) {
            return false;
        }
        // Let the last '*' swallow one more byte and retry what follows it.
        p = star_p;
        s = ++star_s;
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

/// The offset of the first '\' in `pattern` that is not followed by '*', '?'
/// or '\', or npos when every escape is valid.
/// Thread-safety: pure function.
inline std::size_t glob_invalid_escape(std::string_view pattern) noexcept {
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '\\') {
            continue;
        }
        if (i + 1 == pattern.size()) {
            return i;
        }
        const char next = pattern[i + 1];
        if (next != '*' && next != '?' && next != '\\') {
            return i;
        }
        ++i;
    }
    return std::string_view::npos;
}

}  // namespace loupe::detail
