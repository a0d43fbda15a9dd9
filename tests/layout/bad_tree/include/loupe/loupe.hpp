// fake umbrella: may include anything, detail/ too
#pragma once
#include "loupe/core/zone.hpp"
#include "loupe/io/detail/io_wire.hpp"
