// Compile-time modifier chains for method parameter tracing (US 9,129,056
// ¶0142–0155, "Tier A"): from a parameter to the typed value traced for it.
//
//     using namespace loupe;
//     static constexpr auto sku   = arg<1> | field(&Item::sku) | truncate(16);          // string
//     static constexpr auto last  = arg<1> | field(&Order::lines) | at(-1) | field(&Line::qty);
//     static constexpr auto extra = arg<1> | cast<Special> | field(&Special::detail);   // or CastFailed
//     static constexpr auto size  = self | call(&Cart::size);                           // the receiver
//     static constexpr auto who   = loupe::named("customer", arg<2> | call(&Customer::name) | to_string);
//
// A chain starts at a source — `arg<N>` (the N-th declared parameter, from 1)
// or `self` (works as `arg<0>`: the receiver `*this`) — and goes through modifiers
// left to right; the output of one is the input of the next (¶0142). The end
// must be traceable (`loupe::traceable<T>`, params/value.hpp), else the chain
// does not compile. Chains are literal types (member pointers, function
// pointers and integers only), so they live in `static constexpr` variables.
//
// Modifiers (patent name in parentheses):
//   length               containers, arrays, strings → size (uint); strlen for C strings
//   at(i)                (array_element) element i; i < 0 counts from the end (−1 is last);
//                        InvalidIndex when out of range. Random-access containers,
//                        std::array, C arrays, strings
//   type_of              (class_) the dynamic type's name for polymorphic types, the static
//                        one otherwise → type_name. Names are cached per type: the first
//                        use of a type demangles and allocates, later ones are lock-free
//   call(&T::getter)     (instance_method) a const member function taking no argument;
//                        anything else does not compile. A throw gives ExceptionInCall
//   apply(fn)            (static_method) fn(value); a throw gives ExceptionInCall. A null
//                        pointer passes through when fn takes it; else it is unwrapped
//   field(&T::member)    the member, by reference (no copy)
//   cast<U>              dynamic_cast<const U*>; the source must be polymorphic. CastFailed
//                        when it does not fit; a null input passes through as null (the
//                        next modifier reports NullInCall, or the end NullValue)
//   object_id            (id) the address of the (most-derived) object: unique among live
//                        objects only. Overridden by an ADL `loupe_object_id(const T&)`
//   deref                explicit unwrap of a pointer, smart pointer, optional, reference_wrapper
//   to_string            text: strings as they are, numbers formatted, an ADL
//                        `to_string(const T&)`, or `operator<<` into the writer's bounded
//                        scratch buffer (never the full string: cut on a UTF-8 boundary,
//                        flagged truncated with the original size)
//   truncate(n)          strings cut to n bytes on a UTF-8 boundary (truncated, original size)
//   redact               strings and numbers: only the size is kept; the clear text never
//                        stays in the writer's buffer → redacted
//   hash                 keyed 64-bit hash of a string's bytes, or of an integer's 8
//                        little-endian bytes (floating point: its bit pattern) → hash
//
// Zero-argument modifiers (length, type_of, class_, object_id, id, deref,
// to_string, redact, hash) are functions usable with or without parentheses:
// `arg<1> | length` and `arg<1> | length()` are the same chain. (Functions,
// not variables: a variable named `length` or `hash` in namespace loupe would
// make -Wshadow flag every local of that name in loupe's own code.)
//
// Nulls and errors (¶0155): pointers (T*), std::unique_ptr, std::shared_ptr,
// std::optional and std::reference_wrapper are unwrapped automatically before
// a modifier that needs an object; a null one gives NullInCall. A null value
// at the end gives NullValue. `const char*` is a string, not a pointer to
// unwrap. The first failing modifier decides the status and evaluation stops.
// Any exception (a getter, fn, to_string or operator<<) gives ExceptionInCall;
// none escapes. A `noexcept` getter that throws still terminates the process.
// Without exceptions (-fno-exceptions) no try block is compiled.
//
// Cost: evaluation inlines to the modifiers' own work (a 3-modifier
// field/call/length chain costs a few ns); nothing is heap-allocated, except
// a type's name on its first `type_of`, a user `to_string` that returns a
// std::string, and `operator<<` formatting (an std::ostream on the stack).
//
// Thread-safety: chains are immutable; evaluate_chain may run concurrently on
// any threads (each with its own value_writer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "loupe/base/config.hpp"
#include "loupe/params/detail/chain_modifiers.hpp"
#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/value.hpp"

namespace loupe {

namespace detail {

/// The modifiers of a chain, as a literal nested aggregate.
template <class... M>
struct mod_list {};

template <class H, class... T>
struct mod_list<H, T...> {
    H head;
    mod_list<T...> tail;
};

template <class Mod>
constexpr mod_list<Mod> append_modifier(const mod_list<>&, const Mod& m) noexcept {
    return mod_list<Mod>{m, {}};
}

template <class H, class... T, class Mod>
constexpr mod_list<H, T..., Mod> append_modifier(const mod_list<H, T...>& l, const Mod& m) noexcept {
    return mod_list<H, T..., Mod>{l.head, append_modifier(l.tail, m)};
}

}  // namespace detail

/// A compile-time chain: parameter `N` (0 = the receiver) through the
/// modifiers `M...`. Build it from `arg<N>` / `self` and `|`.
template <unsigned N, class... M>
struct chain {
    detail::mod_list<M...> mods;

    /// The parameter the chain starts from (0 = the receiver).
    static constexpr unsigned param() noexcept { return N; }
    /// The number of modifiers.
    static constexpr std::size_t size() noexcept { return sizeof...(M); }
};

/// The N-th declared parameter (N ≥ 1); `arg<0>` is the receiver, as `self`.
template <unsigned N>
inline constexpr chain<N> arg{};

/// The receiver, `*this` (¶0124); only in member functions. `self` works as
/// `arg<0>` wherever a chain goes (`self | call(&Cart::size)`, `named`,
/// `evaluate_chain`, `chain_param_v`), and `self | ...` is a `chain<0, ...>`.
/// It is an enumerator rather than a `chain<0>` variable so that parameters
/// and locals named `self` in namespace loupe do not trip -Wshadow.
enum self_source : unsigned char { self };

/// A chain with a name, for runtime specs that refer to compiled chains.
template <class Chain>
struct named_chain {
    const char* name;
    Chain chain;
};

namespace detail {

template <class T>
struct chain_traits {
    static constexpr bool is_chain = false;
};
template <unsigned N, class... M>
struct chain_traits<chain<N, M...>> {
    static constexpr bool is_chain = true;
    static constexpr unsigned param = N;
    static constexpr const chain<N, M...>& get(const chain<N, M...>& c) noexcept { return c; }
};
template <>
struct chain_traits<self_source> {
    static constexpr bool is_chain = true;
    static constexpr unsigned param = 0;
    static constexpr chain<0> get(self_source) noexcept { return {}; }
};
template <unsigned N, class... M>
struct chain_traits<named_chain<chain<N, M...>>> {
    static constexpr bool is_chain = true;
    static constexpr unsigned param = N;
    static constexpr const chain<N, M...>& get(const named_chain<chain<N, M...>>& c) noexcept { return c.chain; }
};

}  // namespace detail

/// The parameter a chain (or named chain) starts from: N for `arg<N>`, 0 for `self`.
template <class Chain>
inline constexpr unsigned chain_param_v = detail::chain_traits<detail::remove_cvref_t<Chain>>::param;

/// Names a chain: `loupe::named("sku", arg<1> | field(&Item::sku))`. Constexpr.
template <class Chain>
constexpr named_chain<Chain> named(const char* name, const Chain& c) noexcept {
    static_assert(detail::chain_traits<Chain>::is_chain, "loupe: named(name, chain) takes a chain (arg<N> | ...)");
    return named_chain<Chain>{name, c};
}

/// Names `self`: a `named_chain<chain<0>>`.
constexpr named_chain<chain<0>> named(const char* name, self_source) noexcept {
    return named_chain<chain<0>>{name, {}};
}

/// Appends a modifier: `arg<1> | field(&Item::sku)`.
template <unsigned N, class... M, class Mod, std::enable_if_t<detail::is_modifier_v<Mod>, int> = 0>
constexpr chain<N, M..., Mod> operator|(const chain<N, M...>& c, const Mod& m) noexcept {
    return chain<N, M..., Mod>{detail::append_modifier(c.mods, m)};
}

/// Appends a zero-argument modifier named without parentheses: `arg<1> | length`.
template <unsigned N, class... M, class Mod, std::enable_if_t<detail::is_modifier_v<Mod>, int> = 0>
constexpr chain<N, M..., Mod> operator|(const chain<N, M...>& c, Mod (*)() noexcept) noexcept {
    return chain<N, M..., Mod>{detail::append_modifier(c.mods, Mod{})};
}

/// `self | modifier` is `arg<0> | modifier`.
template <class Mod, std::enable_if_t<detail::is_modifier_v<Mod>, int> = 0>
constexpr chain<0, Mod> operator|(self_source, const Mod& m) noexcept {
    return chain<0>{} | m;
}
template <class Mod, std::enable_if_t<detail::is_modifier_v<Mod>, int> = 0>
constexpr chain<0, Mod> operator|(self_source, Mod (*)() noexcept) noexcept {
    return chain<0>{} | Mod{};
}

// --- modifiers ----------------------------------------------------------------

/// Size of a container, array or string (strlen for C strings) → uint.
constexpr detail::length_mod length() noexcept { return {}; }

/// Element `index` (< 0 counts from the end: −1 is the last) → InvalidIndex when out of range.
constexpr detail::at_mod at(std::int64_t index = 0) noexcept { return detail::at_mod{{}, index}; }
/// Patent name of `at`.
constexpr detail::at_mod array_element(std::int64_t index = 0) noexcept { return at(index); }

/// The (dynamic, for polymorphic types) type's name → type_name.
constexpr detail::type_of_mod type_of() noexcept { return {}; }
/// Patent name of `type_of` ("class").
constexpr detail::type_of_mod class_() noexcept { return {}; }

namespace detail {
template <class M>
constexpr call_mod<M> make_call(M m) noexcept {
    using t = member_fn<M>;
    static_assert(t::is_member_fn || !std::is_member_object_pointer_v<M>,
                  "loupe: call() takes a member function; use field(&T::member) for a data member");
    static_assert(t::is_member_fn, "loupe: call() takes a pointer to a const member function: call(&T::getter)");
    static_assert(!t::is_member_fn || t::is_const,
                  "loupe: call(&T::f) needs a const member function (R f() const): a non-const getter could "
                  "change the traced object");
    static_assert(!t::is_member_fn || t::no_args,
                  "loupe: call(&T::f) needs a member function taking no arguments (R f() const)");
    if constexpr (t::is_member_fn) {
        static_assert(!std::is_void_v<typename t::result>,
                      "loupe: call(&T::f): f returns void, there is no value to trace");
    }
    return call_mod<M>{{}, m};
}
}  // namespace detail

/// Calls a const, no-argument member function on the value (instance_method).
/// The overloads for const member functions let `&T::f` name the const one of
/// an overload pair; anything else reaches the last one and fails to compile.
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const> call(R (C::*m)() const) noexcept {
    return detail::make_call(m);
}
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const noexcept> call(R (C::*m)() const noexcept) noexcept {
    return detail::make_call(m);
}
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const&> call(R (C::*m)() const&) noexcept {
    return detail::make_call(m);
}
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const& noexcept> call(R (C::*m)() const& noexcept) noexcept {
    return detail::make_call(m);
}
template <class M>
constexpr detail::call_mod<M> call(M m) noexcept {
    return detail::make_call(m);
}

/// Patent name of `call`.
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const> instance_method(R (C::*m)() const) noexcept {
    return detail::make_call(m);
}
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const noexcept> instance_method(R (C::*m)() const noexcept) noexcept {
    return detail::make_call(m);
}
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const&> instance_method(R (C::*m)() const&) noexcept {
    return detail::make_call(m);
}
template <class R, class C>
constexpr detail::call_mod<R (C::*)() const& noexcept> instance_method(R (C::*m)() const& noexcept) noexcept {
    return detail::make_call(m);
}
template <class M>
constexpr detail::call_mod<M> instance_method(M m) noexcept {
    return detail::make_call(m);
}

/// Calls `fn(value)` (a free or static function, or a captureless lambda);
/// static_method in the patent. A null pointer passes through when fn takes one.
template <class F>
constexpr detail::apply_mod<F> apply(F fn) noexcept {
    static_assert(!std::is_member_pointer_v<F>,
                  "loupe: apply(fn) takes a free or static function; use call() or field()");
    return detail::apply_mod<F>{{}, fn};
}
/// Patent name of `apply`.
template <class F>
constexpr detail::apply_mod<F> static_method(F fn) noexcept {
    return apply(fn);
}

/// The data member `&T::member` of the value, by reference.
template <class T, class C>
constexpr detail::field_mod<T C::*> field(T C::*member) noexcept {
    static_assert(!std::is_function_v<T>, "loupe: field() takes a data member; use call(&T::f) for a member function");
    return detail::field_mod<T C::*>{{}, member};
}

/// dynamic_cast to `const U*`: CastFailed when the dynamic type does not fit.
template <class U>
inline constexpr detail::cast_mod<U> cast{};

/// A unique id of the object among live objects (its address, or `loupe_object_id(obj)` found by ADL).
constexpr detail::object_id_mod object_id() noexcept { return {}; }
/// Patent name of `object_id`.
constexpr detail::object_id_mod id() noexcept { return {}; }

/// Unwraps a pointer, smart pointer, optional or reference_wrapper (NullInCall when null).
constexpr detail::deref_mod deref() noexcept { return {}; }

/// Text of the value, formatted into the writer's bounded buffer.
constexpr detail::to_string_mod to_string() noexcept { return {}; }

/// Cuts a string to `max_bytes` on a UTF-8 boundary (flagged truncated, original size kept).
constexpr detail::truncate_mod truncate(std::size_t max_bytes) noexcept { return detail::truncate_mod{{}, max_bytes}; }

/// Keeps only the size of a secret.
constexpr detail::redact_mod redact() noexcept { return {}; }

/// Keyed 64-bit hash of a string or number.
constexpr detail::hash_mod hash() noexcept { return {}; }

// --- evaluation ---------------------------------------------------------------

namespace detail {

template <class V>
LOUPE_ALWAYS_INLINE void finish_chain(const V& v, value_writer& out) {
    if constexpr (is_traceable_v<V>) {
        write_traceable(v, out);
    } else if constexpr (is_nullable_v<V>) {
        if (nullable_of<V>::is_null(v)) return out.fail(value_kind::null_value);
        finish_chain(nullable_of<V>::get(v), out);
    } else {
        static_assert(is_traceable_v<V>,
                      "loupe: the end of this chain is not traceable: add a modifier (field, call, length, "
                      "to_string...) or specialize loupe::traceable<T>");
    }
}

template <class V>
LOUPE_ALWAYS_INLINE void run_chain(const mod_list<>&, const V& v, value_writer& out) {
    finish_chain(v, out);
}

template <class H, class... T, class V>
LOUPE_ALWAYS_INLINE void run_chain(const mod_list<H, T...>& l, const V& v, value_writer& out) {
    l.head.apply(v, out, [&l, &out](const auto& next) { run_chain(l.tail, next, out); });
}

template <unsigned N, class... M, class Self, class Tuple>
void evaluate_compiled(const chain<N, M...>& c, const Self* receiver, const Tuple& args, value_writer& out) {
    if constexpr (N == 0) {
        static_assert(!std::is_void_v<Self>,
                      "loupe: `self` (arg<0>) is used where there is no receiver: a free function has no *this");
        if constexpr (!std::is_void_v<Self>) run_chain(c.mods, receiver, out);
    } else {
        static_assert(N <= std::tuple_size_v<Tuple>,
                      "loupe: arg<N> is beyond the method's parameters (N counts the declared parameters from 1)");
        if constexpr (N <= std::tuple_size_v<Tuple>) run_chain(c.mods, std::get<N - 1>(args), out);
    }
}

}  // namespace detail

/// Evaluates `c` (a chain or named chain) at a method's entry and writes the
/// value, or the first failing modifier's status, to `out`.
///
/// - `receiver`: the receiver (`this`), or null / `static_cast<const void*>(nullptr)`
///   in a free function (Self = void: then `self` does not compile). A null
///   receiver behaves like a null pointer parameter.
/// - `args`: the declared parameters as a tuple of lvalue references,
///   `std::forward_as_tuple(p1, p2, ...)`; `arg<N>` reads element N−1 (and
///   does not compile when N is beyond it).
///
/// Never throws: an exception in a getter, fn, to_string or operator<< gives
/// ExceptionInCall. Cost: the modifiers' own work, inlined.
template <class Chain, class Self, class Tuple>
void evaluate_chain(const Chain& c, const Self* receiver, const Tuple& args, value_writer& out) noexcept {
    static_assert(detail::chain_traits<Chain>::is_chain,
                  "loupe: evaluate_chain takes a chain (arg<N> | ...) or a named chain");
#if defined(__cpp_exceptions)
    try {
        detail::evaluate_compiled(detail::chain_traits<Chain>::get(c), receiver, args, out);
    } catch (...) {
        out.fail(value_kind::exception_in_call);
    }
#else
    detail::evaluate_compiled(detail::chain_traits<Chain>::get(c), receiver, args, out);
#endif
}

/// The same, for a free function (no receiver).
template <class Chain, class Tuple>
void evaluate_chain(const Chain& c, std::nullptr_t, const Tuple& args, value_writer& out) noexcept {
    evaluate_chain(c, static_cast<const void*>(nullptr), args, out);
}

}  // namespace loupe
