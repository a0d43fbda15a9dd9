// Tasks across processes, in one process: the thread's task (set, nested,
// captured across threads, filtered on, written to the trace), the call
// scopes' four points with their ids, the rules that choose which calls are
// tagged, and what the .loupe file says of the process.
#include <gtest/gtest.h>

#include <loupe/format/reader.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/tasks.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "support/trace_files.hpp"

namespace {

using loupe::task_point_kind;
namespace tasks = loupe::tasks;

std::string hex_of(const tasks::trace_id& t) {
    char text[tasks::traceparent_size];
    tasks::format_traceparent(t, 1, 0, text);
    return std::string(text + 3, 32);
}

loupe::trace record(const std::string& tag, loupe::session_config cfg, const std::function<void()>& work) {
    const std::string path = loupe_test::temp_trace_path(tag);
    cfg.name = tag;
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    {
        auto session = loupe::start_session(cfg);
        work();
        session.stop();
    }
    loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    return t;
}

std::vector<loupe::trace_task_point> points_of(const loupe::trace& t, task_point_kind kind) {
    std::vector<loupe::trace_task_point> out;
    for (const auto& p : t.task_points) {
        if (p.kind == kind) out.push_back(p);
    }
    return out;
}

TEST(TaskContext, ScopeSetsRestoresAndNests) {
    EXPECT_FALSE(tasks::current_trace_id().valid());
    const tasks::task_context a = tasks::new_task(tasks::trace_flags::sampled);
    {
        tasks::task_scope outer(a);
        EXPECT_EQ(tasks::current_trace_id(), a.trace);
        EXPECT_EQ(tasks::current_span_id(), a.span);
        const tasks::task_context b = tasks::child_task(a);
        {
            tasks::task_scope inner(b);
            EXPECT_EQ(tasks::current_span_id(), b.span);
            loupe::field_scope user(loupe::context_field::user, "alice");
            EXPECT_EQ(tasks::current_task(), b);
        }
        EXPECT_EQ(tasks::current_span_id(), a.span);
        {
            tasks::task_scope none(tasks::task_context{});  // an invalid task: none inside
            EXPECT_FALSE(tasks::current_trace_id().valid());
        }
        EXPECT_EQ(tasks::current_task(), a);
    }
    EXPECT_FALSE(tasks::current_trace_id().valid());
}

TEST(TaskContext, TracestateIsKeptAndReturned) {
    tasks::task_context a = tasks::new_task();
    ASSERT_TRUE(a.state.assign("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"));
    tasks::task_scope scope(a);
    EXPECT_EQ(tasks::current_task().state.view(), "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
}

TEST(TaskContext, CaptureContextCarriesTheTaskToAPoolThread) {
    const tasks::task_context a = tasks::new_task();
    loupe::context captured;
    {
        tasks::task_scope scope(a);
        loupe::field_scope user(loupe::context_field::user, "bob");
        captured = loupe::capture_context();
    }
    EXPECT_EQ(captured.task(), a);
    tasks::trace_id seen;
    std::string user;
    std::thread pool([&] {
        loupe::context_scope adopt(captured);
        seen = tasks::current_trace_id();
        user = std::string(loupe::capture_context().get(loupe::context_field::user));
    });
    pool.join();
    EXPECT_EQ(seen, a.trace);
    EXPECT_EQ(user, "bob");
    // A captured context without a task clears the task inside the scope.
    tasks::task_scope scope(a);
    loupe::context empty;
    {
        loupe::context_scope adopt(empty);
        EXPECT_FALSE(tasks::current_trace_id().valid());
    }
    EXPECT_EQ(tasks::current_trace_id(), a.trace);
}

TEST(TaskContext, ResetContextClearsTheTask) {
    tasks::task_scope scope(tasks::new_task());
    loupe::reset_context();
    EXPECT_FALSE(tasks::current_trace_id().valid());
}

TEST(TaskContext, IsWrittenToTheTraceWithTheContext) {
    tasks::task_context a = tasks::new_task(tasks::trace_flags::sampled);
    ASSERT_TRUE(a.state.assign("vendor=abc"));
    const loupe::trace t = record("task_context", {}, [&] {
        loupe::field_scope user(loupe::context_field::user, "carol");
        tasks::task_scope scope(a);
        LOUPE_ZONE("in task");
    });
    const auto zone = std::find_if(t.events.begin(), t.events.end(), [&](const loupe::trace_event& e) {
        return t.find_site(e.site_id)->name == "in task";
    });
    ASSERT_NE(zone, t.events.end());
    const loupe::trace_context* c = t.context_of(*zone);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->get(loupe::context_field::user), "carol");
    ASSERT_TRUE(c->has_task());
    EXPECT_EQ(c->trace_high, a.trace.high);
    EXPECT_EQ(c->trace_low, a.trace.low);
    EXPECT_EQ(c->span_id, a.span);
    EXPECT_EQ(c->trace_flags, tasks::trace_flags::sampled);
    EXPECT_EQ(c->tracestate, "vendor=abc");
}

// A task with no context field set is still written, and its end is too:
// a zone after the scope belongs to no task.
TEST(TaskContext, IsWrittenWithoutAnyFieldAndEndsWithItsScope) {
    const tasks::task_context a = tasks::new_task();
    const loupe::trace t = record("task_alone", {}, [&] {
        {
            tasks::task_scope scope(a);
            LOUPE_ZONE("in task");
        }
        LOUPE_ZONE("after");
    });
    std::map<std::string, const loupe::trace_context*> context_of;
    for (const loupe::trace_event& e : t.events) context_of[std::string(t.find_site(e.site_id)->name)] = t.context_of(e);
    ASSERT_EQ(context_of.count("in task"), 1u);
    ASSERT_NE(context_of["in task"], nullptr);
    ASSERT_TRUE(context_of["in task"]->has_task());
    EXPECT_EQ(context_of["in task"]->trace_low, a.trace.low);
    EXPECT_EQ(context_of["in task"]->span_id, a.span);
    ASSERT_EQ(context_of.count("after"), 1u);
    EXPECT_TRUE(context_of["after"] == nullptr || !context_of["after"]->has_task());
}

TEST(TaskContext, TracesWithTasksConvertToTheViewers) {
    const std::string path = loupe_test::temp_trace_path("task_viewers");
    {
        loupe::session_config cfg;
        cfg.name = "task_viewers";
        cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        auto session = loupe::start_session(cfg);
        std::map<std::string, std::string> h;
        tasks::task_scope task(tasks::new_task());
        loupe::field_scope user(loupe::context_field::user, "dora");
        LOUPE_ZONE("in task");
        tasks::outgoing_call call("inventory", "GET /stock", h);
    }
    const std::string bytes = loupe_test::slurp(path);
    std::remove(path.c_str());
    std::string json, perfetto;
    ASSERT_NO_THROW(loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), json));
    ASSERT_NO_THROW(loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), perfetto));
    EXPECT_NE(json.find("\"in task\""), std::string::npos);
    EXPECT_NE(json.find("dora"), std::string::npos);  // the context's fields, as before
    EXPECT_FALSE(perfetto.empty());
}

TEST(TaskContext, FilterSelectsByTraceIdAndByHavingOne) {
    const tasks::task_context wanted = tasks::new_task();
    const tasks::task_context other = tasks::new_task();
    auto work = [&] {
        {
            tasks::task_scope scope(wanted);
            LOUPE_ZONE("wanted");
        }
        {
            tasks::task_scope scope(other);
            LOUPE_ZONE("other");
        }
        LOUPE_ZONE("no task");
    };
    auto names = [](const loupe::trace& t) {
        std::vector<std::string> out;
        for (const auto& e : t.events) out.push_back(t.find_site(e.site_id)->name);
        return out;
    };
    loupe::session_config by_id;
    by_id.filter = "trace == \"" + hex_of(wanted.trace) + "\"";
    EXPECT_EQ(names(record("task_filter_id", by_id, work)), std::vector<std::string>{"wanted"});
    loupe::session_config any;
    any.filter = "trace exists";
    EXPECT_EQ(names(record("task_filter_exists", any, work)), (std::vector<std::string>{"wanted", "other"}));
    loupe::session_config none;
    none.filter = "!(trace exists)";
    EXPECT_EQ(names(record("task_filter_none", none, work)), std::vector<std::string>{"no task"});
}

TEST(TaskContext, FilterRejectsABadTraceIdNamingTheColumn) {
    try {
        (void)loupe::filter::parse("trace == \"4BF92F3577B34DA6A3CE929D0E0E4736\"");
        FAIL() << "upper-case hex accepted";
    } catch (const loupe::filter_error& e) {
        EXPECT_NE(std::string(e.what()).find("32 lowercase hex digits"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("column 12"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)loupe::filter::parse("trace == \"abc\""), loupe::filter_error);
    EXPECT_THROW((void)loupe::filter::parse("trace exist"), loupe::filter_error);
    EXPECT_NO_THROW((void)loupe::filter::parse("trace ~ \"4bf9*\""));
}

TEST(TaskCalls, AClientAndAServerRecordTheFourPointsWithMatchingIds) {
    std::map<std::string, std::string> request_headers, response_headers;
    tasks::task_context handler;
    tasks::task_context sent;
    const loupe::trace t = record("task_calls", {}, [&] {
        tasks::task_scope task(tasks::new_task(tasks::trace_flags::sampled));
        {
            tasks::outgoing_call call("inventory", "GET /stock", request_headers);
            EXPECT_TRUE(call.tagged());
            sent = call.context();
            {
                // The callee (here on another thread, as another process would).
                std::thread server([&] {
                    tasks::incoming_request req(request_headers, "GET /stock");
                    handler = req.context();
                    EXPECT_TRUE(req.has_caller());
                    EXPECT_EQ(tasks::current_trace_id(), sent.trace);
                    LOUPE_ZONE("handle stock");
                    req.respond(response_headers, 200);
                });
                server.join();
            }
            call.returned(response_headers, 200);
        }
    });
    ASSERT_EQ(request_headers.count("traceparent"), 1u);
    EXPECT_EQ(response_headers.count("traceresponse"), 1u);
    EXPECT_EQ(handler.trace, sent.trace);
    EXPECT_NE(handler.span, sent.span);

    const auto out = points_of(t, task_point_kind::call_out);
    const auto back = points_of(t, task_point_kind::return_in);
    const auto in = points_of(t, task_point_kind::request_in);
    const auto reply = points_of(t, task_point_kind::return_out);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(back.size(), 1u);
    ASSERT_EQ(in.size(), 1u);
    ASSERT_EQ(reply.size(), 1u);
    EXPECT_EQ(out[0].call_id, sent.span);
    EXPECT_EQ(in[0].call_id, sent.span);        // both sides name the call by the id on the wire
    EXPECT_EQ(in[0].span_id, handler.span);     // the handler runs as its own span
    EXPECT_EQ(back[0].echoed_id, handler.span);  // the echo names the callee's span
    EXPECT_EQ(reply[0].echoed_id, handler.span);
    EXPECT_EQ(out[0].peer, "inventory");
    EXPECT_EQ(out[0].name, "GET /stock");
    EXPECT_TRUE(out[0].tagged);
    EXPECT_EQ(back[0].status, 200);
    EXPECT_EQ(reply[0].status, 200);
    EXPECT_EQ(out[0].trace_high, sent.trace.high);
    EXPECT_EQ(in[0].trace_low, sent.trace.low);
    // t1 <= t2 <= t3 <= t4 on one clock.
    EXPECT_LE(out[0].time_ns, in[0].time_ns);
    EXPECT_LE(in[0].time_ns, reply[0].time_ns);
    EXPECT_LE(reply[0].time_ns, back[0].time_ns);
}

TEST(TaskCalls, ARequestWithoutContextStartsATaskAndAScopeWithoutReturnRecordsAFailure) {
    const std::map<std::string, std::string> none;
    const std::map<std::string, std::string> bad{{"traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}};
    const loupe::trace t = record("task_no_caller", {}, [&] {
        {
            tasks::incoming_request req(none, "job");
            EXPECT_FALSE(req.has_caller());
            EXPECT_TRUE(req.context().valid());
        }
        {
            tasks::incoming_request req(bad, "bad");
            EXPECT_FALSE(req.has_caller());
            tasks::outgoing_call call("db", "query");  // no return: status -1
        }
    });
    const auto in = points_of(t, task_point_kind::request_in);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].call_id, 0u);
    EXPECT_EQ(in[1].call_id, 0u);
    const auto reply = points_of(t, task_point_kind::return_out);
    ASSERT_EQ(reply.size(), 2u);
    EXPECT_EQ(reply[0].status, -1);
    const auto back = points_of(t, task_point_kind::return_in);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].status, -1);
    const auto out = points_of(t, task_point_kind::call_out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].span_id, in[1].span_id);  // the call's parent is the handler's span
}

// A carrier that throws while the traceparent goes in: the exception
// reaches the caller, and the call is recorded as failed (status -1), a
// whole pair; the thread's next call is recorded as usual.
TEST(TaskCalls, ACarrierThatThrowsRecordsTheCallAsFailed) {
    const loupe::trace t = record("task_throwing_carrier", {}, [&] {
        const auto refuse = [](std::string_view, std::string_view) { throw std::runtime_error("headers full"); };
        EXPECT_THROW(tasks::outgoing_call("inventory", "GET /stock", refuse), std::runtime_error);
        std::map<std::string, std::string> headers;
        tasks::outgoing_call call("payment", "POST /pay", headers);
        call.returned(201);
    });
    const auto out = points_of(t, task_point_kind::call_out);
    const auto back = points_of(t, task_point_kind::return_in);
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(out[0].peer, "inventory");
    EXPECT_EQ(back[0].call_id, out[0].call_id);
    EXPECT_EQ(back[0].status, -1);
    EXPECT_EQ(out[1].peer, "payment");
    EXPECT_EQ(back[1].call_id, out[1].call_id);
    EXPECT_EQ(back[1].status, 201);
    EXPECT_NE(out[0].call_id, out[1].call_id);
}

TEST(TaskCalls, RulesChooseWhichCallsAreTagged) {
    loupe::session_config cfg;
    cfg.task_rules = "skip call=\"GET /health\"\ntag peer=inventory*; profiled 10.0.0.9:80, payments\ntag profiled";
    std::unordered_map<std::string, std::string> h1, h2, h3, h4;
    const loupe::trace t = record("task_rules", cfg, [&] {
        tasks::task_scope task(tasks::new_task());
        { tasks::outgoing_call c("inventory-2", "GET /stock", h1); EXPECT_TRUE(c.tagged()); }
        { tasks::outgoing_call c("inventory-2", "GET /health", h2); EXPECT_FALSE(c.tagged()); }
        { tasks::outgoing_call c("payments", "POST /pay", h3); EXPECT_TRUE(c.tagged()); }
        { tasks::outgoing_call c("mail", "POST /send", h4); EXPECT_FALSE(c.tagged()); }
    });
    EXPECT_EQ(h1.count("traceparent"), 1u);
    EXPECT_EQ(h2.count("traceparent"), 0u);  // untagged calls pass unchanged
    EXPECT_EQ(h3.count("traceparent"), 1u);
    EXPECT_EQ(h4.size(), 0u);
    const auto out = points_of(t, task_point_kind::call_out);
    ASSERT_EQ(out.size(), 4u);  // untagged calls are still recorded, as such
    EXPECT_TRUE(out[0].tagged);
    EXPECT_FALSE(out[1].tagged);
    EXPECT_TRUE(out[2].tagged);
    EXPECT_FALSE(out[3].tagged);
}

TEST(TaskCalls, RulesChangeWhileTheSessionRuns) {
    loupe::session_config cfg;
    cfg.name = "task_rules_change";
    cfg.task_rules = "skip all";
    cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
    auto session = loupe::start_session(cfg);
    std::map<std::string, std::string> h;
    { tasks::outgoing_call c("a", "x", h); EXPECT_FALSE(c.tagged()); }
    session.set_task_rules("tag peer=a");
    { tasks::outgoing_call c("a", "x", h); EXPECT_TRUE(c.tagged()); }
    EXPECT_THROW(session.set_task_rules("tag peer"), loupe::error);
    { tasks::outgoing_call c("a", "x", h); EXPECT_TRUE(c.tagged()); }  // the old rules stay
}

TEST(TaskCalls, BadRulesNameTheLineAndColumn) {
    const auto message = [](const std::string& text) {
        try {
            (void)loupe::task_rules::parse(text);
        } catch (const loupe::error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message("tag peer=a\nlabel x"), "task rules, line 2 column 1: expected 'tag', 'skip' or 'profiled', found 'label'");
    EXPECT_EQ(message("tag peer"), "task rules, line 1 column 9: expected '=' after 'peer', found end of rule");
    EXPECT_EQ(message("skip call=\"GET"), "task rules, line 1 column 11: expected a closing '\"' for a call name glob");
    EXPECT_EQ(message("tag all extra"), "task rules, line 1 column 9: expected the end of the rule (a new line or ';'), found 'e'");
    EXPECT_EQ(message("tag peer=a\\"), "task rules, line 1 column 10: expected a glob whose '\\' escapes a character, found a lone '\\' at its end");
    EXPECT_EQ(message("profiled"), "task rules, line 1 column 9: expected a peer (service name or host:port), found end of rule");
    loupe::session_config cfg;
    cfg.name = "bad_rules";
    cfg.task_rules = "tag nothing";
    cfg.sinks = {std::make_shared<loupe::sinks::null_sink>()};
    try {
        auto s = loupe::start_session(cfg);
        FAIL() << "started";
    } catch (const loupe::error& e) {
        EXPECT_NE(std::string(e.what()).find("session 'bad_rules': task rules, line 1 column 5"), std::string::npos) << e.what();
    }
}

TEST(TaskCalls, WithoutASessionAThreadsTaskIsPassedOnAndNothingElseIsTagged) {
    std::map<std::string, std::string> h;
    {
        tasks::outgoing_call c("x", "y", h);
        EXPECT_FALSE(c.tagged());
    }
    EXPECT_TRUE(h.empty());
    const tasks::task_context a = tasks::new_task();
    tasks::task_scope scope(a);
    tasks::outgoing_call c("x", "y", h);
    EXPECT_TRUE(c.tagged());
    EXPECT_EQ(c.context().trace, a.trace);
    EXPECT_NE(c.context().span, a.span);
    ASSERT_EQ(h.count("traceparent"), 1u);
    EXPECT_EQ(h["traceparent"].substr(3, 32), hex_of(a.trace));
}

TEST(TaskCalls, ASessionWithoutTasksRecordsNoPoints) {
    loupe::session_config cfg;
    cfg.kinds = loupe::kinds::zones;
    std::map<std::string, std::string> h;
    const loupe::trace t = record("task_kinds", cfg, [&] {
        tasks::outgoing_call c("x", "y", h);
        c.returned(200);
    });
    EXPECT_TRUE(t.task_points.empty());
}

TEST(TaskCalls, LongPeerAndNameAreCutAtACharacterBoundary) {
    const std::string peer(100, 'p');
    std::string name(127, 'n');
    name += "\xC3\xA9tail";  // an é across the 128-byte cut
    const loupe::trace t = record("task_long", {}, [&] { tasks::outgoing_call c(peer + peer, name); });
    ASSERT_FALSE(t.task_points.empty());
    EXPECT_EQ(t.task_points[0].peer.size(), 128u);
    EXPECT_EQ(t.task_points[0].name, std::string(127, 'n'));
}

// The collector reads a unit from the ring where it lies, unless it wraps
// round the ring's end (then record by record): in a small ring, calls whose
// peers and names of every length put units across the end at every offset
// arrive whole and in order either way. Their returns take every shape: 2
// ring records when the head can say the echo and the status, else 3.
TEST(TaskCalls, PointsArriveWholeWhereverTheirUnitsLieInTheRing) {
    loupe::session_config cfg;
    cfg.kinds = loupe::kinds::tasks;
    cfg.ring_bytes = 4096;  // 128 records: a unit of 2 to 5 wraps every few dozen calls
    cfg.memory_budget = 0;
    cfg.overflow = loupe::overflow_policy::block;
    constexpr int calls = 3000;
    const auto peer_of = [](int i) { return std::string(static_cast<std::size_t>(1 + i % 61), static_cast<char>('a' + i % 26)); };
    const auto name_of = [](int i) { return "call " + std::to_string(i); };
    // Statuses inside and just outside 16 bits, and the extremes.
    const auto status_of = [](int i) -> std::int64_t {
        switch (i % 6) {
            case 0: return i;
            case 1: return -1;
            case 2: return 32767 + (i / 6) % 2;   // 32767 fits, 32768 does not
            case 3: return -32768 - (i / 6) % 2;  // -32768 fits, -32769 does not
            case 4: return std::int64_t{1} << 40;
            default: return i % 12 == 5 ? INT64_MIN : INT64_MAX;
        }
    };
    // No echo, or the callee's span echoed in a traceresponse.
    const auto echo_of = [](int i) -> std::uint64_t { return i % 5 == 1 ? 0x1234'5678'9abc'def0ull + static_cast<std::uint64_t>(i) : 0; };
    const loupe::trace t = record("task_wrap", cfg, [&] {
        std::thread caller([&] {  // a new thread: its ring has the session's size
            for (int i = 0; i < calls; ++i) {
                tasks::outgoing_call c(peer_of(i), name_of(i));
                const std::uint64_t echo = echo_of(i);
                if (echo == 0) {
                    c.returned(status_of(i));
                } else {
                    tasks::task_context callee = c.context();
                    callee.span = echo;
                    const std::map<std::string, std::string> response{
                        {"traceresponse", std::string(tasks::format_traceresponse(callee).view())}};
                    c.returned(response, status_of(i));
                }
            }
        });
        caller.join();
    });
    const auto out = points_of(t, task_point_kind::call_out);
    const auto back = points_of(t, task_point_kind::return_in);
    ASSERT_EQ(out.size(), static_cast<std::size_t>(calls));
    ASSERT_EQ(back.size(), static_cast<std::size_t>(calls));
    for (int i = 0; i < calls; ++i) {
        const auto k = static_cast<std::size_t>(i);
        ASSERT_EQ(out[k].peer, peer_of(i)) << "call " << i;
        ASSERT_EQ(out[k].name, name_of(i)) << "call " << i;
        ASSERT_EQ(back[k].status, status_of(i)) << "call " << i;
        ASSERT_EQ(back[k].echoed_id, echo_of(i)) << "call " << i;
        ASSERT_EQ(back[k].call_id, out[k].call_id) << "call " << i;
        ASSERT_EQ(back[k].span_id, out[k].span_id) << "call " << i;
        ASSERT_EQ(back[k].trace_low, out[k].trace_low) << "call " << i;
    }
}

// A server's return echoes its own span: the head says so, and the point
// still carries the id; a status beyond 16 bits comes whole.
TEST(TaskCalls, AServersReturnEchoesItsSpanWithAnyStatus) {
    const std::map<std::string, std::string> none;
    const std::int64_t statuses[] = {200, -32768, 32768, INT64_MIN};
    std::vector<std::uint64_t> spans;
    const loupe::trace t = record("task_server_returns", {}, [&] {
        for (const std::int64_t status : statuses) {
            tasks::incoming_request req(none, "job");
            spans.push_back(req.context().span);
            req.responded(status);
        }
    });
    const auto reply = points_of(t, task_point_kind::return_out);
    ASSERT_EQ(reply.size(), std::size(statuses));
    for (std::size_t k = 0; k < reply.size(); ++k) {
        EXPECT_EQ(reply[k].status, statuses[k]) << k;
        EXPECT_EQ(reply[k].echoed_id, spans[k]) << k;
        EXPECT_EQ(reply[k].span_id, spans[k]) << k;
    }
}

TEST(TaskTrace, NamesItsProcessHostBootAndClockDomain) {
    const loupe::trace t = record("task_host", {}, [] { LOUPE_ZONE("z"); });
    char host[256] = {};
    ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
    EXPECT_EQ(t.session.host, host);
    EXPECT_EQ(t.session.boot_id.size(), 36u) << t.session.boot_id;
    EXPECT_EQ(t.session.clock_domain, "monotonic:" + t.session.boot_id);
    EXPECT_GT(t.session.process_start_ns, 0u);
    EXPECT_GT(t.session.wall_anchor_ns, 0u);
    EXPECT_EQ(t.session.pid, static_cast<std::uint32_t>(::getpid()));
}

}  // namespace
