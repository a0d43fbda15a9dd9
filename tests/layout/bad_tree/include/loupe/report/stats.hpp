// fake: report -> the umbrella loupe.hpp (VIOLATION), a header that does not exist (VIOLATION)
#pragma once
#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include <loupe/loupe.hpp>
#include "loupe/text/jsn.hpp"
