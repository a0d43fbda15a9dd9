// A reader-only translation unit: what a program that only reads traces (the
// CLI, a report, a viewer) may include must not pull in the recorder. With
// LOUPE_READER_ONLY defined, loupe/core/detail/hot_state.hpp -- which every
// recorder header reaches -- stops the build with #error, so this file
// compiles only while no reader header includes a recorder header.
//
// After <loupe/reader.hpp>, every header under loupe/base/, loupe/text/,
// loupe/format/, loupe/report/ and loupe/viewer/ (detail/ folders included)
// is included through loupe_reader_only_headers.hpp, which
// tests/layout/CMakeLists.txt writes from the folders' contents at configure
// time: a header added to or split in those folders is checked without
// editing this file.
#define LOUPE_READER_ONLY 1

#include <loupe/reader.hpp>

#include "loupe_reader_only_headers.hpp"

int loupe_reader_only_check_anchor() { return 0; }
