// fake: a folder that is not in the table (VIOLATION)
#pragma once
#include "loupe/base/config.hpp"
