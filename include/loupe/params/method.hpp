// Method sites: an entry/exit scope that records a method call with the
// values of its parameters (US 9,129,056). Usually placed by the macros:
//
//     void Cart::add(const Item& item, int qty) {
//         LOUPE_METHOD("shop::Cart::add(Item const&,int)", item, qty);
//         ...
//     }
//     double price(const Order* order) {
//         LOUPE_FUNCTION_PARAMS("shop::price(Order const*)", order);
//         ...
//     }
//     // with compile-time chains that specs select by name (chain=@sku):
//     LOUPE_METHOD_CHAINS("shop::Cart::add(Item const&,int)", (item, qty),
//                         loupe::named("sku", loupe::arg<1> | loupe::field(&Item::sku) | loupe::truncate(16)));
//
// Parameters are captured by reference and touched only when a session that
// records `kinds::methods` from this thread has a spec that applies (index 0
// is the receiver `this`, 1.. the declared parameters). A call is recorded as
// a zone named by the signature, carrying the specs' values (record::method).
//
// Cost (README "Overhead"): nothing recording — one relaxed load and a
// branch; recording without an applicable spec — a zone plus a generation
// check; with specs — each chain's own work (a field read, a getter call).
// Values are evaluated before the entry timestamp and the exit timestamp is
// taken first, so chain work is not charged to the call.
//
// Thread-safety: a scope lives on one thread's stack. Specs may change while
// calls run on other threads: a call keeps the values of the binding it
// entered with, and is delivered whole (entry and exit in one record).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "loupe/params/detail/method_exit.hpp"
#include "loupe/params/detail/site_binding.hpp"
#include "loupe/params/detail/type_desc.hpp"
#include "loupe/params/detail/method_wire.hpp"
#include "loupe/core/recorder.hpp"
#include "loupe/params/detail/short_move.hpp"
#include "loupe/params/detail/signature_check.hpp"
#include "loupe/params/detail/uncaught_exceptions.hpp"
#include "loupe/params/chain.hpp"
#include "loupe/params/value.hpp"
#include "loupe/core/zone.hpp"

namespace loupe {

namespace detail {

/// The compile-time chains registered at a site, with their names and start
/// parameters in arrays a constant-initialized method_site can point at.
template <class... Named>
struct site_chains {
    static constexpr unsigned count = sizeof...(Named);
    std::tuple<Named...> chains;
    const char* names[count == 0 ? 1 : count];
    unsigned params[count == 0 ? 1 : count];

    constexpr explicit site_chains(Named... n)
        : chains(n...), names{n.name...}, params{chain_param_v<decltype(n.chain)>...} {}

    /// Runs chain `i` on the call's receiver and arguments.
    template <class Self, class Tuple>
    void evaluate(unsigned i, const Self* self, const Tuple& args, value_writer& out) const noexcept {
        evaluate_at(i, self, args, out, std::index_sequence_for<Named...>{});
    }

private:
    template <class Self, class Tuple, std::size_t... I>
    void evaluate_at(unsigned i, const Self* self, const Tuple& args, value_writer& out,
                     std::index_sequence<I...>) const noexcept {
        (void)((i == I ? (evaluate_chain(std::get<I>(chains).chain, self, args, out), true) : false) || ...);
        (void)i, (void)self, (void)args, (void)out;
    }
};

template <class... Named>
constexpr site_chains<Named...> make_site_chains(Named... n) noexcept {
    return site_chains<Named...>(n...);
}

/// Descriptors of a site's parameter types: [0] the receiver (null for a free
/// function), [1..] the declared parameters.
template <class Self>
constexpr const type_desc* receiver_desc() noexcept {
    if constexpr (std::is_void_v<Self>) {
        return nullptr;
    } else {
        return type_desc_of<Self>();
    }
}
template <class Self, class Tuple>
struct site_arg_types;
template <class Self, class... Args>
struct site_arg_types<Self, std::tuple<Args&...>> {
    static constexpr std::size_t count = 1 + sizeof...(Args);
    // Constant-initialised: no guard a fork() could leave taken.
    static constexpr const type_desc* types[count] = {receiver_desc<Self>(), type_desc_of<std::remove_cv_t<Args>>()...};
    static const type_desc* const* get() noexcept { return types; }
};

/// The receiver's type when it cannot vary per call (not polymorphic): the
/// match modes are then decided once, at bind time. Null otherwise.
template <class Self>
const std::type_info* static_receiver() noexcept {
    if constexpr (std::is_void_v<Self> || std::is_polymorphic_v<Self>) {
        return nullptr;
    } else {
        return &typeid(Self);
    }
}

/// The dynamic type of the receiver (its static type when not polymorphic).
template <class Self>
const std::type_info& receiver_type(const Self* self) noexcept {
    if constexpr (std::is_polymorphic_v<Self>) {
        return typeid(*self);
    } else {
        (void)self;
        return typeid(Self);
    }
}

/// What a recorded call's entry leaves for its exit.
struct call_entry {
    std::uint64_t sessions;  ///< 0: not recorded after all (called from a modifier)
    std::uint64_t t0;
    const metric_plan* plan;
    /// Where the call's frame starts on the thread's value stack (no_frame:
    /// none). A frame is the call's unit payload as the ring carries it — the
    /// method_payload_header, the CPU times (with method_has_cpu), the
    /// encoded values — so the exit copies it whole and patches the flags
    /// and the CPU time at exit.
    std::uint32_t frame;
    int uncaught;
    std::uint8_t flags;
};

// The arguments of a call at a site without compile-time chains (the common
// LOUPE_METHOD), as addresses and descriptors: every such site enters
// through one instance of the entry below, enter_method<site_chains<>,
// void, runtime_call>, with its receiver as `self` and this as `args`
// (compiled once with the separate implementation). A site with chains
// passes its arguments as a tuple of references, and its entry is its own.
// The receiver's types come from its descriptor (types[0]: its static type,
// and its dynamic type when it is polymorphic; null for a free function).
struct runtime_call {
    const void* const* arguments;   ///< [0] the receiver (null: none), [1..] the parameters
    const type_desc* const* types;  ///< site_arg_types<Self, Tuple>::get()
    std::size_t count;
};

// What the entry needs from a call's arguments, for each of the two forms:
// the site bound to the current specs, the entries of a binding that apply
// to the receiver, and the arguments' addresses ([0] the receiver).
template <class Self, class Tuple>
const site_binding* bind_call(method_site& where, const Self*, const Tuple&) noexcept {
    using types = site_arg_types<Self, Tuple>;
    return bind_site(where, types::get(), types::count, static_receiver<Self>());
}
inline const site_binding* bind_call(method_site& where, const void*, const runtime_call& call) noexcept {
    const type_desc* receiver = call.types[0];  // as static_receiver<Self>()
    return bind_site(where, call.types, call.count,
                     receiver != nullptr && !receiver->polymorphic ? receiver->type : nullptr);
}
template <class Self, class Tuple>
std::uint64_t receiver_entries(const site_binding& b, const Self* self, const Tuple&) noexcept {
    if constexpr (!std::is_void_v<Self>) {
        if (b.receiver_dependent) return entries_for(b, receiver_type(self), typeid(Self));
    }
    return b.fixed_mask;
}
inline std::uint64_t receiver_entries(const site_binding& b, const void* self, const runtime_call& call) noexcept {
    const type_desc* receiver = call.types[0];
    if (receiver == nullptr || !b.receiver_dependent) return b.fixed_mask;
    return entries_for(b, receiver->polymorphic ? *receiver->dynamic_type(self) : *receiver->type, *receiver->type);
}
template <class Self, class... Args>
std::array<const void*, 1 + sizeof...(Args)> call_addresses(const Self* self,
                                                            const std::tuple<Args&...>& args) noexcept {
    return std::apply([self](auto&... a) {
        return std::array<const void*, 1 + sizeof...(Args)>{self, static_cast<const void*>(&a)...};
    }, args);
}
inline const void* const* call_addresses(const void*, const runtime_call& call) noexcept { return call.arguments; }

// The three ways a call's values are written onto the thread's value stack,
// each out of line so that each is compiled as a whole: a compiled run and a
// straight binding (site_binding::straight: every entry applies, the room is
// checked once), or entry by entry with every check.

// One value of a compiled run at `at`; returns where it ends. Inline, so
// that the writer of each chain stays in registers.
template <class Chain, class Self, class Tuple>
LOUPE_ALWAYS_INLINE unsigned char* write_compiled(const Chain& chain, const Self* self, const Tuple& args,
                                                  std::size_t budget, std::uint8_t slot, std::uint16_t spec,
                                                  unsigned char* at) noexcept {
    value_writer out(reinterpret_cast<char*>(at + encoded_text_offset), budget);
    evaluate_chain(chain, self, args, out);
    return at + encode_value(out, slot, spec, at);
}

// A compiled run: the site's chains one after the other, at `at`; returns
// where the values end.
template <class Chains, class Self, class Tuple, std::size_t... K>
LOUPE_NOINLINE unsigned char* evaluate_compiled_run(const site_binding& binding, const Chains& chains,
                                                    const Self* self, const Tuple& args, unsigned char* at,
                                                    std::index_sequence<K...>) noexcept {
    const binding_entry& first = binding.entries[0];
    const std::size_t budget = first.value_bytes;
    const auto spec = static_cast<std::uint16_t>(first.spec);
    ((at = write_compiled(std::get<K>(chains.chains).chain, self, args, budget, first.slot, spec, at)), ...);
    return at;
}

// A straight binding: every entry in order, at `at`; returns where the
// values end.
template <class Chains, class Self, class Tuple>
LOUPE_NOINLINE unsigned char* evaluate_straight(const site_binding& binding, const Chains& chains, const Self* self,
                                                const Tuple& args, unsigned char* at) noexcept {
    const auto addresses = call_addresses(self, args);
    for (const binding_entry& entry : binding.entries) {
        if (entry.chain.encode != nullptr) {  // a runtime chain that encodes in place
            at += entry.chain.encode(*entry.chain.chain, addresses[entry.param], at, entry.slot,
                                     static_cast<std::uint16_t>(entry.spec), entry.value_bytes);
            continue;
        }
        value_writer out(reinterpret_cast<char*>(at + encoded_text_offset), entry.value_bytes);
        if (entry.source == entry_source::runtime) {
            entry.chain.evaluate(addresses[entry.param], out);
        } else if (entry.source == entry_source::compiled) {
            chains.evaluate(entry.compiled, self, args, out);
        } else {
            out.fail(value_kind::enable_failed);
        }
        at += encode_value(out, entry.slot, static_cast<std::uint16_t>(entry.spec), at);
    }
    return at;
}

// A value written into the `budget` bytes the payload had left (less than its
// spec's value budget) that came out cut: it ends within a UTF-8 character
// of the budget, so the room, not the spec, cut it.
inline bool cut_by_room(const value_writer& out, std::size_t budget) noexcept {
    return out.truncated() && out.text_size() + 4 > budget;
}

// Entry by entry: the entries in `mask` that belong to `sessions`, at `at`
// and before `limit` (values that do not fit whole are left out and flagged
// in `flags`). Returns where the values end; `count` gets their number, `cpu`
// is set if one of them wants CPU time.
template <class Chains, class Self, class Tuple>
LOUPE_NOINLINE unsigned char* evaluate_entries(const site_binding& binding, std::uint64_t mask, std::uint64_t sessions,
                                               const Chains& chains, const Self* self, const Tuple& args,
                                               unsigned char* at, const unsigned char* limit, std::uint16_t& count,
                                               std::uint8_t& flags, bool& cpu) noexcept {
    const auto addresses = call_addresses(self, args);
    for (; mask != 0; mask &= mask - 1) {
        const binding_entry& entry = binding.entries[static_cast<std::size_t>(__builtin_ctzll(mask))];
        if (!(sessions >> entry.slot & 1)) continue;
        cpu = cpu || entry.cpu;
        if (entry.source == entry_source::timing) continue;
        const std::size_t room = static_cast<std::size_t>(limit - at);
        if (room < encoded_text_offset + 8 || count == 0xFFFF) {
            flags |= method_values_lost;
            continue;
        }
        const std::size_t space = room - encoded_text_offset;
        const std::size_t budget = entry.value_bytes < space ? entry.value_bytes : space;
        value_writer out(reinterpret_cast<char*>(at + encoded_text_offset), budget);
        switch (entry.source) {
            case entry_source::compiled: chains.evaluate(entry.compiled, self, args, out); break;
            case entry_source::runtime: entry.chain.evaluate(addresses[entry.param], out); break;
            default: out.fail(value_kind::enable_failed); break;
        }
        if (budget < entry.value_bytes && cut_by_room(out, budget)) {  // does not fit whole: left out
            flags |= method_values_lost;
            continue;
        }
        at += encode_value(out, entry.slot, static_cast<std::uint16_t>(entry.spec), at);
        ++count;
    }
    return at;
}

// A straight binding (site_binding::straight) for a thread every session of
// its slots records: every entry's value, one after the other, into the
// call's frame — in the thread's ring when it has room and no metrics are
// charged to zones (ring::open_frame: the exit then publishes it in place),
// else at the top of `stack`. `e` gets the frame, and method_frame_in_ring
// when it waits in the ring. (No entry of a straight binding wants CPU time.)
template <class Chains, class Self, class Tuple>
LOUPE_ALWAYS_INLINE void evaluate_straight_frame(const method_site& where, const site_binding& binding,
                                                 const Chains& chains, const Self* self, const Tuple& args,
                                                 thread_state& ts, value_stack& stack, call_entry& e) noexcept {
    ring* const rg = ts.owned_ring;
    raw_record* const in_ring =
        ts.plan == nullptr && rg != nullptr ? rg->open_frame(binding.frame_records) : nullptr;
    // A call with values writes a line or more per call: the hint keeps a
    // host that moves lines between cores slowly from holding it up.
    if (in_ring != nullptr) rg->prefetch_ahead_for_write();
    unsigned char* const frame =
        in_ring != nullptr ? reinterpret_cast<unsigned char*>(in_ring + 1) : stack.bytes + stack.top;
    unsigned char* const values = frame + sizeof(method_payload_header);
    unsigned char* end;
    ++ts.in_chain;  // methods the chains call are not traced
    if constexpr (Chains::count != 0) {
        end = binding.compiled_run
                  ? evaluate_compiled_run(binding, chains, self, args, values, std::make_index_sequence<Chains::count>{})
                  : evaluate_straight(binding, chains, self, args, values);
    } else {
        end = evaluate_straight(binding, chains, self, args, values);
    }
    --ts.in_chain;
    const auto values_bytes = static_cast<std::uint32_t>(end - values);
    const method_payload_header h{&where, values_bytes, static_cast<std::uint16_t>(binding.entries.size()), 0, 0};
    std::memcpy(frame, &h, sizeof h);
    const std::size_t bytes = sizeof h + values_bytes;
    unsigned char* const place = stack.bytes + stack.top;  // the frame, or where it goes if set aside
    if (in_ring != nullptr) {
        switch (rg->close_frame(1 + (bytes + sizeof(raw_record) - 1) / sizeof(raw_record), bytes, place)) {
            case ring::frame_state::in_place: e.flags |= method_frame_in_ring; break;
            case ring::frame_state::skipped: std::memcpy(place, frame, bytes); break;  // a getter recorded
            case ring::frame_state::overwritten: e.flags |= method_values_lost; return;
        }
    }
    e.frame = static_cast<std::uint32_t>(stack.top);
    stack.top += bytes;
}

// Opens the call's frame and writes into it the values of the entries in
// `mask` that belong to `sessions`; `e` gets the frame (none when the call
// carries nothing) and the flags. True if one of the entries wants CPU time
// (its slot in the frame is left for the caller).
template <class Chains, class Self, class Tuple>
bool evaluate_values(const method_site& where, const site_binding& binding, std::uint64_t mask, std::uint64_t sessions,
                     const Chains& chains, const Self* self, const Tuple& args, call_entry& e) noexcept {
    thread_state& ts = t_state;
    value_stack* stack = thread_value_stack(ts);
    if (LOUPE_UNLIKELY(stack == nullptr || value_stack::capacity - stack->top < max_method_payload)) {
        e.flags |= method_values_lost;  // no room for a frame: the call carries its timing alone
        return false;
    }
    if (binding.straight && (binding.slots & ~sessions) == 0) {
        evaluate_straight_frame(where, binding, chains, self, args, ts, *stack, e);
        return false;
    }
    unsigned char* const frame = stack->bytes + stack->top;
    unsigned char* const values = frame + sizeof(method_payload_header);
    // Room for the values within one unit's payload, keeping the CPU times' slot.
    const unsigned char* const limit = values + max_method_values;
    std::uint16_t count = 0;
    std::uint8_t flags = 0;
    bool cpu = false;
    ++ts.in_chain;  // methods the chains call are not traced
    unsigned char* const end =
        evaluate_entries(binding, mask, sessions, chains, self, args, values, limit, count, flags, cpu);
    --ts.in_chain;
    if (count == 0 && flags == 0 && !cpu) return false;  // nothing to carry: timed as a plain zone
    const auto values_bytes = static_cast<std::uint32_t>(end - values);
    if (cpu) {  // the CPU times go between the header and the values
        std::memmove(values + sizeof(method_cpu_times), values, values_bytes);
        flags |= method_has_cpu;
    }
    const method_payload_header h{&where, values_bytes, count, flags, 0};
    std::memcpy(frame, &h, sizeof h);
    e.frame = static_cast<std::uint32_t>(stack->top);
    e.flags |= flags;
    stack->top += sizeof h + (cpu ? sizeof(method_cpu_times) : 0) + values_bytes;
    return cpu;
}

// True when a call some session records carries nothing but its timing: the
// site's binding is current and has no entry for these sessions, and the
// call is not made from a modifier. Inline in every method site: two loads
// and the binding's session mask.
LOUPE_ALWAYS_INLINE bool timing_only(const method_site& where, std::uint64_t sessions, const thread_state& ts) noexcept {
    if (ts.in_chain != 0) return false;
    if (where.bound_generation.load(std::memory_order_acquire) != g_binding_generation.load(std::memory_order_acquire))
        return false;
    const auto* binding = static_cast<const site_binding*>(where.binding.load(std::memory_order_acquire));
    return binding == nullptr || (binding->slots & sessions) == 0;
}

// Entry of a call some session records: binds the site if the specs changed,
// evaluates the applicable chains, then reads metrics, CPU time and — last,
// so the chains' work is not the call's — the entry timestamp.
template <class Chains, class Self, class Tuple>
LOUPE_NOINLINE call_entry enter_method(method_site& where, const Chains& chains, const Self* self, const Tuple& args,
                                         std::uint64_t sessions) noexcept {
    call_entry e{sessions, 0, nullptr, no_frame, 0, 0};
    thread_state& ts = t_state;
    if (ts.in_chain != 0) {  // called from a modifier: not traced (¶0158)
        e.sessions = 0;
        return e;
    }
    const auto* binding = static_cast<const site_binding*>(where.binding.load(std::memory_order_acquire));
    if (LOUPE_UNLIKELY(where.bound_generation.load(std::memory_order_acquire) !=
                       g_binding_generation.load(std::memory_order_acquire))) {
        internal_allocation_scope internal;
        binding = bind_call(where, self, args);
    }
    const std::uint64_t mask =
        binding != nullptr && (binding->slots & sessions) != 0 ? receiver_entries(*binding, self, args) : 0;
    const bool cpu = mask != 0 && evaluate_values(where, *binding, mask, sessions, chains, self, args, e);
    e.plan = ts.plan;
    if (LOUPE_UNLIKELY(e.plan != nullptr)) e.plan = enter_zone_metrics(e.plan);
    if (cpu) {  // into the frame's CPU times
        const std::uint64_t begin = thread_cpu_ns();
        std::memcpy(ts.values->bytes + e.frame + sizeof(method_payload_header), &begin, sizeof begin);
    }
    e.uncaught = uncaught_exceptions(ts);
    e.t0 = read_ticks();
    return e;
}

// The entry of every site without compile-time chains: a shared part with
// the separate implementation (base/config.hpp).
LOUPE_DETAIL_SHARED_INSTANCE(call_entry enter_method<site_chains<>, void, runtime_call>(
    method_site&, const site_chains<>&, const void*, const runtime_call&, std::uint64_t) noexcept);

// A recorded call's entry: its site's own with compile-time chains, else
// the shared one.
template <class Chains, class Self, class... Args>
LOUPE_ALWAYS_INLINE call_entry enter_site(method_site& where, const Chains& chains, const Self* self,
                                          std::uint64_t sessions, Args&... args) noexcept {
    if constexpr (Chains::count != 0) {
        const std::tuple<Args&...> captured(args...);
        return enter_method(where, chains, self, captured, sessions);
    } else {
        using types = site_arg_types<Self, std::tuple<Args&...>>;
        const void* const arguments[] = {self, static_cast<const void*>(&args)...};
        const runtime_call call{arguments, types::get(), types::count};
        return enter_method(where, chains, static_cast<const void*>(self), call, sessions);
    }
}

}  // namespace detail

/// RAII method call scope (see the file comment). Built by the macros; use it
/// directly only with a `method_site` of static storage duration.
/// Exceptions: none escape; a chain's exception becomes ExceptionInCall.
template <class Chains, class Self, class... Args>
class method_scope {
public:
    LOUPE_ALWAYS_INLINE method_scope(method_site& where, const Chains& chains, const Self* self, Args&... args) noexcept
        : where_(&where) {
        if (LOUPE_UNLIKELY(detail::armed() & kinds::methods)) {
            sessions_ = detail::sessions_for(site_kind::method);
            if (sessions_ == 0) return;
            detail::thread_state& ts = detail::t_state;
            if (LOUPE_LIKELY(detail::timing_only(where, sessions_, ts))) {
                // No spec applies: the call is timed like a zone, inline.
                uncaught_ = detail::uncaught_exceptions(ts);
                frame_ = detail::no_frame;
                flags_ = 0;
                plan_ = ts.plan;
                if (LOUPE_UNLIKELY(plan_ != nullptr)) plan_ = detail::enter_zone_metrics(plan_);
                t0_ = detail::read_ticks();
                return;
            }
            // The arguments are referenced only here, and the entry comes
            // back by value: the idle path touches neither the arguments
            // nor the scope's memory.
            const detail::call_entry e = detail::enter_site(where, chains, self, sessions_, args...);
            sessions_ = e.sessions;
            t0_ = e.t0;
            plan_ = e.plan;
            frame_ = e.frame;
            uncaught_ = e.uncaught;
            flags_ = e.flags;
        }
    }
    LOUPE_ALWAYS_INLINE ~method_scope() {
        if (LOUPE_UNLIKELY(sessions_ != 0)) {
            const std::uint8_t flags = static_cast<std::uint8_t>(
                flags_ | (detail::uncaught_exceptions(detail::t_state) > uncaught_ ? detail::method_exceptional : 0));
            if (frame_ != detail::no_frame || flags != 0) {
                detail::push_method_call(where_, t0_, sessions_, plan_, frame_, flags);
            } else {  // nothing but timing: a plain zone named by the signature
                detail::end_zone(&where_->zone, t0_, sessions_, plan_);
            }
        }
    }
    method_scope(const method_scope&) = delete;
    method_scope& operator=(const method_scope&) = delete;
    static void* operator new(std::size_t) = delete;  // a scope lives on the stack

    /// True when this call is being recorded by at least one session.
    bool recording() const noexcept { return sessions_ != 0; }

private:
    // Only sessions_ is set on the idle path; the others are written by a
    // recorded entry and read only when sessions_ != 0.
    const method_site* where_;
    std::uint64_t sessions_ = 0;
    std::uint64_t t0_;
    const detail::metric_plan* plan_;
    std::uint32_t frame_;
    int uncaught_;
    std::uint8_t flags_;
};

template <class Chains, class Self, class... Args>
method_scope(method_site&, const Chains&, const Self*, Args&...) -> method_scope<Chains, Self, Args...>;

namespace detail {

/// What the macros build a scope with: `method_scope_for(site, chains, self)(a, b)`
/// (the parenthesized parameter list may be empty).
template <class Chains, class Self>
struct method_scope_builder {
    method_site& where;
    const Chains& chains;
    const Self* self;
    template <class... Args>
    LOUPE_ALWAYS_INLINE method_scope<Chains, Self, Args...> operator()(Args&... args) const noexcept {
        return method_scope<Chains, Self, Args...>(where, chains, self, args...);
    }
};

template <class Chains, class Self>
LOUPE_ALWAYS_INLINE method_scope_builder<Chains, Self> method_scope_for(method_site& where, const Chains& chains,
                                                                       const Self* self) noexcept {
    return {where, chains, self};
}

}  // namespace detail


}  // namespace loupe

#if LOUPE_ENABLED

#    define LOUPE_DETAIL_METHOD(id, signature, receiver, self, chains_expr, args)                                     \
        LOUPE_DETAIL_CHECK_SIGNATURE(id, signature, args);                                                          \
        static constexpr auto LOUPE_DETAIL_CAT(id, _chains) = chains_expr;                                          \
        static ::loupe::method_site LOUPE_DETAIL_CAT(id, _site){signature,                                          \
                                                                __FILE__,                                           \
                                                                LOUPE_DETAIL_FUNCTION,                              \
                                                                __LINE__,                                           \
                                                                receiver,                                           \
                                                                LOUPE_DETAIL_CAT(id, _chains).names,                \
                                                                LOUPE_DETAIL_CAT(id, _chains).count,                \
                                                                LOUPE_DETAIL_CAT(id, _chains).params};              \
        auto LOUPE_DETAIL_CAT(id, _scope) =                                                                       \
            ::loupe::detail::method_scope_for(LOUPE_DETAIL_CAT(id, _site), LOUPE_DETAIL_CAT(id, _chains), self) args

/// Records the enclosing member function's call as `signature` (a string
/// literal, fully qualified: "ns::Class::method(ParamType,...)" with an
/// optional return type after the parentheses), with its parameters (named
/// parameters of the function, in order) available to parameter specs.
#    define LOUPE_METHOD(signature, ...)                                                                             \
        LOUPE_DETAIL_METHOD(LOUPE_DETAIL_CAT(loupe_method_, __COUNTER__), signature, true, this,                     \
                            ::loupe::detail::make_site_chains(), (__VA_ARGS__))

/// LOUPE_METHOD for a free (or static) function: there is no receiver.
#    define LOUPE_FUNCTION_PARAMS(signature, ...)                                                                    \
        LOUPE_DETAIL_METHOD(LOUPE_DETAIL_CAT(loupe_method_, __COUNTER__), signature, false,                          \
                            static_cast<const void*>(nullptr), ::loupe::detail::make_site_chains(), (__VA_ARGS__))

/// LOUPE_METHOD with compile-time chains (`loupe::named("name", chain)`, ...)
/// that specs select with `chain=@name`, or all at once with a spec that
/// gives no `param`. `args` is the parenthesized parameter list.
#    define LOUPE_METHOD_CHAINS(signature, args, ...)                                                                \
        LOUPE_DETAIL_METHOD(LOUPE_DETAIL_CAT(loupe_method_, __COUNTER__), signature, true, this,                     \
                            ::loupe::detail::make_site_chains(__VA_ARGS__), args)

/// LOUPE_FUNCTION_PARAMS with compile-time chains.
#    define LOUPE_FUNCTION_CHAINS(signature, args, ...)                                                              \
        LOUPE_DETAIL_METHOD(LOUPE_DETAIL_CAT(loupe_method_, __COUNTER__), signature, false,                          \
                            static_cast<const void*>(nullptr), ::loupe::detail::make_site_chains(__VA_ARGS__), args)

#else

#    define LOUPE_METHOD(signature, ...) static_cast<void>(0)
#    define LOUPE_FUNCTION_PARAMS(signature, ...) static_cast<void>(0)
#    define LOUPE_METHOD_CHAINS(signature, args, ...) static_cast<void>(0)
#    define LOUPE_FUNCTION_CHAINS(signature, args, ...) static_cast<void>(0)

#endif
