// The one file of a program built with LOUPE_SEPARATE_IMPLEMENTATION=1 that
// compiles loupe's shared out-of-line parts (base/config.hpp: context
// frames, the full-ring paths, the flow-id refill, the calls into the
// runtime; method sites' shared entry and exits and value formatting; the
// I/O wrappers' recording paths) and registers the fork handlers of
// <loupe/loupe.hpp>, <loupe/io.hpp>, <loupe/params.hpp> and
// <loupe/metrics.hpp>, which it includes. Every other file that instruments
// then only declares them and compiles faster (docs/performance.md,
// "Compile cost").
//
//     // loupe_implementation.cpp: one file of the program
//     #define LOUPE_IMPLEMENTATION 1
//     #include <loupe/implementation.hpp>
//
// Every file of the program that includes loupe, this one included, is
// compiled with -DLOUPE_SEPARATE_IMPLEMENTATION=1 (CMake:
// add_compile_definitions, or target_compile_definitions on each target
// that uses loupe). A file compiled without it would define the same
// functions inline, which the language forbids and the linker does not
// report. In a header-only program (the default) this header adds nothing
// to <loupe/loupe.hpp>.
#pragma once

#include "loupe/base/config.hpp"

#if LOUPE_SEPARATE_IMPLEMENTATION && !LOUPE_IMPLEMENTATION
#    error "<loupe/implementation.hpp>: define LOUPE_IMPLEMENTATION to 1 before this file's first loupe include"
#endif

#include "loupe/io.hpp"
#include "loupe/loupe.hpp"
#include "loupe/metrics.hpp"
#include "loupe/params.hpp"
