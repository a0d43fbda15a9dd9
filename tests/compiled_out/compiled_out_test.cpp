// Built with LOUPE_ENABLED=0 (the CMake target property LOUPE_COMPILE_OUT):
// every macro vanishes without evaluating its arguments, and the classes keep
// the layout they have in an enabled build.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/params.hpp>

#if LOUPE_ENABLED
#    error "this test must be compiled with LOUPE_ENABLED=0"
#endif

namespace {
[[maybe_unused]] int must_not_run() { throw std::logic_error("a compiled-out macro evaluated its argument"); }
}  // namespace

// Same layout as with LOUPE_ENABLED=1: a site pointer, a session mask, a start time.
static_assert(sizeof(loupe::zone_scope) == 4 * sizeof(void*),
              "zone_scope layout is switch-independent");
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
        LOUPE_FLOW("gone", static_cast<std::uint64_t>(must_not_run()));
        LOUPE_FLOW_END("gone", static_cast<std::uint64_t>(must_not_run()));
        LOUPE_THREAD_NAME(must_not_run() ? "a" : "b");
        LOUPE_ZONE_NAMED(std::to_string(must_not_run()));
        LOUPE_ZONE_AS(zone, "gone");
        LOUPE_ZONE_NAMED_AS(named, std::to_string(must_not_run()));
        LOUPE_ZONE_ARG(zone, "key", must_not_run());
        LOUPE_ZONE_ARG(named, "key", std::to_string(must_not_run()));
    });
    auto stats = s.stop();
    EXPECT_EQ(stats.delivered, 0u);
    for (const auto& e : mem->events()) {
        EXPECT_TRUE(e.kind == loupe::record_kind::session_begin || e.kind == loupe::record_kind::session_end);
    }
}

namespace {
struct compiled_out_cart {
    int items = 0;
    int add(int qty) {
        LOUPE_METHOD("compiled_out_cart::add(int)", qty);
        LOUPE_METHOD_CHAINS("compiled_out_cart::add(int)", (qty), loupe::named("qty", loupe::arg<1>));
        return items += qty;
    }
};
int free_function(int n) {
    LOUPE_FUNCTION_PARAMS("free_function(int)", n);
    LOUPE_FUNCTION_CHAINS("free_function(int)", (n), loupe::named("n", loupe::arg<1>));
    return n + 1;
}
}  // namespace

TEST(CompiledOut, MethodSitesVanishAndRecordNoCallEvenWithSpecs) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.sinks = {mem};
    cfg.params = "method=compiled_out_cart::add(int); param=1\nmethod=free_function(int); param=1";
    auto s = loupe::start_session(cfg);
    compiled_out_cart cart;
    EXPECT_EQ(cart.add(2), 2);
    EXPECT_EQ(free_function(4), 5);
    EXPECT_EQ(s.stop().delivered, 0u);
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

// The io wrappers are functions, not macros: compiled out they still do the
// I/O (same results, same errno) and record and register nothing.
TEST(CompiledOut, IoWrappersStillDoTheirIoAndRecordNothing) {
    static_assert(sizeof(loupe::io::op_scope) == 48, "op_scope layout is switch-independent");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.sinks = {mem};
    auto s = loupe::start_session(cfg);
    const std::string path = "/tmp/loupe_compiled_out_" + std::to_string(::getpid());
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(loupe::io::write(fd, "abc", 3), 3);
    char buf[4] = {};
    EXPECT_EQ(loupe::io::pread(fd, buf, 3, 0), 3);
    EXPECT_STREQ(buf, "abc");
    loupe::io::handle_info info;
    EXPECT_FALSE(loupe::io::registry().lookup(fd, info)) << "compiled out, nothing is registered";
    EXPECT_EQ(loupe::io::close(fd), 0);
    EXPECT_EQ(loupe::io::close(fd), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(loupe::io::unlink(path.c_str()), 0);
    s.stop();
    for (const auto& e : mem->events()) {
        EXPECT_TRUE(e.kind == loupe::record_kind::session_begin || e.kind == loupe::record_kind::session_end);
    }
}
