// A consumer target with LOUPE_COMPILE_OUT ON: the macros vanish.
#include <loupe/loupe.hpp>

#if LOUPE_ENABLED != 0
#error "LOUPE_COMPILE_OUT ON must give LOUPE_ENABLED=0"
#endif

int main() {
    LOUPE_ZONE("never");
    return 0;
}
