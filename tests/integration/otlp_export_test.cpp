// Sending a trace to a collector over OTLP/HTTP (<loupe/export/otlp_http.hpp>),
// against a local receiver (support/otlp_receiver.hpp) that answers by a
// script: what arrives is what the .loupe file holds, exactly once, through
// retries, batching, partial successes, gzip and a receiver that dies.
#include <gtest/gtest.h>

#include <loupe/export/otlp_env.hpp>
#include <loupe/export/otlp_http.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/viewer/otlp.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#if __has_include(<zlib.h>)
#include <zlib.h>
#define LOUPE_TEST_HAVE_ZLIB 1
#endif

#include "support/otlp_reader.hpp"
#include "support/otlp_receiver.hpp"
#include "support/trace_files.hpp"

using namespace std::chrono_literals;
using loupe::exporter::otlp_http_options;
using loupe::exporter::otlp_http_result;
using loupe_test::dead_port;
using loupe_test::otlp_receiver;
namespace otlp = loupe_test::otlp;

namespace {

// Options that keep the tests fast: short waits, short timeouts.
otlp_http_options fast_options(const std::string& endpoint) {
    otlp_http_options o;
    o.endpoint = endpoint;
    o.initial_backoff = 5ms;
    o.max_backoff = 20ms;
    o.connect_timeout = 2000ms;
    o.request_timeout = 5000ms;
    return o;
}

// A trace of `n` zones over a few names, on two threads.
loupe::trace zones_trace(const std::string& tag, int n) {
    const std::string path = loupe_test::temp_trace_path(tag);
    loupe::session_config cfg;
    cfg.name = "export";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    auto session = loupe::start_session(cfg);
    auto work = [n](int half) {
        for (int i = half; i < n; i += 2) {
            if (i % 3 == 0) {
                LOUPE_ZONE("parse");
            } else if (i % 3 == 1) {
                LOUPE_ZONE("render");
            } else {
                LOUPE_ZONE("store");
            }
        }
    };
    std::thread a(work, 0);
    std::thread b(work, 1);
    a.join();
    b.join();
    session.stop();
    loupe::trace t = loupe::read_trace_file(path);
    std::remove(path.c_str());
    return t;
}

// The zone names of a trace, with their counts (what its spans must be).
std::map<std::string, int> zone_names(const loupe::trace& t) {
    std::map<std::uint64_t, std::string> sites;
    for (const loupe::trace_site& s : t.sites) sites[s.id] = s.name;
    std::map<std::string, int> out;
    for (const loupe::trace_event& e : t.events) {
        if (e.type == loupe::event_type::zone) ++out[sites[e.site_id]];
    }
    return out;
}

// The spans of the requests a receiver accepted: names with counts, ids.
struct received {
    std::map<std::string, int> names;
    std::set<std::string> span_ids;
    std::size_t spans = 0;
    std::vector<otlp::resource_spans> resources;
};

received decode(const std::vector<std::string>& bodies) {
    received r;
    for (const std::string& body : bodies) {
        for (otlp::resource_spans& rs : otlp::read_request(body)) {
            for (const otlp::span& s : rs.spans) {
                ++r.names[s.name];
                r.span_ids.insert(s.span_id);
                ++r.spans;
            }
            r.resources.push_back(std::move(rs));
        }
    }
    return r;
}


TEST(OtlpExport, RetriesOn503And429AndABrokenConnectionThenSucceeds) {
    otlp_receiver receiver({{otlp_receiver::reply::unavailable, 0},
                            {otlp_receiver::reply::too_many, 0},
                            otlp_receiver::reply::close_mid_request,
                            otlp_receiver::reply::ok});
    const loupe::trace t = zones_trace("otlp_retry", 40);
    otlp_http_options o = fast_options(receiver.url());
    std::vector<std::string> reasons;
    o.on_retry = [&](const loupe::exporter::otlp_retry_notice& n) { reasons.push_back(n.reason); };
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, {}, o);

    EXPECT_TRUE(r.ok()) << r.first_error;
    EXPECT_EQ(r.batches, 1u);
    EXPECT_EQ(r.batches_accepted, 1u);
    EXPECT_EQ(r.retries, 3u);
    EXPECT_EQ(r.spans, 40u);
    EXPECT_EQ(r.spans_sent, 40u);
    ASSERT_EQ(reasons.size(), 3u);
    EXPECT_NE(reasons[0].find("HTTP 503"), std::string::npos) << reasons[0];
    EXPECT_NE(reasons[1].find("HTTP 429"), std::string::npos) << reasons[1];
    EXPECT_NE(reasons[2].find(receiver.authority()), std::string::npos) << reasons[2];
    // Each attempt is a request: the 503 and 429 ones were read whole, the
    // broken one was not kept; one copy was accepted.
    const std::vector<otlp_receiver::request> requests = receiver.requests();
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_EQ(requests[0].method, "POST");
    EXPECT_EQ(requests[0].path, "/v1/traces");
    EXPECT_EQ(requests[0].headers.at("content-type"), "application/x-protobuf");
    EXPECT_EQ(requests[0].body, requests[2].body);
    EXPECT_EQ(decode(receiver.accepted_bodies()).names, zone_names(t));
}

TEST(OtlpExport, BatchesStayWithinTheLimitAndEverySpanArrivesOnce) {
    otlp_receiver receiver;
    const loupe::trace t = zones_trace("otlp_batches", 600);
    loupe::viewer::otlp_options conversion;
    conversion.max_batch_bytes = 8192;
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, conversion, fast_options(receiver.url()));

    ASSERT_TRUE(r.ok()) << r.first_error;
    const std::vector<std::string> bodies = receiver.accepted_bodies();
    EXPECT_GE(bodies.size(), 3u);
    EXPECT_EQ(r.batches, bodies.size());
    std::uint64_t bytes = 0;
    for (const std::string& b : bodies) {
        EXPECT_LE(b.size(), 8192u);
        bytes += b.size();
    }
    EXPECT_EQ(r.bytes, bytes);
    EXPECT_EQ(r.uncompressed_bytes, bytes);
    const received got = decode(bodies);
    EXPECT_EQ(got.spans, 600u);
    EXPECT_EQ(got.span_ids.size(), 600u);  // each span once
    EXPECT_EQ(got.names, zone_names(t));
    EXPECT_EQ(r.spans_sent, 600u);
    // Each batch carries the resource on its own.
    for (const otlp::resource_spans& rs : got.resources) {
        EXPECT_EQ(rs.resource.at("loupe.session.name").text, "export");
    }
}

TEST(OtlpExport, APartialSuccessIsCountedAndNotOk) {
    otlp_receiver receiver({otlp_receiver::reply::partial_success(7, "spans too old")});
    const loupe::trace t = zones_trace("otlp_partial", 30);
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, {}, fast_options(receiver.url()));
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.first_error.empty()) << r.first_error;
    EXPECT_EQ(r.batches_accepted, 1u);
    EXPECT_EQ(r.spans_rejected, 7u);
    EXPECT_EQ(r.rejection_message, "spans too old");
}

TEST(OtlpExport, AChunkedReplyIsRead) {
    otlp_receiver::reply partial = otlp_receiver::reply::partial_success(2, "two dropped");
    partial.chunked = true;
    otlp_receiver receiver({partial});
    const loupe::trace t = zones_trace("otlp_chunked", 10);
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, {}, fast_options(receiver.url()));
    EXPECT_EQ(r.batches_accepted, 1u) << r.first_error;
    EXPECT_EQ(r.spans_rejected, 2u);
    EXPECT_EQ(r.rejection_message, "two dropped");
}

TEST(OtlpExport, ABadRequestIsNotRetriedAndStopsTheExport) {
    otlp_receiver receiver({otlp_receiver::reply::bad("unknown field 99")});
    const loupe::trace t = zones_trace("otlp_bad_request", 300);
    loupe::viewer::otlp_options conversion;
    conversion.max_batch_bytes = 4096;
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, conversion, fast_options(receiver.url()));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.retries, 0u);
    EXPECT_EQ(r.batches_accepted, 0u);
    EXPECT_GT(r.batches, 1u);
    EXPECT_EQ(r.spans, 300u);  // counted, though not sent
    EXPECT_EQ(r.spans_sent, 0u);
    EXPECT_NE(r.first_error.find(receiver.authority() + ": HTTP 400 Bad Request: unknown field 99 (batch 1)"),
              std::string::npos)
        << r.first_error;
    EXPECT_EQ(receiver.requests().size(), 1u);  // nothing after the batch that failed
}

TEST(OtlpExport, AReceiverThatGoesAwayGivesAnErrorNamingHostAndPort) {
    otlp_receiver receiver({otlp_receiver::reply::ok, otlp_receiver::reply::go_away});
    const loupe::trace t = zones_trace("otlp_go_away", 300);
    loupe::viewer::otlp_options conversion;
    conversion.max_batch_bytes = 4096;
    otlp_http_options o = fast_options(receiver.url());
    o.max_retries = 2;
    const auto start = std::chrono::steady_clock::now();
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, conversion, o);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.batches_accepted, 1u);
    EXPECT_EQ(r.retries, 2u);
    EXPECT_GT(r.spans_sent, 0u);
    EXPECT_LT(r.spans_sent, 300u);
    EXPECT_EQ(r.first_error.rfind(receiver.authority() + ": connect: Connection refused (batch 2, given up after 2 retries)", 0), 0u)
        << r.first_error;
}

TEST(OtlpExport, AnUnreachableEndpointFailsClearlyInBoundedTime) {
    const dead_port nobody;
    otlp_http_options o = fast_options("http://127.0.0.1:" + std::to_string(nobody.port()) + "/v1/traces");
    o.max_retries = 3;
    loupe::exporter::otlp_http_exporter exporter(o);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(exporter.send(loupe::viewer::to_otlp(zones_trace("otlp_unreachable", 5))));
    EXPECT_FALSE(exporter.send("second batch: not sent"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    EXPECT_TRUE(exporter.stopped());
    const otlp_http_result& r = exporter.result();
    EXPECT_EQ(r.batches, 2u);
    EXPECT_EQ(r.retries, 3u);
    EXPECT_EQ(r.first_error, "127.0.0.1:" + std::to_string(nobody.port()) +
                                 ": connect: Connection refused (batch 1, given up after 3 retries)");
}

TEST(OtlpExport, RetriesAreBoundedInTimeAndRetryAfterIsCapped) {
    // Retry-After: 30 is capped by max_backoff; max_retry_time ends the batch.
    std::vector<otlp_receiver::reply> script(20, {otlp_receiver::reply::unavailable, 30});
    otlp_receiver receiver(script);
    otlp_http_options o = fast_options(receiver.url());
    o.max_retries = 100;
    o.max_backoff = 50ms;
    o.max_retry_time = 300ms;
    loupe::exporter::otlp_http_exporter exporter(o);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(exporter.send(loupe::viewer::to_otlp(zones_trace("otlp_bounded", 5))));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_GE(exporter.result().retries, 3u);
    EXPECT_LE(exporter.result().retries, 7u);
    EXPECT_NE(exporter.result().first_error.find("HTTP 503 Service Unavailable"), std::string::npos);
}

#ifdef LOUPE_TEST_HAVE_ZLIB
TEST(OtlpExport, AGzipBodyInflatesToTheSameRequest) {
    otlp_receiver receiver;
    const loupe::trace t = zones_trace("otlp_gzip", 200);
    otlp_http_options o = fast_options(receiver.url());
    o.gzip = true;
    const otlp_http_result r = loupe::exporter::export_otlp_http(t, {}, o);
    ASSERT_TRUE(r.ok()) << r.first_error;
    const std::vector<otlp_receiver::request> requests = receiver.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].headers.at("content-encoding"), "gzip");
    const std::string& gz = requests[0].body;
    // zlib reads the gzip framing itself (windowBits 16 + 15) and checks
    // the CRC-32 and the size.
    z_stream z{};
    ASSERT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    std::string inflated(4 << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    z.avail_in = static_cast<uInt>(gz.size());
    z.next_out = reinterpret_cast<Bytef*>(&inflated[0]);
    z.avail_out = static_cast<uInt>(inflated.size());
    EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    inflated.resize(z.total_out);
    inflateEnd(&z);
    const std::string expected = loupe::viewer::to_otlp(t);
    EXPECT_EQ(inflated, expected);
    EXPECT_LT(gz.size(), expected.size());
    EXPECT_EQ(r.bytes, gz.size());
    EXPECT_EQ(r.uncompressed_bytes, expected.size());
}
#endif

// Sets environment variables for one test and restores them after.
class scoped_env {
public:
    void set(const char* name, const char* value) {
        const char* old = std::getenv(name);
        saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~scoped_env() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
            if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
            else ::unsetenv(it->first.c_str());
        }
    }

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(OtlpExportEnv, VariablesChooseEndpointHeadersAndResource) {
    otlp_receiver receiver;
    scoped_env env;
    env.set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", nullptr);
    env.set("OTEL_EXPORTER_OTLP_ENDPOINT", ("http://" + receiver.authority()).c_str());
    env.set("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cr%2Ct , tenant=blue%20team");
    env.set("OTEL_SERVICE_NAME", "checkout");
    env.set("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,service.name=ignored,host.name=box%3D1");
    loupe::exporter::otlp_env vars;
    ASSERT_EQ(loupe::exporter::read_otlp_env(vars), "");
    EXPECT_EQ(vars.endpoint, receiver.url("/v1/traces"));
    EXPECT_EQ(vars.endpoint_source, "OTEL_EXPORTER_OTLP_ENDPOINT");

    otlp_http_options http = fast_options(vars.endpoint);
    http.headers = vars.headers;
    loupe::viewer::otlp_options conversion;
    conversion.service_name = vars.service_name;
    conversion.resource_attributes = vars.resource_attributes;
    const otlp_http_result r = loupe::exporter::export_otlp_http(zones_trace("otlp_env", 5), conversion, http);
    ASSERT_TRUE(r.ok()) << r.first_error;
    const std::vector<otlp_receiver::request> requests = receiver.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].path, "/v1/traces");
    EXPECT_EQ(requests[0].headers.at("x-api-key"), "s3cr,t");
    EXPECT_EQ(requests[0].headers.at("tenant"), "blue team");
    const received got = decode(receiver.accepted_bodies());
    ASSERT_EQ(got.resources.size(), 1u);
    const otlp::attributes& resource = got.resources[0].resource;
    EXPECT_EQ(resource.at("service.name").text, "checkout");
    EXPECT_EQ(resource.at("deployment.environment").text, "test");
    EXPECT_EQ(resource.at("host.name").text, "box=1");
    EXPECT_EQ(resource.at("loupe.session.name").text, "export");

    // The traces endpoint wins over the base; without OTEL_SERVICE_NAME the
    // resource attributes' service.name names the service.
    env.set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://localhost:4318/custom/path");
    env.set("OTEL_SERVICE_NAME", "");
    ASSERT_EQ(loupe::exporter::read_otlp_env(vars), "");
    EXPECT_EQ(vars.endpoint, "http://localhost:4318/custom/path");
    EXPECT_EQ(vars.endpoint_source, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    conversion.service_name = vars.service_name;
    conversion.resource_attributes = vars.resource_attributes;
    const otlp::attributes resource2 =
        otlp::read_request(loupe::viewer::to_otlp(zones_trace("otlp_env2", 1), conversion))[0].resource;
    EXPECT_EQ(resource2.at("service.name").text, "ignored");
}

TEST(OtlpExportEnv, BadValuesNameTheVariableAndThePosition) {
    const auto read = [](std::map<std::string, std::string> vars) {
        loupe::exporter::otlp_env out;
        return loupe::exporter::read_otlp_env(out, [&vars](const char* name) -> const char* {
            const auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        });
    };
    EXPECT_EQ(read({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318"}})
                  .rfind("OTEL_EXPORTER_OTLP_ENDPOINT 'https://collector:4318': position 1: https is not supported", 0),
              0u);
    EXPECT_EQ(read({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://host:99999/v1/traces"}}),
              "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT 'http://host:99999/v1/traces': position 13: port out of range; "
              "expected 1 to 65535");
    // A header's value is not repeated (it may be a key).
    EXPECT_EQ(read({{"OTEL_EXPORTER_OTLP_HEADERS", "a=1,secret"}}),
              "OTEL_EXPORTER_OTLP_HEADERS: position 5: expected key=value");
    EXPECT_EQ(read({{"OTEL_EXPORTER_OTLP_HEADERS", "a=x%0d%0aInjected: 1"}}),
              "OTEL_EXPORTER_OTLP_HEADERS: position 4: a control character in a value");
    EXPECT_EQ(read({{"OTEL_RESOURCE_ATTRIBUTES", "team=a%2"}}),
              "OTEL_RESOURCE_ATTRIBUTES 'team=a%2': position 7: '%' not followed by two hex digits");
    EXPECT_EQ(read({{"OTEL_RESOURCE_ATTRIBUTES", "bad key=1"}}),
              "OTEL_RESOURCE_ATTRIBUTES 'bad key=1': position 4: unexpected ' ' in a key");
    EXPECT_EQ(read({{"OTEL_RESOURCE_ATTRIBUTES", "=1"}}), "OTEL_RESOURCE_ATTRIBUTES '=1': position 1: empty key before '='");
    EXPECT_EQ(read({{"OTEL_RESOURCE_ATTRIBUTES", " a = 1 ,, b=2 "}}), "");
}

TEST(OtlpExportEndpoint, BadUrlsNameThePosition) {
    using loupe::exporter::check_endpoint;
    EXPECT_EQ(check_endpoint("http://127.0.0.1:4318/v1/traces"), "");
    EXPECT_EQ(check_endpoint("http://[::1]:4318/v1/traces"), "");
    EXPECT_EQ(check_endpoint("http://collector"), "");
    EXPECT_EQ(check_endpoint(""), "empty URL; expected http://HOST:PORT/PATH");
    EXPECT_EQ(check_endpoint("ftp://x"), "position 1: expected a URL starting with http://");
    EXPECT_EQ(check_endpoint("http://"), "position 8: missing host after http://");
    EXPECT_EQ(check_endpoint("http://host:"), "position 13: missing port number after ':'");
    EXPECT_EQ(check_endpoint("http://host:0/"), "position 13: port 0; expected 1 to 65535");
    EXPECT_EQ(check_endpoint("http://host:43x/"), "position 15: unexpected 'x' after the host; expected ':PORT' or '/PATH'");
    EXPECT_EQ(check_endpoint("http://host/v1?x=1"), "position 15: a query or fragment ('?') is not supported");
    EXPECT_EQ(check_endpoint("http://[::1/"), "position 8: '[' of an IPv6 address without ']'");
    EXPECT_EQ(check_endpoint("http://user@host/"), "position 12: user info in the URL is not supported");
}

TEST(OtlpExportEndpoint, AnExporterWithABadEndpointSendsNothingAndSaysWhy) {
    loupe::exporter::otlp_http_exporter exporter(fast_options("http//oops"));
    EXPECT_TRUE(exporter.stopped());
    EXPECT_FALSE(exporter.send(loupe::viewer::to_otlp(zones_trace("otlp_bad_endpoint", 3))));
    EXPECT_EQ(exporter.result().first_error,
              "endpoint 'http//oops': position 1: expected a URL starting with http://");
    EXPECT_EQ(exporter.result().spans, 3u);
}

}  // namespace
