// Parsing of method signatures (US 9,129,056 ¶0120–0132): the text of a
// site signature (written by the developer in LOUPE_METHOD /
// LOUPE_FUNCTION_PARAMS) or of a spec selector (`method=` of a parameter
// spec) → a `signature` whose type spellings are normalized, so that the
// matcher (signature_matcher.hpp) compares canonical text and two spellings
// of one C++ type compare equal.
//
// ## Accepted text
//
//     [return-type] qualified-name [ '(' [type {',' type}] ')' [qualifiers] [return-type | '->' return-type] ]
//
// - qualified-name: components joined by `::` or by `.` (patent style,
//   `shop.Cart.add`); a leading `::` is dropped. Components may carry
//   template arguments (`shop::Box<int>::get`, `shop::max<int>`), which are
//   normalized like types. The last component is the function name; it may be
//   `~X`, `operator()`, `operator<<`, `operator new[]`, `operator bool`, ...
// - The return type may come before the name (C++ style, `double
//   shop::price(Order const*)`), after the parameter list (patent style,
//   `shop::price(Order const*)double`) or as a trailing `-> T` (`auto
//   f(int) -> double`); giving it twice is an error. A return type of
//   `auto` without a trailing one counts as not given.
// - No parentheses (only valid for spec selectors: `method=shop::Cart::add`):
//   `has_params` is false and the selector matches every overload.
// - Qualifiers after the parameter list (`const`, `volatile`, `&`, `&&`) are
//   kept in `signature::qualifiers` but never matched (a spec selects both
//   `get()` and `get() const`); `noexcept[(...)]`, `override` and `final`
//   are accepted and dropped. A `const` right after `)` that is followed by a
//   type starts a patent-style return type (`f()const Order*`).
// - Parameter names are accepted and dropped (`add(Item const& item, int)`);
//   `(void)` is the empty list; `...` is a parameter.
//
// ## Normalization (what makes two spellings compare equal)
//
// - Whitespace is insignificant; the canonical text has spaces only between
//   words, after `*` before a cv word, and before a word that follows `>` or `)`.
// - cv placement: `const T&`, `T const&` → `T const&`; `const T*` → `T
//   const*`; `volatile const` → `const volatile`.
// - Top-level cv of a *parameter* is dropped, as in C++ (`f(const int)` is
//   `f(int)`; `char* const` → `char*`). Return types keep theirs.
// - `> >` and `>>` are the same (tokens, not text, are compared).
// - Builtin types: `unsigned` → `unsigned int`; `signed`/`signed int` → `int`;
//   `short int`, `signed short` → `short`; `long int` → `long`; `long long
//   int` → `long long`; `unsigned long long int` → `unsigned long long`;
//   specifier order is free (`int unsigned` → `unsigned int`); `signed char`,
//   `unsigned char` and `char` stay distinct, as in C++.
// - `struct`/`class`/`union`/`enum`/`typename` before a name are dropped.
// - Patent-style dots in names are `::` (`java.lang.Object` → `java::lang::Object`).
// - `std::__cxx11::` and `std::__1::` (libstdc++ / libc++ inline namespaces)
//   → `std::`; `std::basic_string<C[, std::char_traits<C>[, std::allocator<C>]]>`
//   → `std::string` (C = char), `std::wstring`, `std::u8string`,
//   `std::u16string`, `std::u32string`; `std::basic_string_view<C[,
//   std::char_traits<C>]>` → `std::string_view` and friends. Only the
//   std-qualified spellings are mapped.
// - Not normalized: typedefs (`std::size_t` vs `unsigned long`, `int64_t`),
//   arrays vs pointers (`T[]` vs `T*`), `T const` vs `T` of a non-top-level
//   position other than the cases above, default template arguments other
//   than those of basic_string/basic_string_view.
//
// Errors throw signature_error with the byte offset. Text size and nesting
// depth are bounded because selectors come from configuration at run time:
// any text is either parsed or rejected, never a crash or deep recursion.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/base/error.hpp"
#include "loupe/params/detail/signature_lexer.hpp"

namespace loupe::detail {

/// Longest signature text accepted.
constexpr std::size_t signature_max_bytes = 4096;
/// Deepest nesting of template arguments, parentheses and declarators.
constexpr std::size_t signature_max_depth = 32;

/// A signature text that does not parse. `offset` is the 0-based byte offset
/// into the text (text size = at the end).
class signature_error : public error {
public:
    signature_error(std::size_t at, const std::string& what_expected)
        : error("column " + std::to_string(at + 1) + ": " + what_expected), offset(at), message(what_expected) {}

    std::size_t offset;
    std::string message;
};

/// A parsed, normalized signature (see the file comment for the rules).
struct signature {
    std::vector<std::string> scope;   ///< namespace/class components before the name ("shop", "Cart")
    std::string name;                 ///< function name ("add", "operator()", "~Cart", "max<int>")
    bool has_params = false;          ///< false: no parentheses (a selector for every overload)
    std::vector<std::string> params;  ///< normalized parameter types
    std::string return_type;          ///< normalized; empty = not given
    std::string qualifiers;           ///< "const", "&&", "const&", ... (kept, not matched)
    std::string text;                 ///< the text as given

    /// The class (or namespace) part: scope joined with "::" ("shop::Cart").
    std::string qualified_class() const {
        std::string out;
        for (const std::string& s : scope) {
            if (!out.empty()) out += "::";
            out += s;
        }
        return out;
    }

    /// scope and name joined with "::" ("shop::Cart::add").
    std::string qualified_name() const {
        std::string out = qualified_class();
        if (!out.empty()) out += "::";
        return out + name;
    }

    /// The canonical text: parses back to an equal signature. Equal for two
    /// spellings that normalize the same ("shop::Cart::add(Item const&,int)void").
    std::string canonical() const {
        if (!has_params) return return_type.empty() ? qualified_name() : return_type + " " + qualified_name();
        std::string out = qualified_name();
        out += '(';
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (i != 0) out += ',';
            out += params[i];
        }
        out += ')';
        if (!qualifiers.empty()) {
            out += ' ';
            out += qualifiers;
            if (!return_type.empty()) out += " -> " + return_type;
        } else {
            out += return_type;
        }
        return out;
    }
};

/// Parses one signature or one type; one use per object. Throws signature_error.
class signature_parser {
public:
    explicit signature_parser(std::string_view text) : text_(text) {
        if (text.size() > signature_max_bytes) {
            throw signature_error(signature_max_bytes, "expected at most " + std::to_string(signature_max_bytes) +
                                                           " bytes of signature, found " + std::to_string(text.size()));
        }
        t_ = sig_lex(text);
    }

    signature parse_signature() {
        signature sig;
        sig.text = std::string(text_);
        if (cur().kind == sig_token::end) fail(cur().pos, "expected a method signature, found an empty text");
        std::vector<component> name;
        std::string head_return;
        bool named = false;
        // 1. The whole head is a qualified name (no C++-style return type)?
        try {
            name = parse_qname(true, 0);
            named = cur().is("(") || cur().kind == sig_token::end;
        } catch (const signature_error&) {
            named = false;
        }
        // 2. Otherwise a return type, then the qualified name.
        if (!named) {
            i_ = 0;
            if (!starts_type(cur())) fail(cur().pos, "expected a method name or a return type, found " + found());
            head_return = parse_type(false, 0, false);
            if (cur().kind != sig_token::word && !cur().is("::") && !cur().is("~")) {
                fail(cur().pos, "expected a method name after the return type '" + head_return + "', found " + found());
            }
            name = parse_qname(true, 0);
            if (!cur().is("(") && cur().kind != sig_token::end) {
                fail(cur().pos, "expected '(' or the end after the method name, found " + found());
            }
        }
        sig.name = render_component(name.back());
        name.pop_back();
        for (const component& c : name) sig.scope.push_back(render_component(c));

        std::string tail_return;
        if (cur().is("(")) {
            sig.has_params = true;
            sig.params = parse_params(0);
            sig.qualifiers = parse_method_qualifiers();
            if (cur().is("->")) {
                advance();
                if (!starts_type(cur())) fail(cur().pos, "expected a return type after '->', found " + found());
                tail_return = parse_type(false, 0, false);
            } else if (cur().kind != sig_token::end) {
                if (!starts_type(cur())) {
                    fail(cur().pos, "expected a return type or the end after the parameter list, found " + found());
                }
                tail_return = parse_type(false, 0, false);
            }
            if (cur().kind != sig_token::end) {
                fail(cur().pos, "expected the end of the signature after the return type, found " + found());
            }
        }
        if (head_return == "auto") head_return.clear();
        if (!head_return.empty() && !tail_return.empty()) {
            fail(0, "expected one return type, found two ('" + head_return + "' before the name and '" + tail_return +
                        "' after the parameters)");
        }
        sig.return_type = head_return.empty() ? tail_return : head_return;
        if (sig.return_type == "auto") sig.return_type.clear();
        return sig;
    }

    /// Parses the whole text as one type (a parameter type: top-level cv dropped if `parameter`).
    std::string parse_whole_type(bool parameter) {
        if (!starts_type(cur())) fail(cur().pos, "expected a type, found " + found());
        std::string out = parse_type(parameter, 0, parameter);
        if (cur().kind != sig_token::end) fail(cur().pos, "expected the end of the type, found " + found());
        return out;
    }

    /// Parses the whole text as a qualified (class) name; returns its components.
    std::vector<std::string> parse_whole_name() {
        std::vector<component> name = parse_qname(false, 0);
        if (cur().kind != sig_token::end) fail(cur().pos, "expected the end of the name, found " + found());
        std::vector<std::string> out;
        for (const component& c : name) out.push_back(render_component(c));
        return out;
    }

private:
    struct component {
        std::string id;
        bool has_args = false;
        std::vector<std::string> args;
    };

    std::string_view text_;
    std::vector<sig_token> t_;
    std::size_t i_ = 0;

    const sig_token& cur() const noexcept { return t_[i_]; }
    const sig_token& peek(std::size_t k) const noexcept { return t_[std::min(i_ + k, t_.size() - 1)]; }
    void advance() noexcept {
        if (i_ + 1 < t_.size()) ++i_;
    }

    [[noreturn]] static void fail(std::size_t pos, const std::string& message) { throw signature_error(pos, message); }

    std::string found() const {
        if (cur().kind == sig_token::end) return "the end";
        return "'" + std::string(cur().text) + "'";
    }

    void expect(std::string_view p, const char* what) {
        if (!cur().is(p)) fail(cur().pos, std::string("expected ") + what + ", found " + found());
        advance();
    }

    static void check_depth(std::size_t depth, std::size_t pos) {
        if (depth > signature_max_depth) {
            fail(pos, "expected at most " + std::to_string(signature_max_depth) + " levels of nesting");
        }
    }

    static bool builtin_word(std::string_view w) noexcept {
        return w == "signed" || w == "unsigned" || w == "short" || w == "long" || w == "int" || w == "char" ||
               w == "bool" || w == "void" || w == "float" || w == "double" || w == "wchar_t" || w == "char8_t" ||
               w == "char16_t" || w == "char32_t" || w == "__int128" || w == "auto";
    }

    static bool starts_type(const sig_token& t) noexcept {
        if (t.is("::")) return true;
        if (t.kind != sig_token::word) return false;
        return t.text != "operator" && t.text != "noexcept" && t.text != "override" && t.text != "final";
    }

    static std::string render_component(const component& c) {
        std::string out = c.id;
        if (c.has_args) {
            out += '<';
            for (std::size_t k = 0; k < c.args.size(); ++k) {
                if (k != 0) out += ',';
                out += c.args[k];
            }
            out += '>';
        }
        return out;
    }

    /// std:: inline namespaces and the basic_string spellings (file comment).
    static void normalize_std(std::vector<component>& name) {
        if (name.size() >= 2 && name[0].id == "std" && !name[0].has_args &&
            (name[1].id == "__cxx11" || name[1].id == "__1") && !name[1].has_args) {
            name.erase(name.begin() + 1);
        }
        if (name.size() != 2 || name[0].id != "std" || name[0].has_args || !name[1].has_args) return;
        component& c = name[1];
        const bool is_string = c.id == "basic_string";
        const bool is_view = c.id == "basic_string_view";
        if (!is_string && !is_view) return;
        const std::size_t max_args = is_string ? 3 : 2;
        if (c.args.empty() || c.args.size() > max_args) return;
        const std::string& ch = c.args[0];
        static constexpr std::pair<std::string_view, std::string_view> chars[] = {{"char", "string"},
                                                                                  {"wchar_t", "wstring"},
                                                                                  {"char8_t", "u8string"},
                                                                                  {"char16_t", "u16string"},
                                                                                  {"char32_t", "u32string"}};
        std::string base;
        for (const auto& p : chars) {
            if (p.first == ch) base = std::string(p.second);
        }
        if (base.empty()) return;
        if (c.args.size() >= 2 && c.args[1] != "std::char_traits<" + ch + ">") return;
        if (c.args.size() >= 3 && c.args[2] != "std::allocator<" + ch + ">") return;
        c.id = is_view ? base + "_view" : base;
        c.has_args = false;
        c.args.clear();
    }

    /// qualified-name; `function` allows operator and destructor names as
    /// the last component.
    std::vector<component> parse_qname(bool function, std::size_t depth) {
        check_depth(depth, cur().pos);
        std::vector<component> out;
        if (cur().is("::")) advance();
        while (true) {
            component c;
            if (function && cur().is_word("operator")) {
                c.id = parse_operator_id(depth);
                out.push_back(std::move(c));
                break;
            }
            if (function && cur().is("~")) {
                advance();
                if (cur().kind != sig_token::word || sig_keyword(cur().text)) {
                    fail(cur().pos, "expected a class name after '~', found " + found());
                }
                c.id = "~" + std::string(cur().text);
                advance();
            } else {
                if (cur().kind != sig_token::word || sig_keyword(cur().text)) {
                    fail(cur().pos, "expected a name, found " + found());
                }
                c.id = std::string(cur().text);
                advance();
            }
            if (cur().is("<")) {
                c.has_args = true;
                c.args = parse_template_args(depth + 1);
            }
            out.push_back(std::move(c));
            if ((cur().is("::") || cur().is(".")) &&
                ((peek(1).kind == sig_token::word && (function || !sig_keyword(peek(1).text))) ||
                 (function && peek(1).is("~")))) {
                advance();
                continue;
            }
            break;
        }
        normalize_std(out);
        return out;
    }

    std::string parse_operator_id(std::size_t depth) {
        const std::size_t at = cur().pos;
        advance();  // 'operator'
        if (cur().is("(") && peek(1).is(")")) {
            advance();
            advance();
            return "operator()";
        }
        if (cur().is("[") && peek(1).is("]")) {
            advance();
            advance();
            return "operator[]";
        }
        if (cur().is_word("new") || cur().is_word("delete")) {
            std::string out = "operator " + std::string(cur().text);
            advance();
            if (cur().is("[") && peek(1).is("]")) {
                advance();
                advance();
                out += "[]";
            }
            return out;
        }
        if (cur().kind == sig_token::punct && !cur().is("(") && !cur().is("::")) {
            std::string out = "operator";
            for (int n = 0; n < 3 && cur().kind == sig_token::punct && !cur().is("("); ++n) {
                out += cur().text;
                advance();
            }
            return out;
        }
        if (starts_type(cur())) return "operator " + parse_type(false, depth + 1, false, false);
        fail(at, "expected an operator or a conversion type after 'operator', found " + found());
    }

    std::vector<std::string> parse_template_args(std::size_t depth) {
        check_depth(depth, cur().pos);
        expect("<", "'<'");
        std::vector<std::string> args;
        if (cur().is(">")) {
            advance();
            return args;
        }
        while (true) {
            args.push_back(parse_template_arg(depth));
            if (cur().is(",")) {
                advance();
                continue;
            }
            if (cur().is(">")) {
                advance();
                break;
            }
            fail(cur().pos, "expected ',' or '>' after a template argument, found " + found());
        }
        return args;
    }

    /// A type if it parses as one up to ',' or '>', else the tokens as written.
    std::string parse_template_arg(std::size_t depth) {
        const std::size_t save = i_;
        if (starts_type(cur())) {
            try {
                std::string s = parse_type(false, depth, false);
                if (cur().is(",") || cur().is(">")) return s;
            } catch (const signature_error&) {
            }
        }
        i_ = save;
        std::size_t nest = 0;
        const std::size_t from = i_;
        while (cur().kind != sig_token::end) {
            if (nest == 0 && (cur().is(",") || cur().is(">"))) break;
            if (cur().is("(") || cur().is("[") || cur().is("{") || cur().is("<")) {
                ++nest;
                check_depth(depth + nest, cur().pos);
            } else if (cur().is(")") || cur().is("]") || cur().is("}") || cur().is(">")) {
                if (nest == 0) break;
                --nest;
            }
            advance();
        }
        if (i_ == from) fail(cur().pos, "expected a template argument, found " + found());
        return sig_render(t_, from, i_);
    }

    /// The decl-specifiers, then an abstract declarator. `allow_name` drops a
    /// declarator name (parameters); `parameter` drops top-level cv.
    std::string parse_type(bool allow_name, std::size_t depth, bool parameter, bool fn_suffix = true) {
        check_depth(depth, cur().pos);
        const std::size_t start = cur().pos;
        bool is_const = false, is_volatile = false;
        int n_signed = 0, n_unsigned = 0, n_short = 0, n_long = 0;
        std::string base_kw, name;
        while (true) {
            const sig_token& t = cur();
            if (t.is_word("const")) {
                is_const = true;
            } else if (t.is_word("volatile")) {
                is_volatile = true;
            } else if ((t.is_word("struct") || t.is_word("class") || t.is_word("union") || t.is_word("enum") ||
                        t.is_word("typename")) &&
                       name.empty()) {
                // elaborated type specifier: dropped
            } else if (t.is_word("signed")) {
                if (!name.empty()) break;
                ++n_signed;
            } else if (t.is_word("unsigned")) {
                if (!name.empty()) break;
                ++n_unsigned;
            } else if (t.is_word("short")) {
                if (!name.empty()) break;
                ++n_short;
            } else if (t.is_word("long")) {
                if (!name.empty()) break;
                ++n_long;
            } else if (t.kind == sig_token::word && builtin_word(t.text)) {
                if (!name.empty()) break;
                if (!base_kw.empty())
                    fail(t.pos, "expected one type, found '" + base_kw + "' and '" + std::string(t.text) + "'");
                base_kw = std::string(t.text);
            } else if (t.is_word("decltype")) {
                if (!name.empty() || !base_kw.empty() || n_signed + n_unsigned + n_short + n_long != 0) break;
                const std::size_t from = i_;
                advance();
                if (!cur().is("(")) fail(cur().pos, "expected '(' after 'decltype', found " + found());
                std::size_t nest = 0;
                do {
                    if (cur().kind == sig_token::end) fail(cur().pos, "expected ')' to close 'decltype('");
                    if (cur().is("(")) {
                        ++nest;
                        check_depth(depth + nest, cur().pos);
                    } else if (cur().is(")")) {
                        --nest;
                    }
                    advance();
                } while (nest != 0);
                name = sig_render(t_, from, i_);
                continue;
            } else if ((t.kind == sig_token::word && !sig_keyword(t.text)) || t.is("::")) {
                if (!name.empty() || !base_kw.empty() || n_signed + n_unsigned + n_short + n_long != 0) break;
                std::vector<component> q = parse_qname(false, depth + 1);
                for (const component& c : q) {
                    if (!name.empty()) name += "::";
                    name += render_component(c);
                }
                continue;
            } else {
                break;
            }
            advance();
        }
        std::string base = name;
        if (name.empty()) {
            if (n_signed != 0 && n_unsigned != 0) fail(start, "expected 'signed' or 'unsigned', found both");
            if (n_signed > 1 || n_unsigned > 1 || n_short > 1 || n_long > 2 || (n_short != 0 && n_long != 0)) {
                fail(start, "expected a valid combination of 'signed', 'unsigned', 'short' and 'long'");
            }
            const bool sized = n_short != 0 || n_long != 0;
            const bool signedness = n_signed != 0 || n_unsigned != 0;
            if (base_kw.empty() && !sized && !signedness) fail(start, "expected a type, found " + found());
            if (base_kw.empty() || base_kw == "int") {
                base = n_unsigned != 0 ? "unsigned " : "";
                base += n_short != 0 ? "short" : n_long == 2 ? "long long" : n_long == 1 ? "long" : "int";
            } else if (base_kw == "char") {
                if (sized) fail(start, "expected no 'short' or 'long' with 'char'");
                base = n_unsigned != 0 ? "unsigned char" : n_signed != 0 ? "signed char" : "char";
            } else if (base_kw == "double") {
                if (signedness || n_short != 0 || n_long > 1) fail(start, "expected 'double' or 'long double'");
                base = n_long != 0 ? "long double" : "double";
            } else if (base_kw == "__int128") {
                if (sized) fail(start, "expected no 'short' or 'long' with '__int128'");
                base = n_unsigned != 0 ? "unsigned __int128" : "__int128";
            } else {
                if (sized || signedness)
                    fail(start, "expected no 'signed', 'unsigned', 'short' or 'long' with '" + base_kw + "'");
                base = base_kw;
            }
        }
        declarator d = parse_declarator(allow_name, depth, fn_suffix);
        if (parameter) {
            if (d.ops.empty() && d.nested.empty() && d.suffix.empty()) {
                is_const = is_volatile = false;
            } else if (d.nested.empty() && d.suffix.empty() && d.ops.back().back() != '&' && d.ops.back() != "...") {
                std::string& op = d.ops.back();
                op = op.substr(0, op.find('*') + 1);
            }
        }
        std::string out = base;
        if (is_const) out += " const";
        if (is_volatile) out += " volatile";
        out += render_declarator(d);
        return out;
    }

    struct declarator {
        std::vector<std::string> ops;  // "*", "* const", "&", "&&", "...", "Cart::*", "Cart::* const"
        std::string nested;            // "(...)" or empty
        std::string suffix;            // "[3]", "(int,char) const", ...
    };

    static std::string render_declarator(const declarator& d) {
        std::string out;
        for (const std::string& op : d.ops) {
            if (op[0] != '*' && op[0] != '&' && op[0] != '.') out += ' ';
            out += op;
        }
        return out + d.nested + d.suffix;
    }

    /// At cur: [::] name {:: name} '::' '*' (a member pointer)? Leaves i_ unchanged.
    bool at_member_pointer(std::size_t depth) {
        if (!(cur().kind == sig_token::word && !sig_keyword(cur().text)) && !cur().is("::")) return false;
        const std::size_t save = i_;
        bool yes = false;
        try {
            parse_qname(false, depth + 1);
            yes = cur().is("::") && peek(1).is("*");
        } catch (const signature_error&) {
        }
        i_ = save;
        return yes;
    }

    std::string parse_cv_suffix() {
        std::string out;
        bool c = false, v = false;
        while (cur().is_word("const") || cur().is_word("volatile")) {
            (cur().text == "const" ? c : v) = true;
            advance();
        }
        if (c) out += " const";
        if (v) out += " volatile";
        return out;
    }

    declarator parse_declarator(bool allow_name, std::size_t depth, bool fn_suffix = true) {
        check_depth(depth, cur().pos);
        declarator d;
        while (true) {
            if (cur().is("*")) {
                advance();
                d.ops.push_back("*" + parse_cv_suffix());
            } else if (cur().is("&") || cur().is("&&") || cur().is("...")) {
                d.ops.emplace_back(cur().text);
                advance();
            } else if (at_member_pointer(depth)) {
                std::vector<component> q = parse_qname(false, depth + 1);
                std::string op;
                for (const component& c : q) op += render_component(c) + "::";
                advance();  // '::'
                advance();  // '*'
                d.ops.push_back(op + "*" + parse_cv_suffix());
            } else {
                break;
            }
        }
        if (cur().is("(") && (peek(1).is("*") || peek(1).is("&") || peek(1).is("&&") || peek(1).is("^") ||
                              (peek(1).kind == sig_token::word && !sig_keyword(peek(1).text)) || peek(1).is("::"))) {
            // A nested declarator "(*)" / "(&)" / "(Cart::*)" / "(*name)"; a
            // word after '(' is a member pointer or (with allow_name) a name,
            // otherwise this is a function suffix ("int(Item)").
            const std::size_t save = i_;
            advance();
            const bool nested = !(peek(0).kind == sig_token::word || peek(0).is("::")) || at_member_pointer(depth);
            i_ = save;
            if (nested) {
                advance();
                declarator inner = parse_declarator(allow_name, depth + 1);
                expect(")", "')' closing a declarator");
                std::string r = render_declarator(inner);
                if (!r.empty() && r[0] == ' ') r.erase(0, 1);
                d.nested = "(" + r + ")";
            }
        }
        if (d.nested.empty() && allow_name && cur().kind == sig_token::word && !sig_keyword(cur().text)) {
            advance();  // a parameter's name: dropped
        }
        while (true) {
            if (cur().is("[")) {
                const std::size_t from = i_;
                advance();
                std::size_t nest = 1;
                while (nest != 0) {
                    if (cur().kind == sig_token::end) fail(cur().pos, "expected ']' to close '['");
                    if (cur().is("[")) {
                        ++nest;
                        check_depth(depth + nest, cur().pos);
                    } else if (cur().is("]")) {
                        --nest;
                    }
                    advance();
                }
                d.suffix += sig_render(t_, from, i_);
            } else if (cur().is("(") && fn_suffix) {
                std::vector<std::string> params = parse_params(depth + 1);
                d.suffix += "(";
                for (std::size_t k = 0; k < params.size(); ++k) {
                    if (k != 0) d.suffix += ',';
                    d.suffix += params[k];
                }
                d.suffix += ")";
                d.suffix += parse_cv_suffix();
                if (cur().is("&") || cur().is("&&")) {
                    d.suffix += cur().text;
                    advance();
                }
                if (cur().is_word("noexcept")) {
                    advance();
                    d.suffix += " noexcept";
                }
            } else {
                break;
            }
        }
        return d;
    }

    /// '(' [type {',' type}] ')'; "(void)" is empty.
    std::vector<std::string> parse_params(std::size_t depth) {
        check_depth(depth, cur().pos);
        expect("(", "'('");
        std::vector<std::string> params;
        if (cur().is(")")) {
            advance();
            return params;
        }
        while (true) {
            if (cur().is("...")) {
                advance();
                params.emplace_back("...");
            } else {
                if (!starts_type(cur())) {
                    fail(cur().pos, "expected a parameter type, found " + found());
                }
                params.push_back(parse_type(true, depth + 1, true));
            }
            if (cur().is(",")) {
                advance();
                continue;
            }
            if (cur().is(")")) {
                advance();
                break;
            }
            fail(cur().pos, "expected ',' or ')' after parameter " + std::to_string(params.size()) + " ('" +
                                params.back() + "'), found " + found());
        }
        if (params.size() == 1 && params[0] == "void") params.clear();
        return params;
    }

    /// const/volatile/&/&& (kept), noexcept/override/final (dropped) after the
    /// parameter list. A cv word followed by a type starts the return type.
    std::string parse_method_qualifiers() {
        bool c = false, v = false;
        std::string ref;
        while (true) {
            if (cur().is_word("const") || cur().is_word("volatile")) {
                std::size_t k = 1;
                while (peek(k).is_word("const") || peek(k).is_word("volatile")) ++k;
                const sig_token& after = peek(k);
                const bool qualifier = after.kind == sig_token::end || after.is("&") || after.is("&&") ||
                                       after.is("->") || after.is_word("noexcept") || after.is_word("override") ||
                                       after.is_word("final");
                if (!qualifier) break;
                for (std::size_t n = 0; n < k; ++n) {
                    (cur().text == "const" ? c : v) = true;
                    advance();
                }
            } else if (cur().is("&") || cur().is("&&")) {
                if (!ref.empty()) fail(cur().pos, "expected one of '&' or '&&', found two");
                ref = std::string(cur().text);
                advance();
            } else if (cur().is_word("noexcept")) {
                advance();
                if (cur().is("(")) {
                    std::size_t nest = 0;
                    do {
                        if (cur().kind == sig_token::end) fail(cur().pos, "expected ')' to close 'noexcept('");
                        if (cur().is("(")) {
                            ++nest;
                            check_depth(nest, cur().pos);
                        } else if (cur().is(")")) {
                            --nest;
                        }
                        advance();
                    } while (nest != 0);
                }
            } else if (cur().is_word("override") || cur().is_word("final")) {
                advance();
            } else {
                break;
            }
        }
        std::string out;
        if (c) out += "const";
        if (v) out += out.empty() ? "volatile" : " volatile";
        return out + ref;
    }
};

/// Parses a site signature or a spec selector. Throws signature_error.
inline signature parse_signature(std::string_view text) { return signature_parser(text).parse_signature(); }

/// Normalizes one type's spelling (a parameter type if `parameter`: top-level
/// cv dropped). Throws signature_error.
inline std::string normalize_type(std::string_view text, bool parameter = true) {
    return signature_parser(text).parse_whole_type(parameter);
}

/// The components of a qualified class name, normalized ("std::__cxx11::x"
/// → {"std", "x"}); text that does not parse is split at top-level "::".
inline std::vector<std::string> split_class_name(std::string_view text) {
    try {
        return signature_parser(text).parse_whole_name();
    } catch (const signature_error&) {
    }
    std::vector<std::string> out;
    std::size_t depth = 0, from = 0;
    for (std::size_t k = 0; k < text.size(); ++k) {
        const char c = text[k];
        if (c == '<' || c == '(' || c == '[') ++depth;
        if ((c == '>' || c == ')' || c == ']') && depth != 0) --depth;
        if (depth == 0 && c == ':' && k + 1 < text.size() && text[k + 1] == ':') {
            if (k != from) out.emplace_back(text.substr(from, k - from));
            from = k + 2;
            ++k;
        }
    }
    if (from < text.size()) out.emplace_back(text.substr(from));
    return out;
}

}  // namespace loupe::detail
