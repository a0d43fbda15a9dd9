// What the W3C Trace Context test service does with a request. The harness
// of the W3C validation suite (github.com/w3c/trace-context, test/) sends
//
//     POST /test
//     traceparent: 00-12345678901234567890123456789012-1234567890123456-01
//     tracestate: foo=1
//
//     [{"url": "http://127.0.0.1:7777/callback.0", "arguments": []}]
//
// and checks the calls the service then makes to each url. The service
// takes the caller's context with loupe::tasks (extract_header_block: every
// Level 1 rule, repeated and differently cased fields included), makes its
// own call within that task (child_task: a new trace when nothing valid
// came), and POSTs each element's "arguments" text, byte for byte, to its
// url as a call of its own: the same trace id, a new parent id per call,
// the flags, and the tracestate as kept. Then it answers 200 with an empty
// body, a `traceresponse` with its own context (Level 2) and
// `Failed-Calls: N`: the calls that got no reply (an unsupported or
// unreachable url is logged and skipped, and the rest are still made).
// Anything else: 400 for a body that is not such an array (the message
// names the byte offset and what was expected there), 404 for another
// path, 405 for another method on /test.
//
// The tracestate policy is the service's choice (tracestate_problem.hpp):
// discard_on_any_error by default, which the suite's strict level (its
// default, STRICT_LEVEL=2) checks; drop_invalid_members is loupe's own
// default and what STRICT_LEVEL=1 allows.
//
// Cost: one outgoing connection per call, made in turn, each bounded by
// call_timeout. Thread-safety: reentrant (the log is the caller's to share).
#pragma once

#include <loupe/tasks/carrier.hpp>
#include <loupe/tasks/task_context.hpp>
#include <loupe/tasks/tracestate_problem.hpp>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "http_client.hpp"
#include "http_server.hpp"
#include "json_array.hpp"

namespace w3c_service {

struct service_options {
    loupe::tasks::tracestate_policy policy = loupe::tasks::tracestate_policy::discard_on_any_error;
    std::chrono::milliseconds call_timeout{5000};  ///< for each outgoing call's connect, and again for its reply
    std::FILE* log = stderr;                       ///< refused requests and failed calls; nullptr: none
    json_limits limits;
};

struct http_response {
    int status = 200;
    std::string fields;  ///< extra header lines, "Name: value\r\n"
    std::string body;
};

namespace detail {

/// `text` fit for one log line: at most 200 characters, control bytes as '?'.
inline std::string printable(std::string_view text) {
    std::string out;
    for (const char c : text.substr(0, 200)) {
        const auto u = static_cast<unsigned char>(c);
        out.push_back(u < 0x20 || u == 0x7f ? '?' : c);
    }
    if (text.size() > 200) out += "...";
    return out;
}

inline http_response run_test(const http_request& request, const service_options& o) {
    std::vector<call_spec> calls;
    if (const json_error e = parse_calls(request.body, calls, o.limits)) {
        const std::string message = "POST /test: the body is not a JSON array of calls: " + e.message();
        if (o.log != nullptr) std::fprintf(o.log, "w3c_service: %s\n", printable(message).c_str());
        return {400, "", message + "\n"};
    }

    // The caller's context; ours is a call within it, or a new trace (the
    // spec's "restart") when none came or it was invalid.
    const loupe::tasks::extract_result incoming = loupe::tasks::extract_header_block(request.fields, o.policy);
    const loupe::tasks::task_context ours = loupe::tasks::child_task(incoming.context);

    std::size_t failed = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const call_spec& call = calls[i];
        const auto note_failure = [&](const std::string& why) {
            ++failed;
            if (o.log != nullptr) {
                std::fprintf(o.log, "w3c_service: call %zu of %zu (%s) failed: %s\n", i + 1, calls.size(),
                             printable(call.url).c_str(), printable(why).c_str());
            }
        };
        http_url url;
        if (const std::string problem = parse_http_url(call.url, url); !problem.empty()) {
            note_failure(problem);
            continue;
        }
        const loupe::tasks::task_context outgoing = loupe::tasks::child_task(ours);
        std::string fields;
        loupe::tasks::inject_header_block(outgoing, fields);
        const post_result reply = post(url, fields, call.arguments, o.call_timeout);
        if (!reply.ok()) note_failure(reply.error);
    }

    http_response response;
    loupe::tasks::inject_response(ours, [&](std::string_view name, std::string_view value) {
        response.fields.append(name).append(": ").append(value).append("\r\n");
    });
    response.fields += "Failed-Calls: " + std::to_string(failed) + "\r\n";
    return response;
}

}  // namespace detail

/// The response to `request` (see the top of this file).
inline http_response handle_request(const http_request& request, const service_options& o) {
    if (request.path() != "/test") {
        return {404, "", "no such path: " + detail::printable(request.path()) + " (the service answers POST /test)\n"};
    }
    if (request.method != "POST") {
        return {405, "Allow: POST\r\n", "/test takes POST only, not " + detail::printable(request.method) + "\n"};
    }
    return detail::run_test(request, o);
}

}  // namespace w3c_service
