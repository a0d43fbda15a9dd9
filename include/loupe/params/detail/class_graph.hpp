// The class hierarchy parameter specs match against (`match=exact|inherited|
// subclasses`, US 9,129,056 Tables 1 and 2): which class derives from which
// (loupe::reflect<T>(name).base<B>()) and which class declares which method
// (method sites register "class declares method" when they are first bound).
//
// Names are canonical, fully qualified C++ names as registered
// ("shop::Cart"). Lookups by an unqualified spec name are done by the
// matcher (signature_matcher.hpp), which walks canonical names from here.
//
// Thread-safety: every member is safe from any thread (one mutex; used on
// slow paths only: binding, reflection registration).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "loupe/base/config.hpp"
#include "loupe/base/fork_hooks.hpp"
#include "loupe/base/process_singleton.hpp"

namespace loupe::detail {

class class_graph {
public:
    /// Records that `derived` has the direct base `base` (idempotent).
    void add_base(std::string_view derived, std::string_view base) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto& bases = classes_[std::string(derived)].bases;
        if (std::find(bases.begin(), bases.end(), base) == bases.end()) bases.emplace_back(base);
        classes_.try_emplace(std::string(base));
        ++generation_;
    }

    /// Records that `cls` declares (implements) `method` (idempotent).
    void add_method(std::string_view cls, std::string_view method) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto& methods = classes_[std::string(cls)].methods;
        if (std::find(methods.begin(), methods.end(), method) == methods.end()) {
            methods.emplace_back(method);
            ++generation_;
        }
    }

    /// The direct bases of `cls`, in registration order (empty if unknown).
    std::vector<std::string> direct_bases(std::string_view cls) const {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = classes_.find(std::string(cls));
        return it == classes_.end() ? std::vector<std::string>{} : it->second.bases;
    }

    /// True when `cls` declares `method`.
    bool declares(std::string_view cls, std::string_view method) const {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = classes_.find(std::string(cls));
        if (it == classes_.end()) return false;
        const auto& m = it->second.methods;
        return std::find(m.begin(), m.end(), method) != m.end();
    }

    /// fork() (process_singleton.hpp): the mutex is held across it.
    void before_fork() noexcept { mutex_.lock(); }
    void after_fork_in_parent() noexcept { mutex_.unlock(); }
    void after_fork_in_child() noexcept { mutex_.unlock(); }

    /// Bumps on every change; bindings that depend on the graph compare it.
    std::uint64_t generation() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return generation_;
    }

private:
    struct node {
        std::vector<std::string> bases;
        std::vector<std::string> methods;
    };
    mutable std::mutex mutex_;
    std::unordered_map<std::string, node> classes_;
    std::uint64_t generation_ = 0;
};

/// The process-wide graph (one across shared libraries; never destroyed:
/// static destructors may still bind).
inline class_graph& classes() { return process_singleton<class_graph>::get(); }

// fork() (base/fork_hooks.hpp): the graph's mutex is taken before and
// released after.
LOUPE_API inline const bool class_graph_fork_step_registered =
    register_fork_step(fork_rank::param_classes, process_singleton<class_graph>::fork_handling);

}  // namespace loupe::detail
