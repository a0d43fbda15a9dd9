// The reflection registry: the named fields, methods, bases and functions
// that `loupe::reflect` (params/reflect.hpp) adds to class types, read by the
// runtime-chain binder when it resolves a spec's modifiers, and the names
// `type_of` reports.
//
// Only files that register classes or bind specs include it; a file with
// method sites needs the descriptors of its parameter types
// (type_desc.hpp), not this.
//
// Thread-safety: one mutex guards the registry; it is touched on slow paths
// only (registration, binding, and `type_of` meeting a dynamic type it has
// not seen before).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/base/process_singleton.hpp"
#include "loupe/params/detail/modifier_support.hpp"
#include "loupe/params/detail/type_desc.hpp"

namespace loupe::detail {

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
    /// A data member's address in `object` (null for methods, whose result
    /// is a temporary): a chain goes on with it without a continuation.
    const void* (*address)(const member_entry& self, const void* object) noexcept = nullptr;
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

    /// fork() (process_singleton.hpp): the mutex is held across it.
    void before_fork() noexcept { mutex.lock(); }
    void after_fork_in_parent() noexcept { mutex.unlock(); }
    void after_fork_in_child() noexcept { mutex.unlock(); }

private:
    std::unordered_map<std::type_index, const std::string*> names_;
    std::deque<std::string> name_storage_;  // never shrinks: names handed out stay valid
};

/// The process-wide registry (one across shared libraries; never destroyed).
inline reflection_registry& reflection() { return process_singleton<reflection_registry>::get(); }

// fork() (base/fork_hooks.hpp): the registry's mutex is taken before and
// released after.
LOUPE_API inline const bool reflection_registry_fork_step_registered =
    register_fork_step(fork_rank::param_reflection, process_singleton<reflection_registry>::fork_handling);

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

/// The registry's generation: changes whenever anything is registered.
inline std::uint64_t reflection_generation() noexcept {
    return reflection().generation.load(std::memory_order_acquire);
}

}  // namespace loupe::detail
