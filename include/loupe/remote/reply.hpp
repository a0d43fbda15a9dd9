// Reading the control protocol's replies (docs/control.md): each reply is
// one JSON object on one line, e.g.
//   {"ok":true,"pid":4242,"program":"app_server",...}
//   {"ok":false,"error":"column 7: unknown key 'kind'; expected ...","column":7}
// `parse_reply` reads such a line into a `json_value` tree. It reads JSON
// (RFC 8259) with a depth limit of 16 and keeps numbers as their text, so
// 64-bit counts read back exactly.
//
// Cost: linear in the line. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/base/error.hpp"

namespace loupe::remote {

/// A JSON value. Objects keep their members in order.
struct json_value {
    enum class type { null, boolean, number, string, array, object };
    json_value::type kind = type::null;
    bool boolean = false;
    std::string text;               ///< a string's value, or a number's text
    std::vector<json_value> items;  ///< an array's values, or an object's member values
    std::vector<std::string> keys;  ///< an object's member names, in order (items[i] is keys[i]'s value)

    /// The member `key` of an object, or null when absent (or not an object).
    const json_value* find(std::string_view key) const noexcept;
    /// Member `key` as text (a string's value or a number's digits); `fallback` when absent.
    std::string str(std::string_view key, std::string fallback = {}) const;
    /// Member `key` as an unsigned integer; 0 when absent or not one.
    std::uint64_t u64(std::string_view key) const noexcept;
    /// Member `key` as a boolean; false when absent or not one.
    bool flag(std::string_view key) const noexcept;
};

inline const json_value* json_value::find(std::string_view key) const noexcept {
    if (kind != type::object) return nullptr;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] == key) return &items[i];
    }
    return nullptr;
}
inline std::string json_value::str(std::string_view key, std::string fallback) const {
    const json_value* v = find(key);
    return v != nullptr && (v->kind == type::string || v->kind == type::number) ? v->text : fallback;
}
inline std::uint64_t json_value::u64(std::string_view key) const noexcept {
    const json_value* v = find(key);
    if (v == nullptr || v->kind != type::number) return 0;
    return std::strtoull(v->text.c_str(), nullptr, 10);
}
inline bool json_value::flag(std::string_view key) const noexcept {
    const json_value* v = find(key);
    return v != nullptr && v->kind == type::boolean && v->boolean;
}

namespace detail {

class json_reader {
public:
    explicit json_reader(std::string_view s) : s_(s) {}

    json_value document() {
        json_value v = value(0);
        spaces();
        if (i_ != s_.size()) fail("unexpected text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw error("reply: byte " + std::to_string(i_) + ": " + what);
    }
    void spaces() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    bool take(char c) {
        spaces();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!take(c)) fail(std::string("expected '") + c + "'");
    }
    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }
    static void utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    std::uint32_t hex4() {
        if (i_ + 4 > s_.size()) fail("a \\u escape needs 4 hex digits");
        std::uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s_[i_++];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= static_cast<std::uint32_t>(c - 'A' + 10);
            else
                fail("a \\u escape needs 4 hex digits");
        }
        return v;
    }
    std::string string_body() {  // after the opening quote
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) fail("unterminated string");
            const char c = s_[i_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated string");
            const char e = s_[i_++];
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    std::uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
                        i_ += 2;
                        const std::uint32_t low = hex4();
                        if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    utf8(out, cp);
                    break;
                }
                default:
                    fail(std::string("unknown escape \\") + e);
            }
        }
    }
    json_value value(int depth) {
        if (depth > 16) fail("nested deeper than 16 levels");
        spaces();
        if (i_ >= s_.size()) fail("expected a value");
        json_value v;
        const char c = s_[i_];
        if (c == '{') {
            ++i_;
            v.kind = json_value::type::object;
            if (take('}')) return v;
            do {
                spaces();
                if (i_ >= s_.size() || s_[i_] != '"') fail("expected a member name");
                ++i_;
                std::string key = string_body();
                expect(':');
                v.keys.push_back(std::move(key));
                v.items.push_back(value(depth + 1));
            } while (take(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.kind = json_value::type::array;
            if (take(']')) return v;
            do {
                v.items.push_back(value(depth + 1));
            } while (take(','));
            expect(']');
        } else if (c == '"') {
            ++i_;
            v.kind = json_value::type::string;
            v.text = string_body();
        } else if (literal("true") || literal("false")) {
            v.kind = json_value::type::boolean;
            v.boolean = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u';
        } else if (literal("null")) {
            v.kind = json_value::type::null;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const std::size_t from = i_;
            while (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+' || s_[i_] == '.' || s_[i_] == 'e' ||
                                      s_[i_] == 'E' || (s_[i_] >= '0' && s_[i_] <= '9'))) {
                ++i_;
            }
            v.kind = json_value::type::number;
            v.text = std::string(s_.substr(from, i_ - from));
        } else {
            fail(std::string("unexpected '") + c + "'");
        }
        return v;
    }

    std::string_view s_;
    std::size_t i_ = 0;
};

}  // namespace detail

/// Parses one reply line. Throws loupe::error naming the byte offset when it
/// is not one JSON object.
inline json_value parse_reply(std::string_view line) {
    json_value v = detail::json_reader(line).document();
    if (v.kind != json_value::type::object) throw error("reply: expected a JSON object");
    return v;
}

}  // namespace loupe::remote
