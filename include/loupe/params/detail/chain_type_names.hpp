// The demangled names `type_of` reports, cached per std::type_info so that
// the hot path neither demangles nor allocates (params/chain.hpp).
//
// Cost: a lookup is a pointer hash plus up to `probes` relaxed-acquire loads
// (lock-free). The first lookup of a type takes a mutex, demangles and
// allocates its entry once; entries live until the process ends (the cache is
// never destroyed, so a chain evaluated during static destruction is safe).
// Types beyond the table's capacity stay correct but take the mutex.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/base/process_singleton.hpp"
#include "loupe/params/detail/modifier_support.hpp"

namespace loupe::detail {

struct type_name_entry {
    const std::type_info* type;
    std::string name;
};

class type_name_cache {
public:
    static constexpr std::size_t slots = 512;  // power of two
    static constexpr std::size_t probes = 8;

    std::string_view lookup(const std::type_info& t) {
        const std::size_t home = slot_of(t);
        for (std::size_t i = 0; i < probes; ++i) {
            const type_name_entry* e = table_[(home + i) & (slots - 1)].load(std::memory_order_acquire);
            if (e == nullptr) break;
            if (e->type == &t) return e->name;
        }
        return insert(t);
    }

    /// fork() (process_singleton.hpp): the mutex is held across it.
    void before_fork() noexcept { mutex_.lock(); }
    void after_fork_in_parent() noexcept { mutex_.unlock(); }
    void after_fork_in_child() noexcept { mutex_.unlock(); }

private:
    static std::size_t slot_of(const std::type_info& t) noexcept {
        const auto p = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&t));
        return static_cast<std::size_t>(((p >> 3) * 0x9E3779B97F4A7C15ull) >> 40) & (slots - 1);
    }

    LOUPE_COLD std::string_view insert(const std::type_info& t) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& e : entries_) {
            if (e->type == &t) return e->name;
        }
        // Room first, so that the push_back below cannot throw after the new
        // (grown geometrically: reserving one more each time copies them all).
        if (entries_.size() == entries_.capacity()) entries_.reserve(2 * entries_.size() + 16);
        const type_name_entry* e = new type_name_entry{&t, demangle(t)};
        entries_.push_back(e);
        // Publish it in the lock-free table when a probe slot is free (only
        // this mutex's holder writes slots, so a plain release store will do).
        const std::size_t home = slot_of(t);
        for (std::size_t i = 0; i < probes; ++i) {
            auto& slot = table_[(home + i) & (slots - 1)];
            if (slot.load(std::memory_order_relaxed) == nullptr) {
                slot.store(e, std::memory_order_release);
                break;
            }
        }
        return e->name;
    }

    std::atomic<const type_name_entry*> table_[slots] = {};
    std::mutex mutex_;
    std::vector<const type_name_entry*> entries_;  // never freed: the cache lives as long as the process
};

/// The process's cache (one across shared libraries; never destroyed).
inline type_name_cache& type_names() { return process_singleton<type_name_cache>::get(); }

// fork() (base/fork_hooks.hpp): the cache's mutex is taken before and
// released after.
LOUPE_DETAIL_SHARED_FORK_STEP(type_name_cache_fork_step_registered, fork_rank::param_type_names,
                              process_singleton<type_name_cache>::fork_handling);

/// The cached demangled name of `t`. Allocates on a type's first lookup only.
inline std::string_view cached_type_name(const std::type_info& t) { return type_names().lookup(t); }

}  // namespace loupe::detail
