// Runtime modifier chains (Tier B, US 9,129,056 ¶0142–0155): chain text such
// as `field(items) | at(-1) | call(name) | truncate(16)` is parsed once,
// bound once per (site, spec) against the parameter's declared type — each
// modifier's precondition checked and its output type computed, as the
// patent's "MPT Apply Error" check — and then evaluated on every call.
//
// Modifiers (same names and semantics as the compile-time chains,
// params/chain.hpp; patent aliases in brackets):
//   length                     size of a sequence or string          → uint
//   at(i)  [array_element(i)]  element i; i < 0 counts from the end  InvalidIndex
//   type_of  [class]           (dynamic) type name                   → type
//   call(name)  [instance_method(name)]   a registered const method  ExceptionInCall
//   apply(name) [static_method(name)]     a registered function      ExceptionInCall
//   field(name)                a registered data member
//   cast(Type)                 dynamic cast along registered bases;  CastFailed
//                              null passes through (next modifier: NullInCall)
//   object_id  [id]            identity of the object                → object_id
//   deref                      unwraps one pointer level
//   to_string                  text as is, numbers formatted, ADL to_string, or operator<<
//                              bounded into the writer's scratch
//   truncate(n)                first n bytes (UTF-8 boundary), original size kept
//   redact                     only the size of the text (of a number: sizeof) → redacted
//   hash                       keyed hash of the text (of a number: its 8 bytes) → hash
// Pointers, smart pointers and optionals are unwrapped implicitly before a
// modifier that needs an object (null → NullInCall) and at the end of the
// chain (null → NullValue). Numbers (arithmetic, enums) take only
// to_string, redact and hash ("modifiers are not applied to primitive
// values", ¶0151). type_of reports a registered type's registered name.
//
// Cost: parse and bind are slow paths (allocate, lock the registry).
// `bound_chain::evaluate` is noexcept, allocates nothing, and costs one
// indirect call per step (plus the getters it runs).
//
// Thread-safety: parse_chain and bind_chain may run on any thread; a bound
// chain is immutable and may be evaluated by many threads at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "loupe/params/detail/modifier_support.hpp"
#include "loupe/params/detail/type_desc.hpp"
#include "loupe/params/value.hpp"

namespace loupe::detail {

// ---------------------------------------------------------------------------
// Parsing

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

// ---------------------------------------------------------------------------
// Binding and evaluation

using adjust_fn = const void* (*)(const void*) noexcept;

class bound_chain;

/// One bound modifier.
struct bound_step {
    using run_fn = void (*)(const bound_chain& chain, std::size_t index, const void* object,
                            value_writer& out) noexcept;
    run_fn run = nullptr;
    /// Applied first: implicit unwrapping (pointee) and upcasts to the class
    /// that declares the member. A null result stops the adjustment.
    std::vector<adjust_fn> adjust;
    /// cast: the conversions after `adjust`; those marked may_fail are downcasts.
    std::vector<adjust_fn> cast_path;
    std::vector<bool> cast_may_fail;
    const type_desc* in = nullptr;  ///< the type after `adjust`
    std::int64_t number = 0;
    std::shared_ptr<const member_entry> member;
    std::shared_ptr<const function_entry> function;
    void (*as_pointer)(const void*, const continuation&, value_writer&) noexcept = nullptr;
    struct name_cache {
        std::atomic<const std::type_info*> type{nullptr};
        std::atomic<const std::string*> name{nullptr};
        std::atomic<std::uint64_t> generation{~std::uint64_t{0}};
    };
    std::unique_ptr<name_cache> names;  ///< type_of
};

/// A chain bound to a start type. Immutable; evaluate from any thread.
class bound_chain {
public:
    /// Runs the chain on `object` (an object of the start type; for a pointer
    /// parameter, the address of the pointer variable) and writes the value
    /// or the status of the first failing modifier into `out`. noexcept, no
    /// heap allocation; getters' exceptions give ExceptionInCall.
    void evaluate(const void* object, value_writer& out) const noexcept { run(0, object, out); }

    /// The kind a successful evaluation writes (unknown when a user-defined
    /// traceable decides at run time).
    value_kind result_kind() const noexcept { return result_kind_; }

    /// Number of modifiers.
    std::size_t size() const noexcept { return steps_.size(); }

    // --- internals, used by the steps ---
    void run(std::size_t index, const void* object, value_writer& out) const noexcept {
        if (index < steps_.size()) {
            steps_[index].run(*this, index, object, out);
            return;
        }
        const void* p = object;
        for (adjust_fn f : final_adjust_) {
            p = f(p);
            if (p == nullptr) {
                out.fail(value_kind::null_value);
                return;
            }
        }
        final_->write(p, out);
    }
    const bound_step& step(std::size_t index) const noexcept { return steps_[index]; }

    /// Continues the chain after step `index` with `object`.
    void next(std::size_t index, const void* object, value_writer& out) const noexcept { run(index + 1, object, out); }
    struct resume {
        const bound_chain* chain;
        std::size_t index;
        static void call(const void* self, const void* object, value_writer& out) noexcept {
            const auto* r = static_cast<const resume*>(self);
            r->chain->run(r->index + 1, object, out);
        }
    };

private:
    friend struct chain_binder;
    std::vector<bound_step> steps_;
    std::vector<adjust_fn> final_adjust_;
    const type_desc* final_ = nullptr;
    value_kind result_kind_ = value_kind::unknown;
};

/// The outcome of bind_chain: a chain, or why the spec does not fit (the
/// spec's values then read EnableFailed).
struct bind_result {
    std::shared_ptr<const bound_chain> chain;  ///< null on failure
    std::string error;                         ///< "modifier 2 `field(nosuch)`: shop::Item has no field 'nosuch' (...)"
    std::size_t failed_modifier = 0;           ///< 1-based; 0 when the chain bound (or the empty chain's end failed)
    explicit operator bool() const noexcept { return chain != nullptr; }
};

namespace chain_steps {

inline const void* adjusted(const bound_step& s, const void* object) noexcept {
    const void* p = object;
    for (adjust_fn f : s.adjust) {
        if (p == nullptr) break;
        p = f(p);
    }
    return p;
}

#define LOUPE_DETAIL_STEP_PROLOGUE                           \
    const bound_step& s = chain.step(index);                 \
    const void* p = adjusted(s, object);                     \
    if (p == nullptr) {                                      \
        out.fail(value_kind::null_in_call);                  \
        return;                                              \
    }                                                        \
    const bound_chain::resume r{&chain, index};              \
    const continuation next{&bound_chain::resume::call, &r}; \
    (void)next

inline void length(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    std::size_t n = 0;
    if (s.in->text != nullptr) {
        std::string_view t;
        if (!s.in->text(p, t)) {
            out.fail(value_kind::null_in_call);
            return;
        }
        n = t.size();
    } else {
        n = s.in->size(p);
    }
    chain.next(index, &n, out);
}

inline void at(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    std::size_t position = 0;
    if (s.in->text != nullptr) {
        std::string_view t;
        if (!s.in->text(p, t)) {
            out.fail(value_kind::null_in_call);
            return;
        }
        if (!resolve_index(s.number, t.size(), position)) {
            out.fail(value_kind::invalid_index);
            return;
        }
        chain.next(index, t.data() + position, out);
        return;
    }
    if (!resolve_index(s.number, s.in->size(p), position)) {
        out.fail(value_kind::invalid_index);
        return;
    }
    s.in->element(p, position, next, out);
}

inline std::string_view type_name_cached(const bound_step& s, const std::type_info& t) noexcept {
    reflection_registry& reg = reflection();
    const std::uint64_t gen = reg.name_generation.load(std::memory_order_acquire);
    bound_step::name_cache& c = *s.names;
    const std::type_info* cached = c.type.load(std::memory_order_acquire);
    if (cached != nullptr && *cached == t && c.generation.load(std::memory_order_acquire) == gen) {
        const std::string* n = c.name.load(std::memory_order_acquire);
        if (n != nullptr && c.type.load(std::memory_order_acquire) == cached) return *n;
    }
    try {
        std::lock_guard<std::mutex> lock(reg.mutex);
        const std::string& n = reg.interned_name_locked(t);
        // Publish (type, name) as a pair: clear the type first so readers skip the cache meanwhile.
        c.type.store(nullptr, std::memory_order_release);
        c.name.store(&n, std::memory_order_release);
        c.generation.store(reg.name_generation.load(std::memory_order_acquire), std::memory_order_release);
        c.type.store(&t, std::memory_order_release);
        return n;
    } catch (...) {
        return t.name();
    }
}

inline void type_of(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    const std::type_info& t = s.in->dynamic_type != nullptr ? *s.in->dynamic_type(p) : *s.in->type;
    const type_name_value v{type_name_cached(s, t)};
    chain.next(index, &v, out);
}

inline void member(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    s.member->access(*s.member, p, next, out);
}

inline void apply(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    const bound_step& s = chain.step(index);
    const void* p = object;
    for (adjust_fn f : s.adjust) {
        p = f(p);
        if (p == nullptr) break;
    }
    if (p == nullptr && !s.function->param_is_pointer) {
        out.fail(value_kind::null_in_call);
        return;
    }
    const bound_chain::resume r{&chain, index};
    s.function->invoke(*s.function, p, continuation{&bound_chain::resume::call, &r}, out);
}

inline void cast(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    const bound_step& s = chain.step(index);
    const void* p = adjusted(s, object);  // null passes through
    if (p != nullptr) {
        for (std::size_t i = 0; i < s.cast_path.size(); ++i) {
            p = s.cast_path[i](p);
            if (p == nullptr) {
                out.fail(value_kind::cast_failed);
                return;
            }
        }
    }
    const bound_chain::resume r{&chain, index};
    s.as_pointer(p, continuation{&bound_chain::resume::call, &r}, out);
}

inline void object_id(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    const object_id_value v{s.in->object_id(p)};
    chain.next(index, &v, out);
}

inline void deref(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    chain.next(index, p, out);
}

inline void to_string(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    s.in->format(p, out, next);
}

/// The text of a text step's input and its size before any earlier cut.
inline bool text_of(const bound_step& s, const void* p, std::string_view& t, std::size_t& original) noexcept {
    if (!s.in->text(p, t)) return false;
    original = s.in == type_desc_of<text_piece>() ? static_cast<const text_piece*>(p)->original_size : t.size();
    return true;
}

#define LOUPE_DETAIL_TEXT_PROLOGUE          \
    LOUPE_DETAIL_STEP_PROLOGUE;             \
    std::string_view t;                     \
    std::size_t original = 0;               \
    if (!text_of(s, p, t, original)) {      \
        out.fail(value_kind::null_in_call); \
        return;                             \
    }

inline void truncate(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_TEXT_PROLOGUE
    const text_piece v{utf8_prefix(t, static_cast<std::size_t>(s.number)), original};
    chain.next(index, &v, out);
}

inline void redact(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    if (s.in->number_bits != nullptr) {
        const redacted_value v{s.in->size_of};
        chain.next(index, &v, out);
        return;
    }
    std::string_view t;
    std::size_t original = 0;
    if (!text_of(s, p, t, original)) {
        out.fail(value_kind::null_in_call);
        return;
    }
    // Text a to_string formatted into the writer's scratch is wiped: the
    // clear text never stays in the writer's buffer.
    const auto tp = reinterpret_cast<std::uintptr_t>(t.data());
    const auto b = reinterpret_cast<std::uintptr_t>(out.scratch());
    if (!t.empty() && tp >= b && tp < b + out.capacity()) std::memset(out.scratch(), 0, out.capacity());
    const redacted_value v{original};
    chain.next(index, &v, out);
}

/// The 8 little-endian bytes of `u`, hashed (the compile-time chains' rule).
inline std::uint64_t hash_u64(std::uint64_t u) noexcept {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(u >> (8 * i));
    return keyed_hash(b, sizeof b);
}

inline void hash(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    LOUPE_DETAIL_STEP_PROLOGUE;
    if (s.in->number_bits != nullptr) {
        const hash_value v{hash_u64(s.in->number_bits(p))};
        chain.next(index, &v, out);
        return;
    }
    std::string_view t;
    std::size_t original = 0;
    if (!text_of(s, p, t, original)) {
        out.fail(value_kind::null_in_call);
        return;
    }
    const hash_value v{keyed_hash(t.data(), t.size())};
    chain.next(index, &v, out);
}

#undef LOUPE_DETAIL_TEXT_PROLOGUE
#undef LOUPE_DETAIL_STEP_PROLOGUE

}  // namespace chain_steps

/// Binds parsed chains (see bind_chain).
struct chain_binder {
    static constexpr int max_unwrap = 16;

    static std::string name_of(const type_desc* d) { return reflected_name(*d->type); }
    static std::string name_locked(const reflection_registry& reg, const type_desc* d) {
        auto it = reg.classes.find(std::type_index(*d->type));
        return it != reg.classes.end() ? it->second.name : demangle(*d->type);
    }

    // Unwraps pointer-likes; false when too deep (a pointer cycle cannot occur, but be safe).
    static bool unwrap(const type_desc*& d, std::vector<adjust_fn>& adjust) {
        for (int i = 0; d->pointee != nullptr; ++i) {
            if (i == max_unwrap) return false;
            adjust.push_back(d->pointee);
            d = d->pointee_desc();
        }
        return true;
    }

    // Finds `key` among the fields (or methods) of `cls` and its registered
    // bases (breadth first), appending the upcasts. Call with the registry locked.
    static std::shared_ptr<const member_entry> find_member(const reflection_registry& reg, std::type_index cls,
                                                           const std::string& key, bool methods,
                                                           std::vector<adjust_fn>& adjust,
                                                           std::vector<std::string>& known) {
        struct node {
            std::type_index type;
            std::size_t parent;
            adjust_fn up;
        };
        std::vector<node> queue{{cls, 0, nullptr}};
        for (std::size_t i = 0; i < queue.size() && i < 256; ++i) {
            auto it = reg.classes.find(queue[i].type);
            if (it == reg.classes.end()) continue;
            for (const auto& m : methods ? it->second.methods : it->second.fields) {
                if (m->key == key) {
                    std::vector<adjust_fn> ups;
                    for (std::size_t j = i; j != 0; j = queue[j].parent) ups.push_back(queue[j].up);
                    adjust.insert(adjust.end(), ups.rbegin(), ups.rend());
                    return m;
                }
                known.push_back(m->key);
            }
            for (const auto& b : it->second.bases) {
                bool seen = false;
                for (const auto& n : queue) seen = seen || n.type == b.base;
                if (!seen) queue.push_back({b.base, i, b.up});
            }
        }
        return nullptr;
    }

    // A conversion path from class `from` to class `to` along registered
    // bases (up: always; down: checked, polymorphic bases only). Registry locked.
    static bool cast_path(const reflection_registry& reg, std::type_index from, std::type_index to,
                          std::vector<adjust_fn>& path, std::vector<bool>& may_fail) {
        struct node {
            std::type_index type;
            std::size_t parent;
            adjust_fn fn;
            bool down;
        };
        std::vector<node> queue{{from, 0, nullptr, false}};
        auto seen = [&](std::type_index t) {
            for (const auto& n : queue) {
                if (n.type == t) return true;
            }
            return false;
        };
        for (std::size_t i = 0; i < queue.size() && i < 1024; ++i) {
            if (queue[i].type == to) {
                std::vector<std::size_t> idx;
                for (std::size_t j = i; j != 0; j = queue[j].parent) idx.push_back(j);
                for (auto it = idx.rbegin(); it != idx.rend(); ++it) {
                    path.push_back(queue[*it].fn);
                    may_fail.push_back(queue[*it].down);
                }
                return true;
            }
            const std::type_index cur = queue[i].type;
            auto it = reg.classes.find(cur);
            if (it != reg.classes.end()) {
                for (const auto& b : it->second.bases) {
                    if (!seen(b.base)) queue.push_back({b.base, i, b.up, false});
                }
            }
            for (const auto& [type, entry] : reg.classes) {  // classes deriving from `cur`
                for (const auto& b : entry.bases) {
                    if (b.base == cur && b.down != nullptr && !seen(type)) queue.push_back({type, i, b.down, true});
                }
            }
        }
        return false;
    }

    static const class_entry* find_class_by_name(const reflection_registry& reg, const std::string& name,
                                                 std::string& error) {
        const class_entry* exact = nullptr;
        std::vector<const class_entry*> tail;
        for (const auto& kv : reg.classes) {
            const std::string& n = kv.second.name;
            if (n == name) exact = &kv.second;
            if (n.size() > name.size() && n.compare(n.size() - name.size(), name.size(), name) == 0 &&
                n.compare(n.size() - name.size() - 2, 2, "::") == 0) {
                tail.push_back(&kv.second);
            }
        }
        if (exact != nullptr) return exact;
        if (tail.size() == 1) return tail[0];
        if (tail.size() > 1) {
            error = "type '" + name + "' is ambiguous (";
            for (std::size_t i = 0; i < tail.size(); ++i) error += (i ? ", " : "") + tail[i]->name;
            error += ")";
        } else {
            error = "no registered type '" + name + "' (loupe::reflect<T>(\"" + name + "\") registers one)";
        }
        return nullptr;
    }

    static bind_result bind(const parsed_chain& parsed, const type_desc* start) {
        bind_result result;
        auto chain = std::make_shared<bound_chain>();
        const type_desc* cur = start;
        reflection_registry& reg = reflection();
        std::size_t number = 0;
        auto fail = [&](const parsed_modifier& m, const std::string& reason) {
            result.error = "modifier " + std::to_string(number) + " `" + m.text + "`: " + reason;
            result.failed_modifier = number;
            return result;
        };
        for (const parsed_modifier& m : parsed.modifiers) {
            ++number;
            bound_step s;
            if (m.op == modifier_op::deref) {
                if (cur->pointee == nullptr) {
                    return fail(m, "deref needs a pointer, smart pointer or optional; " + name_of(cur) + " is not one");
                }
                s.adjust.push_back(cur->pointee);
                cur = cur->pointee_desc();
                s.in = cur;
                s.run = &chain_steps::deref;
                chain->steps_.push_back(std::move(s));
                continue;
            }
            if (m.op != modifier_op::apply) {
                if (!unwrap(cur, s.adjust)) return fail(m, "too many pointer levels");
                const bool numbers_ok =
                    m.op == modifier_op::to_string || m.op == modifier_op::redact || m.op == modifier_op::hash;
                if (cur->arithmetic && !numbers_ok) {
                    return fail(m, name_of(cur) +
                                       " is an arithmetic value; only to_string, redact and hash apply "
                                       "to it");
                }
            }
            s.in = cur;
            switch (m.op) {
                case modifier_op::length:
                case modifier_op::at:
                    if (cur->text == nullptr && cur->size == nullptr) {
                        return fail(m, std::string(m.op == modifier_op::length ? "length" : "at(i)") +
                                           " needs a sequence (a random-access container, array or string); " +
                                           name_of(cur) + " is not one");
                    }
                    s.number = m.number;
                    s.run = m.op == modifier_op::length ? &chain_steps::length : &chain_steps::at;
                    cur = m.op == modifier_op::length ? type_desc_of<std::size_t>() : cur->element_desc();
                    break;
                case modifier_op::type_of:
                    s.names = std::make_unique<bound_step::name_cache>();
                    s.run = &chain_steps::type_of;
                    cur = type_desc_of<type_name_value>();
                    break;
                case modifier_op::object_id:
                    if (cur->object_id == nullptr) return fail(m, name_of(cur) + " has no object identity");
                    s.run = &chain_steps::object_id;
                    cur = type_desc_of<object_id_value>();
                    break;
                case modifier_op::call:
                case modifier_op::field: {
                    const bool methods = m.op == modifier_op::call;
                    const char* what = methods ? "method" : "field";
                    std::vector<std::string> known;
                    std::lock_guard<std::mutex> lock(reg.mutex);
                    auto cls = reg.classes.find(std::type_index(*cur->type));
                    if (cls == reg.classes.end()) {
                        const std::string n = demangle(*cur->type);
                        return fail(m, n + " is not registered, so it has no " + what + " '" + m.name +
                                           "' (loupe::reflect<" + n + ">(\"" + n + "\")." + what +
                                           "(...) registers one)");
                    }
                    s.member = find_member(reg, std::type_index(*cur->type), m.name, methods, s.adjust, known);
                    if (!s.member) {
                        std::string list;
                        for (std::size_t i = 0; i < known.size(); ++i) {
                            bool dup = false;
                            for (std::size_t j = 0; j < i; ++j) dup = dup || known[j] == known[i];
                            if (!dup) list += (list.empty() ? "" : ", ") + known[i];
                        }
                        return fail(m, cls->second.name + " has no " + what + " '" + m.name + "' (registered " + what +
                                           "s: " + (list.empty() ? "none" : list) + ")");
                    }
                    s.run = &chain_steps::member;
                    cur = s.member->result;
                    break;
                }
                case modifier_op::apply: {
                    if (cur->arithmetic) {
                        return fail(m, name_of(cur) + " is an arithmetic value; modifiers do not apply to it");
                    }
                    std::lock_guard<std::mutex> lock(reg.mutex);
                    for (const auto& f : reg.functions) {
                        if (f->key == m.name) s.function = f;
                    }
                    if (!s.function) {
                        std::string tail;  // unqualified: a unique match on the last component
                        int count = 0;
                        for (const auto& f : reg.functions) {
                            const std::string& k = f->key;
                            if (k.size() > m.name.size() + 2 &&
                                k.compare(k.size() - m.name.size(), m.name.size(), m.name) == 0 &&
                                k.compare(k.size() - m.name.size() - 2, 2, "::") == 0) {
                                s.function = f;
                                ++count;
                            }
                        }
                        if (count > 1) return fail(m, "function name '" + m.name + "' is ambiguous");
                    }
                    if (!s.function) {
                        std::string known;
                        for (const auto& f : reg.functions) known += (known.empty() ? "" : ", ") + f->key;
                        return fail(m, "no registered function '" + m.name +
                                           "' (registered functions: " + (known.empty() ? "none" : known) + ")");
                    }
                    // Reach the parameter type: unwrap pointer-likes, then upcast along registered bases.
                    const type_desc* target = s.function->param;
                    const type_desc* d = cur;
                    bool reached = false;
                    for (int i = 0; i <= max_unwrap; ++i) {
                        if (d->type == target->type || *d->type == *target->type) {
                            reached = true;
                            break;
                        }
                        std::vector<adjust_fn> path;
                        std::vector<bool> may_fail;
                        if (reg.classes.count(std::type_index(*d->type)) != 0 &&
                            cast_path(reg, std::type_index(*d->type), std::type_index(*target->type), path, may_fail)) {
                            bool up_only = true;
                            for (bool f : may_fail) up_only = up_only && !f;
                            if (up_only) {
                                s.adjust.insert(s.adjust.end(), path.begin(), path.end());
                                reached = true;
                                break;
                            }
                        }
                        if (d->pointee == nullptr) break;
                        s.adjust.push_back(d->pointee);
                        d = d->pointee_desc();
                    }
                    if (!reached) {
                        return fail(m, s.function->name + " takes " + name_locked(reg, target) + ", not " +
                                           name_locked(reg, cur));
                    }
                    s.in = d;
                    s.run = &chain_steps::apply;
                    cur = s.function->result;
                    break;
                }
                case modifier_op::cast: {
                    std::lock_guard<std::mutex> lock(reg.mutex);
                    std::string error;
                    const class_entry* target = find_class_by_name(reg, m.name, error);
                    if (target == nullptr) return fail(m, error);
                    if (!cast_path(reg, std::type_index(*cur->type), std::type_index(*target->desc->type), s.cast_path,
                                   s.cast_may_fail)) {
                        return fail(m, "cannot cast " + name_locked(reg, cur) + " to " + target->name +
                                           " (no registered base/derived path; a downcast needs a polymorphic "
                                           "base registered with .base<B>())");
                    }
                    s.as_pointer = target->as_pointer;
                    s.run = &chain_steps::cast;
                    cur = target->pointer_desc;
                    break;
                }
                case modifier_op::to_string:
                    if (cur->format == nullptr) {
                        return fail(m, name_of(cur) +
                                           " cannot be formatted (no to_string found by ADL, no operator<<, not text)");
                    }
                    s.run = &chain_steps::to_string;
                    cur = type_desc_of<text_piece>();
                    break;
                case modifier_op::truncate:
                case modifier_op::redact:
                case modifier_op::hash:
                    if (cur->text == nullptr && (m.op == modifier_op::truncate || cur->number_bits == nullptr)) {
                        const bool t = m.op == modifier_op::truncate;
                        return fail(m, std::string(t                           ? "truncate(n) needs text"
                                                   : m.op == modifier_op::hash ? "hash needs text or a number"
                                                                               : "redact needs text or a number") +
                                           " (a string, string_view, const char* or to_string's result); " +
                                           name_of(cur) + (t ? " is not text" : " is neither"));
                    }
                    s.number = m.number;
                    s.run = m.op == modifier_op::truncate ? &chain_steps::truncate
                            : m.op == modifier_op::redact ? &chain_steps::redact
                                                          : &chain_steps::hash;
                    cur = m.op == modifier_op::truncate ? type_desc_of<text_piece>()
                          : m.op == modifier_op::redact ? type_desc_of<redacted_value>()
                                                        : type_desc_of<hash_value>();
                    break;
                case modifier_op::deref:
                    break;  // handled above
            }
            chain->steps_.push_back(std::move(s));
        }
        // The end: unwrap pointer-likes (null → NullValue) to a traceable type.
        const type_desc* end = cur;
        std::vector<adjust_fn> final_adjust;
        while (end->write == nullptr && end->pointee != nullptr && final_adjust.size() < max_unwrap) {
            final_adjust.push_back(end->pointee);
            end = end->pointee_desc();
        }
        if (end->write == nullptr) {
            const std::string why =
                " is not traceable (end the chain with a field, call or to_string giving a traceable value, or "
                "specialize loupe::traceable)";
            if (parsed.modifiers.empty()) {
                result.error = "the value itself: " + name_of(cur) + why;
                return result;
            }
            number = parsed.modifiers.size();
            return fail(parsed.modifiers.back(), "its result, " + name_of(cur) + "," + why);
        }
        chain->final_adjust_ = std::move(final_adjust);
        chain->final_ = end;
        chain->result_kind_ = end->kind;
        result.chain = std::move(chain);
        return result;
    }
};

/// Binds a parsed chain to values of the type `start` describes: checks
/// each modifier's precondition and computes its output type (patent
/// ¶0151–0155), then that the end is traceable. On failure `error` names the
/// modifier (1-based number and text) and the reason. Looks names up in the
/// reflection registry (locks it). Any thread; slow path.
inline bind_result bind_chain(const parsed_chain& parsed, const type_desc* start) {
    if (start == nullptr) {
        bind_result r;
        r.error = "no value to bind to (no type descriptor)";
        return r;
    }
    try {
        return chain_binder::bind(parsed, start);
    } catch (const std::exception& e) {
        bind_result r;
        r.error = std::string("binding failed: ") + e.what();
        return r;
    }
}

/// Parses and binds in one go; a syntax error becomes the bind error.
inline bind_result bind_chain(std::string_view text, const type_desc* start) {
    try {
        return bind_chain(parse_chain(text), start);
    } catch (const chain_syntax_error& e) {
        bind_result r;
        r.error = "chain offset " + std::to_string(e.offset) + ": " + e.what();
        return r;
    }
}

}  // namespace loupe::detail
