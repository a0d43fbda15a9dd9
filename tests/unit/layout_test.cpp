// The enabled build's half of the layout promise (compiled_out_test.cpp
// checks the same sizes with LOUPE_ENABLED=0).
#include <gtest/gtest.h>

#include <loupe/loupe.hpp>

static_assert(LOUPE_ENABLED == 1, "the main test target is built with loupe enabled");
static_assert(sizeof(loupe::zone_scope) == 4 * sizeof(void*),
              "zone_scope layout is switch-independent");
static_assert(sizeof(loupe::site) == 4 * sizeof(void*), "site layout is switch-independent");

TEST(Layout, VersionMacrosAgree) {
    EXPECT_EQ(LOUPE_VERSION, LOUPE_VERSION_MAJOR * 10000 + LOUPE_VERSION_MINOR * 100 + LOUPE_VERSION_PATCH);
}
