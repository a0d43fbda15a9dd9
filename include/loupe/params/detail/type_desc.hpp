// Type-erased type descriptors for runtime modifier chains (Tier B,
// US 9,129,056 ¶0151–0155): what a chain can do with a value of some C++ type
// when all it has is `const void*` — write it as a traced value, unwrap it
// (pointers, smart pointers, optional), index it (containers, arrays,
// strings), ask its dynamic type, format it. What `loupe::reflect` adds to
// class types (named fields, methods, bases, functions) is in
// reflection_registry.hpp, which only the binder and registering files need.
//
// `type_desc_of<T>()` returns one constant-initialized descriptor per decayed
// type (no allocation, no registration). Descriptors of element and pointee
// types are reached through function pointers, so self-referential types work.
//
// Thread-safety: descriptors are immutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "loupe/base/config.hpp"
#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/detail/modifier_support.hpp"
#include "loupe/params/detail/value_formatting.hpp"
#include "loupe/params/value.hpp"

namespace loupe::detail {

// The values modifiers produce (text_piece, type_name_value, object_id_value,
// hash_value, redacted_value) are the compile-time chains' (chain_values.hpp),
// so both kinds of chain write them the same way.

/// A non-owning callback: "continue the chain with this object". Lets a step
/// keep a temporary (a getter's result) alive while the rest of the chain runs.
struct continuation {
    void (*fn)(const void* self, const void* object, value_writer& out) noexcept;
    const void* self;
    void operator()(const void* object, value_writer& out) const noexcept { fn(self, object, out); }
};

/// What a chain can do with a value of one C++ type. Function pointers that
/// are null mean "cannot". Every `const void*` object argument points at an
/// object of the described type (for a pointer type: at the pointer variable).
struct type_desc {
    const std::type_info* type;  ///< the static type
    value_kind kind;             ///< the kind `write` produces (unknown: user-defined traceable, or none)
    bool arithmetic;             ///< bool, integers, floating point, enums: no modifier applies
    bool polymorphic;
    /// Writes the value (the end of a chain); null when the type is not traceable.
    void (*write)(const void* object, value_writer& out) noexcept;
    /// Pointer-like (T*, unique_ptr, shared_ptr, optional, reference_wrapper):
    /// the pointee's address, or null.
    const void* (*pointee)(const void* object) noexcept;
    const type_desc* (*pointee_desc)() noexcept;
    /// Text (std::string, string_view, const char*, char arrays): its bytes;
    /// false when the text is null (a null `const char*`).
    bool (*text)(const void* object, std::string_view& out) noexcept;
    /// Sequences (random-access containers, std::array, C arrays): size and
    /// element at a valid position (passed to `next`, possibly as a temporary).
    std::size_t (*size)(const void* object) noexcept;
    void (*element)(const void* object, std::size_t position, const continuation& next, value_writer& out) noexcept;
    const type_desc* (*element_desc)() noexcept;  ///< also set for text (char)
    /// Polymorphic classes: the dynamic type of the object.
    const std::type_info* (*dynamic_type)(const void* object) noexcept;
    /// The `object_id` of an object: `loupe_object_id(obj)` found by ADL, else
    /// the address of the most-derived object.
    std::uint64_t (*object_id)(const void* object) noexcept;
    /// `to_string`: continues with a text_piece — text as is, numbers
    /// formatted (true/false, decimal, %.17g), ADL `to_string(obj)` (its
    /// result lives while the chain continues), else `operator<<` into
    /// `out.scratch()` (bounded by its capacity). ExceptionInCall when the
    /// formatting threw; NullInCall for a null C string.
    void (*format)(const void* object, value_writer& out, const continuation& next) noexcept;
    /// Numbers (arithmetic, enums): the 8 bytes `hash` hashes (int64/uint64,
    /// or a double's bit pattern), and `sizeof` (what `redact` keeps).
    std::uint64_t (*number_bits)(const void* object) noexcept;
    std::size_t size_of;
};

template <class T>
constexpr const type_desc* type_desc_of() noexcept;

namespace desc_impl {

template <class T>
using plain_t = std::remove_cv_t<std::remove_reference_t<T>>;

// --- pointer-like: the shapes chain_values.hpp unwraps, text excepted -------
template <class T>
const void* pointee_of(const void* o) noexcept {
    const T& p = *static_cast<const T*>(o);
    return nullable<T>::is_null(p) ? nullptr : static_cast<const void*>(__builtin_addressof(nullable<T>::get(p)));
}

// --- text ------------------------------------------------------------------
template <class T, class = void>
struct text_like {
    static constexpr bool value = false;
};
template <class Tr, class A>
struct text_like<std::basic_string<char, Tr, A>> {
    static constexpr bool value = true;
    static bool get(const void* o, std::string_view& s) noexcept {
        const auto* p = static_cast<const std::basic_string<char, Tr, A>*>(o);
        s = std::string_view(p->data(), p->size());
        return true;
    }
};
template <class Tr>
struct text_like<std::basic_string_view<char, Tr>> {
    static constexpr bool value = true;
    static bool get(const void* o, std::string_view& s) noexcept {
        const auto* p = static_cast<const std::basic_string_view<char, Tr>*>(o);
        s = std::string_view(p->data(), p->size());
        return true;
    }
};
template <>
struct text_like<const char*> {
    static constexpr bool value = true;
    static bool get(const void* o, std::string_view& s) noexcept {
        const char* p = *static_cast<const char* const*>(o);
        if (p == nullptr) return false;
        s = std::string_view(p);
        return true;
    }
};
template <>
struct text_like<char*> : text_like<const char*> {};
template <std::size_t N>
struct text_like<char[N]> {
    static constexpr bool value = true;
    static bool get(const void* o, std::string_view& s) noexcept {
        const char* p = *static_cast<const char(*)[N]>(o);
        s = std::string_view(p, ::strnlen(p, N));
        return true;
    }
};
template <>
struct text_like<text_piece> {
    static constexpr bool value = true;
    static bool get(const void* o, std::string_view& s) noexcept {
        s = static_cast<const text_piece*>(o)->text;
        return true;
    }
};

// --- sequences -------------------------------------------------------------
template <class T, class = void>
struct sequence_like {
    static constexpr bool value = false;
};
template <class C>
struct sequence_like<C,
                     std::enable_if_t<!text_like<C>::value && !std::is_array_v<C> &&
                                      std::is_convertible_v<decltype(std::declval<const C&>().size()), std::size_t> &&
                                      !std::is_void_v<decltype(std::declval<const C&>()[std::size_t{}])>>> {
    static constexpr bool value = true;
    using ref = decltype(std::declval<const C&>()[std::size_t{}]);
    using element = plain_t<ref>;
    static std::size_t size(const void* o) noexcept {
        try {
            return static_cast<const C*>(o)->size();
        } catch (...) {
            return 0;
        }
    }
    static void at(const void* o, std::size_t i, const continuation& next, value_writer& out) noexcept {
        const C& c = *static_cast<const C*>(o);
        // `next` is noexcept, so the try block only ever catches what `c[i]` throws.
        try {
            decltype(auto) e = c[i];  // a reference, or a temporary (vector<bool>'s bool) that lives while next runs
            next(__builtin_addressof(e), out);
        } catch (...) {
            out.fail(value_kind::exception_in_call);
        }
    }
};
template <class E, std::size_t N>
struct sequence_like<E[N], std::enable_if_t<!text_like<E[N]>::value>> {
    static constexpr bool value = true;
    using element = std::remove_cv_t<E>;
    static std::size_t size(const void*) noexcept { return N; }
    static void at(const void* o, std::size_t i, const continuation& next, value_writer& out) noexcept {
        next(__builtin_addressof((*static_cast<const E(*)[N]>(o))[i]), out);
    }
};

// --- to_string and object ids (value_formatting.hpp) ------------------------
template <class T>
void format(const void* o, value_writer& out, const continuation& next) noexcept {
    const T& v = *static_cast<const T*>(o);
    if constexpr (text_like<T>::value) {
        std::string_view s;
        if (!text_like<T>::get(o, s)) {
            out.fail(value_kind::null_in_call);
            return;
        }
        const text_piece t{s,
                           std::is_same_v<T, text_piece> ? static_cast<const text_piece*>(o)->original_size : s.size()};
        next(&t, out);
    } else {
        // `next` is noexcept: format_value catches only what to_string or operator<< throw
        format_value(v, out, [&](const text_piece& t) { next(&t, out); });
    }
}

template <class T>
std::uint64_t object_id(const void* o) noexcept {
    try {
        return object_id_of(*static_cast<const T*>(o));
    } catch (...) {  // a throwing loupe_object_id: the object's address
        return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(o));
    }
}

template <class T>
std::uint64_t number_bits(const void* o) noexcept {
    const T v = *static_cast<const T*>(o);
    if constexpr (std::is_enum_v<T>) {
        const std::underlying_type_t<T> u = static_cast<std::underlying_type_t<T>>(v);
        return number_bits<std::underlying_type_t<T>>(&u);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<std::uint64_t>(v);
    } else {
        const double d = static_cast<double>(v);
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        return bits;
    }
}

template <class T>
const std::type_info* dynamic_type(const void* o) noexcept {
    return &typeid(*static_cast<const T*>(o));
}

template <class T>
void write(const void* o, value_writer& out) noexcept {
    write_traceable(*static_cast<const T*>(o), out);
}

template <class T>
constexpr value_kind kind_of() noexcept {
    if constexpr (!is_traceable_v<T>) {
        return value_kind::unknown;
    } else if constexpr (std::is_same_v<T, bool>) {
        return value_kind::boolean;
    } else if constexpr (std::is_enum_v<T>) {
        return kind_of<std::underlying_type_t<T>>();
    } else if constexpr (std::is_integral_v<T>) {
        return std::is_signed_v<T> ? value_kind::integer : value_kind::unsigned_integer;
    } else if constexpr (std::is_floating_point_v<T>) {
        return value_kind::floating;
    } else if constexpr (text_like<T>::value) {
        return value_kind::string;
    } else if constexpr (std::is_same_v<T, type_name_value>) {
        return value_kind::type_name;
    } else if constexpr (std::is_same_v<T, object_id_value>) {
        return value_kind::object_id;
    } else if constexpr (std::is_same_v<T, hash_value>) {
        return value_kind::hash;
    } else if constexpr (std::is_same_v<T, redacted_value>) {
        return value_kind::redacted;
    } else {
        return value_kind::unknown;
    }
}

template <class T>
constexpr type_desc make() noexcept {
    type_desc d{&typeid(T),
                kind_of<T>(),
                std::is_arithmetic_v<T> || std::is_enum_v<T>,
                std::is_polymorphic_v<T>,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                sizeof(T)};
    if constexpr (is_traceable_v<T>) d.write = &write<T>;
    if constexpr (nullable<T>::value && !text_like<T>::value) {
        d.pointee = &pointee_of<T>;
        d.pointee_desc = &type_desc_of<typename nullable<T>::pointee>;
    }
    if constexpr (text_like<T>::value) {
        d.text = &text_like<T>::get;
        d.element_desc = &type_desc_of<char>;
    }
    if constexpr (sequence_like<T>::value) {
        d.size = &sequence_like<T>::size;
        d.element = &sequence_like<T>::at;
        d.element_desc = &type_desc_of<typename sequence_like<T>::element>;
    }
    if constexpr (std::is_polymorphic_v<T>) d.dynamic_type = &dynamic_type<T>;
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
        d.format = &format<T>;
        d.number_bits = &number_bits<T>;
    } else {
        if constexpr (!std::is_scalar_v<T>) d.object_id = &object_id<T>;
        if constexpr (text_like<T>::value || is_formattable_v<T>) d.format = &format<T>;
    }
    return d;
}

template <class T>
struct holder {
    static constexpr type_desc value = make<T>();
};

}  // namespace desc_impl

/// The descriptor of `T` (cv and references removed). Constant-initialized,
/// never allocates. Any thread.
template <class T>
constexpr const type_desc* type_desc_of() noexcept {
    return &desc_impl::holder<desc_impl::plain_t<T>>::value;
}

}  // namespace loupe::detail
