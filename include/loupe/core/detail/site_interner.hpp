// The sites of zones named at run time (LOUPE_ZONE_NAMED, core/zone.hpp):
// one site per (call site, name), made the first time that name is recorded
// there and never freed (records and sinks hold site pointers; the
// collector may still be writing one). Installed into the zone's hook
// (detail::g_site_interner) at static initialisation by every translation
// unit that includes it: <loupe/session.hpp> does, so a program that can
// start a session interns.
//
// Bounded: at most `max_interned_zone_names` names in the process; past
// that a zone keeps its call site's own site ("(more zone names than loupe
// keeps)"), so a server that puts request ids in zone names cannot grow it
// without end.
//
// Cost: a thread's repeat of its last name at a call site compares the
// name only; else a lock and a hash lookup (a plain mutex, not a
// reader-writer lock: glibc's cannot be released in a forked child, whose
// thread id differs); a name's first time also allocates twice.
// Thread-safety: any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/base/process_singleton.hpp"
#include "loupe/base/site.hpp"
#include "loupe/core/zone.hpp"

namespace loupe::detail {

/// The most distinct run-time zone names kept per process.
inline constexpr std::size_t max_interned_zone_names = 16384;

class site_interner {
public:
    /// The site named `name` at `where`; `where` when out of room or memory.
    const site* intern(const site& where, std::string_view name) noexcept {
        try {
            const lookup_key probe{&where, name};
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = sites_.find(probe);
            if (it != sites_.end()) return &it->second->where;
            if (sites_.size() >= max_interned_zone_names) return &where;
            auto entry = std::make_unique<interned>(where, name);
            const site* made = &entry->where;
            const lookup_key key{&where, entry->name};
            sites_.emplace(key, std::move(entry));
            return made;
        } catch (...) {  // out of memory: the call site's own name
            return &where;
        }
    }

    /// fork() (base/process_singleton.hpp): the lock is held across it.
    void before_fork() noexcept { mutex_.lock(); }
    void after_fork_in_parent() noexcept { mutex_.unlock(); }
    void after_fork_in_child() noexcept { mutex_.unlock(); }

    /// Distinct names interned so far.
    std::size_t size() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return sites_.size();
    }

private:
    struct interned {
        interned(const site& at, std::string_view n)
            : name(n), where{nullptr, at.file, at.function, at.line, at.kind} {
            where.name = name.c_str();
        }
        std::string name;  // what where.name points at (stable: the entry never moves)
        site where;
    };
    // (call site, name); the name views the entry's own copy once inserted.
    struct lookup_key {
        const site* at;
        std::string_view name;
        bool operator==(const lookup_key& o) const noexcept { return at == o.at && name == o.name; }
    };
    struct lookup_hash {
        std::size_t operator()(const lookup_key& k) const noexcept {
            return std::hash<std::string_view>()(k.name) ^ (reinterpret_cast<std::uintptr_t>(k.at) * 0x9E3779B97F4A7C15ull);
        }
    };

    mutable std::mutex mutex_;
    std::unordered_map<lookup_key, std::unique_ptr<interned>, lookup_hash> sites_;
};

/// The process's interner (one across shared libraries; never destroyed:
/// zones may be recorded during exit).
inline site_interner& zone_names() { return process_singleton<site_interner>::get(); }

inline const site* intern_zone_site(const site& where, std::string_view name) noexcept {
    // The calling thread's last answer: a name that repeats at a call site
    // (one endpoint served in a loop) takes no lock.
    // The name's length is kept with it, so a repeat costs one comparison.
    struct last_answer {
        const site* where;
        const site* interned;
        std::size_t length;
    };
    static thread_local last_answer last{nullptr, nullptr, 0};
    if (last.where == &where && last.interned != &where && last.length == name.size() &&
        (name.empty() || std::memcmp(last.interned->name, name.data(), name.size()) == 0)) {
        return last.interned;
    }
    try {
        const site* interned = zone_names().intern(where, name);
        last = {&where, interned, std::strlen(interned->name)};
        return last.interned;
    } catch (...) {  // no memory for the interner itself
        return &where;
    }
}

LOUPE_API inline const bool site_interner_installed = [] {
    g_site_interner.store(&intern_zone_site, std::memory_order_release);
    return true;
}();

// fork() (base/fork_hooks.hpp): the interner's lock is taken before and
// released after.
LOUPE_API inline const bool site_interner_fork_step_registered =
    register_fork_step(fork_rank::zone_names, process_singleton<site_interner>::fork_handling);

}  // namespace loupe::detail
