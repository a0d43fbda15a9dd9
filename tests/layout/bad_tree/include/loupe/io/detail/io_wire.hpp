// fake: fine (io -> core)
#pragma once
#include "loupe/core/zone.hpp"
