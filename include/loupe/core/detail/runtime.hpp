// The whole runtime: the class and its instance (runtime_class.hpp), the
// fork and exit hooks (process_hooks.hpp), the host threads' slow paths
// (host_slow_paths.hpp), how rings grow (ring_growth.hpp) and the
// collector's members (collector.hpp). What core/session.hpp and
// core/thread.hpp's runtime users include; instrumenting code reaches it only
// through core/recorder.hpp's hooks.
#pragma once

#include "loupe/core/detail/collector.hpp"
#include "loupe/core/detail/host_slow_paths.hpp"
#include "loupe/core/detail/process_hooks.hpp"
#include "loupe/core/detail/ring_growth.hpp"
#include "loupe/core/detail/runtime_class.hpp"
#include "loupe/core/detail/zone_arg_record.hpp"
