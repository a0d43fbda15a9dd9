// fake: fine
#pragma once
#include <loupe/format/reader.hpp>
