// fork(): the child neither deadlocks nor writes into the parent's traces; it
// can run sessions of its own. The parent's trace stays whole.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

#include <loupe/params.hpp>
#include <loupe/format/reader.hpp>

#include "support/recording.hpp"

using namespace loupe_test;

namespace {

std::string temp_path(const char* name) {
    return (std::string(LOUPE_TEST_BINARY_DIR) + "/" + name + "_" + std::to_string(::getpid()) + ".loupe");
}

// Runs `child` in a forked process with a 20 s alarm (a deadlock kills it)
// and returns its exit status (or 128 + signal).
template <class F>
int run_in_child(F&& child) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(20);
        ::_exit(child());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::size_t count_named(const loupe::trace& t, const std::string& name) {
    std::size_t n = 0;
    for (const auto& e : t.events) {
        const auto* site = t.find_site(e.site_id);
        if (site && site->name == name) ++n;
    }
    return n;
}

// A method call whose values wait in the thread's ring (a straight binding)
// when the thread forks: both processes return from it.
pid_t forking_call(const std::string& label) {
    LOUPE_FUNCTION_CHAINS("fork_test::forking_call(std::string const&)", (label), loupe::named("label", loupe::arg<1>));
    return ::fork();
}

}  // namespace

TEST(Fork, ACallWhoseValuesWaitInTheRingEndsInTheChildAndIsRecordedInTheParent) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = memory_config(mem, "parent");
    cfg.kinds = loupe::kinds::methods | loupe::kinds::zones;
    cfg.params = "method=fork_test::forking_call";
    auto session = loupe::start_session(cfg);
    {
        LOUPE_ZONE("fork_test.ring");  // the thread gets its ring: the call's values then wait in it
    }
    const std::string label = "before the fork";
    const pid_t pid = forking_call(label);
    if (pid == 0) {  // the child, back from the call: its exit found the ring left behind
        ::_exit(0);
    }
    ASSERT_GT(pid, 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    session.stop();
    const auto calls = named(mem->events(), "fork_test::forking_call(std::string const&)");
    ASSERT_EQ(calls.size(), 1u);
    ASSERT_EQ(calls[0].params.size(), 1u);
    EXPECT_EQ(calls[0].params[0].text, label);
}

TEST(Fork, ChildRecordsIntoItsOwnSessionsAndNeverIntoTheParents) {
    const std::string parent_path = temp_path("fork_parent");
    const std::string child_path = temp_path("fork_child");
    auto parent_file = std::make_shared<loupe::sinks::file_sink>(parent_path);
    loupe::session_config cfg;
    cfg.name = "parent";
    cfg.sinks = {parent_file};
    auto session = loupe::start_session(cfg);

    // Another thread records and the collector runs while we fork, so locks
    // are likely to be taken at the moment of the fork.
    std::atomic<bool> run{true};
    std::thread busy([&] {
        while (run.load(std::memory_order_relaxed)) {
            LOUPE_ZONE("parent-busy");
        }
    });
    for (int i = 0; i < 10; ++i) {
        LOUPE_ZONE("parent-before-fork");
    }

    for (int round = 0; round < 5; ++round) {
        const int status = run_in_child([&] {
            {
                LOUPE_ZONE("child-unsessioned");  // the parent's session is not the child's
            }
            auto mem = std::make_shared<loupe::sinks::memory_sink>();
            auto child_cfg = memory_config(mem, "child");
            child_cfg.sinks.push_back(std::make_shared<loupe::sinks::file_sink>(child_path));
            auto child_session = loupe::start_session(child_cfg);
            {
                LOUPE_ZONE("child-own");
            }
            auto stats = child_session.stop();
            if (stats.delivered != 1 || named(mem->events(), "child-own").size() != 1) return 3;
            if (named(mem->events(), "child-unsessioned").size() != 0) return 4;
            session.stop();  // the parent's session: released in the child, not written
            return 0;
        });
        EXPECT_EQ(status, 0) << "round " << round;
    }
    // A child that exits through exit() runs loupe's atexit hook: it must not
    // flush or close the parent's file either.
    EXPECT_EQ(run_in_child([] {
                  std::exit(0);
                  return 1;
              }),
              0);

    for (int i = 0; i < 10; ++i) {
        LOUPE_ZONE("parent-after-fork");
    }
    run = false;
    busy.join();
    session.stop();

    const loupe::trace parent = loupe::read_trace_file(parent_path);  // throws if the file was damaged
    EXPECT_EQ(parent.session.name, "parent");
    EXPECT_EQ(count_named(parent, "parent-before-fork"), 10u);
    EXPECT_EQ(count_named(parent, "parent-after-fork"), 10u);
    EXPECT_EQ(count_named(parent, "child-unsessioned"), 0u);
    EXPECT_EQ(count_named(parent, "child-own"), 0u);
    EXPECT_EQ(parent.session.pid, static_cast<std::uint32_t>(::getpid()));

    const loupe::trace child = loupe::read_trace_file(child_path);
    EXPECT_EQ(child.session.name, "child");
    EXPECT_EQ(count_named(child, "child-own"), 1u);
    EXPECT_NE(child.session.pid, static_cast<std::uint32_t>(::getpid()));
    std::remove(parent_path.c_str());
    std::remove(child_path.c_str());
}
