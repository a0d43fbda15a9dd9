// The text of parameter specs (session_config::params) → param_spec values.
//
// One spec per line; blank lines and lines whose first non-blank byte is '#'
// are ignored, and a '#' that starts an item or follows a blank (outside
// parentheses and quotes) starts a comment to the end of the line. A line
// holds `key=value` items separated by ';' (only a ';' outside parentheses
// and double-quoted strings separates; whitespace around items, keys and
// values is dropped; empty items, e.g. a trailing ';', are ignored):
//
//     method=shop::Cart::add(Item const&,int); param=1; chain=field(sku)|truncate(16); match=exact;
//     data=entry,exit,wall,cpu; name=sku
//
// Keys (each at most once):
// - method (required): the selector, parsed by parse_signature
//   (signature_parser.hpp: normalization; signature_matcher.hpp: matching
//   rules). Without parentheses it selects every overload.
// - param: 0..255, the parameter a runtime chain starts from (0 = the
//   receiver). Absent (-1): with no chain, the spec times the method and
//   records the site's compile-time chains.
// - chain: a runtime modifier chain, kept verbatim (its grammar belongs to
//   detail::parse_chain) with the 1-based column of its first byte, so a
//   chain error at byte offset k is at column chain_column + k. Needs param.
//   `chain=@name` alone names a compile-time chain registered at the site:
//   the name goes to compiled_chain (chain stays empty) and param may be
//   omitted. An empty `chain=` is the empty chain (the parameter itself).
// - match: exact | inherited | subclasses (US 9,129,056 ¶0126 V1/V2/V3).
//   Default subclasses: in C++ a spec on Base::f is expected to see every
//   call that lands in f on a Base object, whatever its dynamic class, and
//   with no registered hierarchy it degrades to exact.
// - data: comma list of entry, exit, wall, cpu (cpu = also thread CPU time at
//   entry and exit). Replaces the default entry,exit,wall.
// - name: the label shown in reports, [A-Za-z_][A-Za-z0-9_.-]*, at most 128
//   bytes. Default: "param<N>" or "param<N>.<chain>" ("param1.field(sku)"),
//   the compile-time chain's name, or empty for a timing-only spec.
//
// Errors throw param_spec_error naming the line and 1-based byte column (at
// most the line's length + 1) and what was expected. Never crashes: the
// signature parser bounds its size and nesting.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/params/detail/signature_matcher.hpp"
#include "loupe/params/detail/signature_parser.hpp"
#include "loupe/base/error.hpp"

namespace loupe::detail {

/// A parameter spec text that does not parse. what() is
/// "params line L, column C: <message>".
class param_spec_error : public error {
public:
    param_spec_error(std::size_t at_line, std::size_t at_column, const std::string& what_expected)
        : error("params line " + std::to_string(at_line) + ", column " + std::to_string(at_column) + ": " +
                what_expected),
          line(at_line),
          column(at_column),
          message(what_expected) {}

    std::size_t line;     ///< 1-based
    std::size_t column;   ///< 1-based byte column in the line (line length + 1 = at its end)
    std::string message;  ///< without the position
};

/// One parsed spec line.
struct param_spec {
    std::size_t line = 0;           ///< 1-based line in the text
    std::string text;               ///< the line without its comment, trimmed
    signature method;               ///< method= (selector)
    std::size_t method_column = 0;  ///< 1-based column of the selector's first byte
    int param = -1;                 ///< 0..255; -1 = absent
    std::string chain;              ///< runtime chain text (verbatim, trimmed); empty = none / the empty chain
    std::size_t chain_column = 0;   ///< 1-based column of chain's first byte (0 without chain=)
    std::string compiled_chain;     ///< `chain=@name`: the name without '@'
    match_mode match = match_mode::subclasses;
    bool data_entry = true;
    bool data_exit = true;
    bool data_wall = true;
    bool data_cpu = false;
    std::string name;  ///< name= or the default (file comment)
};

/// Longest name= accepted.
constexpr std::size_t param_spec_max_name_bytes = 128;

namespace param_spec_text {

inline bool blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

/// [b, e) without blanks at both ends.
inline void trim(std::string_view s, std::size_t& b, std::size_t& e) noexcept {
    while (b < e && blank(s[b])) ++b;
    while (e > b && blank(s[e - 1])) --e;
}

inline std::string quote(std::string_view s) {
    constexpr std::size_t max = 40;
    std::string out = "'";
    out += s.size() > max ? std::string(s.substr(0, max)) + "..." : std::string(s);
    return out + "'";
}

inline bool ident_start(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool ident_byte(char c) noexcept { return ident_start(c) || (c >= '0' && c <= '9'); }

/// Parses one line (no '\n'); appends a spec unless it is blank or a comment.
inline void parse_line(std::string_view raw, std::size_t line_no, std::vector<param_spec>& out) {
    auto fail = [&](std::size_t pos, const std::string& message) { throw param_spec_error(line_no, pos + 1, message); };
    std::size_t first = 0, end = raw.size();
    trim(raw, first, end);
    if (first == end || raw[first] == '#') return;

    // Split into items at ';' outside parentheses and quotes; stop at a comment.
    struct range {
        std::size_t b, e;
    };
    std::vector<range> items;
    std::vector<std::size_t> open;  // positions of unclosed '('
    std::size_t item_begin = first, k = first, quote_at = 0;
    bool in_quote = false;
    for (; k < raw.size(); ++k) {
        const char c = raw[k];
        if (in_quote) {
            if (c == '\\') {
                ++k;
            } else if (c == '"') {
                in_quote = false;
            }
            continue;
        }
        if (c == '"') {
            in_quote = true;
            quote_at = k;
        } else if (c == '(') {
            open.push_back(k);
        } else if (c == ')') {
            if (open.empty()) fail(k, "unmatched ')' (expected '(' before it)");
            open.pop_back();
        } else if (c == ';' && open.empty()) {
            items.push_back({item_begin, k});
            item_begin = k + 1;
        } else if (c == '#' && open.empty()) {
            std::size_t b = item_begin, e = k;
            trim(raw, b, e);
            if (b == e || blank(raw[k - 1])) break;
        }
    }
    if (in_quote) fail(quote_at, "unterminated string (expected '\"' before the end of the line)");
    if (!open.empty()) fail(open.front(), "unterminated '(' (expected ')' before the end of the line)");
    const std::size_t text_end = std::min(k, raw.size());
    items.push_back({item_begin, text_end});

    param_spec spec;
    spec.line = line_no;
    {
        std::size_t b = first, e = text_end;
        trim(raw, b, e);
        spec.text = std::string(raw.substr(b, e - b));
    }
    static constexpr std::string_view keys[] = {"method", "param", "chain", "match", "data", "name"};
    std::size_t seen_at[6] = {};  // 1-based column of each key, 0 = not seen
    for (const range& item : items) {
        std::size_t b = item.b, e = item.e;
        trim(raw, b, e);
        if (b == e) continue;
        const std::size_t eq = raw.substr(b, e - b).find('=');
        if (eq == std::string_view::npos) {
            fail(b, "expected key=value, found " + quote(raw.substr(b, e - b)) +
                        " (keys: method, param, chain, match, data, name)");
        }
        std::size_t kb = b, ke = b + eq;
        trim(raw, kb, ke);
        const std::string_view key = raw.substr(kb, ke - kb);
        if (key.empty()) fail(b, "expected a key before '=' (method, param, chain, match, data, name)");
        std::size_t which = 0;
        while (which < 6 && keys[which] != key) ++which;
        if (which == 6) {
            fail(kb, "unknown key " + quote(key) + " (expected method, param, chain, match, data, name)");
        }
        if (seen_at[which] != 0) {
            fail(kb, "duplicate key " + quote(key) + " (first given at column " + std::to_string(seen_at[which]) +
                         "; each key at most once)");
        }
        seen_at[which] = kb + 1;
        std::size_t vb = b + eq + 1, ve = e;
        trim(raw, vb, ve);
        const std::string_view value = raw.substr(vb, ve - vb);
        switch (which) {
            case 0:  // method
                if (value.empty()) fail(vb, "expected a method signature after 'method='");
                try {
                    spec.method = parse_signature(value);
                } catch (const signature_error& err) {
                    fail(vb + std::min(err.offset, value.size()), "method: " + err.message);
                }
                spec.method_column = vb + 1;
                break;
            case 1: {  // param
                bool ok = !value.empty() && value.size() <= 3;
                int n = 0;
                for (char c : value) {
                    if (c < '0' || c > '9') ok = false;
                    if (ok) n = n * 10 + (c - '0');
                }
                if (!ok || n > 255) {
                    fail(vb, "param: expected an integer from 0 to 255 (0 = the receiver), found " + quote(value));
                }
                spec.param = n;
                break;
            }
            case 2:  // chain
                spec.chain_column = vb + 1;
                if (!value.empty() && value[0] == '@') {
                    std::size_t j = 1;
                    if (j < value.size() && ident_start(value[j])) {
                        while (j < value.size() && ident_byte(value[j])) ++j;
                    }
                    if (j == 1 || j != value.size()) {
                        fail(vb + j,
                             "chain: expected '@' followed by a compile-time chain name ([A-Za-z_][A-Za-z0-9_]*)"
                             " and nothing else, found " +
                                 quote(value));
                    }
                    spec.compiled_chain = std::string(value.substr(1));
                } else {
                    spec.chain = std::string(value);
                }
                break;
            case 3:  // match
                if (value == "exact") {
                    spec.match = match_mode::exact;
                } else if (value == "inherited") {
                    spec.match = match_mode::inherited;
                } else if (value == "subclasses") {
                    spec.match = match_mode::subclasses;
                } else {
                    fail(vb, "match: expected exact, inherited or subclasses, found " + quote(value));
                }
                break;
            case 4: {  // data
                spec.data_entry = spec.data_exit = spec.data_wall = spec.data_cpu = false;
                std::size_t from = vb;
                while (true) {
                    std::size_t to = from;
                    while (to < ve && raw[to] != ',') ++to;
                    std::size_t db = from, de = to;
                    trim(raw, db, de);
                    const std::string_view d = raw.substr(db, de - db);
                    if (d == "entry") {
                        spec.data_entry = true;
                    } else if (d == "exit") {
                        spec.data_exit = true;
                    } else if (d == "wall") {
                        spec.data_wall = true;
                    } else if (d == "cpu") {
                        spec.data_cpu = true;
                    } else {
                        fail(db, "data: expected entry, exit, wall or cpu, found " +
                                     (d.empty() ? std::string("nothing") : quote(d)));
                    }
                    if (to >= ve) break;
                    from = to + 1;
                }
                break;
            }
            default: {  // name
                if (value.empty() || !ident_start(value[0])) {
                    fail(vb, "name: expected a label starting with a letter or '_', found " +
                                 (value.empty() ? std::string("nothing") : quote(value)));
                }
                for (std::size_t j = 0; j < value.size(); ++j) {
                    const char c = value[j];
                    if (!ident_byte(c) && c != '.' && c != '-') {
                        fail(vb + j,
                             "name: expected letters, digits, '_', '.' or '-', found " + quote(value.substr(j, 1)));
                    }
                }
                if (value.size() > param_spec_max_name_bytes) {
                    fail(vb, "name: expected at most " + std::to_string(param_spec_max_name_bytes) + " bytes, found " +
                                 std::to_string(value.size()));
                }
                spec.name = std::string(value);
                break;
            }
        }
    }
    if (seen_at[0] == 0) fail(first, "missing method= (every spec names the method it applies to)");
    if (!spec.chain.empty() && spec.param < 0) {
        fail(seen_at[2] - 1, "chain= needs param= (the parameter the chain starts from; 0 = the receiver)");
    }
    if (seen_at[5] == 0) {
        if (!spec.compiled_chain.empty()) {
            spec.name = spec.compiled_chain;
        } else if (spec.param >= 0) {
            spec.name = "param" + std::to_string(spec.param) + (spec.chain.empty() ? "" : "." + spec.chain);
        }
    }
    out.push_back(std::move(spec));
}

}  // namespace param_spec_text

/// Parses session_config::params text (file comment). Throws
/// param_spec_error at the first mistake. Cost: linear in the text, plus
/// the signature parser's (bounded) backtracking per method=.
inline std::vector<param_spec> parse_param_specs(std::string_view text) {
    std::vector<param_spec> out;
    std::size_t pos = 0, line_no = 0;
    while (true) {
        const std::size_t nl = text.find('\n', pos);
        const std::size_t stop = nl == std::string_view::npos ? text.size() : nl;
        ++line_no;
        param_spec_text::parse_line(text.substr(pos, stop - pos), line_no, out);
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    return out;
}

}  // namespace loupe::detail
