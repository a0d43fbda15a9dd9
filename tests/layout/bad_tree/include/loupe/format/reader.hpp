// fake: format -> core (VIOLATION); the commented-out include below is no include
#pragma once
#include <string>
// #include "loupe/io/detail/io_wire.hpp"
#include <loupe/base/config.hpp>
#include <loupe/core/zone.hpp>
