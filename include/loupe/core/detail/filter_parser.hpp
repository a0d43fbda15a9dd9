// The parser of the filter language (grammar in docs/filters.md): a
// recursive-descent parser over a lazy lexer, so the first problem in text
// order is the one reported. Recursion is bounded by the nesting limit
// (filter_max_depth). Included at the end of loupe/filter.hpp, which is the
// header to include.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/core/filter_terms.hpp"

namespace loupe::detail {

/// Parses one filter text into a `Filter` (loupe::filter, built through its
/// make_test, join and negate); one use per object. Throws `filter_error`.
/// A template only so that the parser needs the filter's terms, not the
/// filter: core/filter.hpp includes this file, not the other way round.
template <class Filter>
class filter_parser {
public:
    explicit filter_parser(std::string_view text) : text_(text) {}

    Filter parse() {
        if (text_.size() > filter_max_text_bytes) {
            fail(filter_max_text_bytes, "expected at most " + std::to_string(filter_max_text_bytes) +
                                            " bytes of filter text, found " + std::to_string(text_.size()) + " bytes");
        }
        next();
        if (tok_.kind == token_kind::end) {
            return Filter();
        }
        Filter f = parse_or("");
        if (tok_.kind != token_kind::end) {
            fail(tok_.pos, expected_operator("'&&', '||' or end of filter"));
        }
        // Canonical text can be longer than compact input ("a==\"x\"" vs "a == \"x\""); keep every filter one
        // that parses back from its to_string().
        const std::size_t canonical = f.to_string().size();
        if (canonical > filter_max_text_bytes) {
            fail(0, "expected a filter whose canonical text (to_string) is at most " +
                        std::to_string(filter_max_text_bytes) + " bytes, found one of " + std::to_string(canonical) +
                        " bytes");
        }
        return f;
    }

private:
    enum class token_kind : std::uint8_t {
        end,
        word,    // [A-Za-z0-9_]+: a field name, 'in', or a mistake
        string,  // "..." (value holds it unescaped)
        eq,      // ==
        ne,      // !=
        bang,    // !
        and_,    // &&
        or_,     // ||
        lparen,
        rparen,
        lbracket,
        rbracket,
        comma,
        tilde,
        other,  // any other single byte
    };

    struct token {
        token_kind kind = token_kind::end;
        std::size_t pos = 0;  // byte offset of its first byte
        std::size_t len = 0;
        std::string value;  // word: its text; string: the unescaped literal
    };

    [[noreturn]] void fail(std::size_t pos, const std::string& message) const { throw filter_error(pos + 1, message); }

    static bool is_word_byte(char c) noexcept {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }

    /// Reads the token after the current one into tok_.
    void next() {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
        tok_.pos = pos_;
        tok_.len = 1;
        tok_.value.clear();
        if (pos_ == text_.size()) {
            tok_.kind = token_kind::end;
            tok_.len = 0;
            return;
        }
        const char c = text_[pos_];
        const char c2 = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
        if ((c == '=' || c == '!') && c2 == '=') {
            tok_.kind = c == '=' ? token_kind::eq : token_kind::ne;
            tok_.len = 2;
        } else if ((c == '&' || c == '|') && c2 == c) {
            tok_.kind = c == '&' ? token_kind::and_ : token_kind::or_;
            tok_.len = 2;
        } else if (c == '"') {
            lex_string();
        } else if (is_word_byte(c)) {
            tok_.kind = token_kind::word;
            while (pos_ + tok_.len < text_.size() && is_word_byte(text_[pos_ + tok_.len])) {
                ++tok_.len;
            }
            tok_.value.assign(text_.substr(pos_, tok_.len));
        } else {
            switch (c) {
                case '!': tok_.kind = token_kind::bang; break;
                case '(': tok_.kind = token_kind::lparen; break;
                case ')': tok_.kind = token_kind::rparen; break;
                case '[': tok_.kind = token_kind::lbracket; break;
                case ']': tok_.kind = token_kind::rbracket; break;
                case ',': tok_.kind = token_kind::comma; break;
                case '~': tok_.kind = token_kind::tilde; break;
                default: tok_.kind = token_kind::other;
            }
        }
        pos_ += tok_.len;
    }

    void lex_string() {
        tok_.kind = token_kind::string;
        std::size_t i = pos_ + 1;
        for (;;) {
            if (i >= text_.size()) {
                fail(pos_, "unterminated string literal (expected a closing '\"', found end of filter)");
            }
            const auto c = static_cast<unsigned char>(text_[i]);
            if (c == '"') {
                break;
            }
            if (c == '\\') {
                if (i + 1 == text_.size()) {
                    fail(pos_, "unterminated string literal (expected a closing '\"', found end of filter)");
                }
                const char e = text_[i + 1];
                switch (e) {
                    case '"': tok_.value += '"'; break;
                    case '\\': tok_.value += '\\'; break;
                    case 'n': tok_.value += '\n'; break;
                    case 't': tok_.value += '\t'; break;
                    default:
                        fail(i, "expected '\"', '\\', 'n' or 't' after '\\' in a string literal, found " +
                                    filter_describe_byte(static_cast<unsigned char>(e)));
                }
                i += 2;
                continue;
            }
            if (c < 0x20) {
                fail(i, "expected a printable character in a string literal (write \\n or \\t for newline or tab), "
                        "found " +
                            filter_describe_byte(c));
            }
            tok_.value += static_cast<char>(c);
            ++i;
        }
        tok_.len = i + 1 - pos_;
    }

    /// How the current token is shown after "found ": printable ASCII only.
    std::string describe() const {
        if (tok_.kind == token_kind::end) {
            return "end of filter";
        }
        if (tok_.kind == token_kind::other) {
            return filter_describe_byte(static_cast<unsigned char>(text_[tok_.pos]));
        }
        std::string_view raw = text_.substr(tok_.pos, tok_.len);
        const bool cut = raw.size() > 40;
        raw = raw.substr(0, cut ? 37 : raw.size());
        std::string shown;
        for (const char ch : raw) {
            const auto c = static_cast<unsigned char>(ch);
            if (c >= 0x20 && c < 0x7f) {
                shown += ch;
            } else {
                const std::string b = filter_describe_byte(c);  // "'\xHH'"
                shown += b.substr(1, b.size() - 2);
            }
        }
        shown += cut ? "..." : "";
        if (tok_.kind == token_kind::string) {
            return "string literal " + shown;
        }
        if (tok_.kind == token_kind::word) {
            const bool number = raw.find_first_not_of("0123456789") == std::string_view::npos;
            return (number ? "number '" : "identifier '") + shown + "'";
        }
        return "'" + shown + "'";
    }

    /// "expected <what>, found <token>", but "expected '&&', found '&'" for a lone '&' (and so for '|').
    std::string expected_operator(const std::string& what) const {
        if (tok_.kind == token_kind::other && (text_[tok_.pos] == '&' || text_[tok_.pos] == '|')) {
            const char c = text_[tok_.pos];
            return std::string("expected '") + c + c + "', found '" + c + "'";
        }
        return "expected " + what + ", found " + describe();
    }

    static std::string ordinal(std::size_t n) {
        const char* suffix = "th";
        if (n % 100 < 11 || n % 100 > 13) {
            suffix = n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
        }
        return std::to_string(n) + suffix;
    }

    /// Enters one nesting level at the current '(' or '!'.
    void enter() {
        if (++depth_ > filter_max_depth) {
            fail(tok_.pos, "expected at most " + std::to_string(filter_max_depth) + " nested '(' and '!', found " +
                               filter_describe_byte(static_cast<unsigned char>(text_[tok_.pos])) + " at depth " +
                               std::to_string(depth_));
        }
    }

    // or_expr := and_expr ( "||" and_expr )*
    Filter parse_or(const char* after) {
        std::vector<Filter> parts;
        parts.push_back(parse_and(after));
        while (tok_.kind == token_kind::or_) {
            next();
            parts.push_back(parse_and(" after '||'"));
        }
        return Filter::join(filter_op::or_, parts.data(), parts.size());
    }

    // and_expr := unary ( "&&" unary )*
    Filter parse_and(const char* after) {
        std::vector<Filter> parts;
        parts.push_back(parse_unary(after));
        while (tok_.kind == token_kind::and_) {
            next();
            parts.push_back(parse_unary(" after '&&'"));
        }
        return Filter::join(filter_op::and_, parts.data(), parts.size());
    }

    // unary := "!" unary | primary. A '(' right after '!' shares the '!''s nesting level.
    Filter parse_unary(const char* after) {
        if (tok_.kind != token_kind::bang) {
            return parse_primary(after);
        }
        enter();
        next();
        Filter operand = tok_.kind == token_kind::lparen ? parse_group() : parse_unary(" after '!'");
        --depth_;
        return Filter::negate(std::move(operand));
    }

    // primary := "(" or_expr ")" | test
    Filter parse_primary(const char* after) {
        if (tok_.kind == token_kind::lparen) {
            enter();
            Filter inner = parse_group();
            --depth_;
            return inner;
        }
        if (tok_.kind == token_kind::word) {
            return parse_test();
        }
        fail(tok_.pos, std::string("expected a test") + after + ", found " + describe());
    }

    /// "(" or_expr ")", at the '('; the caller has counted its level.
    Filter parse_group() {
        const std::size_t open = tok_.pos;
        next();
        Filter inner = parse_or(" after '('");
        if (tok_.kind != token_kind::rparen) {
            const std::string closing = "')' to close '(' at column " + std::to_string(open + 1);
            fail(tok_.pos, tok_.kind == token_kind::end ? "expected " + closing + ", found end of filter"
                                                  : expected_operator("'&&', '||' or " + closing));
        }
        next();
        return inner;
    }

    // test := KEY ("==" | "!=" | "~") STRING | KEY "in" "[" STRING ("," STRING)* "]" | KEY "exists"
    Filter parse_test() {
        filter_key key{};
        if (!filter_key_from_name(tok_.value, key)) {
            fail(tok_.pos,
                 "expected a field (client, user, session, request, app, component, thread, process, trace), found " +
                     describe());
        }
        if (++tests_ > filter_max_tests) {
            fail(tok_.pos, "expected at most " + std::to_string(filter_max_tests) + " tests, found a " +
                               ordinal(tests_) + " test");
        }
        next();
        std::vector<std::string> values;
        filter_op op = filter_op::eq;
        if (tok_.kind == token_kind::eq || tok_.kind == token_kind::ne || tok_.kind == token_kind::tilde) {
            op = tok_.kind == token_kind::eq   ? filter_op::eq
                 : tok_.kind == token_kind::ne ? filter_op::ne
                                               : filter_op::glob;
            const std::string after = " after '" + std::string(text_.substr(tok_.pos, tok_.len)) + "'";
            next();
            values.push_back(literal(key, op == filter_op::glob, after));
        } else if (tok_.kind == token_kind::word && tok_.value == "in") {
            op = filter_op::in;
            next();
            if (tok_.kind != token_kind::lbracket) {
                fail(tok_.pos, "expected '[' after 'in', found " + describe());
            }
            const std::size_t open = tok_.pos;
            next();
            values.push_back(literal(key, false, " after '['"));
            while (tok_.kind != token_kind::rbracket) {
                if (tok_.kind != token_kind::comma) {
                    fail(tok_.pos, "expected ',' or ']' to close '[' at column " + std::to_string(open + 1) +
                                       ", found " + describe());
                }
                next();
                values.push_back(literal(key, false, " after ','"));
            }
            next();
        } else if (tok_.kind == token_kind::word && tok_.value == "exists") {
            op = filter_op::glob;  // `KEY exists` is `KEY ~ "*"`: set to anything
            next();
            values.emplace_back("*");
        } else {
            fail(tok_.pos, std::string("expected '==', '!=', 'in', '~' or 'exists' after field '") + filter_key_name(key) +
                               "', found " + describe());
        }
        return Filter::make_test(op, key, std::move(values));
    }

    /// The current token as the string literal of a test on `key`; moves past it.
    std::string literal(filter_key key, bool glob, const std::string& after) {
        if (tok_.kind != token_kind::string) {
            fail(tok_.pos, "expected a string literal" + after + ", found " + describe());
        }
        std::size_t offset = 0;
        const std::string problem = filter_literal_problem(key, tok_.value, glob, offset);
        if (!problem.empty()) {
            fail(offset == std::string_view::npos ? tok_.pos : source_offset(offset), problem);
        }
        std::string value = std::move(tok_.value);
        next();
        return value;
    }

    /// Where byte `index` of the current string literal's value is in the text.
    std::size_t source_offset(std::size_t index) const noexcept {
        std::size_t i = tok_.pos + 1;
        for (std::size_t k = 0; k < index; ++k) {
            i += text_[i] == '\\' ? 2 : 1;
        }
        return i;
    }

    std::string_view text_;
    std::size_t pos_ = 0;  // where the lexer continues
    token tok_;            // the current token
    std::size_t depth_ = 0;
    std::size_t tests_ = 0;
};

}  // namespace loupe::detail

