// A runtime chain once bound (bound_chain), and what each modifier step does
// when it is evaluated (chain_steps). The binder (runtime_chain_binder.hpp)
// builds a bound_chain: one bound_step per modifier, each naming its step
// function and holding what the binder resolved for it (the pointer
// unwraps and upcasts to apply first, the member, function or cast path,
// the index or byte count).
//
// Why continuation passing: a step's output may be a temporary (a getter's
// result, a container element, formatted text), so instead of returning it
// a step hands it to the rest of the chain (bound_chain::next, or a
// continuation for getters that produce it) while it is still alive. That
// keeps `evaluate` noexcept and free of heap allocation, at one indirect
// call per step. A data member is no temporary: its step goes on with its
// address (chain_steps::field), and a chain without steps calls the value's
// writer straight away (bound_chain::write_value). Failures write a status
// (NullInCall, InvalidIndex, CastFailed, ...) instead of a value and stop
// the chain.
//
// Thread-safety: a bound chain is immutable and may be evaluated by many
// threads at once; type_of's per-step name cache is atomic.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "loupe/base/param_value.hpp"
#include "loupe/params/detail/chain_values.hpp"
#include "loupe/params/detail/modifier_support.hpp"
#include "loupe/params/detail/reflection_registry.hpp"
#include "loupe/params/detail/type_desc.hpp"
#include "loupe/params/value.hpp"

namespace loupe::detail {

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
    void evaluate(const void* object, value_writer& out) const noexcept { entry()(*this, 0, object, out); }

    /// The kind a successful evaluation writes (unknown when a user-defined
    /// traceable decides at run time).
    value_kind result_kind() const noexcept { return result_kind_; }

    /// Number of modifiers.
    std::size_t size() const noexcept { return steps_.size(); }

    // --- internals, used by the steps ---
    void run(std::size_t index, const void* object, value_writer& out) const noexcept {
        if (index < step_count_) {
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
        final_write_(p, out);
    }
    const bound_step& step(std::size_t index) const noexcept { return steps_[index]; }

    /// What a site's runtime_chain_ref calls with index 0: the chain's fused
    /// form (below) when it has one, the first step's function, or (no
    /// modifiers) the one that writes the value.
    bound_step::run_fn entry() const noexcept {
        if (fused_ != nullptr) return fused_;
        if (!steps_.empty()) return steps_[0].run;
        return final_adjust_.empty() ? &write_value : &run_from;
    }
    // Fused forms of the most common shapes, run in one function instead of
    // a call per step and one more for the writer (the binder picks them:
    // chain_binder::fuse): data members one after the other (no unwrapping
    // or upcast on the way), then the value, or its first truncate(n)
    // bytes. Same results as the steps.
    static void fields_then_write(const bound_chain& chain, std::size_t, const void* object,
                                  value_writer& out) noexcept {
        chain.final_write_(chain.follow_fields(object), out);
    }
    static void fields_then_truncate(const bound_chain& chain, std::size_t, const void* object,
                                     value_writer& out) noexcept {
        const bound_step& cut = chain.steps_[chain.fused_fields_];
        std::string_view text;
        if (!cut.in->text(chain.follow_fields(object), text)) {
            out.fail(value_kind::null_in_call);
            return;
        }
        chain.write_fused_cut(text, out);
    }
    static void run_from(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
        chain.run(index, object, out);
    }
    static void write_value(const bound_chain& chain, std::size_t, const void* object, value_writer& out) noexcept {
        chain.final_write_(object, out);
    }

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
    friend struct chain_encoders;  // runtime_chain_encoders.hpp
    std::vector<bound_step> steps_;
    std::size_t step_count_ = 0;  // steps_.size(), without a division per step
    std::vector<adjust_fn> final_adjust_;
    void (*final_write_)(const void* object, value_writer& out) noexcept = nullptr;  // the end type's writer
    value_kind result_kind_ = value_kind::unknown;
    const type_desc* end_ = nullptr;  // the type of the value written (after any unwrapping)
    bound_step::run_fn fused_ = nullptr;  // the fused form, if the chain has one
    std::size_t fused_fields_ = 0;        // its data members (the first steps)

    // The fused truncate's first bytes of `text`, written as the value (with
    // the text's whole size as its original size).
    LOUPE_ALWAYS_INLINE void write_fused_cut(std::string_view text, value_writer& out) const noexcept {
        out.write_string(utf8_prefix(text, static_cast<std::size_t>(steps_[fused_fields_].number)), text.size());
    }
    // The address of the fused_fields_ data members, one inside the other.
    const void* follow_fields(const void* p) const noexcept {
        for (std::size_t i = 0; i < fused_fields_; ++i) p = steps_[i].member->address(*steps_[i].member, p);
        return p;
    }
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

/// A data member (member_entry::address): its address, no temporary.
inline void field(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept {
    const bound_step& s = chain.step(index);
    const void* p = adjusted(s, object);
    if (p == nullptr) {
        out.fail(value_kind::null_in_call);
        return;
    }
    chain.next(index, s.member->address(*s.member, p), out);
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

}  // namespace loupe::detail
