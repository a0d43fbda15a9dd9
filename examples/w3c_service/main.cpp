// w3c_service: a W3C Trace Context participant for the W3C validation test
// suite (github.com/w3c/trace-context, test/), built on loupe::tasks. It
// listens on 127.0.0.1, and on POST /test makes the calls the harness asks
// for, as a participant of the harness's trace (service.hpp). Run it, then
// point the suite at it:
//
//     w3c_service --port 5000
//     python3 test/test.py http://127.0.0.1:5000/test
//
// Prints `listening on 127.0.0.1:PORT` when ready (with --port 0, the port
// the system picked), then serves one connection at a time until killed.
// Refused requests and failed calls are logged on stderr.
//
// usage: w3c_service [--port N] [--tracestate-policy discard-on-any-error|drop-invalid-members]
//        exit status 2 for bad arguments, 1 when it cannot listen
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

#include "http_server.hpp"
#include "service.hpp"

namespace {

constexpr const char* usage =
    "usage: w3c_service [--port N] [--tracestate-policy discard-on-any-error|drop-invalid-members]\n"
    "  --port N               listen on 127.0.0.1:N (default 5000; 0: a free port, printed)\n"
    "  --tracestate-policy P  what to do with a tracestate that breaks the rules (duplicate keys,\n"
    "                         bad members, over 32 members): discard-on-any-error (default; the W3C\n"
    "                         suite's STRICT_LEVEL=2) drops the whole list, drop-invalid-members\n"
    "                         drops only the offending members\n";

struct options {
    std::uint16_t port = 5000;
    loupe::tasks::tracestate_policy policy = loupe::tasks::tracestate_policy::discard_on_any_error;
};

// Prints what is wrong with the arguments; false when something is.
bool parse_arguments(int argc, char** argv, options& o, bool& help) {
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return true;
        }
        std::string_view value;
        bool has_value = false;
        if (const std::size_t eq = arg.find('='); arg.substr(0, 2) == "--" && eq != std::string_view::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        if (arg != "--port" && arg != "--tracestate-policy") {
            std::fprintf(stderr, "w3c_service: unknown argument '%s'; expected --port N or --tracestate-policy P\n",
                         argv[i]);
            return false;
        }
        if (!has_value) {
            if (i + 1 >= argc) {
                std::fprintf(
                    stderr, "w3c_service: %s needs a value: %s\n", std::string(arg).c_str(),
                    arg == "--port" ? "a port number from 0 to 65535" : "discard-on-any-error or drop-invalid-members");
                return false;
            }
            value = argv[++i];
        }
        if (arg == "--port") {
            unsigned long port = 0;
            bool ok = !value.empty() && value.size() <= 5;
            for (const char c : value) {
                ok = ok && c >= '0' && c <= '9';
                if (ok) port = port * 10 + static_cast<unsigned long>(c - '0');
            }
            if (!ok || port > 65535) {
                std::fprintf(stderr, "w3c_service: --port '%s': expected a port number from 0 to 65535\n",
                             std::string(value).c_str());
                return false;
            }
            o.port = static_cast<std::uint16_t>(port);
        } else if (value == "discard-on-any-error") {
            o.policy = loupe::tasks::tracestate_policy::discard_on_any_error;
        } else if (value == "drop-invalid-members") {
            o.policy = loupe::tasks::tracestate_policy::drop_invalid_members;
        } else {
            std::fprintf(stderr,
                         "w3c_service: --tracestate-policy '%s': expected discard-on-any-error or "
                         "drop-invalid-members\n",
                         std::string(value).c_str());
            return false;
        }
    }
    return true;
}

// Reads one request from `fd`, answers it and closes the connection.
void serve_connection(int fd, const w3c_service::service_options& service, const w3c_service::server_limits& limits) {
    w3c_service::http_request request;
    const w3c_service::read_outcome got = w3c_service::read_request(fd, request, limits);
    if (got.kind == w3c_service::read_outcome::closed) {
        w3c_service::close_connection(fd, false);
        return;
    }
    if (got.kind == w3c_service::read_outcome::bad) {
        std::fprintf(stderr, "w3c_service: refused a request (%d): %s\n", got.status, got.message.c_str());
        w3c_service::write_response(fd, got.status, "", got.message + "\n", limits);
        w3c_service::close_connection(fd, true);
        return;
    }
    const w3c_service::http_response response = w3c_service::handle_request(request, service);
    w3c_service::write_response(fd, response.status, response.fields, response.body, limits);
    w3c_service::close_connection(fd, false);
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    bool help = false;
    if (!parse_arguments(argc, argv, o, help)) {
        std::fputs(usage, stderr);
        return 2;
    }
    if (help) {
        std::fputs(usage, stdout);
        return 0;
    }
    ::signal(SIGPIPE, SIG_IGN);  // a peer that went away is an error value, never a signal

    w3c_service::service_options service;
    service.policy = o.policy;
    const w3c_service::server_limits limits;
    try {
        w3c_service::listener listener(o.port);
        std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(listener.port()));
        std::fflush(stdout);
        for (;;) {
            const int fd = listener.accept_connection();
            if (fd >= 0) {
                serve_connection(fd, service, limits);
                continue;
            }
            if (errno == EINTR || errno == ECONNABORTED) continue;
            // Out of descriptors or memory: say so, and give the system a moment.
            std::fprintf(stderr, "w3c_service: accept: %s\n", std::strerror(errno));
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "w3c_service: %s\n", e.what());
        return 1;
    }
}
