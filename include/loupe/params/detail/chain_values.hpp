// The intermediate values compile-time chains pass between modifiers (text
// pieces, type names, object ids, hashes, redacted sizes), their traceable
// specializations, and the unwrapping rules for pointers, smart pointers,
// optionals and reference wrappers (params/chain.hpp).
//
// Thread-safety: plain values and stateless helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "loupe/params/value.hpp"

namespace loupe::detail {

template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class>
inline constexpr bool dependent_false = false;

/// Text on its way through a chain: a view plus the size of the text it was
/// cut from (by `truncate` or a bounded `to_string`).
struct text_piece {
    std::string_view text;
    std::size_t original_size;
    constexpr operator std::string_view() const noexcept { return text; }  // for apply(fn) taking a view
};

/// Output of `type_of`: a name in the process's type-name cache.
struct type_name_value {
    std::string_view name;
};

/// Output of `object_id`.
struct object_id_value {
    std::uint64_t id;
};

/// Output of `hash`.
struct hash_value {
    std::uint64_t bits;
};

/// Output of `redact`: only the size survives.
struct redacted_value {
    std::size_t size;
};

// --- nullable wrappers: unwrapped before a modifier that needs an object -----

template <class T>
struct nullable {
    static constexpr bool value = false;
};

template <class T>
struct nullable<T*> {
    static constexpr bool value = std::is_object_v<T> && !std::is_void_v<T>;
    static bool is_null(const T* p) noexcept { return p == nullptr; }
    static const T& get(const T* p) noexcept { return *p; }
};

template <class T, class D>
struct nullable<std::unique_ptr<T, D>> {
    static constexpr bool value = !std::is_array_v<T>;
    static bool is_null(const std::unique_ptr<T, D>& p) noexcept { return p == nullptr; }
    static const T& get(const std::unique_ptr<T, D>& p) noexcept { return *p; }
};

template <class T>
struct nullable<std::shared_ptr<T>> {
    static constexpr bool value = !std::is_array_v<T>;
    static bool is_null(const std::shared_ptr<T>& p) noexcept { return p == nullptr; }
    static const T& get(const std::shared_ptr<T>& p) noexcept { return *p; }
};

template <class T>
struct nullable<std::optional<T>> {
    static constexpr bool value = true;
    static bool is_null(const std::optional<T>& o) noexcept { return !o.has_value(); }
    static const T& get(const std::optional<T>& o) noexcept { return *o; }
};

template <class T>
struct nullable<std::reference_wrapper<T>> {
    static constexpr bool value = true;
    static bool is_null(const std::reference_wrapper<T>&) noexcept { return false; }
    static const T& get(const std::reference_wrapper<T>& r) noexcept { return r.get(); }
};

template <class V>
using nullable_of = nullable<remove_cvref_t<V>>;

template <class V>
inline constexpr bool is_nullable_v = nullable_of<V>::value;

/// Calls `k(object)` with `v` unwrapped through every nullable layer; a null
/// layer fails the chain with NullInCall.
template <class V, class K>
void with_object(const V& v, value_writer& out, K&& k) {
    if constexpr (is_nullable_v<V>) {
        if (nullable_of<V>::is_null(v)) {
            out.fail(value_kind::null_in_call);
            return;
        }
        with_object(nullable_of<V>::get(v), out, k);
    } else {
        k(v);
    }
}

// --- text: strings, string views, C strings, char arrays, text pieces --------

template <class T>
struct text_kind {
    static constexpr bool value = false;
};
template <class Tr, class A>
struct text_kind<std::basic_string<char, Tr, A>> {
    static constexpr bool value = true;
};
template <class Tr>
struct text_kind<std::basic_string_view<char, Tr>> {
    static constexpr bool value = true;
};
template <>
struct text_kind<const char*> {
    static constexpr bool value = true;
};
template <>
struct text_kind<char*> {
    static constexpr bool value = true;
};
template <std::size_t N>
struct text_kind<char[N]> {
    static constexpr bool value = true;
};
template <>
struct text_kind<text_piece> {
    static constexpr bool value = true;
};

template <class V>
inline constexpr bool is_text_v = text_kind<remove_cvref_t<V>>::value;

/// Calls `on_text(text_piece)` for text (a null C string fails with
/// NullInCall), unwraps nullable layers (NullInCall when null), and calls
/// `on_object(v)` for anything else.
template <class V, class T, class O>
void with_text_or_object(const V& v, value_writer& out, T&& on_text, O&& on_object) {
    using U = remove_cvref_t<V>;
    if constexpr (std::is_same_v<U, text_piece>) {
        on_text(v);
    } else if constexpr (std::is_same_v<U, const char*> || std::is_same_v<U, char*>) {
        if (v == nullptr) {
            out.fail(value_kind::null_in_call);
            return;
        }
        const std::size_t n = std::strlen(v);
        on_text(text_piece{std::string_view(v, n), n});
    } else if constexpr (std::is_array_v<U> && is_text_v<U>) {
        const std::size_t n = ::strnlen(v, std::extent_v<U>);
        on_text(text_piece{std::string_view(v, n), n});
    } else if constexpr (is_text_v<U>) {
        on_text(text_piece{std::string_view(v.data(), v.size()), v.size()});
    } else if constexpr (is_nullable_v<U>) {
        if (nullable_of<U>::is_null(v)) {
            out.fail(value_kind::null_in_call);
            return;
        }
        with_text_or_object(nullable_of<U>::get(v), out, on_text, on_object);
    } else {
        on_object(v);
    }
}

/// The longest prefix of `s` that does not end inside a UTF-8 sequence (for
/// text cut by a bounded buffer, where the byte after the cut is unknown).
constexpr std::string_view utf8_complete_prefix(std::string_view s) noexcept {
    std::size_t i = s.size();
    std::size_t back = 0;
    // Find the lead byte of the last sequence (at most 3 continuation bytes back).
    while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) {
        --i;
        ++back;
    }
    if (i == 0) return s.substr(0, 0);
    const auto lead = static_cast<unsigned char>(s[i - 1]);
    const std::size_t need = lead < 0x80             ? 1
                             : (lead & 0xE0) == 0xC0 ? 2
                             : (lead & 0xF0) == 0xE0 ? 3
                             : (lead & 0xF8) == 0xF0 ? 4
                                                     : 1;
    return back + 1 >= need ? s : s.substr(0, i - 1);
}

}  // namespace loupe::detail

namespace loupe {

template <>
struct traceable<detail::text_piece> {
    static constexpr bool defined = true;
    LOUPE_ALWAYS_INLINE static void write(const detail::text_piece& t, value_writer& out) noexcept {
        out.write_string(t.text, t.original_size);
    }
};

template <>
struct traceable<detail::type_name_value> {
    static constexpr bool defined = true;
    static void write(const detail::type_name_value& t, value_writer& out) noexcept { out.write_type_name(t.name); }
};

template <>
struct traceable<detail::object_id_value> {
    static constexpr bool defined = true;
    static void write(const detail::object_id_value& v, value_writer& out) noexcept { out.write_object_id(v.id); }
};

template <>
struct traceable<detail::hash_value> {
    static constexpr bool defined = true;
    static void write(const detail::hash_value& v, value_writer& out) noexcept { out.write_hash(v.bits); }
};

template <>
struct traceable<detail::redacted_value> {
    static constexpr bool defined = true;
    static void write(const detail::redacted_value& v, value_writer& out) noexcept { out.write_redacted(v.size); }
};

}  // namespace loupe
