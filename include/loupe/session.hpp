// Running sessions: the umbrella for the code that starts, changes and stops
// profiling sessions (session_config, start_session, thread filters) and the
// everyday sinks (null, callback, memory, .loupe file), the compiler of
// parameter specs that binds them to method sites, and the reflection
// registry runtime chains reach through (loupe::reflect). Include it in the
// translation units that start sessions; files that only instrument include
// <loupe/loupe.hpp>, which does not compile the runtime. The viewer sinks
// have their own headers (sinks/perfetto_sink.hpp, sinks/chrome_json_sink.hpp).
#pragma once

#include "loupe/base/error_handler.hpp"
#include "loupe/core/filter.hpp"
#include "loupe/core/session.hpp"
#include "loupe/core/stop_on_signal.hpp"
#include "loupe/core/session_config.hpp"
#include "loupe/params/reflect.hpp"
#include "loupe/params/specs.hpp"
#include "loupe/sinks/callback_sink.hpp"
#include "loupe/sinks/file_sink.hpp"
#include "loupe/sinks/memory_sink.hpp"
#include "loupe/sinks/null_sink.hpp"
