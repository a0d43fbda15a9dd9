// A program built with LOUPE_SEPARATE_IMPLEMENTATION=1: its instrumenting
// file (instrumented_work.cpp) only declares loupe's shared out-of-line
// parts, implementation.cpp compiles them once, and everything works as in
// a header-only program: zones, flows, context scopes, a thread's first
// event (no ring yet), a full ring, misuse reports, method sites with
// runtime specs (a value printed by operator<<, a receiver check), a
// wrapped read, and fork().
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/params/reflect.hpp>
#include <loupe/session.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "instrumented_work.hpp"

namespace {

using loupe::record_kind;
using loupe::sinks::memory_event;

std::vector<memory_event> of_kind(const std::vector<memory_event>& events, record_kind kind) {
    std::vector<memory_event> out;
    for (const auto& e : events) {
        if (e.kind == kind) out.push_back(e);
    }
    return out;
}

// Runs `work` on a new thread (whose first event finds no ring yet) under a
// session into a memory sink configured by `cfg`.
template <class Work>
std::vector<memory_event> record_on_new_thread(loupe::session_config cfg, Work work) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    cfg.name = "separate";
    cfg.sinks = {sink};
    auto session = loupe::start_session(cfg);
    std::thread(work).join();
    const auto stats = session.stop();
    EXPECT_EQ(stats.dropped, 0u);
    return sink->events();
}

TEST(SeparateImplementation, AnInstrumentingFileRecordsZonesFlowsAndContext) {
    std::vector<separate_work_result> results;
    const auto events = record_on_new_thread({}, [&] {
        for (int i = 0; i < 100; ++i) results.push_back(separate_work(i));
    });
    ASSERT_EQ(results.size(), 100u);
    std::set<std::uint64_t> ids;
    for (std::size_t i = 0; i < results.size(); ++i) {
        EXPECT_EQ(results[i].user, "alice");
        EXPECT_EQ(results[i].request, "r-" + std::to_string(i));
        EXPECT_EQ(results[i].component, "checkout");
        EXPECT_NE(results[i].flow, 0u);
        ids.insert(results[i].flow);
    }
    EXPECT_EQ(ids.size(), 100u) << "flow ids repeat";
    EXPECT_TRUE(loupe::capture_context().get(loupe::context_field::user).empty()) << "the scopes did not end";

    const auto zones = of_kind(events, record_kind::zone);
    const auto flows = of_kind(events, record_kind::flow);
    ASSERT_EQ(zones.size(), 100u);
    ASSERT_EQ(flows.size(), 100u);
    for (std::size_t i = 0; i < flows.size(); ++i) {
        EXPECT_EQ(zones[i].name, "separate_work");
        EXPECT_EQ(flows[i].flow_id, results[i].flow) << "flow " << i;
    }
}

// A 256-byte ring (8 records) that may not grow, with the block policy: the
// thread meets a full ring again and again (the shared full-ring paths) and
// waits each time; nothing is lost.
TEST(SeparateImplementation, AFullRingWaitsAndLosesNothing) {
    loupe::session_config cfg;
    cfg.ring_bytes = 256;
    cfg.memory_budget = 0;
    cfg.overflow = loupe::overflow_policy::block;
    constexpr int calls = 5000;
    std::vector<std::uint64_t> made;
    const auto events = record_on_new_thread(cfg, [&] {
        for (int i = 0; i < calls; ++i) made.push_back(separate_work(i).flow);
    });
    const auto flows = of_kind(events, record_kind::flow);
    ASSERT_EQ(of_kind(events, record_kind::zone).size(), static_cast<std::size_t>(calls));
    ASSERT_EQ(flows.size(), static_cast<std::size_t>(calls));
    for (std::size_t i = 0; i < flows.size(); ++i) ASSERT_EQ(flows[i].flow_id, made[i]) << "flow " << i;
}

TEST(SeparateImplementation, ScopesEndedOutOfOrderAreReportedOnce) {
    std::vector<std::string> messages;
    loupe::set_error_handler([&](const std::string& m) { messages.push_back(m); });
    separate_out_of_order_scopes();
    separate_out_of_order_scopes();
    loupe::set_error_handler({});
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("out of order"), std::string::npos) << messages[0];
    EXPECT_TRUE(loupe::capture_context().get(loupe::context_field::request).empty()) << "a scope stayed";
}

TEST(SeparateImplementation, AMethodSiteRecordsItsParametersThroughTheSharedEntry) {
    const std::string method = "method=separate_cart::add(std::string const&,int,separate_money const&)";
    loupe::session_config cfg;
    cfg.params = method + "; param=1; chain=truncate(3)\n" +  // spec 0
                 method + "; param=3; chain=to_string\n" +    // spec 1: operator<<, run by the implementation file
                 method + "; param=2; match=exact\n" +        // spec 2: not on a separate_gift_cart
                 method + "; data=cpu\n";                      // the call's CPU time
    // The receiver check needs to know that a gift cart is a cart.
    loupe::reflect<separate_gift_cart>("separate_gift_cart").base<separate_cart>();
    const auto events = record_on_new_thread(cfg, [] {
        separate_cart cart;
        separate_gift_cart gift;
        separate_cart& as_cart = gift;
        cart.add("sku-42", 3, {1250});
        as_cart.add("sku-7", 1, {5});
    });
    std::vector<memory_event> calls;
    for (const auto& e : events) {
        if (e.has_method) calls.push_back(e);
    }
    ASSERT_EQ(calls.size(), 2u);
    auto text_of = [](const memory_event& call, std::uint32_t spec) {
        for (const auto& v : call.params) {
            if (v.spec == spec) return loupe::format_value(v);
        }
        return std::string("(none)");
    };
    EXPECT_EQ(calls[0].params.size(), 3u);
    EXPECT_EQ(text_of(calls[0], 0), "sku\xE2\x80\xA6");
    EXPECT_EQ(text_of(calls[0], 1), "12.50 EUR");
    EXPECT_EQ(text_of(calls[0], 2), "3");
    for (const auto& call : calls) {
        EXPECT_TRUE(call.has_cpu);
        EXPECT_GE(call.cpu_end_ns, call.cpu_begin_ns);
        EXPECT_GT(call.cpu_begin_ns, 0u);
    }
    EXPECT_EQ(calls[1].params.size(), 2u) << "match=exact applied to a separate_gift_cart";
    EXPECT_EQ(text_of(calls[1], 1), "0.05 EUR");
    EXPECT_EQ(text_of(calls[1], 2), "(none)");
}

TEST(SeparateImplementation, AWrappedReadIsRecordedWithItsFile) {
    char path[] = "/tmp/loupe_separate_XXXXXX";
    const int made = ::mkstemp(path);
    ASSERT_GE(made, 0);
    ASSERT_EQ(::write(made, "hello", 5), 5);
    ::close(made);
    loupe::session_config cfg;
    cfg.kinds = loupe::kinds::io;
    long got = 0;
    const auto events = record_on_new_thread(cfg, [&] {
        const int fd = loupe::io::open(path, O_RDONLY);
        char buffer[16];
        got = separate_read(fd, buffer, sizeof buffer);
        loupe::io::close(fd);
    });
    ::unlink(path);
    EXPECT_EQ(got, 5);
    std::uint64_t read_resource = 0;
    for (const auto& e : of_kind(events, record_kind::io)) {
        if (e.io.op == loupe::io::op::read) read_resource = e.io.resource_id;
    }
    ASSERT_NE(read_resource, 0u) << "no read recorded, or on an unknown descriptor";
    std::string name;
    for (const auto& e : of_kind(events, record_kind::io_resource)) {
        if (e.resource.id == read_resource) name = e.resource_name;
    }
    EXPECT_EQ(name, path);
}

// The implementation file registers the fork steps of the headers that
// instrumenting files include (they register none): a child forked while
// another thread is inside loupe finds no lock taken and records.
TEST(SeparateImplementation, ForkFindsTheStepsTheImplementationFileRegistered) {
    using loupe::detail::fork_rank;
    for (fork_rank r : {fork_rank::clock, fork_rank::io_registry, fork_rank::param_type_names,
                        fork_rank::metric_registry}) {
        EXPECT_NE(loupe::detail::g_fork_steps[static_cast<unsigned>(r)].load(), nullptr)
            << "rank " << static_cast<unsigned>(r) << " has no fork step";
    }
    loupe::session_config cfg;
    cfg.params = "method=separate_cart::add(std::string const&,int,separate_money const&); param=2";
    cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
    auto session = loupe::start_session(cfg);
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        separate_cart cart;
        char byte;
        while (!stop.load()) {
            cart.add("sku", 1, {100});
            separate_work(1);
            separate_read(-1, &byte, 1);  // EBADF: counted by the I/O registry
        }
    });
    struct stop_at_exit {
        std::atomic<bool>& stop;
        std::thread& busy;
        ~stop_at_exit() {
            stop = true;
            busy.join();
        }
    } stopper{stop, busy};
    for (int i = 0; i < 20; ++i) {
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            auto sink = std::make_shared<loupe::sinks::memory_sink>();
            loupe::session_config in_child;
            in_child.sinks = {sink};
            in_child.params = cfg.params;
            auto s = loupe::start_session(in_child);
            separate_cart cart;
            cart.add("child", 7, {1});
            separate_work(2);
            s.stop();
            std::size_t calls = 0;
            for (const auto& e : sink->events()) calls += e.has_method ? 1 : 0;
            ::_exit(calls == 1 ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status)) << "child " << i << " hung or crashed";
        EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << i << " did not record its call";
    }
}

}  // namespace
