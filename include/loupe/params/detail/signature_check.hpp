// The compile-time check of a method site's signature literal against the
// arguments the macro is given (LOUPE_METHOD and friends, params/method.hpp):
// as many parameters as arguments, and where the literal spells a parameter
// as a built-in arithmetic type ("int", "unsigned long const&", "double",
// "std::size_t", "std::int64_t", ...), the argument has that type. Other
// parameter types (classes, pointers, aliases) are not compared: the names
// a literal uses need not be the ones the compiler knows.
//
// A literal this scanner cannot take apart (unbalanced brackets, an operator
// function) is not checked here; the runtime parser reports it when the
// site first binds (method_registry.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "loupe/base/config.hpp"

namespace loupe::detail {

/// The most parameters whose types are compared (later ones are counted only).
inline constexpr std::size_t max_checked_params = 16;

/// What a signature literal says about its parameters.
struct signature_shape {
    int count = -1;  ///< -1: the literal could not be taken apart
    /// Per parameter: the built-in arithmetic type it spells (builtin_code),
    /// 0 when it spells anything else.
    int builtin[max_checked_params] = {};
};

/// A number for each built-in arithmetic type (0: none of them).
template <class T>
constexpr int builtin_code_of() noexcept {
    using U = std::remove_cv_t<std::remove_reference_t<T>>;
    if constexpr (std::is_same_v<U, bool>) return 1;
    else if constexpr (std::is_same_v<U, char>) return 2;
    else if constexpr (std::is_same_v<U, signed char>) return 3;
    else if constexpr (std::is_same_v<U, unsigned char>) return 4;
    else if constexpr (std::is_same_v<U, short>) return 5;
    else if constexpr (std::is_same_v<U, unsigned short>) return 6;
    else if constexpr (std::is_same_v<U, int>) return 7;
    else if constexpr (std::is_same_v<U, unsigned>) return 8;
    else if constexpr (std::is_same_v<U, long>) return 9;
    else if constexpr (std::is_same_v<U, unsigned long>) return 10;
    else if constexpr (std::is_same_v<U, long long>) return 11;
    else if constexpr (std::is_same_v<U, unsigned long long>) return 12;
    else if constexpr (std::is_same_v<U, float>) return 13;
    else if constexpr (std::is_same_v<U, double>) return 14;
    else if constexpr (std::is_same_v<U, long double>) return 15;
    else return 0;
}

constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

constexpr std::string_view trim_blanks(std::string_view s) noexcept {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

// Removes one leading or trailing "const" word from `s`; false if none.
constexpr bool strip_const(std::string_view& s) noexcept {
    constexpr std::string_view c = "const";
    if (s.size() > c.size() && s.substr(0, c.size()) == c && is_blank(s[c.size()])) {
        s = trim_blanks(s.substr(c.size()));
        return true;
    }
    if (s.size() > c.size() && s.substr(s.size() - c.size()) == c && is_blank(s[s.size() - c.size() - 1])) {
        s = trim_blanks(s.substr(0, s.size() - c.size()));
        return true;
    }
    return false;
}

// The built-in arithmetic type a parameter's text spells: "int",
// "const int", "int const&", "unsigned long", "std::size_t", ... (0: none).
constexpr int builtin_code_of_text(std::string_view t) noexcept {
    t = trim_blanks(t);
    if (!t.empty() && t.back() == '&') t = trim_blanks(t.substr(0, t.size() - 1));
    if (!t.empty() && t.back() == '&') t = trim_blanks(t.substr(0, t.size() - 1));  // &&
    while (strip_const(t)) {
    }
    struct spelling {
        std::string_view text;
        int code;
    };
    constexpr spelling spellings[] = {
        {"bool", builtin_code_of<bool>()},
        {"char", builtin_code_of<char>()},
        {"signed char", builtin_code_of<signed char>()},
        {"unsigned char", builtin_code_of<unsigned char>()},
        {"short", builtin_code_of<short>()},
        {"short int", builtin_code_of<short>()},
        {"unsigned short", builtin_code_of<unsigned short>()},
        {"int", builtin_code_of<int>()},
        {"signed", builtin_code_of<int>()},
        {"unsigned", builtin_code_of<unsigned>()},
        {"unsigned int", builtin_code_of<unsigned>()},
        {"long", builtin_code_of<long>()},
        {"long int", builtin_code_of<long>()},
        {"unsigned long", builtin_code_of<unsigned long>()},
        {"long long", builtin_code_of<long long>()},
        {"unsigned long long", builtin_code_of<unsigned long long>()},
        {"float", builtin_code_of<float>()},
        {"double", builtin_code_of<double>()},
        {"long double", builtin_code_of<long double>()},
        {"std::size_t", builtin_code_of<std::size_t>()},
        {"size_t", builtin_code_of<std::size_t>()},
        {"std::int8_t", builtin_code_of<std::int8_t>()},
        {"std::uint8_t", builtin_code_of<std::uint8_t>()},
        {"std::int16_t", builtin_code_of<std::int16_t>()},
        {"std::uint16_t", builtin_code_of<std::uint16_t>()},
        {"std::int32_t", builtin_code_of<std::int32_t>()},
        {"std::uint32_t", builtin_code_of<std::uint32_t>()},
        {"std::int64_t", builtin_code_of<std::int64_t>()},
        {"std::uint64_t", builtin_code_of<std::uint64_t>()},
    };
    for (const spelling& s : spellings) {
        if (s.text == t) return s.code;
    }
    return 0;
}

/// Takes a signature literal apart: the parameter list is the first '('
/// outside template brackets; its parameters are split at the commas outside
/// nested brackets. "()" and "(void)" have none.
constexpr signature_shape shape_of_signature(std::string_view sig) noexcept {
    signature_shape out;
    if (sig.find("operator") != std::string_view::npos) return out;  // '<', '(' in the name: not scanned
    std::size_t open = std::string_view::npos;
    int angle = 0;
    for (std::size_t i = 0; i < sig.size(); ++i) {
        if (sig[i] == '<') ++angle;
        if (sig[i] == '>') --angle;
        if (sig[i] == '(' && angle == 0) {
            open = i;
            break;
        }
    }
    if (open == std::string_view::npos) return out;
    int depth = 0;
    int count = 0;
    std::size_t begin = open + 1;
    bool any = false;
    for (std::size_t i = open + 1; i < sig.size(); ++i) {
        const char c = sig[i];
        if (c == '(' || c == '<' || c == '[') ++depth;
        if ((c == ')' || c == '>' || c == ']') && depth > 0) {
            --depth;
            continue;
        }
        if ((c == ',' || c == ')') && depth == 0) {
            const std::string_view param = trim_blanks(sig.substr(begin, i - begin));
            if (c == ')' && count == 0 && (param.empty() || param == "void")) {
                out.count = 0;
                return out;
            }
            if (param.empty()) return out;  // "(int,)"
            if (static_cast<std::size_t>(count) < max_checked_params) out.builtin[count] = builtin_code_of_text(param);
            ++count;
            begin = i + 1;
            if (c == ')') {
                any = true;
                break;
            }
        }
    }
    if (any) out.count = count;
    return out;
}

/// The type of a builtin code (builtin_code_of), for compiler messages.
struct not_a_builtin_type {};
template <int Code>
struct builtin_type_of_code {
    using type = not_a_builtin_type;
};
#define LOUPE_DETAIL_BUILTIN_CODE(T) \
    template <>                      \
    struct builtin_type_of_code<builtin_code_of<T>()> { using type = T; }
LOUPE_DETAIL_BUILTIN_CODE(bool);
LOUPE_DETAIL_BUILTIN_CODE(char);
LOUPE_DETAIL_BUILTIN_CODE(signed char);
LOUPE_DETAIL_BUILTIN_CODE(unsigned char);
LOUPE_DETAIL_BUILTIN_CODE(short);
LOUPE_DETAIL_BUILTIN_CODE(unsigned short);
LOUPE_DETAIL_BUILTIN_CODE(int);
LOUPE_DETAIL_BUILTIN_CODE(unsigned);
LOUPE_DETAIL_BUILTIN_CODE(long);
LOUPE_DETAIL_BUILTIN_CODE(unsigned long);
LOUPE_DETAIL_BUILTIN_CODE(long long);
LOUPE_DETAIL_BUILTIN_CODE(unsigned long long);
LOUPE_DETAIL_BUILTIN_CODE(float);
LOUPE_DETAIL_BUILTIN_CODE(double);
LOUPE_DETAIL_BUILTIN_CODE(long double);
#undef LOUPE_DETAIL_BUILTIN_CODE

/// The arguments a site's macro was given (their types, through
/// `site_arguments_of`).
template <class... Args>
struct site_arguments {
    static constexpr int count = static_cast<int>(sizeof...(Args));
    static constexpr int codes[sizeof...(Args) + 1] = {builtin_code_of<Args>()..., 0};

    /// The first parameter (0-based) that the literal spells as a built-in
    /// type other than its argument's, or -1.
    static constexpr int first_type_mismatch(const signature_shape& s) noexcept {
        if (s.count != count) return -1;  // the count check says so
        for (int i = 0; i < count && i < static_cast<int>(max_checked_params); ++i) {
            if (s.builtin[i] != 0 && s.builtin[i] != codes[i]) return i;
        }
        return -1;
    }
    static constexpr int code_at(int i) noexcept { return i < 0 ? 0 : codes[i]; }
};

template <class... Args>
site_arguments<std::remove_cv_t<Args>...> site_arguments_of(Args&...) noexcept;

constexpr int declared_code_at(const signature_shape& s, int i) noexcept { return i < 0 ? 0 : s.builtin[i]; }

/// Fails to compile when the literal declares another number of parameters
/// than the macro was given arguments; the message shows both numbers.
template <int Declared, int Given>
struct signature_parameter_count {
    static_assert(Declared < 0 || Declared == Given,
                  "loupe: the method signature declares a different number of parameters than the arguments "
                  "given to the macro (Declared and Given, in this message)");
    static constexpr bool ok = true;
};

/// Fails to compile when parameter `Position` (1-based) is spelled as the
/// built-in type `Declared` and its argument has type `Given`.
template <int Position, class Declared, class Given>
struct signature_parameter_type {
    static_assert(Position == 0,
                  "loupe: the method signature spells a parameter (Position, from 1) as a built-in type "
                  "(Declared) that its argument (Given) does not have");
    static constexpr bool ok = true;
};

}  // namespace loupe::detail

/// The checks, in the macros: `args` is the parenthesized argument list.
#define LOUPE_DETAIL_CHECK_SIGNATURE(id, signature, args)                                                        \
    static constexpr ::loupe::detail::signature_shape LOUPE_DETAIL_CAT(id, _shape) =                              \
        ::loupe::detail::shape_of_signature(signature);                                                          \
    using LOUPE_DETAIL_CAT(id, _args) = decltype(::loupe::detail::site_arguments_of args);                        \
    static_assert(::loupe::detail::signature_parameter_count<LOUPE_DETAIL_CAT(id, _shape).count,                  \
                                                             LOUPE_DETAIL_CAT(id, _args)::count>::ok,             \
                  "");                                                                                            \
    static_assert(                                                                                                \
        ::loupe::detail::signature_parameter_type<                                                                \
            LOUPE_DETAIL_CAT(id, _args)::first_type_mismatch(LOUPE_DETAIL_CAT(id, _shape)) + 1,                   \
            ::loupe::detail::builtin_type_of_code<::loupe::detail::declared_code_at(                             \
                LOUPE_DETAIL_CAT(id, _shape),                                                                     \
                LOUPE_DETAIL_CAT(id, _args)::first_type_mismatch(LOUPE_DETAIL_CAT(id, _shape)))>::type,          \
            ::loupe::detail::builtin_type_of_code<LOUPE_DETAIL_CAT(id, _args)::code_at(                          \
                LOUPE_DETAIL_CAT(id, _args)::first_type_mismatch(LOUPE_DETAIL_CAT(id, _shape)))>::type>::ok,    \
        "")
