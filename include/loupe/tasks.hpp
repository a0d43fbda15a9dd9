// Tasks: one request followed through several processes by W3C Trace
// Context. The umbrella for code that carries a task's context in and out
// of calls: ids and the context (task_context.hpp), the traceparent and
// tracestate codecs, the header carriers and the in-band token for
// protocols without headers. See docs/tasks.md.
#pragma once

#include "loupe/tasks/call_scopes.hpp"
#include "loupe/tasks/carrier.hpp"
#include "loupe/tasks/in_band_token.hpp"
#include "loupe/tasks/propagation_errors.hpp"
#include "loupe/tasks/task_scope.hpp"
#include "loupe/tasks/task_context.hpp"
#include "loupe/tasks/traceparent.hpp"
#include "loupe/tasks/tracestate.hpp"
#include "loupe/tasks/tracestate_problem.hpp"
