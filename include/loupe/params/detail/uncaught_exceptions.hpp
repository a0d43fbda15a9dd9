// The number of exceptions in flight on the calling thread, as
// std::uncaught_exceptions() gives it, for the method scopes that flag a call
// left by an exception. std::uncaught_exceptions() costs a call into the C++
// runtime and a global-dynamic TLS lookup (about 3 ns, twice per recorded
// call); where the Itanium C++ ABI is there (GCC, Clang on Linux), the
// thread's exception globals — `struct __cxa_eh_globals { void*
// caughtExceptions; unsigned int uncaughtExceptions; }`, fixed by the ABI —
// are located once per thread and read with one load.
#pragma once

#include <exception>

#include "loupe/core/recorder.hpp"

#if __has_include(<cxxabi.h>) && (defined(__GLIBCXX__) || defined(_LIBCPP_ABI_VERSION)) && !defined(LOUPE_NO_CXXABI_GLOBALS)
#    include <cxxabi.h>
#    define LOUPE_HAS_EH_GLOBALS 1
#else
#    define LOUPE_HAS_EH_GLOBALS 0
#endif

namespace loupe::detail {

#if LOUPE_HAS_EH_GLOBALS
/// The Itanium C++ ABI's per-thread exception globals (ABI section 2.2.2).
struct eh_globals_layout {
    void* caught_exceptions;
    unsigned int uncaught_exceptions;
};
#endif

/// std::uncaught_exceptions() of the calling thread.
inline int uncaught_exceptions(thread_state& ts) noexcept {
#if LOUPE_HAS_EH_GLOBALS
    if (LOUPE_UNLIKELY(ts.eh_globals == nullptr)) ts.eh_globals = abi::__cxa_get_globals();
    return static_cast<int>(static_cast<const eh_globals_layout*>(ts.eh_globals)->uncaught_exceptions);
#else
    (void)ts;
    return std::uncaught_exceptions();
#endif
}

}  // namespace loupe::detail
