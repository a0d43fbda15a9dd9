// Filtered sessions: a session records exactly the events of threads whose
// context matches its filter at the event, and its trace says which context
// every event ran in.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <loupe/format/reader.hpp>
#include <loupe/report/zone_stats.hpp>

#include "support/recording.hpp"
#include "support/trace_files.hpp"

using namespace loupe_test;
using loupe::context_field;

namespace {

loupe::session_config filtered(std::shared_ptr<loupe::sinks::memory_sink> sink, std::string filter,
                               std::string name = "filtered") {
    auto cfg = memory_config(std::move(sink), std::move(name));
    cfg.filter = std::move(filter);
    return cfg;
}

void zones_as(const char* user, int n) {
    loupe::field_scope scope(context_field::user, user);
    for (int i = 0; i < n; ++i) {
        LOUPE_ZONE("work");
    }
}

std::size_t zones(const std::vector<memory_event>& events) { return of_kind(events, record_kind::zone).size(); }

// The context each zone event ran in, from the context records before it on
// its thread (what a sink sees: contexts precede the events they apply to).
std::vector<std::string> users_of_zones(const std::vector<memory_event>& events) {
    std::map<std::uint64_t, std::string> current;
    std::vector<std::string> users;
    for (const auto& e : events) {
        if (e.kind == record_kind::context) current[e.thread_id] = std::string(e.context.get(context_field::user));
        if (e.kind == record_kind::zone) users.push_back(current[e.thread_id]);
    }
    return users;
}

}  // namespace

TEST(FilteredSession, OnlyTheMatchingUsersEventsAreRecordedAndAllOfThem) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(filtered(sink, R"(user == "alice")"));
    std::thread alice([] { zones_as("alice", 5000); });
    std::thread bob([] { zones_as("bob", 5000); });
    std::thread nobody([] {
        for (int i = 0; i < 100; ++i) {
            LOUPE_ZONE("unannotated");
        }
    });
    alice.join();
    bob.join();
    nobody.join();
    const auto stats = session.stop();
    const auto events = sink->events();
    EXPECT_EQ(stats.dropped, 0u);
    EXPECT_EQ(zones(events), 5000u);
    for (const auto& user : users_of_zones(events)) ASSERT_EQ(user, "alice");
}

TEST(FilteredSession, AnInvalidFilterFailsTheStartWithTheColumn) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    try {
        loupe::start_session(filtered(sink, R"(user = "alice")", "typo"));
        FAIL() << "expected loupe::error";
    } catch (const loupe::error& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.rfind("session 'typo': filter column 6: ", 0), 0u) << message;
        EXPECT_NE(message.find("expected"), std::string::npos) << message;
    }
    EXPECT_FALSE(sink->closed());
}

TEST(FilteredSession, AZoneThatBeganRecordedEndsRecordedWhenTheContextChanges) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(filtered(sink, R"(user == "alice")"));
    {
        loupe::field_scope alice(context_field::user, "alice");
        LOUPE_ZONE("outer");
        {
            loupe::field_scope bob(context_field::user, "bob");
            LOUPE_ZONE("inner-as-bob");  // not alice: not recorded
        }
        LOUPE_ZONE("inner-as-alice-again");
    }
    session.stop();
    const auto events = sink->events();
    EXPECT_EQ(named(events, "outer").size(), 1u);
    EXPECT_EQ(named(events, "inner-as-bob").size(), 0u);
    EXPECT_EQ(named(events, "inner-as-alice-again").size(), 1u);
}

TEST(FilteredSession, ContextSetBeforeTheSessionStartedIsWrittenBeforeTheThreadsFirstEvent) {
    std::atomic<bool> started{false}, annotated{false};
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    std::thread worker([&] {
        loupe::context_scope request({{context_field::user, "carol"}, {context_field::request, "r-1"}});
        annotated = true;
        while (!started) std::this_thread::yield();
        LOUPE_ZONE("after-start");
    });
    while (!annotated) std::this_thread::yield();
    auto session = loupe::start_session(filtered(sink, R"(user == "carol")"));
    started = true;
    worker.join();
    session.stop();
    const auto events = sink->events();
    ASSERT_EQ(zones(events), 1u);
    const auto contexts = of_kind(events, record_kind::context);
    ASSERT_EQ(contexts.size(), 1u);
    EXPECT_EQ(contexts[0].context.get(context_field::request), "r-1");
    EXPECT_LE(contexts[0].begin_ns, named(events, "after-start")[0].begin_ns);
}

TEST(FilteredSession, EachContextChangeIsWrittenOnceNotPerEvent) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(filtered(sink, R"(user ~ "*")"));
    for (int request = 0; request < 10; ++request) {
        loupe::context_scope s({{context_field::user, "dave"}, {context_field::request, std::to_string(request)}});
        for (int i = 0; i < 50; ++i) {
            LOUPE_ZONE("step");
        }
    }
    session.stop();
    const auto events = sink->events();
    EXPECT_EQ(zones(events), 500u);
    EXPECT_EQ(of_kind(events, record_kind::context).size(), 10u);
}

TEST(FilteredSession, AnEventMatchingTwoSessionsReachesBothAndEachSeesOnlyItsUsers) {
    auto both = std::make_shared<loupe::sinks::memory_sink>();
    auto only_bob = std::make_shared<loupe::sinks::memory_sink>();
    auto a = loupe::start_session(filtered(both, R"(user in ["alice", "bob"])", "a"));
    auto b = loupe::start_session(filtered(only_bob, R"(user == "bob")", "b"));
    std::thread t1([] { zones_as("alice", 300); });
    std::thread t2([] { zones_as("bob", 200); });
    t1.join();
    t2.join();
    a.stop();
    b.stop();
    EXPECT_EQ(zones(both->events()), 500u);
    EXPECT_EQ(zones(only_bob->events()), 200u);
}

TEST(FilteredSession, AnotherSessionsStartOrStopOrAFilterChangeDoesNotRewriteAnUnchangedContext) {
    // On this thread, with slots reused: "b" stops and "c" takes its slot.
    auto to_a = std::make_shared<loupe::sinks::memory_sink>();
    auto to_b = std::make_shared<loupe::sinks::memory_sink>();
    auto to_c = std::make_shared<loupe::sinks::memory_sink>();
    auto a = loupe::start_session(filtered(to_a, R"(user == "alice")", "a"));
    {
        loupe::field_scope alice(context_field::user, "alice");
        LOUPE_ZONE("first");
        auto b = loupe::start_session(memory_config(to_b, "b"));
        { LOUPE_ZONE("with-b"); }
        b.stop();
        auto c = loupe::start_session(memory_config(to_c, "c"));
        { LOUPE_ZONE("with-c"); }
        a.set_filter(R"(user ~ "a*")");
        { LOUPE_ZONE("new-filter"); }
        {
            loupe::field_scope request(context_field::request, "r-1");
            LOUPE_ZONE("in-request");
        }
        { LOUPE_ZONE("after-request"); }
        c.stop();
    }
    a.stop();
    const auto requests = [](const std::vector<memory_event>& events) {
        std::vector<std::string> out;
        for (const auto& e : of_kind(events, record_kind::context)) {
            EXPECT_EQ(e.context.get(context_field::user), "alice");
            out.emplace_back(e.context.get(context_field::request));
        }
        return out;
    };
    using values = std::vector<std::string>;
    // Three contexts: alice, alice with r-1, alice again; each written once.
    EXPECT_EQ(requests(to_a->events()), (values{"", "r-1", ""}));
    EXPECT_EQ(zones(to_a->events()), 6u);
    EXPECT_EQ(requests(to_b->events()), (values{""}));
    EXPECT_EQ(requests(to_c->events()), (values{"", "r-1", ""}));
    for (const auto& sink : {to_a, to_b, to_c}) {
        const auto events = sink->events();
        for (const auto& user : users_of_zones(events)) EXPECT_EQ(user, "alice");
    }
}

TEST(FilteredSession, AThreadsUnchangedContextReachesEachSessionOnceWhileOthersStartAndStop) {
    auto steady = std::make_shared<loupe::sinks::memory_sink>();
    auto a = loupe::start_session(memory_config(steady, "steady"));
    std::atomic<bool> run{true};
    std::thread worker([&] {
        loupe::context_scope who({{context_field::user, "erin"}, {context_field::request, "r-7"}});
        while (run.load(std::memory_order_relaxed)) {
            { LOUPE_ZONE("steady-work"); }
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    });
    std::vector<std::shared_ptr<loupe::sinks::memory_sink>> brief;
    for (int i = 0; i < 30; ++i) {
        brief.push_back(std::make_shared<loupe::sinks::memory_sink>());
        auto s = loupe::start_session(memory_config(brief.back(), "brief" + std::to_string(i)));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s.stop();
    }
    run = false;
    worker.join();
    a.stop();
    // Per session: the worker's context once, before its first zone.
    const auto check = [](const std::vector<memory_event>& events, const std::string& who) {
        std::size_t contexts = 0, zones_seen = 0;
        for (const auto& e : events) {
            if (e.kind == record_kind::context) {
                ++contexts;
                EXPECT_EQ(e.context.get(context_field::request), "r-7") << who;
            }
            if (e.kind == record_kind::zone && zones_seen++ == 0) {
                EXPECT_EQ(contexts, 1u) << who << ": a zone before the context";
            }
        }
        EXPECT_LE(contexts, 1u) << who;
        return zones_seen;
    };
    EXPECT_GT(check(steady->events(), "steady"), 0u);
    for (std::size_t i = 0; i < brief.size(); ++i) check(brief[i]->events(), "brief" + std::to_string(i));
}

TEST(FilteredSession, ACounterValueIsEvaluatedOnlyOnThreadsASessionRecords) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(filtered(sink, R"(user == "alice")"));
    auto count_as = [](const char* user, int& evaluated) {
        loupe::field_scope scope(context_field::user, user);
        for (int i = 0; i < 100; ++i) {
            LOUPE_COUNTER("depth", ++evaluated);
        }
    };
    int alice_evaluated = 0, bob_evaluated = 0;
    std::thread alice([&] { count_as("alice", alice_evaluated); });
    std::thread bob([&] { count_as("bob", bob_evaluated); });
    alice.join();
    bob.join();
    session.stop();
    EXPECT_EQ(bob_evaluated, 0);
    EXPECT_EQ(alice_evaluated, 100);
    EXPECT_EQ(of_kind(sink->events(), record_kind::counter).size(), 100u);
}

TEST(FilteredSession, SixtyFourSessionsWithDifferentFilters) {
    std::vector<std::shared_ptr<loupe::sinks::memory_sink>> sinks;
    std::vector<loupe::session> sessions;
    for (int i = 0; i < 64; ++i) {
        sinks.push_back(std::make_shared<loupe::sinks::memory_sink>());
        sessions.push_back(loupe::start_session(
            filtered(sinks.back(), "user == \"u" + std::to_string(i) + "\"", "s" + std::to_string(i))));
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t] {
            for (int i = t; i < 64; i += 4) zones_as(("u" + std::to_string(i)).c_str(), i + 1);
        });
    }
    for (auto& t : threads) t.join();
    for (auto& s : sessions) s.stop();
    for (int i = 0; i < 64; ++i) {
        EXPECT_EQ(zones(sinks[i]->events()), static_cast<std::size_t>(i + 1)) << "session " << i;
    }
}

TEST(FilteredSession, ThreadNameAndProcessCanBeFiltered) {
    auto by_thread = std::make_shared<loupe::sinks::memory_sink>();
    auto by_process = std::make_shared<loupe::sinks::memory_sink>();
    auto a = loupe::start_session(filtered(by_thread, R"(thread ~ "io-*")", "threads"));
    auto b = loupe::start_session(filtered(by_process, R"(process == "no-such-process")", "process"));
    std::thread io([] {
        LOUPE_THREAD_NAME("io-1");
        LOUPE_ZONE("io-work");
    });
    std::thread cpu([] {
        LOUPE_THREAD_NAME("cpu-1");
        LOUPE_ZONE("cpu-work");
    });
    io.join();
    cpu.join();
    a.stop();
    b.stop();
    EXPECT_EQ(named(by_thread->events(), "io-work").size(), 1u);
    EXPECT_EQ(named(by_thread->events(), "cpu-work").size(), 0u);
    EXPECT_EQ(zones(by_process->events()), 0u);
}

TEST(FilteredSession, CapturedContextFollowsTasksThroughAThreadPool) {
    // A one-thread pool: tasks run with the context of whoever submitted them.
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::function<void()>> tasks;
    bool done = false;
    std::thread pool([&] {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(mutex);
                cv.wait(lock, [&] { return done || !tasks.empty(); });
                if (tasks.empty()) return;
                task = std::move(tasks.front());
                tasks.pop_front();
            }
            task();
            loupe::reset_context();  // nothing leaks into the next task
        }
    });
    auto submit = [&](std::function<void()> work) {
        std::lock_guard<std::mutex> lock(mutex);
        tasks.push_back([ctx = loupe::capture_context(), work = std::move(work)] {
            loupe::context_scope adopt(ctx);
            work();
        });
        cv.notify_one();
    };

    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(filtered(sink, R"(user == "alice")"));
    for (int i = 0; i < 20; ++i) {
        loupe::field_scope user(context_field::user, i % 2 ? "alice" : "bob");
        submit([] { LOUPE_ZONE("task"); });
    }
    {
        std::lock_guard<std::mutex> lock(mutex);
        done = true;
        cv.notify_one();
    }
    pool.join();
    session.stop();
    const auto events = sink->events();
    EXPECT_EQ(zones(events), 10u);
    for (const auto& user : users_of_zones(events)) EXPECT_EQ(user, "alice");
}

TEST(FilteredSession, FilterChangesWhileThreadsRecordLoseNothingAndTearNothing) {
    static constexpr loupe::site outer{"outer", __FILE__, "", __LINE__, loupe::site_kind::zone};
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto cfg = filtered(sink, R"(user == "u0")");
    cfg.overflow = loupe::overflow_policy::block;  // so that every recorded zone must arrive
    auto session = loupe::start_session(cfg);
    std::atomic<bool> run{true};
    std::atomic<std::uint64_t> recorded{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
        threads.emplace_back([&, t] {
            std::uint64_t mine = 0;
            for (int i = 0; run.load(std::memory_order_relaxed); ++i) {
                loupe::field_scope user(context_field::user, (i + t) % 2 ? "u0" : "u1");
                loupe::zone_scope zone(outer);
                mine += zone.recording() ? 1 : 0;
            }
            recorded += mine;
        });
    }
    for (int change = 0; change < 200; ++change) {
        session.set_filter(change % 2 ? R"(user == "u1")" : R"(user in ["u0", "u1"])");
        std::this_thread::yield();
    }
    EXPECT_THROW(session.set_filter("user =="), loupe::error);  // the old filter stays
    run = false;
    for (auto& t : threads) t.join();
    const auto stats = session.stop();
    const auto events = sink->events();
    // Every zone a thread saw recorded arrived, whole.
    EXPECT_EQ(stats.dropped, 0u);
    EXPECT_EQ(recorded.load(), stats.delivered);
    EXPECT_EQ(zones(events), stats.delivered);
    for (const auto& e : of_kind(events, record_kind::zone)) {
        ASSERT_EQ(e.where, &outer);
        ASSERT_LE(e.begin_ns, e.end_ns);
    }
    EXPECT_THROW(session.set_filter(R"(user == "u0")"), loupe::error);  // stopped
}

namespace {
void checkout() { LOUPE_ZONE("checkout"); }
}  // namespace

TEST(FilteredSession, TraceFileAttributesEveryEventToItsContext) {
    const std::string path = temp_trace_path("filtered_trace");
    {
        loupe::session_config cfg;
        cfg.name = "by-user";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        cfg.filter = R"(app == "shop")";
        auto session = loupe::start_session(cfg);
        std::thread a([] {
            loupe::context_scope s({{context_field::app, "shop"}, {context_field::user, "alice"}});
            for (int i = 0; i < 3; ++i) checkout();
        });
        std::thread b([] {
            loupe::context_scope s({{context_field::app, "shop"}, {context_field::user, "bob"}});
            checkout();
            loupe::field_scope again(context_field::user, "bob-2");
            checkout();
        });
        a.join();
        b.join();
        session.stop();
    }
    const loupe::trace t = loupe::read_trace_file(path);
    ASSERT_EQ(t.events.size(), 5u);
    std::map<std::string, int> per_user;
    for (const auto& e : t.events) {
        const loupe::trace_context* c = t.context_of(e);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->get(context_field::app), "shop");
        ++per_user[c->get(context_field::user)];
    }
    EXPECT_EQ(per_user["alice"], 3);
    EXPECT_EQ(per_user["bob"], 1);
    EXPECT_EQ(per_user["bob-2"], 1);

    const auto report = loupe::report::zone_stats(t, loupe::report::group_by::user);
    ASSERT_EQ(report.zones.size(), 1u);
    ASSERT_EQ(report.zones[0].groups.size(), 3u);
    EXPECT_EQ(report.zones[0].groups[0].label, "alice");
    EXPECT_EQ(report.zones[0].groups[0].stats.count, 3u);
    std::remove(path.c_str());
}
