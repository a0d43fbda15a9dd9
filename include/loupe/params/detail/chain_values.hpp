// The intermediate values chains pass between modifiers (text pieces, type
// names, object ids, hashes, redacted sizes), their traceable
// specializations, and the rules both kinds of chain share for what is text
// and what is unwrapped: pointers, smart pointers, optionals and reference
// wrappers (params/chain.hpp).
//
// Thread-safety: plain values and stateless helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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
//
// Recognised by their shape, not their name, so that a server's own smart
// pointers unwrap like the standard ones:
//   pointers       T* to an object type
//   smart pointers `element_type`, `get()` returning `element_type*`, and
//                  `operator->` (std::unique_ptr, std::shared_ptr; not their
//                  array forms, which have no operator->)
//   optionals      `value_type`, `has_value()` and `operator*` (std::optional)
//   references     `type` and `get()` returning `type&`
//                  (std::reference_wrapper)

enum class nullable_shape { none, pointer, smart_pointer, optional, reference };

template <class P, class = void>
struct smart_pointer_shape : std::false_type {};
template <class P>
struct smart_pointer_shape<P, std::void_t<typename P::element_type, decltype(std::declval<const P&>().operator->())>>
    : std::is_same<decltype(std::declval<const P&>().get()), typename P::element_type*> {};

template <class P, class = void>
struct optional_shape : std::false_type {};
template <class P>
struct optional_shape<P, std::void_t<typename P::value_type, decltype(bool(std::declval<const P&>().has_value())),
                                     decltype(*std::declval<const P&>())>> : std::true_type {};

template <class P, class = void>
struct reference_shape : std::false_type {};
template <class P>
struct reference_shape<P, std::void_t<typename P::type>>
    : std::is_same<decltype(std::declval<const P&>().get()), typename P::type&> {};

template <class P>
constexpr nullable_shape shape_of() noexcept {
    if constexpr (std::is_pointer_v<P>) {
        return std::is_object_v<std::remove_pointer_t<P>> ? nullable_shape::pointer : nullable_shape::none;
    } else if constexpr (!std::is_class_v<P>) {
        return nullable_shape::none;
    } else if constexpr (smart_pointer_shape<P>::value) {
        return nullable_shape::smart_pointer;
    } else if constexpr (optional_shape<P>::value) {
        return nullable_shape::optional;
    } else if constexpr (reference_shape<P>::value) {
        return nullable_shape::reference;
    } else {
        return nullable_shape::none;
    }
}

template <class P, nullable_shape = shape_of<P>()>
struct nullable {
    static constexpr bool value = false;
};

template <class T>
struct nullable<T*, nullable_shape::pointer> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<T>;
    static bool is_null(const T* p) noexcept { return p == nullptr; }
    static const T& get(const T* p) noexcept { return *p; }
};

template <class P>
struct nullable<P, nullable_shape::smart_pointer> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<typename P::element_type>;
    static bool is_null(const P& p) noexcept { return p.get() == nullptr; }
    static const pointee& get(const P& p) noexcept { return *p.get(); }
};

template <class P>
struct nullable<P, nullable_shape::optional> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<typename P::value_type>;
    static bool is_null(const P& o) noexcept { return !o.has_value(); }
    static const pointee& get(const P& o) noexcept { return *o; }
};

template <class P>
struct nullable<P, nullable_shape::reference> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<typename P::type>;
    static bool is_null(const P&) noexcept { return false; }
    static const pointee& get(const P& r) noexcept { return r.get(); }
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
