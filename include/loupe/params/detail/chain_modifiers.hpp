// The modifiers of compile-time chains (params/chain.hpp documents them).
// Each is a small literal struct with
//
//     template <class In, class K> void apply(const In& in, value_writer& out, K&& k) const;
//
// which either fails the chain (`out.fail(status)`, and returns without
// calling `k`) or calls `k(output)` with its output: continuation-passing, so
// a temporary a getter returns lives while the rest of the chain runs and
// nothing is copied or heap-allocated.
//
// Thread-safety: modifiers are immutable; they run on the evaluating thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "loupe/params/detail/chain_type_names.hpp"
#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/detail/modifier_support.hpp"
#include "loupe/params/detail/value_formatting.hpp"
#include "loupe/params/value.hpp"

namespace loupe::detail {

/// Marks the modifier types `operator|` accepts.
struct modifier_base {};

template <class T>
inline constexpr bool is_modifier_v = std::is_base_of_v<modifier_base, T>;

// --- traits -------------------------------------------------------------------

template <class T, class = void>
struct has_std_size : std::false_type {};
template <class T>
struct has_std_size<T, std::void_t<decltype(std::size(std::declval<const T&>()))>> : std::true_type {};

template <class T, class = void>
struct is_indexable : std::false_type {};
template <class T>
struct is_indexable<
    T, std::void_t<decltype(std::size(std::declval<const T&>())), decltype(std::declval<const T&>()[std::size_t{0}])>>
    : std::true_type {};

/// Member function pointer traits: the class, and whether `call` accepts it
/// (const-qualified, no parameters).
template <class M>
struct member_fn {
    static constexpr bool is_member_fn = false;
    static constexpr bool is_const = false;
    static constexpr bool no_args = false;
};

#define LOUPE_DETAIL_MEMBER_FN(QUALS, CONST)               \
    template <class R, class C, class... A>                \
    struct member_fn<R (C::*)(A...) QUALS> {               \
        using result = R;                                  \
        using klass = C;                                   \
        static constexpr bool is_member_fn = true;         \
        static constexpr bool is_const = CONST;            \
        static constexpr bool no_args = sizeof...(A) == 0; \
    };
LOUPE_DETAIL_MEMBER_FN(, false)
LOUPE_DETAIL_MEMBER_FN(&, false)
LOUPE_DETAIL_MEMBER_FN(&&, false)
LOUPE_DETAIL_MEMBER_FN(noexcept, false)
LOUPE_DETAIL_MEMBER_FN(&noexcept, false)
LOUPE_DETAIL_MEMBER_FN(&&noexcept, false)
LOUPE_DETAIL_MEMBER_FN(const, true)
LOUPE_DETAIL_MEMBER_FN(const&, true)
LOUPE_DETAIL_MEMBER_FN(const noexcept, true)
LOUPE_DETAIL_MEMBER_FN(const& noexcept, true)
LOUPE_DETAIL_MEMBER_FN(volatile, false)
LOUPE_DETAIL_MEMBER_FN(const volatile, false)
LOUPE_DETAIL_MEMBER_FN(const&&, false)
LOUPE_DETAIL_MEMBER_FN(const&& noexcept, false)
#undef LOUPE_DETAIL_MEMBER_FN

template <class T>
inline constexpr bool is_primitive_v = std::is_scalar_v<remove_cvref_t<T>>;

// --- modifiers ----------------------------------------------------------------

struct length_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_text_or_object(
            in, out, [&](const auto& t) { k(std::size_t{t.text.size()}); },
            [&](const auto& obj) {
                using O = remove_cvref_t<decltype(obj)>;
                static_assert(has_std_size<O>::value,
                              "loupe: length applies to containers, arrays and strings (std::size(x) must work): "
                              "this value has no size");
                k(static_cast<std::size_t>(std::size(obj)));
            });
    }
};

struct at_mod : modifier_base {
    std::int64_t index;

    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_text_or_object(
            in, out,
            [&](const auto& t) {
                std::size_t pos = 0;
                if (!resolve_index(index, t.text.size(), pos)) return out.fail(value_kind::invalid_index);
                k(t.text[pos]);
            },
            [&](const auto& obj) {
                using O = remove_cvref_t<decltype(obj)>;
                static_assert(is_indexable<O>::value,
                              "loupe: at(i) applies to random-access containers, std::array, C arrays and strings "
                              "(std::size(x) and x[i] must work on a const value)");
                std::size_t pos = 0;
                if (!resolve_index(index, static_cast<std::size_t>(std::size(obj)), pos)) {
                    return out.fail(value_kind::invalid_index);
                }
                k(obj[pos]);
            });
    }
};

struct type_of_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_object(in, out, [&](const auto& obj) {
            using O = remove_cvref_t<decltype(obj)>;
            static_assert(!is_primitive_v<O>,
                          "loupe: type_of applies to objects, not to numbers, enums or other scalars "
                          "(modifiers are not applied to primitive values)");
#if LOUPE_DETAIL_CHAIN_RTTI
            // The cache's lock-free lookup (no function-local static: a
            // fork() during its first initialisation would leave the child's
            // guard taken).
            k(type_name_value{cached_type_name(typeid(obj))});
#else
            (void)k;
            static_assert(dependent_false<O>, "loupe: type_of needs RTTI (compiled with -fno-rtti)");
#endif
        });
    }
};

template <class M>
struct call_mod : modifier_base {
    M fn;

    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_object(in, out, [&](const auto& obj) {
            using O = remove_cvref_t<decltype(obj)>;
            using C = typename member_fn<M>::klass;
            static_assert(std::is_base_of_v<C, O>,
                          "loupe: call(&T::f) is applied to a value that is not a T (nor derived from T): "
                          "check the modifier before it");
            if constexpr (std::is_base_of_v<C, O>) k((obj.*fn)());
        });
    }
};

/// std::invoke(fn, in) for what apply(fn) takes: callables, and member
/// pointers applied to an object or a pointer to one.
template <class F, class In>
decltype(auto) invoke_on(const F& fn, const In& in) {
    if constexpr (std::is_member_function_pointer_v<F> && std::is_pointer_v<In>) {
        return ((*in).*fn)();
    } else if constexpr (std::is_member_function_pointer_v<F>) {
        return (in.*fn)();
    } else if constexpr (std::is_member_object_pointer_v<F> && std::is_pointer_v<In>) {
        return ((*in).*fn);
    } else if constexpr (std::is_member_object_pointer_v<F>) {
        return (in.*fn);
    } else {
        return fn(in);
    }
}

template <class F>
struct apply_mod : modifier_base {
    F fn;

    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        if constexpr (std::is_invocable_v<const F&, const In&>) {
            static_assert(!std::is_void_v<std::invoke_result_t<const F&, const In&>>,
                          "loupe: apply(fn): fn returns void, there is no value to trace");
            k(invoke_on(fn, in));  // null passes through (the patent lists no null error)
        } else if constexpr (is_nullable_v<In>) {
            if (nullable_of<In>::is_null(in)) return out.fail(value_kind::null_in_call);
            apply(nullable_of<In>::get(in), out, k);
        } else {
            static_assert(dependent_false<In>,
                          "loupe: apply(fn): fn cannot be called with the value at this point of the chain");
        }
    }
};

template <class PM>
struct field_mod;

template <class T, class C>
struct field_mod<T C::*> : modifier_base {
    T C::*member;

    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_object(in, out, [&](const auto& obj) {
            using O = remove_cvref_t<decltype(obj)>;
            static_assert(std::is_base_of_v<C, O>,
                          "loupe: field(&T::member) is applied to a value that is not a T (nor derived from T): "
                          "the member belongs to another class");
            if constexpr (std::is_base_of_v<C, O>) k(obj.*member);
        });
    }
};

template <class U>
struct cast_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        static_assert(std::is_class_v<U>, "loupe: cast<U> needs a class type U");
        if constexpr (is_nullable_v<In>) {
            // Null passes through, as Java's (U) null does: the next modifier reports NullInCall.
            if (nullable_of<In>::is_null(in)) return k(static_cast<const U*>(nullptr));
            apply(nullable_of<In>::get(in), out, k);
        } else {
            static_assert(std::is_polymorphic_v<In>,
                          "loupe: cast<U> needs a polymorphic source type (a class with a virtual function)");
#if LOUPE_DETAIL_CHAIN_RTTI
            if constexpr (std::is_polymorphic_v<In>) {
                const U* p = dynamic_cast<const U*>(__builtin_addressof(in));
                if (p == nullptr) return out.fail(value_kind::cast_failed);
                k(*p);
            }
#else
            (void)k;
            static_assert(dependent_false<In>, "loupe: cast<U> needs RTTI (compiled with -fno-rtti)");
#endif
        }
    }
};

struct object_id_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_object(in, out, [&](const auto& obj) {
            using O = remove_cvref_t<decltype(obj)>;
            static_assert(!is_primitive_v<O>,
                          "loupe: object_id applies to objects, not to numbers, enums or other scalars");
            k(object_id_value{object_id_of(obj)});
        });
    }
};

struct deref_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        static_assert(is_nullable_v<In>,
                      "loupe: deref applies to pointers, std::unique_ptr, std::shared_ptr, std::optional and "
                      "std::reference_wrapper");
        if constexpr (is_nullable_v<In>) {
            if (nullable_of<In>::is_null(in)) return out.fail(value_kind::null_in_call);
            k(nullable_of<In>::get(in));
        }
    }
};

struct to_string_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_text_or_object(
            in, out, [&](const auto& t) { k(t); },
            [&](const auto& v) { format_value(v, out, k); });
    }
};

struct truncate_mod : modifier_base {
    std::size_t max_bytes;

    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_text_or_object(
            in, out,
            [&](const auto& t) {
                k(text_piece{utf8_prefix(t.text, max_bytes), t.original_size});
            },
            [&](const auto& v) {
                static_assert(dependent_false<decltype(v)>,
                              "loupe: truncate(n) applies to strings: add to_string (or a getter returning text) "
                              "before it");
            });
    }
};

struct redact_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_text_or_object(
            in, out,
            [&](const auto& t) {
                // Text a to_string formatted into the writer's scratch is wiped:
                // the clear text never stays in the writer's buffer.
                const auto p = reinterpret_cast<std::uintptr_t>(t.text.data());
                const auto b = reinterpret_cast<std::uintptr_t>(out.scratch());
                if (!t.text.empty() && p >= b && p < b + out.capacity()) {
                    std::memset(out.scratch(), 0, out.capacity());
                }
                k(redacted_value{t.original_size});
            },
            [&](const auto& v) {
                using V = remove_cvref_t<decltype(v)>;
                static_assert(std::is_arithmetic_v<V> || std::is_enum_v<V>,
                              "loupe: redact applies to strings and numbers");
                k(redacted_value{sizeof(V)});
            });
    }
};

/// The 8 little-endian bytes of `u`, hashed (the runtime chains' rule).
inline std::uint64_t keyed_hash_u64(std::uint64_t u) noexcept {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(u >> (8 * i));
    return keyed_hash(b, sizeof b);
}

struct hash_mod : modifier_base {
    template <class In, class K>
    void apply(const In& in, value_writer& out, K&& k) const {
        with_text_or_object(
            in, out, [&](const auto& t) { k(hash_value{keyed_hash(t.text.data(), t.text.size())}); },
            [&](const auto& v) {
                using V = remove_cvref_t<decltype(v)>;
                if constexpr (std::is_enum_v<V>) {
                    apply(static_cast<std::underlying_type_t<V>>(v), out, k);
                } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
                    k(hash_value{keyed_hash_u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)))});
                } else if constexpr (std::is_integral_v<V>) {
                    k(hash_value{keyed_hash_u64(static_cast<std::uint64_t>(v))});
                } else if constexpr (std::is_floating_point_v<V>) {
                    const double d = static_cast<double>(v);
                    std::uint64_t bits;
                    std::memcpy(&bits, &d, sizeof bits);
                    k(hash_value{keyed_hash_u64(bits)});
                } else {
                    static_assert(dependent_false<V>,
                                  "loupe: hash applies to strings and numbers: add to_string or a field/getter first");
                }
            });
    }
};

}  // namespace loupe::detail
