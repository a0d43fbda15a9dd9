// The program's one file that compiles loupe's shared out-of-line parts
// (LOUPE_SEPARATE_IMPLEMENTATION=1, as for every file of this test).
#define LOUPE_IMPLEMENTATION 1
#include <loupe/implementation.hpp>
