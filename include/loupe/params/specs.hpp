// Parameter specs at run time: the compiler of spec text (session_config::
// params, session::set_params) and the registry that binds specs to method
// sites on their first recorded call after a change. <loupe/session.hpp>
// includes it, so the translation units that start sessions compile it and
// files with method sites (<loupe/params.hpp>) do not.
//
// Thread-safety: the registry takes its own lock; bindings are immutable.
#pragma once

#include "loupe/params/detail/method_registry.hpp"
