// Parsing of runtime chain text (the `chain=` of a parameter spec): text
// such as `field(items) | at(-1) | call(name) | truncate(16)` → a
// parsed_chain, a list of modifiers with their arguments. Only syntax is
// checked here; whether a modifier fits the value it is applied to is the
// binder's question (runtime_chain_binder.hpp, which also lists what each
// modifier does).
//
// Why a hand-written parser: the text comes from configuration at run time,
// so it must reject anything (bounded size and modifier count, never reads
// out of bounds) and say where: every error carries a byte offset, which the
// spec parser turns into a line and column. It depends on nothing but the
// standard library, so spec parsing does not pull in the reflection
// registry.
//
// Thread-safety: pure functions over their arguments; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loupe::detail {

/// The modifiers (aliases map to the same op).
enum class modifier_op : std::uint8_t {
    length,
    at,
    type_of,
    call,
    apply,
    field,
    cast,
    object_id,
    deref,
    to_string,
    truncate,
    redact,
    hash,
};

/// One parsed modifier.
struct parsed_modifier {
    modifier_op op = modifier_op::length;
    std::string text;         ///< as written (trimmed), for messages
    std::string name;         ///< call/apply/field: the member/function name; cast: the type name
    std::int64_t number = 0;  ///< at: the index; truncate: the byte count
    std::size_t offset = 0;   ///< where it starts in the chain text
};

/// A parsed chain: its modifiers in order (empty: the value itself).
struct parsed_chain {
    std::vector<parsed_modifier> modifiers;
};

/// A syntax error in chain text: `offset` (≤ the text's size) is where it
/// was found; what() names what was found and what was expected (without
/// the offset, so callers can add their own position: line, column).
class chain_syntax_error : public std::exception {
public:
    chain_syntax_error(std::size_t at, std::string message) : offset(at), message_(std::move(message)) {}
    const char* what() const noexcept override { return message_.c_str(); }
    std::size_t offset;

private:
    std::string message_;
};

/// Longest chain text and most modifiers parse_chain accepts.
inline constexpr std::size_t max_chain_text = 4096;
inline constexpr std::size_t max_chain_modifiers = 64;

namespace chain_parse {

inline constexpr const char* modifier_list =
    "length, at(i), type_of, call(name), apply(name), field(name), cast(Type), object_id, deref, to_string, "
    "truncate(n), redact, hash, array_element(i), class, instance_method(name), static_method(name), id";

struct op_name {
    const char* name;
    modifier_op op;
    char arg;  // 0: none, 'i': integer (optional when '?'), 'n': count, 'm': method, 'f': function, 'd': field, 't':
               // type
};
inline constexpr op_name ops[] = {
    {"length", modifier_op::length, 0},
    {"at", modifier_op::at, 'i'},
    {"array_element", modifier_op::at, '?'},
    {"type_of", modifier_op::type_of, 0},
    {"class", modifier_op::type_of, 0},
    {"call", modifier_op::call, 'm'},
    {"instance_method", modifier_op::call, 'm'},
    {"apply", modifier_op::apply, 'f'},
    {"static_method", modifier_op::apply, 'f'},
    {"field", modifier_op::field, 'd'},
    {"cast", modifier_op::cast, 't'},
    {"object_id", modifier_op::object_id, 0},
    {"id", modifier_op::object_id, 0},
    {"deref", modifier_op::deref, 0},
    {"to_string", modifier_op::to_string, 0},
    {"truncate", modifier_op::truncate, 'n'},
    {"redact", modifier_op::redact, 0},
    {"hash", modifier_op::hash, 0},
};

class parser {
public:
    explicit parser(std::string_view text) : s_(text) {}

    parsed_chain run() {
        parsed_chain out;
        if (s_.size() > max_chain_text) {
            fail(max_chain_text, "chain text too long (" + std::to_string(s_.size()) + " bytes; at most " +
                                     std::to_string(max_chain_text) + ")");
        }
        ws();
        if (end()) return out;
        for (;;) {
            ws();
            if (out.modifiers.size() == max_chain_modifiers) {
                fail(pos_, "too many modifiers (at most " + std::to_string(max_chain_modifiers) + ")");
            }
            out.modifiers.push_back(modifier());
            ws();
            if (end()) break;
            if (s_[pos_] != '|') {
                fail(pos_, "expected '|' or the end of the chain after `" + out.modifiers.back().text + "`, found " +
                               found());
            }
            ++pos_;
        }
        return out;
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& msg) const {
        throw chain_syntax_error(at > s_.size() ? s_.size() : at, msg);
    }
    bool end() const { return pos_ >= s_.size(); }
    void ws() {
        while (!end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
    static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
    std::string found() const {
        if (end()) return "the end of the chain";
        const unsigned char c = static_cast<unsigned char>(s_[pos_]);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        static const char hex[] = "0123456789abcdef";
        return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
    }
    std::string ident() {
        const std::size_t b = pos_;
        while (!end() && ident_char(s_[pos_])) ++pos_;
        return std::string(s_.substr(b, pos_ - b));
    }
    void expect(char c, const std::string& what) {
        ws();
        if (end() || s_[pos_] != c) fail(pos_, what + ": expected '" + std::string(1, c) + "', found " + found());
        ++pos_;
    }

    parsed_modifier modifier() {
        parsed_modifier m;
        m.offset = pos_;
        if (end() || s_[pos_] == '|') fail(pos_, "expected a modifier, found " + found());
        if (!ident_start(s_[pos_])) {
            fail(pos_, "expected a modifier name (one of: " + std::string(modifier_list) + "), found " + found());
        }
        const std::string name = ident();
        const op_name* op = nullptr;
        for (const auto& o : ops) {
            if (name == o.name) op = &o;
        }
        if (op == nullptr) {
            fail(m.offset, "unknown modifier '" + name + "' (expected one of: " + modifier_list + ")");
        }
        m.op = op->op;
        const std::string label = usage(*op);
        const std::size_t after_name = pos_;
        ws();
        const bool paren = !end() && s_[pos_] == '(';
        if (op->arg == 0) {
            if (paren) fail(pos_, "'" + name + "' takes no argument, found '('");
            pos_ = after_name;
        } else if (!paren) {
            if (op->arg == '?') {
                pos_ = after_name;
                m.number = 0;  // array_element without an index: the first element
            } else {
                fail(pos_, label + ": expected '(', found " + found());
            }
        } else {
            ++pos_;
            ws();
            argument(*op, label, m);
            expect(')', label);
        }
        m.text = std::string(s_.substr(m.offset, pos_ - m.offset));
        return m;
    }

    static std::string usage(const op_name& o) {
        switch (o.arg) {
            case 'i':
            case '?':
                return std::string(o.name) + "(i)";
            case 'n':
                return std::string(o.name) + "(n)";
            case 'm':
            case 'f':
            case 'd':
                return std::string(o.name) + "(name)";
            case 't':
                return std::string(o.name) + "(Type)";
            default:
                return o.name;
        }
    }

    std::int64_t integer(const std::string& label, bool allow_negative, const char* what) {
        const std::size_t b = pos_;
        bool negative = false;
        if (!end() && (s_[pos_] == '-' || s_[pos_] == '+')) {
            if (s_[pos_] == '-' && !allow_negative) fail(pos_, label + ": expected " + what + ", found '-'");
            negative = s_[pos_] == '-';
            ++pos_;
        }
        if (end() || s_[pos_] < '0' || s_[pos_] > '9') fail(pos_, label + ": expected " + what + ", found " + found());
        std::uint64_t v = 0;
        const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
        while (!end() && s_[pos_] >= '0' && s_[pos_] <= '9') {
            const std::uint64_t d = static_cast<std::uint64_t>(s_[pos_] - '0');
            if (v > (limit - d) / 10) fail(b, label + ": " + what + " out of range");
            v = v * 10 + d;
            ++pos_;
        }
        if (negative) return v == (std::uint64_t{1} << 63) ? INT64_MIN : -static_cast<std::int64_t>(v);
        return static_cast<std::int64_t>(v);
    }

    // A qualified name: ident { ('::' | '.') ident }, '.' normalized to '::'.
    std::string qname(const std::string& label, const char* what) {
        if (end() || !ident_start(s_[pos_])) fail(pos_, label + ": expected " + what + ", found " + found());
        std::string out = ident();
        for (;;) {
            if (s_.substr(pos_, 2) == "::" && pos_ + 2 < s_.size() && ident_start(s_[pos_ + 2])) {
                pos_ += 2;
            } else if (!end() && s_[pos_] == '.' && pos_ + 1 < s_.size() && ident_start(s_[pos_ + 1])) {
                pos_ += 1;
            } else {
                return out;
            }
            out += "::";
            out += ident();
        }
    }

    // Skips a type spelling (return types, parameter types, `:type` of a
    // field): type characters and balanced <> and (); stops before ')' at depth 0.
    void skip_type(const std::string& label) {
        int angle = 0, round = 0;
        while (!end()) {
            const char c = s_[pos_];
            if (c == ')' && round == 0) break;
            if (c == '<') {
                ++angle;
            } else if (c == '>') {
                if (angle == 0) fail(pos_, label + ": unbalanced '>' in a type");
                --angle;
            } else if (c == '(') {
                ++round;
            } else if (c == ')') {
                --round;
            } else if (!(ident_char(c) || c == ':' || c == ',' || c == '*' || c == '&' || c == ' ' || c == '.' ||
                         c == '[' || c == ']')) {
                fail(pos_, label + ": unexpected " + found() + " in a type");
            }
            ++pos_;
        }
        if (angle != 0 || round != 0) fail(pos_, label + ": unbalanced brackets in a type");
    }

    void argument(const op_name& o, const std::string& label, parsed_modifier& m) {
        switch (o.arg) {
            case 'i':
            case '?':
                m.number = integer(label, true, "an integer index");
                break;
            case 'n':
                m.number = integer(label, false, "a byte count (a non-negative integer)");
                break;
            case 'd':
                if (end() || !ident_start(s_[pos_])) fail(pos_, label + ": expected a field name, found " + found());
                m.name = ident();
                ws();
                if (!end() && s_[pos_] == ':') {  // patent form: name and type
                    ++pos_;
                    ws();
                    skip_type(label);
                }
                break;
            case 'm':
                if (end() || !ident_start(s_[pos_])) fail(pos_, label + ": expected a method name, found " + found());
                m.name = ident();
                ws();
                if (!end() && s_[pos_] == '(') {  // patent form: name() [return type]
                    ++pos_;
                    ws();
                    if (end() || s_[pos_] != ')') {
                        fail(pos_, label + ": only methods without arguments can be called, found " + found());
                    }
                    ++pos_;
                    ws();
                    skip_type(label);
                }
                break;
            case 'f':
                m.name = qname(label, "a function name");
                ws();
                if (!end() && s_[pos_] == '(') {  // patent form: name(type) [return type]
                    ++pos_;
                    ws();
                    skip_type(label);
                    expect(')', label);
                    ws();
                    skip_type(label);
                }
                break;
            case 't': {
                if (end() || !(ident_start(s_[pos_]) || s_[pos_] == ':')) {
                    fail(pos_, label + ": expected a type name, found " + found());
                }
                const std::size_t b = pos_;
                skip_type(label);
                std::string_view t = s_.substr(b, pos_ - b);
                while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
                if (t.size() >= 2 && t.substr(0, 2) == "::") t.remove_prefix(2);
                m.name = std::string(t);
                for (std::size_t i = 0; i + 1 < m.name.size(); ++i) {  // patent-style dots
                    if (m.name[i] == '.') m.name.replace(i, 1, "::");
                }
                if (m.name.empty()) fail(b, label + ": expected a type name");
                break;
            }
            default:
                break;
        }
        ws();
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

}  // namespace chain_parse

/// Parses chain text (modifiers separated by '|', whitespace allowed; empty
/// text is the empty chain). Throws chain_syntax_error; never reads out of
/// bounds, whatever the input. Any thread; slow path.
inline parsed_chain parse_chain(std::string_view text) { return chain_parse::parser(text).run(); }

}  // namespace loupe::detail
