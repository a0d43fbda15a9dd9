// Compile-time switches and platform detection.
//
// Every knob follows one idiom: a value you define wins; otherwise loupe
// detects or defaults it. All are tested with `#if`, never `#ifdef`.
#pragma once

#include "loupe/base/version.hpp"

/// LOUPE_ENABLED: 1 (default) or 0. With 0 every LOUPE_* macro expands to
/// nothing that evaluates its arguments. Classes and functions stay declared
/// and keep their layout, so translation units built with different values
/// link together without ODR trouble. The CMake target pushes this to
/// consumers as an INTERFACE definition.
#ifndef LOUPE_ENABLED
#    define LOUPE_ENABLED 1
#endif
#if LOUPE_ENABLED != 0 && LOUPE_ENABLED != 1
#    error "LOUPE_ENABLED must be 0 or 1"
#endif

/// LOUPE_SEPARATE_IMPLEMENTATION: 0 (default) or 1. With 0 loupe is
/// header-only: the out-of-line parts that instrumenting code shares
/// (setting and ending context frames, the full-ring paths, the flow-id
/// refill, the calls into the runtime for session lookup and zone
/// metrics, the clock fallback; the entry of method sites without
/// compile-time chains and the exits of recorded calls, the formatting of
/// numbers and of values printed by operator<<; the I/O wrappers'
/// recording paths; the fork handlers of the headers instrumenting files
/// include) are inline functions, compiled in every file that uses them.
/// With 1, defined for every file of the program, each file only declares
/// them, and the one file that defines LOUPE_IMPLEMENTATION to 1 before any
/// loupe include compiles them (`#include <loupe/implementation.hpp>`): an
/// instrumenting file compiles faster (docs/performance.md, "Compile cost").
#ifndef LOUPE_SEPARATE_IMPLEMENTATION
#    define LOUPE_SEPARATE_IMPLEMENTATION 0
#endif
#ifndef LOUPE_IMPLEMENTATION
#    define LOUPE_IMPLEMENTATION 0
#endif
#if LOUPE_SEPARATE_IMPLEMENTATION != 0 && LOUPE_SEPARATE_IMPLEMENTATION != 1
#    error "LOUPE_SEPARATE_IMPLEMENTATION must be 0 or 1"
#endif
#if LOUPE_IMPLEMENTATION != 0 && LOUPE_IMPLEMENTATION != 1
#    error "LOUPE_IMPLEMENTATION must be 0 or 1 (1 in the one file that includes <loupe/implementation.hpp>)"
#endif
// Internal: the linkage of those shared parts (inline, or one external
// definition), and whether this file compiles their bodies.
#if LOUPE_SEPARATE_IMPLEMENTATION
#    define LOUPE_DETAIL_SHARED_PART
#    define LOUPE_DETAIL_DEFINES_SHARED_PARTS LOUPE_IMPLEMENTATION
#else
#    define LOUPE_DETAIL_SHARED_PART inline
#    define LOUPE_DETAIL_DEFINES_SHARED_PARTS 1
#endif
// Internal: a shared part that is an instance of a function template
// (`template <int = 0>`, compiled only where used). After the template
// (its definition, or a declaration where the definition is itself kept to
// the implementation file), LOUPE_DETAIL_SHARED_INSTANCE(its signature with
// <0>) makes it, with the separate implementation, an explicit
// instantiation: declared (`extern template`) in every file, defined by the
// implementation file.
// Header-only it says nothing: each file that calls it compiles it.
#if !LOUPE_SEPARATE_IMPLEMENTATION
#    define LOUPE_DETAIL_SHARED_INSTANCE(...) static_assert(true, "")
#elif LOUPE_IMPLEMENTATION
#    define LOUPE_DETAIL_SHARED_INSTANCE(...) template __VA_ARGS__
#else
#    define LOUPE_DETAIL_SHARED_INSTANCE(...) extern template __VA_ARGS__
#endif

#if defined(__x86_64__) || defined(__i386__)
#    define LOUPE_ARCH_X86 1
#else
#    define LOUPE_ARCH_X86 0
#endif

#if defined(__linux__)
#    define LOUPE_OS_LINUX 1
#else
#    define LOUPE_OS_LINUX 0
#endif

#if defined(__unix__) || defined(__APPLE__)
#    define LOUPE_OS_POSIX 1
#else
#    define LOUPE_OS_POSIX 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#    define LOUPE_LIKELY(x) __builtin_expect(!!(x), 1)
#    define LOUPE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#    define LOUPE_NOINLINE __attribute__((noinline))
#    define LOUPE_COLD __attribute__((noinline, cold))
#    define LOUPE_ALWAYS_INLINE inline __attribute__((always_inline))
/// Marks the functions and variables that hold process-wide state. Default
/// visibility keeps one instance per process even when loupe is compiled into
/// several shared libraries built with -fvisibility=hidden (the dynamic linker
/// unifies vague-linkage symbols that are exported).
#    define LOUPE_API __attribute__((visibility("default")))
#else
#    define LOUPE_LIKELY(x) (x)
#    define LOUPE_UNLIKELY(x) (x)
#    define LOUPE_NOINLINE
#    define LOUPE_COLD
#    define LOUPE_ALWAYS_INLINE inline
#    define LOUPE_API
#endif

// Internal: glue two tokens after expanding them. Macros use __COUNTER__ so
// that two zones on one line, or in one block, get distinct local names.
// The enclosing function's name as macros record it in a site.
#if defined(__GNUC__) || defined(__clang__)
#    define LOUPE_DETAIL_FUNCTION __PRETTY_FUNCTION__
#else
#    define LOUPE_DETAIL_FUNCTION __func__
#endif

#define LOUPE_DETAIL_CAT2(a, b) a##b
#define LOUPE_DETAIL_CAT(a, b) LOUPE_DETAIL_CAT2(a, b)
