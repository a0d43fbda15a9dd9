// The body of the W3C test harness's POST /test: a JSON array of calls to
// make, each an object with a string "url" and any JSON "arguments" value:
//
//     [{"url": "http://127.0.0.1:7777/callback.0", "arguments": []}, ...]
//
// parse_calls() checks the whole text by RFC 8259 and returns the calls in
// order: the url decoded (escapes and all), and the raw text of the
// arguments value exactly as it appears in the body (the service forwards
// those bytes unchanged; "[]" when the key is absent). Other keys (the
// harness's "headers", say) are checked and skipped. Bytes of 0x80 and up
// inside strings are passed through as they are (not checked as UTF-8).
//
// Errors come with the byte offset (counted from 0) of the character at
// fault and what was expected there, e.g.
//     at byte 31: expected ',' or '}' after a member of a call object, found ']'
// Bounded: at most `limits` bytes, calls and nesting depth (the recursion
// depth is the nesting depth), so no body can exhaust the stack.
//
// Cost: one pass over the text. Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace w3c_service {

/// One element of the array: where to POST and what to send.
struct call_spec {
    std::string url;           ///< decoded
    std::string arguments;     ///< the raw JSON text of "arguments" ("[]" when absent)
    std::size_t position = 0;  ///< byte offset of the element's '{'
};

struct json_limits {
    std::size_t max_bytes = 1024 * 1024;
    std::size_t max_calls = 256;
    std::size_t max_depth = 64;  ///< the array is depth 1, a call object 2, its values 3 and deeper
    std::size_t max_url = 2048;  ///< bytes of the decoded url
};

/// What parse_calls found wrong: empty `expected` means nothing.
struct json_error {
    std::size_t position = 0;  ///< byte offset, from 0
    std::string expected;      ///< "',' or ']' after a call"
    std::string found;         ///< "'}'", "byte 0x01", "the end of the body"; empty when not about one character

    explicit operator bool() const noexcept { return !expected.empty(); }
    std::string message() const {
        std::string m = "at byte " + std::to_string(position) + ": expected " + expected;
        if (!found.empty()) m += ", found " + found;
        return m;
    }
};

namespace detail {

class json_reader {
public:
    json_reader(std::string_view text, const json_limits& limits) : text_(text), limits_(limits) {}

    json_error parse(std::vector<call_spec>& out) {
        out.clear();
        if (text_.size() > limits_.max_bytes) {
            fail_at(limits_.max_bytes, "a body of at most " + std::to_string(limits_.max_bytes) + " bytes", false);
            return error_;
        }
        skip_ws();
        if (!expect('[', "'[' (the body is a JSON array of calls)")) return error_;
        skip_ws();
        if (peek() == ']') {
            ++pos_;
        } else {
            for (;;) {
                if (out.size() == limits_.max_calls) {
                    fail_at(pos_, "at most " + std::to_string(limits_.max_calls) + " calls", false);
                    return error_;
                }
                call_spec call;
                if (!parse_call(call)) return error_;
                out.push_back(std::move(call));
                skip_ws();
                if (peek() == ',') {
                    ++pos_;
                    skip_ws();
                    continue;
                }
                if (!expect(']', "',' or ']' after a call")) return error_;
                break;
            }
        }
        skip_ws();
        if (pos_ != text_.size()) fail_at(pos_, "the end of the body after the array", true);
        return error_;
    }

private:
    static constexpr int end_of_text = -1;

    int peek() const noexcept { return pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_]) : end_of_text; }

    void skip_ws() noexcept {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
    }

    std::string describe(std::size_t at) const {
        if (at >= text_.size()) return "the end of the body";
        const auto c = static_cast<unsigned char>(text_[at]);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        char hex[16];
        std::snprintf(hex, sizeof hex, "byte 0x%02x", c);
        return hex;
    }

    // Records the first error only; always returns false.
    bool fail_at(std::size_t at, std::string expected, bool with_found) {
        if (!error_) {
            error_.position = at;
            error_.expected = std::move(expected);
            if (with_found) error_.found = describe(at);
        }
        return false;
    }
    bool fail(std::string expected) { return fail_at(pos_, std::move(expected), true); }

    bool expect(char c, const char* what) {
        if (peek() != static_cast<unsigned char>(c)) return fail(what);
        ++pos_;
        return true;
    }

    bool parse_call(call_spec& call) {
        call.position = pos_;
        if (!expect('{', "'{' (each call is an object with \"url\" and \"arguments\")")) return false;
        bool have_url = false, have_arguments = false;
        skip_ws();
        if (peek() == '}') {
            ++pos_;
        } else {
            for (;;) {
                const std::size_t key_at = pos_;
                std::string key;
                if (peek() != '"') return fail("'\"' (a member name of the call object)");
                if (!parse_string(&key, limits_.max_url)) return false;
                skip_ws();
                if (!expect(':', "':' after a member name")) return false;
                skip_ws();
                if (key == "url") {
                    if (have_url) return fail_at(key_at, "one \"url\" per call (this is the second)", false);
                    have_url = true;
                    if (peek() != '"') return fail("a string (the url to call)");
                    const std::size_t url_at = pos_;
                    if (!parse_string(&call.url, limits_.max_url)) return false;
                    if (call.url.size() > limits_.max_url) {
                        return fail_at(url_at, "a url of at most " + std::to_string(limits_.max_url) + " bytes", false);
                    }
                } else if (key == "arguments") {
                    if (have_arguments) {
                        return fail_at(key_at, "one \"arguments\" per call (this is the second)", false);
                    }
                    have_arguments = true;
                    const std::size_t begin = pos_;
                    if (!parse_value(3)) return false;
                    call.arguments = std::string(text_.substr(begin, pos_ - begin));
                } else if (!parse_value(3)) {
                    return false;
                }
                skip_ws();
                if (peek() == ',') {
                    ++pos_;
                    skip_ws();
                    continue;
                }
                if (!expect('}', "',' or '}' after a member of a call object")) return false;
                break;
            }
        }
        if (!have_url) return fail_at(call.position, "a \"url\" member in the call object that starts here", false);
        if (!have_arguments) call.arguments = "[]";
        return true;
    }

    // Any JSON value at nesting depth `depth`.
    bool parse_value(std::size_t depth) {
        if (depth > limits_.max_depth) {
            return fail_at(pos_, "at most " + std::to_string(limits_.max_depth) + " levels of nesting", false);
        }
        const int c = peek();
        if (c == '"') return parse_string(nullptr, 0);
        if (c == '{') return parse_object(depth);
        if (c == '[') return parse_array(depth);
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        if (c == 't') return parse_literal("true");
        if (c == 'f') return parse_literal("false");
        if (c == 'n') return parse_literal("null");
        return fail("a JSON value (string, number, object, array, true, false or null)");
    }

    // The items of an object or array after its opening bracket, separated
    // by ',' and closed by `close`; `item` parses one.
    template <class Item>
    bool parse_items(char close, const char* after_item, Item&& item) {
        ++pos_;  // '{' or '['
        skip_ws();
        if (peek() == static_cast<unsigned char>(close)) {
            ++pos_;
            return true;
        }
        for (;;) {
            if (!item()) return false;
            skip_ws();
            if (peek() != ',') return expect(close, after_item);
            ++pos_;
            skip_ws();
        }
    }

    bool parse_object(std::size_t depth) {
        return parse_items('}', "',' or '}' after an object member", [&] {
            if (peek() != '"') return fail("'\"' (a member name)");
            if (!parse_string(nullptr, 0)) return false;
            skip_ws();
            if (!expect(':', "':' after a member name")) return false;
            skip_ws();
            return parse_value(depth + 1);
        });
    }

    bool parse_array(std::size_t depth) {
        return parse_items(']', "',' or ']' after an array element", [&] { return parse_value(depth + 1); });
    }

    bool parse_literal(std::string_view word) {
        for (std::size_t i = 0; i < word.size(); ++i) {
            if (peek() != static_cast<unsigned char>(word[i])) {
                return fail(std::string("'") + word[i] + "' (the literal " + std::string(word) + ")");
            }
            ++pos_;
        }
        return true;
    }

    static bool is_digit(int c) noexcept { return c >= '0' && c <= '9'; }

    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    bool parse_number() {
        if (peek() == '-') ++pos_;
        if (peek() == '0') {
            ++pos_;
        } else if (is_digit(peek())) {
            while (is_digit(peek())) ++pos_;
        } else {
            return fail("a digit");
        }
        if (peek() == '.') {
            ++pos_;
            if (!is_digit(peek())) return fail("a digit after the decimal point");
            while (is_digit(peek())) ++pos_;
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            if (!is_digit(peek())) return fail("a digit in the exponent");
            while (is_digit(peek())) ++pos_;
        }
        return true;
    }

    static int hex_value(int c) noexcept {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    // The four hex digits after "\u"; -1 (and the error) when they are not.
    long read_hex4() {
        long v = 0;
        for (int i = 0; i < 4; ++i) {
            const int h = hex_value(peek());
            if (h < 0) {
                fail("a hex digit (\\u takes four)");
                return -1;
            }
            v = v * 16 + h;
            ++pos_;
        }
        return v;
    }

    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else {
            out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        }
    }

    // A string at pos_ (on its '"'), decoded into `out` when given (a url:
    // its \u escapes must then be whole UTF-16 code points); decoding stops
    // growing `out` past `max_out` + 4 bytes (the caller checks it).
    bool parse_string(std::string* out, std::size_t max_out) {
        ++pos_;  // '"'
        for (;;) {
            const int c = peek();
            if (c == end_of_text) return fail("'\"' (the end of a string)");
            if (c < 0x20) return fail("a string character (control characters must be escaped)");
            const bool room = out != nullptr && out->size() <= max_out;
            if (c == '"') {
                ++pos_;
                return true;
            }
            if (c != '\\') {
                if (room) out->push_back(static_cast<char>(c));
                ++pos_;
                continue;
            }
            ++pos_;  // '\\'
            // \" \\ \/ \b \f \n \r \t stand for one character; \u for a code unit.
            constexpr std::string_view escapes = "\"\\/bfnrt", meanings = "\"\\/\b\f\n\r\t";
            const int e = peek();
            const std::size_t k = e == end_of_text ? escapes.npos : escapes.find(static_cast<char>(e));
            if (k == escapes.npos && e != 'u') {
                return fail("an escape (one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            }
            const char plain = k == escapes.npos ? 0 : meanings[k];
            ++pos_;
            if (plain != 0) {
                if (room) out->push_back(plain);
                continue;
            }
            const std::size_t escape_at = pos_ - 2;
            long cp = read_hex4();
            if (cp < 0) return false;
            if (out == nullptr) continue;  // not decoded: any code unit is fine (RFC 8259 allows lone surrogates)
            if (cp >= 0xdc00 && cp <= 0xdfff) {
                return fail_at(escape_at, "a high surrogate (\\ud800-\\udbff) before a low one", false);
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (peek() != '\\' || pos_ + 1 >= text_.size() || text_[pos_ + 1] != 'u') {
                    return fail("'\\u' and a low surrogate after a high one");
                }
                pos_ += 2;
                const long low = read_hex4();
                if (low < 0) return false;
                if (low < 0xdc00 || low > 0xdfff) {
                    return fail_at(pos_ - 6, "a low surrogate (\\udc00-\\udfff) after a high one", false);
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            }
            if (room) append_utf8(*out, static_cast<std::uint32_t>(cp));
        }
    }

    std::string_view text_;
    json_limits limits_;
    std::size_t pos_ = 0;
    json_error error_;
};

}  // namespace detail

/// Parses the calls in `text` into `out` (cleared first; left partial on an
/// error). Returns the first error, or an empty one.
inline json_error parse_calls(std::string_view text, std::vector<call_spec>& out, const json_limits& limits = {}) {
    return detail::json_reader(text, limits).parse(out);
}

}  // namespace w3c_service
