// Reflection for runtime parameter chains (Tier B, US 9,129,056 ¶0152–0153):
// C++ has no reflection, so the names a chain text uses — `field(sku)`,
// `call(total)`, `cast(shop::Special)`, `apply(shop::table_of)` — resolve
// against what the program registers here.
//
//     loupe::reflect<shop::Item>("shop::Item")
//         .field("sku", &shop::Item::sku)
//         .method("total", &shop::Item::total)   // const, no arguments
//         .base<shop::Entity>();                 // enables cast(...) and hierarchy matching
//     loupe::reflect_function("shop::table_of", &shop::table_of);
//
// Sequences (random-access containers, std::array, C arrays, strings),
// pointers, smart pointers and optionals need no registration.
//
// Cost: slow path (a lock, allocations); register at start-up or before a
// session that uses the names. Chains bound earlier keep what they bound;
// `detail::reflection_generation()` changes on every registration.
//
// Thread-safety: every function here may be called from any thread.
// Registering again adds or replaces entries (same name: replaced).
#pragma once

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <utility>

#include "loupe/params/detail/binding_generation.hpp"
#include "loupe/params/detail/class_graph.hpp"
#include "loupe/params/detail/reflection_registry.hpp"
#include "loupe/params/detail/type_desc.hpp"

namespace loupe {

namespace detail {

inline std::string member_key(std::string_view name) {
    const std::size_t paren = name.find('(');
    std::string_view k = name.substr(0, paren);
    while (!k.empty() && k.back() == ' ') k.remove_suffix(1);
    return std::string(k);
}

template <class C, class M>
struct field_entry final : member_entry {
    M C::*member = nullptr;
    static const void* locate(const member_entry& self, const void* object) noexcept {
        return std::addressof(static_cast<const C*>(object)->*static_cast<const field_entry&>(self).member);
    }
    static void read(const member_entry& self, const void* object, const continuation& next,
                     value_writer& out) noexcept {
        next(locate(self, object), out);
    }
};

template <class F>
struct method_traits {
    static constexpr bool ok = false;
};
#define LOUPE_DETAIL_METHOD_TRAITS(QUALS)    \
    template <class R, class C>              \
    struct method_traits<R (C::*)() QUALS> { \
        static constexpr bool ok = true;     \
        using result = R;                    \
        using owner = C;                     \
    };
LOUPE_DETAIL_METHOD_TRAITS(const)
LOUPE_DETAIL_METHOD_TRAITS(const noexcept)
LOUPE_DETAIL_METHOD_TRAITS(const&)
LOUPE_DETAIL_METHOD_TRAITS(const& noexcept)
#undef LOUPE_DETAIL_METHOD_TRAITS

template <class F>
struct method_entry final : member_entry {
    F method = nullptr;
    using traits = method_traits<F>;
    static void call(const member_entry& self, const void* object, const continuation& next,
                     value_writer& out) noexcept {
        const auto& e = static_cast<const method_entry&>(self);
        const auto& obj = *static_cast<const typename traits::owner*>(object);
        // `next` is noexcept, so the try block only ever catches what the method throws.
        try {
            decltype(auto) result = (obj.*e.method)();  // a temporary lives while the rest of the chain runs
            next(std::addressof(result), out);
        } catch (...) {
            out.fail(value_kind::exception_in_call);
        }
    }
};

template <class F>
struct function_traits {
    static constexpr bool ok = false;
};
template <class R, class P>
struct function_traits<R (*)(P)> {
    static constexpr bool ok = true;
    using result = R;
    using param = P;
};
template <class R, class P>
struct function_traits<R (*)(P) noexcept> : function_traits<R (*)(P)> {};

template <class F>
struct function_entry_of final : function_entry {
    F function = nullptr;
    using traits = function_traits<F>;
    using P = typename traits::param;
    static void invoke_it(const function_entry& self, const void* argument, const continuation& next,
                          value_writer& out) noexcept {
        const auto& e = static_cast<const function_entry_of&>(self);
        // `next` is noexcept, so the try block only ever catches what the function throws.
        try {
            if constexpr (std::is_pointer_v<P>) {
                decltype(auto) result = e.function(static_cast<const std::remove_pointer_t<P>*>(argument));
                next(std::addressof(result), out);
            } else {
                decltype(auto) result =
                    e.function(*static_cast<const std::remove_cv_t<std::remove_reference_t<P>>*>(argument));
                next(std::addressof(result), out);
            }
        } catch (...) {
            out.fail(value_kind::exception_in_call);
        }
    }
};

template <class T>
void continue_as_pointer(const void* object, const continuation& next, value_writer& out) noexcept {
    const T* p = static_cast<const T*>(object);
    next(&p, out);
}

template <class D, class B>
const void* upcast(const void* p) noexcept {
    return static_cast<const B*>(static_cast<const D*>(p));
}
template <class D, class B>
const void* downcast(const void* p) noexcept {
    return dynamic_cast<const D*>(static_cast<const B*>(p));
}

template <class T>
class_entry& class_entry_locked(reflection_registry& r) {
    class_entry& e = r.classes[std::type_index(typeid(T))];
    if (e.desc == nullptr) {
        e.desc = type_desc_of<T>();
        e.pointer_desc = type_desc_of<const T*>();
        e.as_pointer = &continue_as_pointer<T>;
        e.name = demangle(typeid(T));
    }
    return e;
}

inline void put_member(std::vector<std::shared_ptr<const member_entry>>& list,
                       std::shared_ptr<const member_entry> entry) {
    for (auto& m : list) {
        if (m->key == entry->key) {
            m = std::move(entry);
            return;
        }
    }
    list.push_back(std::move(entry));
}

}  // namespace detail

/// Registers the members of class `T` under the names chains use. Returned
/// by `reflect<T>(name)`; each call registers immediately (no need to keep
/// the object). Any thread.
template <class T>
class reflector {
public:
    /// Registers data member `member` (of T or of a base of T) as `name`;
    /// `field(name)` reads it by reference, without a copy.
    template <class M, class C>
    reflector& field(std::string_view name, M C::*member) {
        static_assert(!std::is_function_v<M>, "loupe::reflect: field() takes a data member; use method()");
        static_assert(std::is_base_of_v<C, T>, "loupe::reflect: the member must belong to T or a base of T");
        auto e = std::make_shared<detail::field_entry<C, M>>();
        e->name = std::string(name);
        e->key = detail::member_key(name);
        e->result = detail::type_desc_of<M>();
        e->access = &detail::field_entry<C, M>::read;
        e->address = &detail::field_entry<C, M>::locate;
        e->member = member;
        add(e, false);
        return *this;
    }

    /// Registers a `const` member function without arguments as `name` (the
    /// part before any '(' is what `call(name)` looks up). `call(name)` runs
    /// it on the traced thread; a result by value lives while the rest of the
    /// chain runs; an exception gives ExceptionInCall.
    template <class F>
    reflector& method(std::string_view name, F function) {
        using traits = detail::method_traits<F>;
        static_assert(traits::ok,
                      "loupe::reflect: method() takes a const member function without arguments, e.g. "
                      "`std::string name() const`");
        if constexpr (traits::ok) {
            static_assert(std::is_base_of_v<typename traits::owner, T>,
                          "loupe::reflect: the method must belong to T or a base of T");
            static_assert(!std::is_void_v<typename traits::result>, "loupe::reflect: the method must return a value");
            auto e = std::make_shared<detail::method_entry<F>>();
            e->name = std::string(name);
            e->key = detail::member_key(name);
            e->result = detail::type_desc_of<typename traits::result>();
            e->access = &detail::method_entry<F>::call;
            e->method = function;
            add(e, true);
        }
        return *this;
    }

    /// Registers `B` as a direct base of T: `cast(...)` can then move between
    /// them (downwards only when B is polymorphic), fields and methods of B
    /// are found on T, and hierarchy matching (detail::classes()) knows the edge.
    template <class B>
    reflector& base() {
        static_assert(std::is_base_of_v<B, T> && !std::is_same_v<B, T>, "loupe::reflect: B must be a base of T");
        std::string derived_name, base_name;
        {
            detail::reflection_registry& r = detail::reflection();
            std::lock_guard<std::mutex> lock(r.mutex);
            detail::class_entry& e = detail::class_entry_locked<T>(r);
            detail::base_entry b{std::type_index(typeid(B)), &detail::upcast<T, B>, nullptr};
            if constexpr (std::is_polymorphic_v<B>) b.down = &detail::downcast<T, B>;
            bool found = false;
            for (auto& existing : e.bases) {
                if (existing.base == b.base) {
                    existing = b;
                    found = true;
                }
            }
            if (!found) e.bases.push_back(b);
            derived_name = e.name;
            auto it = r.classes.find(std::type_index(typeid(B)));
            base_name = it != r.classes.end() ? it->second.name : detail::demangle(typeid(B));
            r.generation.fetch_add(1, std::memory_order_acq_rel);
            detail::g_binding_generation.fetch_add(1, std::memory_order_release);
        }
        detail::classes().add_base(derived_name, base_name);
        return *this;
    }

private:
    template <class U>
    friend reflector<U> reflect(std::string_view name);
    reflector() = default;

    void add(std::shared_ptr<const detail::member_entry> e, bool is_method) {
        detail::reflection_registry& r = detail::reflection();
        std::lock_guard<std::mutex> lock(r.mutex);
        detail::class_entry& c = detail::class_entry_locked<T>(r);
        detail::put_member(is_method ? c.methods : c.fields, std::move(e));
        r.generation.fetch_add(1, std::memory_order_acq_rel);
        detail::g_binding_generation.fetch_add(1, std::memory_order_release);
    }
};

/// Registers class `T` under `name` (a fully qualified C++ name such as
/// "shop::Item"): what `type_of` reports for it, what `cast(name)` and
/// class matching use. Registering again renames it. Returns a reflector
/// to register members and bases with. Any thread; slow path.
template <class T>
reflector<T> reflect(std::string_view name) {
    static_assert(std::is_class_v<T>, "loupe::reflect: T must be a class type");
    detail::reflection_registry& r = detail::reflection();
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        detail::class_entry& e = detail::class_entry_locked<T>(r);
        e.name = std::string(name);
        r.set_name_locked(typeid(T), name);
        r.generation.fetch_add(1, std::memory_order_acq_rel);
        detail::g_binding_generation.fetch_add(1, std::memory_order_release);
    }
    return reflector<T>();
}

/// Registers a free or static function of one argument (by value, by const
/// reference, or `const U*`) as `name` (the part before any '(' is what
/// `apply(name)` looks up). `apply(name)` calls it with the chain's value;
/// for a pointer parameter a null input is passed through (as the patent's
/// static_method), otherwise it gives NullInCall. Any thread; slow path.
template <class R, class P>
void reflect_function(std::string_view name, R (*function)(P)) {
    using F = R (*)(P);
    using Plain = std::remove_cv_t<std::remove_reference_t<P>>;
    static_assert(!std::is_void_v<R>, "loupe::reflect_function: the function must return a value");
    static_assert(!std::is_lvalue_reference_v<P> || std::is_const_v<std::remove_reference_t<P>>,
                  "loupe::reflect_function: the parameter must be a value, a const reference or a pointer to const");
    static_assert(!std::is_rvalue_reference_v<P>,
                  "loupe::reflect_function: rvalue reference parameters are not supported");
    static_assert(!std::is_pointer_v<Plain> || std::is_const_v<std::remove_pointer_t<Plain>>,
                  "loupe::reflect_function: a pointer parameter must point to const");
    auto e = std::make_shared<detail::function_entry_of<F>>();
    e->name = std::string(name);
    e->key = detail::member_key(name);
    e->result = detail::type_desc_of<R>();
    if constexpr (std::is_pointer_v<Plain>) {
        e->param = detail::type_desc_of<std::remove_pointer_t<Plain>>();
        e->param_is_pointer = true;
    } else {
        e->param = detail::type_desc_of<Plain>();
    }
    e->invoke = &detail::function_entry_of<F>::invoke_it;
    e->function = function;
    detail::reflection_registry& r = detail::reflection();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& f : r.functions) {
        if (f->key == e->key) {
            f = std::move(e);
            r.generation.fetch_add(1, std::memory_order_acq_rel);
            detail::g_binding_generation.fetch_add(1, std::memory_order_release);
            return;
        }
    }
    r.functions.push_back(std::move(e));
    r.generation.fetch_add(1, std::memory_order_acq_rel);
    detail::g_binding_generation.fetch_add(1, std::memory_order_release);
}

/// Same for a `noexcept` function.
template <class R, class P>
void reflect_function(std::string_view name, R (*function)(P) noexcept) {
    reflect_function<R, P>(name, static_cast<R (*)(P)>(function));
}

}  // namespace loupe
