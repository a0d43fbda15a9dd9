// fake: fine
#pragma once
#include "loupe/base/config.hpp"
