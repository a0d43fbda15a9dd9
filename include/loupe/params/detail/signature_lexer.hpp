// The tokens of method-signature text (US 9,129,056 ¶0120–0132): words,
// numbers and punctuation, and the canonical way to join them back into
// text. Shared by the signature parser (signature_parser.hpp), which reads
// what developers and specs wrote, and the matcher (signature_matcher.hpp),
// which re-reads the parser's canonical text — so both see the same tokens
// and the same spelling of what they compare.
//
// Why '>' is always a token of its own: `> >` and `>>` then lex (and
// compare) the same. Canonical spacing (sig_render): spaces only between
// words, after `*` before a cv word, and before a word that follows `>` or
// `)`.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loupe::detail {

struct sig_token {
    enum kind_t : std::uint8_t { end, word, number, punct };
    kind_t kind = end;
    std::string_view text;
    std::size_t pos = 0;

    bool is(std::string_view p) const noexcept { return kind == punct && text == p; }
    bool is_word(std::string_view w) const noexcept { return kind == word && text == w; }
};

inline bool sig_word_byte(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           u >= 0x80;
}

inline bool sig_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Splits text into words, numbers and punctuation ("::", "->", "...", "&&"
/// or one byte). '>' is always one token, so `> >` and `>>` lex the same.
inline std::vector<sig_token> sig_lex(std::string_view s) {
    std::vector<sig_token> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (sig_space(c)) {
            ++i;
            continue;
        }
        sig_token t;
        t.pos = i;
        std::size_t j = i + 1;
        if (c >= '0' && c <= '9') {
            t.kind = sig_token::number;
            while (j < s.size() && (sig_word_byte(s[j]) || s[j] == '.' || s[j] == '\'')) ++j;
        } else if (sig_word_byte(c)) {
            t.kind = sig_token::word;
            while (j < s.size() && sig_word_byte(s[j])) ++j;
        } else {
            t.kind = sig_token::punct;
            const std::string_view rest = s.substr(i);
            if (rest.substr(0, 3) == "...") {
                j = i + 3;
            } else if (rest.substr(0, 2) == "::" || rest.substr(0, 2) == "->" || rest.substr(0, 2) == "&&") {
                j = i + 2;
            }
        }
        t.text = s.substr(i, j - i);
        out.push_back(t);
        i = j;
    }
    sig_token e;
    e.pos = s.size();
    out.push_back(e);
    return out;
}

/// Words that are part of the type grammar, never names.
inline bool sig_keyword(std::string_view w) noexcept {
    static constexpr std::string_view words[] = {
        "const",    "volatile", "signed",   "unsigned", "short",    "long",     "int",
        "char",     "bool",     "void",     "float",    "double",   "wchar_t",  "char8_t",
        "char16_t", "char32_t", "__int128", "auto",     "decltype", "operator", "noexcept",
        "struct",   "class",    "union",    "enum",     "typename", "override", "final",
    };
    for (std::string_view k : words) {
        if (k == w) return true;
    }
    return false;
}

/// Joins tokens with the canonical spacing (see the file comment).
inline std::string sig_render(const std::vector<sig_token>& toks, std::size_t from, std::size_t to) {
    std::string out;
    const sig_token* prev = nullptr;
    for (std::size_t k = from; k < to; ++k) {
        const sig_token& t = toks[k];
        if (prev != nullptr && (t.kind == sig_token::word || t.kind == sig_token::number)) {
            if (prev->kind == sig_token::word || prev->kind == sig_token::number || prev->is("*") || prev->is(">") ||
                prev->is(")")) {
                out += ' ';
            }
        }
        out += t.text;
        prev = &t;
    }
    return out;
}

}  // namespace loupe::detail
