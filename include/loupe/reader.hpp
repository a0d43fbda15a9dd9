// Reading `.loupe` traces: the umbrella for programs that read what sessions
// wrote (format/reader.hpp). Includes nothing of the recorder.
#pragma once

#include "loupe/format/reader.hpp"
