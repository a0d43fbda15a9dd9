// Compile cost of the one file that compiles loupe's shared out-of-line
// parts in a program built with LOUPE_SEPARATE_IMPLEMENTATION=1
// (bench/compile_cost.sh, the *_separate rows): paid once per program.
#define LOUPE_IMPLEMENTATION 1
#include <loupe/implementation.hpp>
