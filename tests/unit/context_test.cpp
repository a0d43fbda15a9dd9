// Thread annotations: scopes set and restore fields, capture/adopt moves a
// context, misuse is reported once and never corrupts the context, and
// memory stays fixed however many values pass through.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <loupe/core/context.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include "support/captured_errors.hpp"

using loupe::context_field;
using loupe_test::captured_errors;

namespace {

std::string get(context_field f) { return std::string(loupe::capture_context().get(f)); }

long resident_kib() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return -1;
}

}  // namespace

TEST(Context, FieldScopeSetsTheFieldAndRestoresThePreviousValue) {
    EXPECT_TRUE(loupe::capture_context().empty());
    {
        loupe::field_scope user(context_field::user, "alice");
        EXPECT_EQ(get(context_field::user), "alice");
        {
            loupe::field_scope inner(context_field::user, "bob");
            loupe::field_scope app(context_field::app, "shop");
            EXPECT_EQ(get(context_field::user), "bob");
            EXPECT_EQ(get(context_field::app), "shop");
        }
        EXPECT_EQ(get(context_field::user), "alice");
        EXPECT_EQ(get(context_field::app), "");
    }
    EXPECT_TRUE(loupe::capture_context().empty());
}

TEST(Context, ContextScopeSetsSeveralFieldsAsOneChange) {
    const auto before = loupe::detail::t_context.generation;
    {
        loupe::context_scope request({{context_field::user, "alice"},
                                      {context_field::session, "s-42"},
                                      {context_field::request, "r-7"},
                                      {context_field::client, "100"}});
        EXPECT_EQ(loupe::detail::t_context.generation, before + 1);  // one change, not four
        const loupe::context c = loupe::capture_context();
        EXPECT_EQ(c.get(context_field::user), "alice");
        EXPECT_EQ(c.get(context_field::session), "s-42");
        EXPECT_EQ(c.get(context_field::request), "r-7");
        EXPECT_EQ(c.get(context_field::client), "100");
        EXPECT_EQ(c.get(context_field::app), "");
    }
    EXPECT_TRUE(loupe::capture_context().empty());
}

TEST(Context, AdoptedContextReplacesEveryFieldOnAnotherThreadAndIsRestored) {
    loupe::context submitted;
    {
        loupe::context_scope s({{context_field::user, "carol"}, {context_field::app, "crm"}});
        submitted = loupe::capture_context();
    }
    std::thread worker([&] {
        loupe::field_scope own(context_field::component, "pool");
        {
            loupe::context_scope adopt(submitted);
            EXPECT_EQ(get(context_field::user), "carol");
            EXPECT_EQ(get(context_field::app), "crm");
            EXPECT_EQ(get(context_field::component), "");  // the task's context, not the worker's
            EXPECT_TRUE(loupe::capture_context() == submitted);
        }
        EXPECT_EQ(get(context_field::component), "pool");
        EXPECT_EQ(get(context_field::user), "");
    });
    worker.join();
}

TEST(Context, ResetClearsEverythingAndLeftoverScopesBecomeHarmless) {
    captured_errors errors;
    {
        loupe::field_scope user(context_field::user, "mallory");
        loupe::reset_context();  // a pool's task boundary
        EXPECT_TRUE(loupe::capture_context().empty());
        loupe::field_scope next(context_field::user, "next-task");
        EXPECT_EQ(get(context_field::user), "next-task");
    }  // `next` pops normally; `user` belongs to before the reset: no-op
    EXPECT_TRUE(loupe::capture_context().empty());
    EXPECT_EQ(errors.count_containing("context"), 0u);
}

TEST(Context, LongValuesAreCutAtACharacterBoundaryAndFlagged) {
    const std::string long_value(100, 'x');
    {
        loupe::field_scope s(context_field::request, long_value);
        const auto c = loupe::capture_context();
        EXPECT_EQ(c.get(context_field::request).size(), loupe::max_context_value);
        EXPECT_TRUE(c.truncated(context_field::request));
    }
    // 62 ASCII bytes then a 3-byte character: cutting at 63 would split it.
    const std::string straddling = std::string(62, 'a') + "\xE2\x82\xAC" + "tail";
    loupe::field_scope s(context_field::user, straddling);
    const auto c = loupe::capture_context();
    EXPECT_EQ(c.get(context_field::user), std::string(62, 'a'));
    EXPECT_TRUE(c.truncated(context_field::user));
    EXPECT_FALSE(c.truncated(context_field::app));
}

TEST(Context, OutOfOrderDestructionIsReportedOnceAndEndsWithACleanContext) {
    captured_errors errors;
    for (int round = 0; round < 3; ++round) {
        std::optional<loupe::field_scope> outer, inner;
        outer.emplace(context_field::user, "outer");
        inner.emplace(context_field::user, "inner");
        outer.reset();  // not last-in, first-out
        EXPECT_EQ(get(context_field::user), "inner");
        inner.reset();
        EXPECT_TRUE(loupe::capture_context().empty()) << "round " << round;
    }
    EXPECT_EQ(errors.count_containing("out of order"), 1u);
}

TEST(Context, AScopeEndedOnAnotherThreadIsReportedAndIgnored) {
    captured_errors errors;
    std::optional<loupe::field_scope> scope;
    scope.emplace(context_field::user, "moved");
    std::thread([&] {
        loupe::field_scope theirs(context_field::user, "theirs");
        scope.reset();
        EXPECT_EQ(get(context_field::user), "theirs");  // this thread's context is untouched
    }).join();
    EXPECT_EQ(get(context_field::user), "moved");  // still set: nobody ended it here
    loupe::reset_context();
    EXPECT_EQ(errors.count_containing("another thread"), 1u);
}

TEST(Context, NestingBeyondTheLimitIsReportedAndTheExtraScopesAreIgnored) {
    captured_errors errors;
    {
        std::optional<loupe::field_scope> scopes[40];
        for (int i = 0; i < 40; ++i) scopes[i].emplace(context_field::request, "r" + std::to_string(i));
        EXPECT_EQ(get(context_field::request), "r31");  // 32 levels kept
        for (int i = 39; i >= 0; --i) scopes[i].reset();
    }
    EXPECT_TRUE(loupe::capture_context().empty());
    EXPECT_EQ(errors.count_containing("nested deeper than 32"), 1u);
}

namespace {
// Annotates requests first..last-1 with distinct ids, each with one zone.
void annotate_requests(long first, long last) {
    char id[24];
    for (long i = first; i < last; ++i) {
        const int n = std::snprintf(id, sizeof id, "req-%ld", i);
        loupe::field_scope request(context_field::request, std::string_view(id, static_cast<std::size_t>(n)));
        LOUPE_ZONE("handle");
    }
}
}  // namespace

// Memory is compared after a warm-up pass, so that what is allocated once
// (the ring, sanitizer shadow memory) does not count. The bounds leave room
// for allocator noise while staying far below what keeping even one byte
// per distinct id would cost (9 M and 4 M distinct ids below). Under TSan
// the process's RSS grows with the work itself (TSan's bookkeeping: 1.7 and
// 3.9 MiB seen in CI), so these two measure nothing there and are skipped;
// they run in every other build.
#if defined(__SANITIZE_THREAD__)
#    define LOUPE_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#    if __has_feature(thread_sanitizer)
#        define LOUPE_TEST_UNDER_TSAN 1
#    endif
#endif
#ifdef LOUPE_TEST_UNDER_TSAN
#    define LOUPE_SKIP_RSS_CHECK_UNDER_TSAN() GTEST_SKIP() << "RSS grows with TSan's own bookkeeping"
#else
#    define LOUPE_SKIP_RSS_CHECK_UNDER_TSAN() (void)0
#endif
TEST(Context, TenMillionDistinctRequestIdsDoNotGrowMemory) {
    LOUPE_SKIP_RSS_CHECK_UNDER_TSAN();
    annotate_requests(0, 1'000'000);
    const long before = resident_kib();
    annotate_requests(1'000'000, 10'000'000);
    const long after = resident_kib();
    EXPECT_LT(after - before, 4096) << "RSS grew from " << before << " KiB to " << after << " KiB";
}

TEST(Context, DistinctIdsRecordedIntoASessionDoNotGrowTheHostsMemory) {
    LOUPE_SKIP_RSS_CHECK_UNDER_TSAN();
    loupe::session_config cfg;
    cfg.name = "ids";
    cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
    cfg.filter = "request ~ \"req-*\"";
    cfg.memory_budget = 0;  // a ring grown for the busy loop is not what this measures
    auto session = loupe::start_session(cfg);
    annotate_requests(0, 200'000);
    const long before = resident_kib();
    annotate_requests(200'000, 4'200'000);
    const long after = resident_kib();
    const auto stats = session.stop();
    EXPECT_EQ(stats.delivered + stats.dropped, 4'200'000u);
    EXPECT_LT(after - before, 3072) << "RSS grew from " << before << " KiB to " << after << " KiB";
}
