// fake: a relative include (VIOLATION: it would slip past the rules)
#pragma once
#include "../format/reader.hpp"
