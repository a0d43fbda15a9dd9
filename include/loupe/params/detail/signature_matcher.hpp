// Matching of a spec selector against a method site (US 9,129,056
// ¶0120–0132), both parsed and normalized by signature_parser.hpp: names,
// parameter and return types, and the receiver's class under the patent's
// three hierarchy match modes (match_mode).
//
// ## Matching
//
// Names compare component by component from the right. Within a component
// the identifier must be equal; template arguments are compared only when
// both sides give them (a name without template arguments matches every
// instantiation: there is no erasure in C++, and sites of one template share
// one signature text).
// - Types (parameters and return): a qualified name matches another when one
//   is a suffix of the other at a `::` boundary (¶0122: spec `Item const&`
//   matches site `shop::Item const&`; also the site may have written the
//   short name its namespace allowed, so spec `shop::Item` matches site
//   `Item`). Everything else (builtins, `*`, `&`, cv) must be equal.
// - Parameters: a spec without parentheses matches any list; otherwise the
//   lists must have the same length and match type by type. A site written
//   without a parameter list cannot be restricted by one (it matches).
// - Return type: omitted in the spec → any (¶0123). Given in the spec and
//   stated by the site → must match. Not stated by the site → matches (a site
//   written without its return type cannot be restricted by it).
// - Free functions: the spec's qualified name must equal the site's or be a
//   suffix of it at a `::` boundary (`price` and `shop::price` match site
//   `shop::price`; `other::price` does not).
// - Methods: name, parameters and return as above (method_part_matches),
//   plus the receiver check of the spec's class part C (receiver_matches). A
//   spec without a class part (`method=size()`) selects that method of every
//   class. A class name X matches canonical name N when N == X or N ends
//   with `::X`.
//     exact (V1):      R matches C.
//     inherited (V2):  some ancestor-or-self C' of R matches C and D ==
//                      resolve(C', m); m is the function name (C++ name
//                      lookup: a class declaring a name hides every base
//                      overload of it), resolve walks C' and its bases
//                      breadth-first (nearest first) to the first level with
//                      a class that declares m. If no class up from C'
//                      declares m, resolve(C', m) = C' (which then cannot be
//                      D, since D registered "D declares m": the method only
//                      exists below C' → no match). Two distinct classes on
//                      that level → ambiguous: no match and an error message.
//                      D compares with the one-side-suffix rule, since the
//                      site may have written a short class name.
//     subclasses (V3): some ancestor-or-self of R matches C.
//   R is the receiver's dynamic class (canonical), D the site's declaring
//   class (the class part of its signature). An empty R means "unknown"
//   (no RTTI): D stands in for it.
//
// Thread-safety: pure functions over their arguments; the class_graph is
// locked by its own members.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/params/detail/class_graph.hpp"
#include "loupe/params/detail/signature_lexer.hpp"
#include "loupe/params/detail/signature_parser.hpp"
#include "loupe/params/match_mode.hpp"

namespace loupe::detail {

inline bool type_matches(std::string_view spec, std::string_view site, std::size_t depth = 0);

/// One name component: identifier, and template arguments if given.
inline bool component_matches(std::string_view a, std::string_view b, std::size_t depth = 0) {
    struct split {
        std::string_view id;
        bool has_args = false;
        std::vector<std::string_view> args;
    };
    auto cut = [](std::string_view s) {
        split out;
        out.id = s;
        if (s.substr(0, 8) == "operator" && (s.size() == 8 || !sig_word_byte(s[8]))) return out;
        const std::size_t lt = s.find('<');
        if (lt == std::string_view::npos || s.back() != '>') return out;
        out.id = s.substr(0, lt);
        out.has_args = true;
        const std::string_view inner = s.substr(lt + 1, s.size() - lt - 2);
        std::size_t nest = 0, from = 0;
        for (std::size_t k = 0; k < inner.size(); ++k) {
            const char c = inner[k];
            if (c == '<' || c == '(' || c == '[') ++nest;
            if ((c == '>' || c == ')' || c == ']') && nest != 0) --nest;
            if (c == ',' && nest == 0) {
                out.args.push_back(inner.substr(from, k - from));
                from = k + 1;
            }
        }
        if (!inner.empty()) out.args.push_back(inner.substr(from));
        return out;
    };
    const split x = cut(a), y = cut(b);
    if (x.id != y.id) return false;
    if (!x.has_args || !y.has_args) return true;
    if (x.args.size() != y.args.size()) return false;
    for (std::size_t k = 0; k < x.args.size(); ++k) {
        if (!type_matches(x.args[k], y.args[k], depth + 1)) return false;
    }
    return true;
}

/// Qualified names as components. `either_suffix`: one may be a suffix of
/// the other (types); otherwise `spec` must be a suffix of `site`.
inline bool qualified_matches(const std::vector<std::string>& spec, const std::vector<std::string>& site,
                              bool either_suffix, std::size_t depth = 0) {
    if (spec.empty() || site.empty()) return spec.size() == site.size();
    if (!either_suffix && spec.size() > site.size()) return false;
    const std::size_t k = std::min(spec.size(), site.size());
    for (std::size_t j = 1; j <= k; ++j) {
        if (!component_matches(spec[spec.size() - j], site[site.size() - j], depth)) return false;
    }
    return true;
}

/// Two normalized types (canonical text) under the unqualified-name rule.
inline bool type_matches(std::string_view spec, std::string_view site, std::size_t depth) {
    if (spec == site) return true;
    if (depth > 2 * signature_max_depth) return false;
    struct elem {
        bool is_name;
        std::string_view text;
    };
    auto elems = [](std::string_view s) {
        const std::vector<sig_token> t = sig_lex(s);
        std::vector<elem> out;
        std::size_t k = 0;
        while (t[k].kind != sig_token::end) {
            if (!(t[k].kind == sig_token::word && !sig_keyword(t[k].text)) &&
                !(t[k].is("::") && t[k + 1].kind == sig_token::word)) {
                out.push_back({false, t[k].text});
                ++k;
                continue;
            }
            // A name: [::] word [<...>] {:: word [<...>]}
            const std::size_t from = t[k].pos;
            if (t[k].is("::")) ++k;
            while (t[k].kind == sig_token::word) {
                ++k;
                if (t[k].is("<")) {
                    std::size_t nest = 0;
                    do {
                        if (t[k].is("<") || t[k].is("(")) ++nest;
                        if (t[k].is(">") || t[k].is(")")) --nest;
                        ++k;
                    } while (nest != 0 && t[k].kind != sig_token::end);
                }
                if (t[k].is("::") && t[k + 1].kind == sig_token::word) {
                    ++k;
                    continue;
                }
                break;
            }
            out.push_back({true, s.substr(from, t[k].pos - from)});
        }
        return out;
    };
    const std::vector<elem> a = elems(spec), b = elems(site);
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].is_name != b[k].is_name) return false;
        if (!a[k].is_name) {
            if (a[k].text != b[k].text) return false;
        } else if (!qualified_matches(split_class_name(a[k].text), split_class_name(b[k].text), true, depth)) {
            return false;
        }
    }
    return true;
}

/// The method part: name, parameter types and return type (file comment).
inline bool method_part_matches(const signature& spec, const signature& site) {
    if (!component_matches(spec.name, site.name)) return false;
    if (spec.has_params && site.has_params) {
        if (spec.params.size() != site.params.size()) return false;
        for (std::size_t k = 0; k < spec.params.size(); ++k) {
            if (!type_matches(spec.params[k], site.params[k])) return false;
        }
    }
    if (!spec.return_type.empty() && !site.return_type.empty()) {
        if (!type_matches(spec.return_type, site.return_type)) return false;
    }
    return true;
}

/// A free function site (no receiver): the method part, and the spec's
/// qualified name equal to or a `::`-boundary suffix of the site's.
inline bool free_function_matches(const signature& spec, const signature& site) {
    if (!method_part_matches(spec, site)) return false;
    std::vector<std::string> a = spec.scope, b = site.scope;
    a.push_back(spec.name);
    b.push_back(site.name);
    return qualified_matches(a, b, false);
}

/// A receiver check's outcome; `error` is set when the answer could not be
/// decided (an ambiguous inherited resolve) and then `matches` is false.
struct receiver_match {
    bool matches = false;
    std::string error;
};

/// The class part of a method spec against a call (file comment, V1–V3).
/// `receiver_class`: R, canonical (empty: unknown, D is used);
/// `declaring_class`: D, the site signature's class part.
inline receiver_match receiver_matches(const signature& spec, match_mode mode, std::string_view receiver_class,
                                       std::string_view declaring_class, const class_graph& graph) {
    if (spec.scope.empty()) return {true, {}};
    const std::string r(receiver_class.empty() ? declaring_class : receiver_class);
    auto matches_c = [&](std::string_view n) { return qualified_matches(spec.scope, split_class_name(n), false); };
    if (mode == match_mode::exact) return {matches_c(r), {}};

    // R and its ancestors, nearest first (breadth-first, each class once).
    constexpr std::size_t max_classes = 4096;
    std::vector<std::string> order{r};
    for (std::size_t k = 0; k < order.size() && order.size() < max_classes; ++k) {
        for (std::string& base : graph.direct_bases(order[k])) {
            if (std::find(order.begin(), order.end(), base) == order.end()) order.push_back(std::move(base));
        }
    }
    std::vector<std::string> matched;
    for (const std::string& c : order) {
        if (matches_c(c)) matched.push_back(c);
    }
    if (mode == match_mode::subclasses || matched.empty()) return {!matched.empty(), {}};

    // inherited: D must be resolve(C', m) for a matching C'.
    const std::vector<std::string> d = split_class_name(declaring_class);
    std::string first_error;
    for (const std::string& c : matched) {
        std::vector<std::string> level{c}, seen{c};
        std::string resolved;
        bool ambiguous = false;
        while (!level.empty() && resolved.empty() && !ambiguous && seen.size() < max_classes) {
            std::vector<std::string> declarers;
            for (const std::string& x : level) {
                if (graph.declares(x, spec.name)) declarers.push_back(x);
            }
            if (declarers.size() == 1) {
                resolved = declarers[0];
            } else if (declarers.size() > 1) {
                ambiguous = true;
                if (first_error.empty()) {
                    first_error = "match=inherited: '" + spec.name + "' of '" + c + "' is ambiguous: declared by";
                    for (std::size_t k = 0; k < declarers.size(); ++k) {
                        first_error += (k == 0 ? " '" : ", '") + declarers[k] + "'";
                    }
                    first_error += " at the same distance";
                }
            } else {
                std::vector<std::string> next;
                for (const std::string& x : level) {
                    for (std::string& base : graph.direct_bases(x)) {
                        if (std::find(seen.begin(), seen.end(), base) == seen.end()) {
                            seen.push_back(base);
                            next.push_back(std::move(base));
                        }
                    }
                }
                level = std::move(next);
            }
        }
        if (ambiguous) continue;
        if (resolved.empty()) resolved = c;  // nobody declares m from C' up
        if (qualified_matches(d, split_class_name(resolved), true)) return {true, {}};
    }
    return {false, first_error};
}

}  // namespace loupe::detail
