// The generation of what parameter specs bind to: method sites rebind when it
// moves.
#pragma once

#include <atomic>
#include <cstdint>

#include "loupe/base/config.hpp"

namespace loupe::detail {

/// Bumped by every change that can alter what a parameter spec binds to: a
/// session's specs (method_registry.hpp) and every reflection registration.
/// Method sites compare it on each recorded call and rebind when it moved.
/// (Its own cache line: every recorded call reads it, nothing else shares it.)
alignas(64) LOUPE_API inline std::atomic<std::uint64_t> g_binding_generation{1};

}  // namespace loupe::detail
