// "Did you mean": the candidates spelled closest to a name, for messages
// about a name that matched nothing (a parameter spec's `method=` selector
// against the method sites that ran).
//
// Cost: an edit distance per candidate (O(length²)); for error paths and
// reports only. Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loupe {

/// Levenshtein distance between `a` and `b` (insertions, deletions and
/// substitutions of one byte each cost 1).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

/// Up to `limit` of `candidates` spelled close to `target`, nearest first
/// (ties in name order, no duplicates). A method signature is compared by
/// its name ("shop::Cart::add") when `target` gives no parameter list, so a
/// selector without parentheses finds the overloads it meant. Close: at
/// most a third of the compared length apart, and at least 2 edits allowed.
inline std::vector<std::string> closest_spellings(std::string_view target, const std::vector<std::string>& candidates,
                                                  std::size_t limit) {
    const bool by_name = target.find('(') == std::string_view::npos;
    const std::size_t allowed = std::max<std::size_t>(2, target.size() / 3);
    std::vector<std::pair<std::size_t, std::string>> near;
    for (const std::string& c : candidates) {
        std::string_view compared = c;
        if (by_name) compared = compared.substr(0, compared.find('('));
        // A leading return type ("double shop::price(...)") is not part of the name.
        if (by_name && compared.rfind(' ') != std::string_view::npos) compared.remove_prefix(compared.rfind(' ') + 1);
        const std::size_t d = edit_distance(target, compared);
        if (d <= allowed) near.emplace_back(d, c);
    }
    std::sort(near.begin(), near.end());
    std::vector<std::string> out;
    for (auto& n : near) {
        if (out.size() == limit) break;
        if (std::find(out.begin(), out.end(), n.second) == out.end()) out.push_back(std::move(n.second));
    }
    return out;
}

}  // namespace loupe
