// Test helper: a strict RFC 8259 JSON parser (objects, arrays, strings with
// every escape, numbers, true/false/null) that rejects anything else,
// including invalid UTF-8 and raw control characters in strings. Used to
// check that the Chrome JSON output is valid JSON and means what was recorded.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loupe_test::json {

struct value {
    enum kind_type { null, boolean, number, string, array, object } kind = null;
    bool b = false;
    double n = 0;
    std::string s;
    std::vector<value> items;
    std::map<std::string, value> members;

    const value& operator[](const std::string& key) const {
        static const value missing;
        auto it = members.find(key);
        return it == members.end() ? missing : it->second;
    }
    bool has(const std::string& key) const { return members.count(key) != 0; }
};

class parser {
public:
    explicit parser(std::string_view text) : t_(text) {}

    /// Parses the whole text; on failure returns false and sets `error`.
    bool parse(value& out) {
        if (!parse_value(out, 0)) return false;
        skip_space();
        if (i_ != t_.size()) return fail("trailing characters");
        return true;
    }
    std::string error;

private:
    bool fail(const std::string& why) {
        error = why + " at byte " + std::to_string(i_);
        return false;
    }
    void skip_space() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
    }
    bool literal(std::string_view word) {
        if (t_.substr(i_, word.size()) != word) return fail("expected " + std::string(word));
        i_ += word.size();
        return true;
    }
    bool parse_value(value& v, int depth) {
        if (depth > 64) return fail("nesting too deep");
        skip_space();
        if (i_ >= t_.size()) return fail("unexpected end");
        const char c = t_[i_];
        if (c == '{') return parse_object(v, depth);
        if (c == '[') return parse_array(v, depth);
        if (c == '"') {
            v.kind = value::string;
            return parse_string(v.s);
        }
        if (c == 't' || c == 'f') {
            v.kind = value::boolean;
            v.b = c == 't';
            return literal(v.b ? "true" : "false");
        }
        if (c == 'n') return literal("null");
        return parse_number(v);
    }
    bool parse_object(value& v, int depth) {
        v.kind = value::object;
        ++i_;
        skip_space();
        if (i_ < t_.size() && t_[i_] == '}') return ++i_, true;
        for (;;) {
            skip_space();
            std::string key;
            if (i_ >= t_.size() || t_[i_] != '"' || !parse_string(key)) return fail("expected a member name");
            skip_space();
            if (i_ >= t_.size() || t_[i_++] != ':') return fail("expected ':'");
            if (v.members.count(key)) return fail("duplicate member '" + key + "'");
            if (!parse_value(v.members[key], depth + 1)) return false;
            skip_space();
            if (i_ < t_.size() && t_[i_] == ',') {
                ++i_;
                continue;
            }
            if (i_ < t_.size() && t_[i_] == '}') return ++i_, true;
            return fail("expected ',' or '}'");
        }
    }
    bool parse_array(value& v, int depth) {
        v.kind = value::array;
        ++i_;
        skip_space();
        if (i_ < t_.size() && t_[i_] == ']') return ++i_, true;
        for (;;) {
            v.items.emplace_back();
            if (!parse_value(v.items.back(), depth + 1)) return false;
            skip_space();
            if (i_ < t_.size() && t_[i_] == ',') {
                ++i_;
                continue;
            }
            if (i_ < t_.size() && t_[i_] == ']') return ++i_, true;
            return fail("expected ',' or ']'");
        }
    }
    bool parse_number(value& v) {
        const std::size_t start = i_;
        if (i_ < t_.size() && t_[i_] == '-') ++i_;
        auto digits = [&] {
            const std::size_t from = i_;
            while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
            return i_ > from;
        };
        if (i_ < t_.size() && t_[i_] == '0') {
            ++i_;
        } else if (!digits()) {
            return fail("expected a value");
        }
        if (i_ < t_.size() && t_[i_] == '.') {
            ++i_;
            if (!digits()) return fail("expected digits after '.'");
        }
        if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
            ++i_;
            if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
            if (!digits()) return fail("expected exponent digits");
        }
        v.kind = value::number;
        v.n = std::strtod(std::string(t_.substr(start, i_ - start)).c_str(), nullptr);
        return true;
    }
    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }
    bool hex4(std::uint32_t& cp) {
        if (t_.size() - i_ < 4) return fail("short \\u escape");
        cp = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = t_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<std::uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<std::uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<std::uint32_t>(h - 'A' + 10);
            else return fail("bad hex digit in \\u escape");
        }
        return true;
    }
    bool parse_string(std::string& out) {
        ++i_;  // opening quote
        while (i_ < t_.size()) {
            const auto c = static_cast<unsigned char>(t_[i_]);
            if (c == '"') return ++i_, true;
            if (c < 0x20) return fail("raw control character in string");
            if (c == '\\') {
                if (++i_ >= t_.size()) break;
                const char e = t_[i_++];
                switch (e) {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'n': out += '\n'; break;
                    case 'r': out += '\r'; break;
                    case 't': out += '\t'; break;
                    case 'u': {
                        std::uint32_t cp;
                        if (!hex4(cp)) return false;
                        if (cp >= 0xd800 && cp < 0xdc00) {
                            std::uint32_t low;
                            if (t_.substr(i_, 2) != "\\u" || (i_ += 2, !hex4(low)) || low < 0xdc00 || low > 0xdfff) {
                                return fail("unpaired surrogate");
                            }
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                        } else if (cp >= 0xdc00 && cp < 0xe000) {
                            return fail("unpaired surrogate");
                        }
                        append_utf8(out, cp);
                        break;
                    }
                    default: return fail("bad escape");
                }
                continue;
            }
            // UTF-8: validate the sequence length and continuation bytes.
            const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
            if (len == 0 || t_.size() - i_ < static_cast<std::size_t>(len)) return fail("invalid UTF-8");
            for (int k = 1; k < len; ++k) {
                if ((static_cast<unsigned char>(t_[i_ + k]) & 0xc0) != 0x80) return fail("invalid UTF-8");
            }
            out.append(t_.substr(i_, len));
            i_ += len;
        }
        return fail("unterminated string");
    }

    std::string_view t_;
    std::size_t i_ = 0;
};

/// Parses `text`; the error message when it is not valid JSON.
inline std::string parse(std::string_view text, value& out) {
    parser p(text);
    return p.parse(out) ? std::string() : p.error;
}

}  // namespace loupe_test::json
