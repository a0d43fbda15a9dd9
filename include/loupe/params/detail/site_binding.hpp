// What a method site reads on its calls: the binding of the specs that
// apply to it (US 9,129,056 ¶0151–0155), made by the method registry
// (params/detail/method_registry.hpp) and published on the site.
//
// The site reaches the registry through `g_method_binder`, a table of two
// function pointers that the registry fills when a program includes it
// (<loupe/session.hpp> does), so a file with method sites compiles the
// entries it evaluates, not the spec compiler and binder behind them.
// Bindings are immutable once published, except for the receiver cache
// (append-only, atomics). A site reads plain pointers: the registry owns
// what they point at (method_registry.hpp: owned_site_binding), so a file
// with method sites needs no <memory>.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/params/detail/binding_generation.hpp"
#include "loupe/params/detail/cache_line.hpp"
#include "loupe/params/match_mode.hpp"
#include "loupe/params/method_site.hpp"
#include "loupe/params/value.hpp"

namespace loupe::detail {

struct signature;    // signature_parser.hpp: the spec's selector, read by the registry only
struct type_desc;    // type_desc.hpp
class bound_chain;   // runtime_chain_steps.hpp

/// A bound runtime chain as a site holds it (its binding owns it), entered
/// through its first step's function (the binder sets it:
/// bound_chain::entry), so a file with method sites compiles none of the
/// step code and a call pays one indirect call per chain.
struct runtime_chain_ref {
    /// Encodes the chain's value on `object` as spec `spec` of session
    /// `slot` at `at` (method_wire.hpp's encoding, up to `budget` bytes of
    /// text); returns its size.
    using encode_fn = std::size_t (*)(const bound_chain& chain, const void* object, unsigned char* at,
                                      std::uint8_t slot, std::uint16_t spec, std::size_t budget) noexcept;

    const bound_chain* chain = nullptr;
    void (*run)(const bound_chain& chain, std::size_t index, const void* object, value_writer& out) noexcept =
        nullptr;
    /// The chain's encoder when its shape and value type have one
    /// (runtime_chain_encoders.hpp), else null: evaluate, then encode_value.
    encode_fn encode = nullptr;

    explicit operator bool() const noexcept { return chain != nullptr; }
    /// Runs the chain on `object`; writes its value or the status of the
    /// first failing modifier into `out`.
    void evaluate(const void* object, value_writer& out) const noexcept { run(*chain, 0, object, out); }
};

/// How one entry gets its value (`timing`: none, the spec only selects the method).
enum class entry_source : std::uint8_t { compiled, runtime, failed, timing };

/// One spec applied to a site.
struct binding_entry {
    std::uint8_t slot = 0;
    std::uint32_t spec = 0;
    entry_source source = entry_source::failed;
    std::uint8_t param = 0;          ///< runtime: the parameter the chain starts from
    std::uint16_t compiled = 0;      ///< compiled: which of the site's chains
    std::uint32_t value_bytes = 256;  ///< the session's value budget
    bool cpu = false;                ///< data=cpu
    bool receiver_dependent = false;
    match_mode match = match_mode::subclasses;
    const signature* selector = nullptr;  ///< for the receiver check (its binding owns it)
    runtime_chain_ref chain;                    ///< runtime
    std::uint64_t specs_version = 0;            ///< the spec set it came from (slot_specs::version)

    /// Same spec of the same spec set applied the same way.
    bool same_as(const binding_entry& o) const noexcept {
        return slot == o.slot && spec == o.spec && source == o.source && param == o.param &&
               compiled == o.compiled && specs_version == o.specs_version;
    }
};

/// The entries of one site for one generation of specs. Immutable, except for
/// the receiver cache (append-only, atomics).
struct alignas(64) site_binding {
    static constexpr unsigned max_entries = 64;
    static constexpr unsigned receiver_cache_size = 8;
    struct receiver_mask {
        const std::type_info* type;
        std::uint64_t mask;
    };

    std::vector<binding_entry, cache_line_allocator<binding_entry>> entries;  ///< ordered by (slot, spec, chain)
    std::uint64_t slots = 0;             ///< sessions with at least one entry
    std::uint64_t fixed_mask = 0;        ///< entries that apply whatever the receiver
    bool receiver_dependent = false;
    /// Every entry applies whatever the receiver, none asks for data=cpu and
    /// all their values fit one unit whatever they are: a call from a thread
    /// that every session of `slots` records evaluates them one after the
    /// other, without the per-entry checks.
    bool straight = false;
    /// Straight, and the entries are the site's compile-time chains 0..n-1 in
    /// order, of one spec: evaluated inline, chain after chain.
    bool compiled_run = false;
    /// Straight: the most ring records a call's unit takes (header record and
    /// payload), which its entry opens in place (ring::open_frame).
    std::uint32_t frame_records = 0;
    std::string site_class;   ///< D, the class whose method body holds the site
    mutable std::atomic<const receiver_mask*> cache[receiver_cache_size] = {};  ///< owned by the registry
};

/// The registry's entry points for method sites; each starts as a stand-in
/// that binds nothing (without a registry no session can have specs).
struct method_binder {
    /// Host thread, slow path: the binding of `s` for the current
    /// generation. `types[i]` describes parameter i (0: the receiver, null
    /// for a free function); `receiver`: the receiver's type when it cannot
    /// vary per call (null: polymorphic). Never throws.
    std::atomic<const site_binding* (*)(method_site& s, const type_desc* const* types, std::size_t type_count,
                                        const std::type_info* receiver) noexcept>
        bind;
    /// Host thread: which entries of `b` apply to a receiver of dynamic type
    /// `receiver` whose static type is `declared`, when the binding's cache
    /// does not know it yet.
    std::atomic<std::uint64_t (*)(const site_binding& b, const std::type_info& receiver,
                                  const std::type_info& declared) noexcept>
        entries_for;
};

namespace no_registry {
inline const site_binding* bind(method_site&, const type_desc* const*, std::size_t, const std::type_info*) noexcept {
    return nullptr;  // the site stays unbound and asks again on its next recorded call
}
inline std::uint64_t entries_for(const site_binding& b, const std::type_info&, const std::type_info&) noexcept {
    return b.fixed_mask;
}
}  // namespace no_registry

LOUPE_API inline method_binder g_method_binder{{&no_registry::bind}, {&no_registry::entries_for}};

/// The binding of `s` for the current generation (see method_binder::bind).
inline const site_binding* bind_site(method_site& s, const type_desc* const* types, std::size_t type_count,
                                     const std::type_info* receiver) noexcept {
    return g_method_binder.bind.load(std::memory_order_acquire)(s, types, type_count, receiver);
}

/// Which entries of `b` apply to a call on a receiver of dynamic type
/// `receiver` (static type `declared`): from the binding's cache, else from
/// the registry, which caches the answer.
inline std::uint64_t entries_for(const site_binding& b, const std::type_info& receiver,
                                 const std::type_info& declared) noexcept {
    for (const auto& slot : b.cache) {
        const site_binding::receiver_mask* m = slot.load(std::memory_order_acquire);
        if (m == nullptr) break;
        if (m->type == &receiver || *m->type == receiver) return m->mask;
    }
    return g_method_binder.entries_for.load(std::memory_order_acquire)(b, receiver, declared);
}

}  // namespace loupe::detail
