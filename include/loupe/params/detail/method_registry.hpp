// Which specs apply to which method site, bound once (US 9,129,056 ¶0151–0155).
//
// A site binds on its first recorded call after the set of specs changed
// (any session's start, stop or set_params bumps the generation): every
// running session's specs are matched against the site's signature, each
// match is type-checked against the site's parameter types (a runtime chain
// through the reflection registry, `@name` against the site's compile-time
// chains), and the result — an immutable list of entries — is published on
// the site. A spec that does not fit becomes an entry that yields
// EnableFailed, and an apply error for the session's sinks.
//
// Which entries apply to a call can depend on the receiver's dynamic class
// (`match=exact|inherited|subclasses`): decided once per (binding, class) and
// cached on the binding.
//
// Lifetime: bindings are immutable and never freed while the process runs (a
// call on another thread may still be reading the one it loaded). A new one
// is made only for a site whose applicable specs changed, so memory grows
// with the number of spec changes that touch a site, not with calls.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "loupe/params/detail/class_graph.hpp"
#include "loupe/params/detail/method_wire.hpp"
#include "loupe/core/params_backend.hpp"
#include "loupe/params/detail/param_specs.hpp"
#include "loupe/params/detail/runtime_chain_binder.hpp"
#include "loupe/params/detail/runtime_chain_encoders.hpp"
#include "loupe/params/detail/runtime_chain_parser.hpp"
#include "loupe/params/detail/site_binding.hpp"
#include "loupe/params/detail/signature_matcher.hpp"
#include "loupe/params/detail/signature_parser.hpp"
#include "loupe/params/detail/reflection_registry.hpp"
#include "loupe/params/detail/type_desc.hpp"
#include "loupe/base/error.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/base/process_singleton.hpp"
#include "loupe/params/method_site.hpp"
#include "loupe/text/close_matches.hpp"

namespace loupe::detail {

/// A binding as the registry makes and keeps it: it owns what its entries
/// point at (their bound chains and receiver selectors) and its receiver
/// cache's entries, so that a method site reads plain pointers
/// (site_binding.hpp).
struct owned_site_binding : site_binding {
    std::vector<std::shared_ptr<const bound_chain>> chains;
    std::vector<std::unique_ptr<const signature>> selectors;
    mutable std::vector<std::unique_ptr<receiver_mask>> cache_storage;  // under the registry mutex
};

/// The process-wide registry of method sites and of the specs each session
/// slot runs. Slow paths only (start/stop/set_params, first call after a change).
class method_registry {
public:
    /// Bumped on every change of any session's specs and every reflection
    /// registration; a site rebinds when its bound_generation differs.
    std::atomic<std::uint64_t>& generation = g_binding_generation;

    /// Any thread: slot `slot` now runs `specs` (null: none), reporting to `log`.
    void set_slot(int slot, std::shared_ptr<const slot_specs> specs, std::shared_ptr<session_param_log> log) {
        std::lock_guard<std::mutex> lock(mutex_);
        slots_[slot] = std::move(specs);
        logs_[slot] = std::move(log);
        generation.fetch_add(1, std::memory_order_release);
    }

    /// Host thread, slow path: the binding of `s` for the current generation.
    /// `types[i]` describes parameter i (0: the receiver, null for a free
    /// function). `receiver`: the receiver's type when it cannot vary per call
    /// (null: polymorphic, decided per call). Never throws: out of memory
    /// gives a binding without entries.
    const site_binding* bind(method_site& s, const type_desc* const* types, std::size_t type_count,
                             const std::type_info* receiver) noexcept {
        std::vector<std::pair<std::shared_ptr<session_param_log>, session_param_log::apply_error>> errors;
        std::vector<std::pair<std::shared_ptr<session_param_log>, std::uint32_t>> matched;
        std::string site_error;  // reported outside our mutex (the error handler's lock ranks first)
        const site_binding* result = nullptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            const std::uint64_t gen = generation.load(std::memory_order_acquire);
            if (s.bound_generation.load(std::memory_order_acquire) == gen) {
                return static_cast<const site_binding*>(s.binding.load(std::memory_order_acquire));
            }
            try {
                result = bind_locked(s, types, type_count, receiver, errors, matched, site_error);
            } catch (...) {
                result = &empty_;
            }
            s.binding.store(result, std::memory_order_release);
            s.bound_generation.store(gen, std::memory_order_release);
        }
        if (!site_error.empty()) report_error(site_error);
        for (auto& e : errors) {  // the logs' own mutex, outside ours
            try {
                e.first->add_error(e.second.method, e.second.spec, std::move(e.second.reason));
            } catch (...) {
            }
        }
        for (auto& m : matched) m.first->mark_matched(m.second);
        return result;
    }

    /// Any thread: the specs of `log` that matched no site, each with the
    /// bound sites whose signatures are spelled closest to its selector.
    std::vector<unmatched_spec> unmatched(session_param_log& log) {
        std::vector<unmatched_spec> out;
        {
            std::lock_guard<std::mutex> lock(log.mutex);
            for (const auto& e : log.specs) {
                if (!e.matched) out.push_back({e.text, e.method, {}});
            }
        }
        if (out.empty()) return out;
        std::vector<std::string> seen;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto& site : sites_) seen.emplace_back(site.first->zone.name);
        }
        for (unmatched_spec& u : out) u.close_matches = closest_spellings(u.method, seen, 3);
        return out;
    }

    /// Host thread, on a miss of the binding's receiver cache: which entries
    /// of `b` apply to a call on a receiver of dynamic type `receiver` whose
    /// static type (the site's class) is `declared`; adds the answer to the
    /// cache.
    std::uint64_t entries_for(const site_binding& b, const std::type_info& receiver,
                              const std::type_info& declared) noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        try {
            const std::uint64_t mask = receiver_mask_locked(b, receiver == declared ? nullptr : &receiver);
            // Every binding a site holds is one of ours (bind_locked).
            auto& owned = static_cast<const owned_site_binding&>(b);
            for (auto& slot : b.cache) {
                if (slot.load(std::memory_order_relaxed) != nullptr) continue;
                owned.cache_storage.push_back(std::make_unique<site_binding::receiver_mask>(
                    site_binding::receiver_mask{&receiver, mask}));
                slot.store(owned.cache_storage.back().get(), std::memory_order_release);
                break;
            }
            return mask;
        } catch (...) {
            return b.fixed_mask;
        }
    }

    /// fork() (process_singleton.hpp): the mutex is held across it. The
    /// child has none of the parent's sessions (core/detail/process_hooks.hpp):
    /// their specs and logs are dropped, and every site rebinds.
    void before_fork() noexcept { mutex_.lock(); }
    void after_fork_in_parent() noexcept { mutex_.unlock(); }
    void after_fork_in_child() noexcept {
        for (auto& specs : slots_) specs.reset();
        for (auto& log : logs_) log.reset();
        generation.fetch_add(1, std::memory_order_release);
        mutex_.unlock();
    }

private:
    struct site_info {
        signature sig;
        bool valid = false;
    };

    const site_binding* bind_locked(method_site& s, const type_desc* const* types, std::size_t type_count,
                                    const std::type_info* receiver, std::vector<std::pair<std::shared_ptr<session_param_log>,
                                                          session_param_log::apply_error>>& errors,
                                    std::vector<std::pair<std::shared_ptr<session_param_log>, std::uint32_t>>& matched,
                                    std::string& site_error) {
        site_info& info = register_locked(s, site_error);
        if (!info.valid) return &empty_;
        auto b = std::make_unique<owned_site_binding>();
        b->site_class = info.sig.qualified_class();
        for (int slot = 0; slot < static_cast<int>(std::size(slots_)); ++slot) {
            const slot_specs* specs = slots_[slot].get();
            if (specs == nullptr) continue;
            for (const active_spec& a : specs->specs) {
                const bool matches = s.has_receiver ? method_part_matches(a.spec.method, info.sig)
                                                    : free_function_matches(a.spec.method, info.sig);
                if (!matches) continue;
                if (logs_[slot]) matched.push_back({logs_[slot], a.id});
                auto fail = [&](std::string reason) {
                    binding_entry e = base_entry(*b, s, *specs, a);
                    e.source = entry_source::failed;
                    add(*b, std::move(e));
                    errors.push_back({logs_[slot], {&s.zone, a.id, std::move(reason)}});
                };
                if (!a.spec.compiled_chain.empty()) {
                    unsigned i = 0;
                    while (i < s.chain_count && a.spec.compiled_chain != s.chain_names[i]) ++i;
                    if (i == s.chain_count) {
                        fail("chain=@" + a.spec.compiled_chain + ": the site has no compile-time chain of that name" +
                             chain_list(s));
                        continue;
                    }
                    binding_entry e = base_entry(*b, s, *specs, a);
                    e.source = entry_source::compiled;
                    e.compiled = static_cast<std::uint16_t>(i);
                    add(*b, std::move(e));
                } else if (a.spec.param < 0) {  // timing, and the site's compile-time chains
                    for (unsigned i = 0; i < s.chain_count; ++i) {
                        binding_entry e = base_entry(*b, s, *specs, a);
                        e.source = entry_source::compiled;
                        e.compiled = static_cast<std::uint16_t>(i);
                        add(*b, std::move(e));
                    }
                    if (s.chain_count == 0) {  // no value, but the spec applies (data=cpu reads the clock)
                        binding_entry e = base_entry(*b, s, *specs, a);
                        e.source = entry_source::timing;
                        add(*b, std::move(e));
                    }
                } else {
                    const auto param = static_cast<std::size_t>(a.spec.param);
                    if (param == 0 && !s.has_receiver) {
                        fail("param=0: " + info.sig.text + " is a free function (it has no receiver)");
                        continue;
                    }
                    if (param >= type_count) {
                        fail("param=" + std::to_string(param) + ": " + info.sig.text + " has " +
                             std::to_string(type_count - 1) + " parameter(s) at its site");
                        continue;
                    }
                    bind_result r = a.chain ? bind_chain(*a.chain, types[param]) : bind_chain(parsed_chain{}, types[param]);
                    if (!r.chain) {
                        fail("param=" + std::to_string(param) + " chain=" + a.spec.chain + ": " + r.error);
                        continue;
                    }
                    binding_entry e = base_entry(*b, s, *specs, a);
                    e.source = entry_source::runtime;
                    e.param = static_cast<std::uint8_t>(param);
                    e.chain.run = r.chain->entry();
                    e.chain.chain = r.chain.get();
                    e.chain.encode = chain_encoders::choose(*r.chain);
                    b->chains.push_back(std::move(r.chain));
                    add(*b, std::move(e));
                }
            }
        }
        if (receiver != nullptr && b->receiver_dependent) {  // one receiver type: decide now
            b->fixed_mask = receiver_mask_locked(*b, nullptr);
            b->receiver_dependent = false;
        }
        mark_straight(*b, s);
        // Unchanged for this site (another session's specs changed): keep the old one.
        if (const auto* old = static_cast<const site_binding*>(s.binding.load(std::memory_order_relaxed))) {
            if (old->entries.size() == b->entries.size() &&
                std::equal(old->entries.begin(), old->entries.end(), b->entries.begin(),
                           [](const binding_entry& x, const binding_entry& y) { return x.same_as(y); })) {
                return old;
            }
        }
        if (b->entries.empty()) return &empty_;
        bindings_.push_back(std::move(b));
        return bindings_.back().get();
    }

    static std::string chain_list(const method_site& s) {
        if (s.chain_count == 0) return " (it has none)";
        std::string out = " (it has:";
        for (unsigned i = 0; i < s.chain_count; ++i) out += std::string(" @") + s.chain_names[i];
        return out + ")";
    }

    static binding_entry base_entry(owned_site_binding& b, const method_site& s, const slot_specs& specs,
                                    const active_spec& a) {
        binding_entry e;
        e.slot = static_cast<std::uint8_t>(specs.slot);
        e.spec = a.id;
        e.value_bytes = specs.value_bytes;
        e.cpu = a.spec.data_cpu;
        e.match = a.spec.match;
        e.specs_version = specs.version;
        e.receiver_dependent = s.has_receiver;
        if (e.receiver_dependent) {
            b.selectors.push_back(std::make_unique<const signature>(a.spec.method));
            e.selector = b.selectors.back().get();
        }
        return e;
    }

    static void mark_straight(site_binding& b, const method_site& s) {
        const std::size_t n = b.entries.size();
        if (n == 0 || b.receiver_dependent || b.fixed_mask != (~std::uint64_t{0} >> (64 - n))) return;
        std::size_t bytes = 0;
        bool compiled_in_order = n == s.chain_count;
        for (std::size_t i = 0; i < n; ++i) {
            const binding_entry& e = b.entries[i];
            if (e.cpu || e.source == entry_source::timing) return;
            // The most one value encodes to: its header, the original size,
            // then its text (at most the budget) or an 8-byte scalar.
            bytes += encoded_text_offset + std::max<std::size_t>(e.value_bytes, 8);
            compiled_in_order = compiled_in_order && e.source == entry_source::compiled && e.compiled == i &&
                                e.slot == b.entries[0].slot && e.spec == b.entries[0].spec &&
                                e.value_bytes == b.entries[0].value_bytes;
        }
        if (bytes > max_method_values) return;
        b.straight = true;
        b.compiled_run = compiled_in_order;
        b.frame_records = static_cast<std::uint32_t>(
            1 + (sizeof(method_payload_header) + bytes + sizeof(raw_record) - 1) / sizeof(raw_record));
    }

    static void add(site_binding& b, binding_entry e) {
        if (b.entries.size() >= site_binding::max_entries) return;
        const std::uint64_t bit = std::uint64_t{1} << b.entries.size();
        b.slots |= std::uint64_t{1} << e.slot;
        if (e.receiver_dependent) {
            b.receiver_dependent = true;
        } else {
            b.fixed_mask |= bit;
        }
        b.entries.push_back(std::move(e));
    }

    // `receiver`: the dynamic type when it differs from the site's class, null
    // when it is the site's class — then the class as the site's signature
    // writes it (D) stands for it, whatever the compiler calls it.
    std::uint64_t receiver_mask_locked(const site_binding& b, const std::type_info* receiver) {
        const std::string r = receiver != nullptr ? reflected_name(*receiver) : std::string();
        std::uint64_t mask = b.fixed_mask;
        for (std::size_t i = 0; i < b.entries.size(); ++i) {
            const binding_entry& e = b.entries[i];
            if (!e.receiver_dependent) continue;
            if (receiver_matches(*e.selector, e.match, r, b.site_class, classes()).matches) {
                mask |= std::uint64_t{1} << i;
            }
        }
        return mask;
    }

    // The site's parsed signature, made on its first bind; a signature that
    // does not parse leaves `site_error` saying so.
    site_info& register_locked(method_site& s, std::string& site_error) {
        auto it = sites_.find(&s);
        if (it != sites_.end()) return it->second;
        site_info& info = sites_[&s];
        try {
            info.sig = parse_signature(s.zone.name);
            info.valid = true;
            if (s.has_receiver) classes().add_method(info.sig.qualified_class(), info.sig.name);
        } catch (const std::exception& e) {
            site_error = std::string("loupe: method site ") + s.zone.file + ":" + std::to_string(s.zone.line) +
                         ": its signature \"" + s.zone.name + "\" does not parse (" + e.what() +
                         "); no parameter spec can match it";
        }
        return info;
    }

    std::mutex mutex_;
    std::shared_ptr<const slot_specs> slots_[64];
    std::shared_ptr<session_param_log> logs_[64];
    std::unordered_map<const method_site*, site_info> sites_;
    std::vector<std::unique_ptr<owned_site_binding>> bindings_;
    owned_site_binding empty_;
};

/// The process-wide registry (one across shared libraries; never destroyed:
/// calls may bind during exit).
inline method_registry& methods_registry() { return process_singleton<method_registry>::get(); }

// fork() (base/fork_hooks.hpp): the registry's mutex is taken before and
// released after; the child drops the parent's sessions' specs.
LOUPE_API inline const bool method_registry_fork_step_registered =
    register_fork_step(fork_rank::param_methods, process_singleton<method_registry>::fork_handling);

// The parameter backend the runtime core calls (core/params_backend.hpp), installed
// by every translation unit that includes this header.
inline std::shared_ptr<void> compile_specs_for_runtime(const std::string& session_name, std::string_view text,
                                                       std::size_t value_bytes, session_param_log& log) {
    return compile_param_specs(session_name, text, value_bytes, log);
}

inline void publish_specs_for_runtime(int slot, std::shared_ptr<void> specs, std::shared_ptr<session_param_log> log) {
    std::shared_ptr<slot_specs> typed = std::static_pointer_cast<slot_specs>(std::move(specs));
    if (typed) typed->slot = slot;
    methods_registry().set_slot(slot, std::move(typed), std::move(log));
}

inline const site_binding* bind_for_site(method_site& s, const type_desc* const* types, std::size_t type_count,
                                         const std::type_info* receiver) noexcept {
    return methods_registry().bind(s, types, type_count, receiver);
}

inline std::uint64_t entries_for_receiver(const site_binding& b, const std::type_info& receiver,
                                          const std::type_info& declared) noexcept {
    return methods_registry().entries_for(b, receiver, declared);
}

inline std::vector<unmatched_spec> unmatched_specs_for_runtime(session_param_log& log) {
    return methods_registry().unmatched(log);
}

inline constexpr params_backend method_params_backend{&compile_specs_for_runtime, &publish_specs_for_runtime,
                                                      &unmatched_specs_for_runtime};

// Installed at static initialization by every translation unit that includes
// this header (before main, so before any session with specs can start).
inline const bool method_params_backend_installed = [] {
    g_method_binder.bind.store(&bind_for_site, std::memory_order_release);
    g_method_binder.entries_for.store(&entries_for_receiver, std::memory_order_release);
    g_params_backend.store(&method_params_backend, std::memory_order_release);
    return true;
}();

}  // namespace loupe::detail
