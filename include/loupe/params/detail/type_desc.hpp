// Type-erased type descriptors for runtime modifier chains (Tier B,
// US 9,129,056 ¶0151–0155): what a chain can do with a value of some C++ type
// when all it has is `const void*` — write it as a traced value, unwrap it
// (pointers, smart pointers, optional), index it (containers, arrays,
// strings), ask its dynamic type, format it — plus the reflection registry
// (`loupe::reflect`, params/reflect.hpp) that adds named fields, methods,
// bases and functions to class types.
//
// `type_desc_of<T>()` returns one constant-initialized descriptor per decayed
// type (no allocation, no registration). Descriptors of element and pointee
// types are reached through function pointers, so self-referential types work.
//
// Thread-safety: descriptors are immutable. The registry is guarded by one
// mutex and only touched on slow paths (registration, binding), except the
// name lookup of `type_of`, which takes the mutex only when a chain meets a
// dynamic type it has not seen before.
#pragma once

#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/detail/modifier_support.hpp"
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
const type_desc* type_desc_of() noexcept;

namespace desc_impl {

template <class T>
using plain_t = std::remove_cv_t<std::remove_reference_t<T>>;

// --- pointer-like ----------------------------------------------------------
template <class T, class = void>
struct pointer_like {
    static constexpr bool value = false;
};
template <class U>
struct pointer_like<
    U*, std::enable_if_t<!std::is_function_v<U> && !std::is_same_v<std::remove_cv_t<U>, char> && !std::is_void_v<U>>> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<U>;
    static const void* get(const void* o) noexcept { return *static_cast<U* const*>(o); }
};
template <class U, class D>
struct pointer_like<std::unique_ptr<U, D>, std::enable_if_t<!std::is_array_v<U>>> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<U>;
    static const void* get(const void* o) noexcept { return static_cast<const std::unique_ptr<U, D>*>(o)->get(); }
};
template <class U>
struct pointer_like<std::shared_ptr<U>, std::enable_if_t<!std::is_array_v<U>>> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<U>;
    static const void* get(const void* o) noexcept { return static_cast<const std::shared_ptr<U>*>(o)->get(); }
};
template <class U>
struct pointer_like<std::optional<U>> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<U>;
    static const void* get(const void* o) noexcept {
        const auto* p = static_cast<const std::optional<U>*>(o);
        return p->has_value() ? static_cast<const void*>(std::addressof(**p)) : nullptr;
    }
};
template <class U>
struct pointer_like<std::reference_wrapper<U>> {
    static constexpr bool value = true;
    using pointee = std::remove_cv_t<U>;
    static const void* get(const void* o) noexcept {
        return std::addressof(static_cast<const std::reference_wrapper<U>*>(o)->get());
    }
};

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
            next(std::addressof(e), out);
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
        next(std::addressof((*static_cast<const E(*)[N]>(o))[i]), out);
    }
};

// --- object ids and to_string ----------------------------------------------
template <class T, class = void>
struct has_object_id_hook : std::false_type {};
template <class T>
struct has_object_id_hook<
    T, std::enable_if_t<std::is_convertible_v<decltype(loupe_object_id(std::declval<const T&>())), std::uint64_t>>>
    : std::true_type {};

void to_string() = delete;  // hides loupe::to_string from ordinary lookup: only ADL finds a user's to_string

template <class T, class = void>
struct has_adl_to_string : std::false_type {};
template <class T>
struct has_adl_to_string<
    T, std::enable_if_t<std::is_convertible_v<decltype(to_string(std::declval<const T&>())), std::string_view>>>
    : std::true_type {};

template <class T, class = void>
struct has_ostream : std::false_type {};
template <class T>
struct has_ostream<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

/// A streambuf writing into a fixed buffer; counts what did not fit.
class bounded_buf final : public std::streambuf {
public:
    bounded_buf(char* b, std::size_t cap) noexcept : buf_(b), cap_(cap) {}
    std::size_t total() const noexcept { return total_; }
    /// The bytes kept, cut on a UTF-8 boundary when the text did not fit.
    std::size_t kept() const noexcept {
        if (total_ <= cap_) return total_;
        std::size_t cut = cap_;
        if ((static_cast<unsigned char>(next_) & 0xC0) != 0x80) return cut;
        while (cut > 0 && (static_cast<unsigned char>(buf_[cut - 1]) & 0xC0) == 0x80) --cut;
        return cut > 0 ? cut - 1 : 0;  // drop the lead byte of the cut sequence too
    }

protected:
    int_type overflow(int_type ch) override {
        if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
        if (total_ < cap_) buf_[total_] = traits_type::to_char_type(ch);
        if (total_ == cap_) next_ = traits_type::to_char_type(ch);
        ++total_;
        return ch;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        const std::size_t count = static_cast<std::size_t>(n);
        if (total_ < cap_) {
            const std::size_t room = cap_ - total_;
            std::memcpy(buf_ + total_, s, count < room ? count : room);
        }
        if (total_ <= cap_ && cap_ - total_ < count) next_ = s[cap_ - total_];
        total_ += count;
        return n;
    }

private:
    char* buf_;
    std::size_t cap_;
    std::size_t total_ = 0;
    char next_ = 0;  // the first byte that did not fit
};

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
    } else if constexpr (std::is_same_v<T, bool>) {
        const text_piece t{v ? std::string_view("true") : std::string_view("false"), v ? 4u : 5u};
        next(&t, out);
    } else if constexpr (std::is_enum_v<T>) {
        const std::underlying_type_t<T> u = static_cast<std::underlying_type_t<T>>(v);
        format<std::underlying_type_t<T>>(&u, out, next);
    } else if constexpr (std::is_integral_v<T>) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        const auto n = static_cast<std::size_t>(r.ptr - buf);
        const text_piece t{std::string_view(buf, n), n};
        next(&t, out);
    } else if constexpr (std::is_floating_point_v<T>) {
        char buf[32];
        const int n = std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
        const auto len = static_cast<std::size_t>(n < 0 ? 0 : n);
        const text_piece t{std::string_view(buf, len), len};
        next(&t, out);
    } else if constexpr (has_adl_to_string<T>::value) {
        try {                              // `next` is noexcept: only to_string's exceptions are caught
            const auto& r = to_string(v);  // lives while the rest of the chain runs
            const std::string_view view(r);
            const text_piece t{view, view.size()};
            next(&t, out);
        } catch (...) {
            out.fail(value_kind::exception_in_call);
        }
    } else if constexpr (has_ostream<T>::value) {
        std::size_t kept = 0, total = 0;
        try {
            bounded_buf sb(out.scratch(), out.capacity());
            std::ostream os(&sb);
            os << v;
            kept = sb.kept();
            total = sb.total();
        } catch (...) {
            out.fail(value_kind::exception_in_call);
            return;
        }
        const text_piece t{std::string_view(out.scratch(), kept), total};
        next(&t, out);
    } else {
        (void)v;
        (void)next;
        out.fail(value_kind::unknown);
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
std::uint64_t object_id(const void* o) noexcept {
    const T& v = *static_cast<const T*>(o);
    if constexpr (has_object_id_hook<T>::value) {
        try {
            return static_cast<std::uint64_t>(loupe_object_id(v));
        } catch (...) {
            return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(o));
        }
    } else if constexpr (std::is_polymorphic_v<T>) {
        return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(dynamic_cast<const void*>(&v)));
    } else {
        return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&v));
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
    if constexpr (pointer_like<T>::value) {
        d.pointee = &pointer_like<T>::get;
        d.pointee_desc = &type_desc_of<typename pointer_like<T>::pointee>;
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
        if constexpr (text_like<T>::value || has_adl_to_string<T>::value || has_ostream<T>::value) {
            d.format = &format<T>;
        }
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
const type_desc* type_desc_of() noexcept {
    return &desc_impl::holder<desc_impl::plain_t<T>>::value;
}

// ---------------------------------------------------------------------------
// The reflection registry (filled by loupe::reflect, read at bind time).

/// A registered field or method. Kept alive by the chains bound to it, so
/// registering again (replacing it) never invalidates a bound chain.
struct member_entry {
    std::string name;  ///< as registered
    std::string key;   ///< the name before any '(' (what chains look up)
    const type_desc* result = nullptr;
    /// Reads the member of `object` (of the registering class, already
    /// adjusted) and continues with it; a throwing method gives ExceptionInCall.
    void (*access)(const member_entry& self, const void* object, const continuation& next,
                   value_writer& out) noexcept = nullptr;
    virtual ~member_entry() = default;
};

/// A registered free or static function taking one argument.
struct function_entry {
    std::string name;
    std::string key;
    const type_desc* result = nullptr;
    const type_desc* param = nullptr;  ///< the decayed parameter (pointee for pointer parameters)
    bool param_is_pointer = false;     ///< takes `const U*`: a null input is passed through
    void (*invoke)(const function_entry& self, const void* argument, const continuation& next,
                   value_writer& out) noexcept = nullptr;
    virtual ~function_entry() = default;
};

/// A registered direct base: the static upcast, and the checked downcast
/// (null when the base is not polymorphic).
struct base_entry {
    std::type_index base;
    const void* (*up)(const void* derived) noexcept;
    const void* (*down)(const void* base) noexcept;
};

/// A registered class.
struct class_entry {
    std::string name;
    const type_desc* desc = nullptr;
    /// Continues with a `const T*` variable holding `object` (the output of `cast`).
    void (*as_pointer)(const void* object, const continuation& next, value_writer& out) noexcept = nullptr;
    const type_desc* pointer_desc = nullptr;  ///< desc of `const T*`
    std::vector<std::shared_ptr<const member_entry>> fields;
    std::vector<std::shared_ptr<const member_entry>> methods;
    std::vector<base_entry> bases;
};

/// The process-wide registry. Fields are public for the binder; lock `mutex`.
class reflection_registry {
public:
    mutable std::mutex mutex;
    std::unordered_map<std::type_index, class_entry> classes;
    std::vector<std::shared_ptr<const function_entry>> functions;  ///< registration order
    /// Bumps on every registration (bindings that want to re-resolve compare it).
    std::atomic<std::uint64_t> generation{0};

    /// The name `type_of` reports for `t`: interned, stable for the process.
    /// Call with `mutex` held.
    const std::string& interned_name_locked(const std::type_info& t) {
        auto it = names_.find(std::type_index(t));
        if (it != names_.end()) return *it->second;
        auto c = classes.find(std::type_index(t));
        name_storage_.push_back(c != classes.end() ? c->second.name : demangle(t));
        names_.emplace(std::type_index(t), &name_storage_.back());
        return name_storage_.back();
    }
    /// Sets the name of a registered type (call with `mutex` held).
    void set_name_locked(const std::type_info& t, std::string_view name) {
        auto it = names_.find(std::type_index(t));
        if (it != names_.end() && *it->second == name) return;
        name_storage_.emplace_back(name);
        names_[std::type_index(t)] = &name_storage_.back();
        name_generation.fetch_add(1, std::memory_order_acq_rel);
    }
    std::atomic<std::uint64_t> name_generation{0};

private:
    std::unordered_map<std::type_index, const std::string*> names_;
    std::deque<std::string> name_storage_;  // never shrinks: names handed out stay valid
};

/// The process-wide registry (one across shared libraries; never destroyed).
LOUPE_API inline reflection_registry& reflection() {
    static reflection_registry* r = new reflection_registry;
    return *r;
}

/// The registered name of a type (loupe::reflect), else its demangled name.
/// Slow (lock, may allocate). Any thread.
inline std::string reflected_name(const std::type_info& t) {
    reflection_registry& r = reflection();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.classes.find(std::type_index(t));
    return it != r.classes.end() ? it->second.name : demangle(t);
}

/// Like reflected_name, but a view of an interned copy that stays valid for
/// the life of the process (what `type_of` writes). The first call per type
/// allocates; later calls lock and look up. Any thread.
inline std::string_view interned_type_name(const std::type_info& t) {
    reflection_registry& r = reflection();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.interned_name_locked(t);
}

/// Bumped by every change that can alter what a parameter spec binds to: a
/// session's specs (method_registry.hpp) and every reflection registration.
/// Method sites compare it on each recorded call and rebind when it moved.
/// (Its own cache line: every recorded call reads it, nothing else shares it.)
alignas(64) LOUPE_API inline std::atomic<std::uint64_t> g_binding_generation{1};

/// The registry's generation: changes whenever anything is registered.
inline std::uint64_t reflection_generation() noexcept {
    return reflection().generation.load(std::memory_order_acquire);
}

}  // namespace loupe::detail
