// The whole runtime: the class with its host-side members
// (runtime_class.hpp) and the collector's members (collector.hpp). What
// core/session.hpp and core/thread.hpp's runtime users include; instrumenting
// code reaches it only through core/recorder.hpp's hooks.
#pragma once

#include "loupe/core/detail/collector.hpp"
#include "loupe/core/detail/runtime_class.hpp"
