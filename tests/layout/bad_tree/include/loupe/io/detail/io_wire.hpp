// fake: fine (io -> base)
#pragma once
#include "loupe/base/config.hpp"
