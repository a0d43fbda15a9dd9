// The live OTLP sink (<loupe/sinks/otlp_http_sink.hpp>) against a local
// receiver (support/otlp_receiver.hpp): spans arrive while the session
// runs, each zone exactly once with its parent, its context, its arguments
// and its task's trace; every failure (a dead collector, 503s, a partial
// success, a full queue, a collector that goes away) is counted, reported
// and shows as a sink failure, and stop() returns.
#include <gtest/gtest.h>

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/sinks/otlp_http_sink.hpp>
#include <loupe/tasks.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/captured_errors.hpp"
#include "support/otlp_reader.hpp"
#include "support/otlp_receiver.hpp"
#include "support/trace_files.hpp"

using namespace std::chrono_literals;
using loupe::sinks::otlp_http_sink;
using loupe::sinks::otlp_http_sink_options;
using loupe::sinks::otlp_http_sink_stats;
using loupe_test::otlp_receiver;
namespace otlp = loupe_test::otlp;

namespace {

// Short intervals and waits so that a test sees several windows and its
// failures quickly.
otlp_http_sink_options fast_sink_options(const std::string& endpoint) {
    otlp_http_sink_options o;
    o.http.endpoint = endpoint;
    o.http.initial_backoff = 10ms;
    o.http.max_backoff = 50ms;
    o.http.connect_timeout = 2000ms;
    o.http.request_timeout = 5000ms;
    o.export_interval = 50ms;
    return o;
}

std::vector<otlp::span> received_spans(const otlp_receiver& receiver) {
    std::vector<otlp::span> out;
    for (const std::string& body : receiver.accepted_bodies()) {
        for (const otlp::resource_spans& r : otlp::read_request(body)) out.insert(out.end(), r.spans.begin(), r.spans.end());
    }
    return out;
}

std::vector<otlp::span> file_spans(const std::string& path) {
    std::vector<otlp::span> out;
    for (const otlp::resource_spans& r : otlp::read_request(loupe::viewer::to_otlp(loupe::read_trace_file(path)))) {
        out.insert(out.end(), r.spans.begin(), r.spans.end());
    }
    return out;
}

std::string hex(const std::string& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (const char c : bytes) {
        out += digits[static_cast<unsigned char>(c) >> 4];
        out += digits[static_cast<unsigned char>(c) & 15];
    }
    return out;
}

std::string text_of(const otlp::attributes& a, const std::string& key) {
    const auto it = a.find(key);
    return it == a.end() ? std::string() : it->second.text;
}

// Every span converted is accepted, failed, dropped, unsent or pending:
// nothing disappears from the counts.
void expect_accounted(const otlp_http_sink_stats& s) {
    EXPECT_EQ(s.spans, s.spans_accepted + s.spans_failed + s.spans_queue_full + s.spans_unsent);
}

// Runs `body` until `done()` or 20 s (then the test's own checks fail).
template <typename Done, typename Body>
void run_until(Done done, Body body) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!done() && std::chrono::steady_clock::now() < deadline) body();
}

void outer_with_inners() {
    LOUPE_ZONE("outer");
    for (int i = 0; i < 3; ++i) {
        LOUPE_ZONE("inner");
    }
}

// Records outer_with_inners every `pause` until `done()` (20 s at most).
template <typename Done>
void record_until(Done done, std::chrono::microseconds pause = 1ms) {
    run_until(done, [pause] {
        outer_with_inners();
        std::this_thread::sleep_for(pause);
    });
}

// A session named `name` sending to `sink` alone.
loupe::session start_live(const std::shared_ptr<otlp_http_sink>& sink, const std::string& name) {
    loupe::session_config cfg;
    cfg.name = name;
    cfg.sinks = {sink};
    return loupe::start_session(cfg);
}

TEST(OtlpLiveSink, SpansArriveWhileTheSessionRunsEachOnceWithItsParent) {
    otlp_receiver receiver;
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    const std::string path = loupe_test::temp_trace_path("otlp_live");
    loupe::session_config cfg;
    cfg.name = "live";
    cfg.sinks = {sink, std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    std::thread other([&] {
        LOUPE_THREAD_NAME("other");
        record_until([&] { return !receiver.accepted_bodies().empty(); }, 100us);
    });
    // Until the collector has had spans while the session still runs, and
    // a little after (more windows).
    record_until([&] { return !receiver.accepted_bodies().empty(); }, 100us);
    other.join();
    const bool arrived_before_stop = !receiver.accepted_bodies().empty();
    const loupe::session_stats stats = session.stop();
    EXPECT_TRUE(arrived_before_stop);
    EXPECT_EQ(stats.sink_failures, 0u);
    EXPECT_EQ(stats.dropped, 0u);
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_EQ(s.spans_accepted, s.spans);
    EXPECT_EQ(s.first_error, "");

    // The same spans as converting the file the session also wrote: each
    // zone once, with the same name, times and attributes (thread, code).
    const std::vector<otlp::span> live = received_spans(receiver);
    const std::vector<otlp::span> file = file_spans(path);
    std::remove(path.c_str());
    using key = std::tuple<std::string, std::uint64_t, std::uint64_t, std::string>;
    const auto key_of = [](const otlp::span& sp) {
        std::string attributes;
        for (const auto& [name, v] : sp.attrs) {
            attributes += name + "=" + v.text + "/" + std::to_string(v.integer_value) + (v.flag ? "/t" : "") + ";";
        }
        return key{sp.name, sp.start, sp.end, attributes};
    };
    std::multiset<key> live_keys, file_keys;
    for (const otlp::span& sp : live) live_keys.insert(key_of(sp));
    for (const otlp::span& sp : file) file_keys.insert(key_of(sp));
    EXPECT_EQ(live.size(), s.spans);
    EXPECT_GT(live.size(), 8u);
    EXPECT_TRUE(live_keys == file_keys) << live.size() << " spans sent, " << file.size() << " in the file";

    // Every inner zone is a child of its outer zone, in its trace; ids unique.
    std::map<std::string, const otlp::span*> by_id;
    for (const otlp::span& sp : live) EXPECT_TRUE(by_id.emplace(sp.span_id, &sp).second) << "span id twice";
    std::size_t inners = 0;
    for (const otlp::span& sp : live) {
        if (sp.name == "outer") {
            EXPECT_EQ(sp.parent_span_id, "") << "an outer zone is a root";
            continue;
        }
        ++inners;
        ASSERT_EQ(by_id.count(sp.parent_span_id), 1u) << "inner zone without its parent";
        const otlp::span& parent = *by_id[sp.parent_span_id];
        EXPECT_EQ(parent.name, "outer");
        EXPECT_EQ(parent.trace_id, sp.trace_id);
        EXPECT_LE(parent.start, sp.start);
        EXPECT_GE(parent.end, sp.end);
    }
    EXPECT_EQ(inners * 4, live.size() * 3);
}

TEST(OtlpLiveSink, ZoneLongerThanWindowsKeepsItsArgumentsAndTheThreadsContext) {
    otlp_receiver receiver;
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    loupe::context_scope who({{loupe::context_field::user, "alice"}});  // set before the session, never again
    auto session = start_live(sink, "live-long");
    {
        LOUPE_ZONE_AS(job, "long job");
        LOUPE_ZONE_ARG(job, "rows", 42);
        // Until two requests were sent: the job's arguments and the
        // thread's context were recorded before at least one cut.
        record_until([&] { return receiver.accepted_bodies().size() >= 2; }, 200us);
    }
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.sink_failures, 0u);
    const std::vector<otlp::span> live = received_spans(receiver);
    ASSERT_GE(receiver.accepted_bodies().size(), 3u);
    std::map<std::string, const otlp::span*> by_id;
    for (const otlp::span& sp : live) by_id.emplace(sp.span_id, &sp);
    std::size_t jobs = 0, under_job = 0;
    for (const otlp::span& sp : live) {
        EXPECT_EQ(text_of(sp.attrs, "enduser.id"), "alice") << sp.name;
        if (sp.name == "long job") {
            ++jobs;
            ASSERT_EQ(sp.attrs.count("loupe.arg.rows"), 1u);
            EXPECT_EQ(sp.attrs.at("loupe.arg.rows").integer_value, 42);
            EXPECT_EQ(sp.parent_span_id, "");
        }
        if (sp.parent_span_id.empty()) continue;
        // A parent is always there, in the same trace.
        ASSERT_EQ(by_id.count(sp.parent_span_id), 1u) << sp.name;
        EXPECT_EQ(by_id[sp.parent_span_id]->trace_id, sp.trace_id);
        if (by_id[sp.parent_span_id]->name == "long job") ++under_job;
    }
    EXPECT_EQ(jobs, 1u);
    // The zones of the job's last windows are its children; earlier ones
    // (converted before the job ended) are roots of their own (docs/otlp.md).
    EXPECT_GT(under_job, 0u);
    EXPECT_EQ(live.size(), sink->stats().spans_accepted);
}

TEST(OtlpLiveSink, ZonesOfATaskAreInItsTraceUnderItsSpan) {
    otlp_receiver receiver;
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    auto session = start_live(sink, "live-task");
    std::vector<loupe::tasks::task_context> tasks;
    run_until([&] { return receiver.accepted_bodies().size() >= 2; }, [&] {
        tasks.push_back(loupe::tasks::new_task());
        loupe::tasks::task_scope serving(tasks.back());
        loupe::field_scope user(loupe::context_field::user, "bob");
        outer_with_inners();
        std::this_thread::sleep_for(300us);
    });
    session.stop();
    std::map<std::string, const loupe::tasks::task_context*> by_trace;  // hex trace id -> task
    for (const auto& t : tasks) {
        char hex[33];
        std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(t.trace.high),
                      static_cast<unsigned long long>(t.trace.low));
        by_trace[hex] = &t;
    }
    const std::vector<otlp::span> live = received_spans(receiver);
    EXPECT_EQ(live.size(), tasks.size() * 4);
    for (const otlp::span& sp : live) {
        const std::string trace = hex(sp.trace_id);
        ASSERT_EQ(by_trace.count(trace), 1u) << "span " << sp.name << " not in a task's trace";
        if (sp.name == "outer") {
            char span_hex[17];
            std::snprintf(span_hex, sizeof span_hex, "%016llx", static_cast<unsigned long long>(by_trace[trace]->span));
            EXPECT_EQ(hex(sp.parent_span_id), span_hex) << "the outer zone is a child of the task's span";
        }
    }
}

TEST(OtlpLiveSink, DeadCollectorIsASinkFailureAndStopReturns) {
    loupe_test::captured_errors errors;
    const loupe_test::dead_port nobody;
    otlp_http_sink_options o = fast_sink_options("http://127.0.0.1:" + std::to_string(nobody.port()) + "/v1/traces");
    o.http.initial_backoff = 10s;  // a retry waits long: stop cuts it short
    o.http.max_backoff = 10s;
    o.shutdown_timeout = 200ms;
    auto sink = std::make_shared<otlp_http_sink>(o);
    auto session = start_live(sink, "live-dead");
    // Until a request is with the sender (trying to connect, or waiting to retry).
    record_until([&] { return sink->stats().spans > 0; });
    outer_with_inners();  // records the host keeps making
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.sink_failures, 1u);
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_GT(s.spans, 0u);
    EXPECT_EQ(s.spans_accepted, 0u);
    EXPECT_EQ(s.spans_lost(), s.spans);
    const std::string reported = errors.all();
    EXPECT_NE(reported.find("127.0.0.1:" + std::to_string(nobody.port())), std::string::npos) << reported;
    EXPECT_NE(reported.find("spans not accepted"), std::string::npos) << reported;
}

TEST(OtlpLiveSink, RetriesA503AndLosesNothing) {
    otlp_receiver receiver({otlp_receiver::reply(otlp_receiver::reply::unavailable, 0),
                            otlp_receiver::reply(otlp_receiver::reply::too_many)});
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    auto session = start_live(sink, "live-retry");
    record_until([&] { return !receiver.accepted_bodies().empty(); });
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.sink_failures, 0u);
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_EQ(s.retries, 2u);
    EXPECT_EQ(s.spans_accepted, s.spans);
    EXPECT_EQ(received_spans(receiver).size(), s.spans);
}

TEST(OtlpLiveSink, PartialSuccessIsCountedAndReported) {
    loupe_test::captured_errors errors;
    otlp_receiver receiver({otlp_receiver::reply::partial_success(3, "three spans too old")});
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    auto session = start_live(sink, "live-partial");
    record_until([&] { return !receiver.accepted_bodies().empty(); });
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.sink_failures, 1u);
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_EQ(s.spans_rejected, 3u);
    EXPECT_EQ(s.spans_lost(), 3u);
    const std::string reported = errors.all();
    EXPECT_NE(reported.find("three spans too old"), std::string::npos) << reported;
    EXPECT_NE(reported.find("3 of " + std::to_string(s.spans) + " spans not accepted (3 rejected by the collector)"),
              std::string::npos)
        << reported;
}

TEST(OtlpLiveSink, FullQueueDropsRequestsAndCountsThem) {
    loupe_test::captured_errors errors;
    // The collector asks to wait a second, again and again: the sender
    // waits while windows keep coming.
    std::vector<otlp_receiver::reply> script(30, otlp_receiver::reply(otlp_receiver::reply::unavailable, 1));
    otlp_receiver receiver(script);
    otlp_http_sink_options o = fast_sink_options(receiver.url());
    o.max_queue_bytes = 1;  // one request waits at most
    o.http.max_retries = 30;
    o.http.max_backoff = 2000ms;
    o.shutdown_timeout = 100ms;
    auto sink = std::make_shared<otlp_http_sink>(o);
    auto session = start_live(sink, "live-queue");
    record_until([&] { return sink->stats().spans_queue_full > 0; });
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.sink_failures, 1u);
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_GT(s.spans_queue_full, 0u);
    const std::string reported = errors.all();
    EXPECT_NE(reported.find("the send queue was full"), std::string::npos) << reported;
    EXPECT_NE(reported.find("dropped, queue full"), std::string::npos) << reported;
}

TEST(OtlpLiveSink, CollectorGoingAwayMidSessionFailsLaterRequestsOnly) {
    otlp_receiver receiver({otlp_receiver::reply::ok, otlp_receiver::reply::go_away});
    otlp_http_sink_options o = fast_sink_options(receiver.url());
    o.http.max_retries = 1;
    auto sink = std::make_shared<otlp_http_sink>(o);
    {
        loupe_test::captured_errors errors;
        auto session = start_live(sink, "live-away");
        record_until([&] { return sink->stats().spans_failed > 0; });
        const loupe::session_stats stats = session.stop();
        EXPECT_EQ(stats.sink_failures, 1u);
        EXPECT_NE(errors.all().find("not delivered"), std::string::npos) << errors.all();
    }
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_GT(s.spans_accepted, 0u);
    EXPECT_GT(s.spans_failed, 0u);
    EXPECT_EQ(s.spans_accepted, received_spans(receiver).size());
}

TEST(OtlpLiveSink, BadEndpointAndBadEnvironmentAreNamed) {
    try {
        otlp_http_sink bad(fast_sink_options("htp://127.0.0.1:4318/v1/traces"));
        FAIL() << "a bad endpoint was taken";
    } catch (const loupe::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'htp://127.0.0.1:4318/v1/traces'"), std::string::npos) << what;
        EXPECT_NE(what.find("position"), std::string::npos) << what;
    }
    const std::map<std::string, std::string> good = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"},
                                                      {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%20ecret"},
                                                      {"OTEL_SERVICE_NAME", "checkout"},
                                                      {"OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"}};
    const auto getter = [](const std::map<std::string, std::string>& env) {
        return [&env](const char* name) -> const char* {
            const auto it = env.find(name);
            return it == env.end() ? nullptr : it->second.c_str();
        };
    };
    const otlp_http_sink_options o = otlp_http_sink::options_from_env({}, getter(good));
    EXPECT_EQ(o.http.endpoint, "http://collector:4318/v1/traces");
    ASSERT_EQ(o.http.headers.size(), 1u);
    EXPECT_EQ(o.http.headers[0], (std::pair<std::string, std::string>("api-key", "s ecret")));
    EXPECT_EQ(o.conversion.service_name, "checkout");
    ASSERT_EQ(o.conversion.resource_attributes.size(), 1u);
    EXPECT_EQ(o.conversion.resource_attributes[0].first, "deployment.environment");

    const std::map<std::string, std::string> bad = {{"OTEL_EXPORTER_OTLP_HEADERS", "api-key"}};
    try {
        otlp_http_sink::options_from_env({}, getter(bad));
        FAIL() << "a bad OTEL_EXPORTER_OTLP_HEADERS was taken";
    } catch (const loupe::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("OTEL_EXPORTER_OTLP_HEADERS"), std::string::npos) << what;
        EXPECT_NE(what.find("position"), std::string::npos) << what;
    }
}

TEST(OtlpLiveSink, HeadersAndResourceReachTheCollector) {
    otlp_receiver receiver;
    otlp_http_sink_options o = fast_sink_options(receiver.url());
    o.http.headers = {{"api-key", "k1"}};
    o.conversion.service_name = "checkout";
    auto sink = std::make_shared<otlp_http_sink>(o);
    auto session = start_live(sink, "live-resource");
    outer_with_inners();
    session.stop();  // the last window is sent at stop
    const auto requests = receiver.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].path, "/v1/traces");
    EXPECT_EQ(requests[0].headers.at("api-key"), "k1");
    EXPECT_EQ(requests[0].headers.at("content-type"), "application/x-protobuf");
    const auto batches = otlp::read_request(requests[0].body);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(text_of(batches[0].resource, "service.name"), "checkout");
    EXPECT_EQ(batches[0].scope_name, "loupe");
    EXPECT_EQ(batches[0].spans.size(), 4u);
}

TEST(OtlpLiveSink, OneSessionAtATimeThenReusable) {
    otlp_receiver receiver;
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    loupe::session_config cfg;
    cfg.name = "live-first";
    cfg.sinks = {sink};
    auto first = loupe::start_session(cfg);
    cfg.name = "live-second";
    EXPECT_THROW(loupe::start_session(cfg), loupe::error);
    outer_with_inners();
    EXPECT_EQ(first.stop().sink_failures, 0u);
    auto second = loupe::start_session(cfg);
    outer_with_inners();
    EXPECT_EQ(second.stop().sink_failures, 0u);
    std::set<std::string> sessions;
    for (const std::string& body : receiver.accepted_bodies()) {
        for (const otlp::resource_spans& r : otlp::read_request(body)) {
            sessions.insert(text_of(r.resource, "loupe.session.name"));
        }
    }
    EXPECT_EQ(sessions, (std::set<std::string>{"live-first", "live-second"}));
    EXPECT_EQ(sink->stats().spans_accepted, 8u);
}

// fork() while the sink's sender and loupe's collector run and another
// thread records: the child releases its copy of the session handle, drops
// its reference to the sink (the child's runtime keeps the parent's
// sessions and their sinks untouched: the sender's thread is never joined
// there), records and exits; the parent's session goes on and everything
// it converted is accepted.
TEST(OtlpLiveSinkFork, AChildDropsItsCopyOfTheSinkAndTheParentGoesOn) {
    otlp_receiver receiver;
    auto sink = std::make_shared<otlp_http_sink>(fast_sink_options(receiver.url()));
    std::optional<loupe::session> session(start_live(sink, "live-fork"));
    std::atomic<bool> done{false};
    std::thread producer([&done] {
        while (!done.load()) {
            outer_with_inners();
            std::this_thread::sleep_for(100us);
        }
    });
    record_until([&] { return sink->stats().spans > 0; });  // the sender has had work
    const pid_t child = ::fork();
    if (child == 0) {
        session.reset();  // an inherited handle is only released
        sink.reset();
        outer_with_inners();
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    int status = -1;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (::waitpid(child, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    done = true;
    producer.join();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child hung or died: status " << status;
    const loupe::session_stats stats = session->stop();
    EXPECT_EQ(stats.sink_failures, 0u);
    const otlp_http_sink_stats s = sink->stats();
    expect_accounted(s);
    EXPECT_EQ(s.spans_accepted, s.spans);
    EXPECT_EQ(received_spans(receiver).size(), s.spans);
}

}  // namespace
