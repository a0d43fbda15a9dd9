// Built with LOUPE_ENABLED=0 (the CMake target property LOUPE_COMPILE_OUT):
// every macro vanishes without evaluating its arguments, and the classes keep
// the layout they have in an enabled build.
#include <gtest/gtest.h>

#include <stdexcept>

#include <loupe/loupe.hpp>

#if LOUPE_ENABLED
#    error "this test must be compiled with LOUPE_ENABLED=0"
#endif

namespace {
[[maybe_unused]] int must_not_run() { throw std::logic_error("a compiled-out macro evaluated its argument"); }
}  // namespace

// Same layout as with LOUPE_ENABLED=1: a site pointer, a session mask, a start time.
static_assert(sizeof(loupe::zone_scope) == 3 * sizeof(void*), "zone_scope layout is switch-independent");
static_assert(sizeof(loupe::site) == 4 * sizeof(void*), "site layout is switch-independent");

TEST(CompiledOut, MacrosDoNotEvaluateArgumentsAndRecordNothing) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.sinks = {mem};
    auto s = loupe::start_session(cfg);
    EXPECT_NO_THROW({
        LOUPE_ZONE("gone");
        LOUPE_FUNCTION();
        LOUPE_INSTANT("gone");
        LOUPE_COUNTER("gone", must_not_run());
        LOUPE_THREAD_NAME(must_not_run() ? "a" : "b");
    });
    auto stats = s.stop();
    EXPECT_EQ(stats.delivered, 0u);
    for (const auto& e : mem->events()) {
        EXPECT_TRUE(e.kind == loupe::record_kind::session_begin || e.kind == loupe::record_kind::session_end);
    }
}

TEST(CompiledOut, TheMacroFreeApiStillWorksForCodeThatNamesItDirectly) {
    static constexpr loupe::site direct{"direct", "", "", 0, loupe::site_kind::zone};
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.sinks = {mem};
    auto s = loupe::start_session(cfg);
    {
        loupe::zone_scope z(direct);
    }
    EXPECT_EQ(s.stop().delivered, 1u);
}
