// The demo's two other processes, run as `app_server --role inventory|payment
// --dir DIR` by the front end (processes.hpp):
//
// - inventory: `GET /stock?sku=S&quantity=N` checks the stock of a cart's
//   items, in a zone "stock_lookup" whose length grows with N. Each request
//   runs under a context scope built from the caller's x-user, x-session and
//   x-request-id headers (as the front end's requests do), so a session
//   filtered to one user records that user's calls here too. It is
//   profiled: it calls loupe::control::listen (traces under DIR), and the
//   front end starts and stops its session through that endpoint.
// - payment: `POST /charge` charges a card (about 100 us of work). It runs
//   no session: it is not profiled.
//
// Both speak W3C Trace Context: every request runs under an
// incoming_request scope built from its headers (the caller's task becomes
// the thread's task, REQUEST_IN and RETURN_OUT are recorded when a session
// records tasks) and its response carries the traceresponse header. So any
// other W3C participant could sit in the chain.
//
// The service: 127.0.0.1 on an ephemeral port, an acceptor thread and one
// thread per keep-alive connection (the front end keeps one connection per
// worker). It prints `listening on 127.0.0.1:PORT` and serves until its
// stdin closes or it gets SIGTERM, SIGINT or SIGHUP.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <loupe/control/listen.hpp>
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/tasks.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "database.hpp"
#include "live_export.hpp"
#include "http.hpp"
#include "service_client.hpp"

namespace app_server {

/// A small multi-threaded HTTP/1.1 service on 127.0.0.1 (see the top of this file).
class http_service {
public:
    /// Answers one request: returns the status, fills the response's extra
    /// headers and body.
    using handler = std::function<int(const http_request&, header_map& response_headers, std::string& body)>;

    http_service(std::string name, handler h) : name_(std::move(name)), handler_(std::move(h)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener_ < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 64) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            const int e = errno;
            ::close(listener_);
            throw std::runtime_error("cannot listen on 127.0.0.1: " + std::string(std::strerror(e)));
        }
        port_ = ntohs(addr.sin_port);
        acceptor_ = std::thread([this] {
            LOUPE_THREAD_NAME(name_ + "-acceptor");
            accept_loop();
        });
    }

    ~http_service() {
        stopping_ = true;
        ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
        acceptor_.join();
        ::close(listener_);
        // Only the acceptor touched the list; it has ended.
        for (auto& c : connections_) ::shutdown(c->fd, SHUT_RDWR);  // wakes the reads
        for (auto& c : connections_) {
            c->thread.join();
            loupe::io::close(c->fd);
        }
    }
    http_service(const http_service&) = delete;
    http_service& operator=(const http_service&) = delete;

    int port() const { return port_; }

private:
    struct connection {
        int fd = -1;
        std::thread thread;
        std::atomic<bool> done{false};
    };

    void accept_loop() {
        int accepted = 0;
        while (!stopping_) {
            const int fd = loupe::io::accept(listener_, nullptr, nullptr);
            if (fd < 0) {
                if (!stopping_ && errno != EINTR && errno != ECONNABORTED) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // e.g. EMFILE: do not spin
                }
                continue;
            }
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // best effort
            // Connections that ended: joined and closed here (their fds stay
            // open until then, so no other socket can take their number).
            connections_.erase(std::remove_if(connections_.begin(), connections_.end(),
                                              [](const std::unique_ptr<connection>& c) {
                                                  if (!c->done) return false;
                                                  c->thread.join();
                                                  loupe::io::close(c->fd);
                                                  return true;
                                              }),
                               connections_.end());
            auto c = std::make_unique<connection>();
            c->fd = fd;
            const std::string thread_name = name_ + "-connection-" + std::to_string(++accepted);
            try {
                c->thread = std::thread([this, raw = c.get(), thread_name] {
                    LOUPE_THREAD_NAME(thread_name);
                    serve(raw->fd);
                    raw->done = true;
                });
            } catch (const std::system_error&) {
                loupe::io::close(fd);  // no thread for it: the client sees the connection close
                continue;
            }
            connections_.push_back(std::move(c));
        }
    }

    void serve(int fd) {
        std::string buffer;
        http_request request;
        while (read_request(fd, buffer, request)) {
            header_map headers;
            std::string body;
            const int status = handler_(request, headers, body);
            if (!write_response(fd, status, body, headers)) return;
        }
    }

    std::string name_;
    handler handler_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread acceptor_;
    std::vector<std::unique_ptr<connection>> connections_;  // the acceptor's
};

/// inventory: GET /stock?sku=S&quantity=N.
inline int serve_stock(const http_request& request, header_map& response_headers, std::string& body) {
    // Who the call is for, as the front end passed it on.
    loupe::context_scope who({{loupe::context_field::user, request.header("x-user")},
                              {loupe::context_field::session, request.header("x-session")},
                              {loupe::context_field::request, request.header("x-request-id")},
                              {loupe::context_field::app, "inventory"},
                              {loupe::context_field::component, "stock"}});
    // The caller's task (traceparent), this handler a span of it.
    loupe::tasks::incoming_request task(request.headers, "GET /stock");
    int status = 404;
    body = "no such endpoint\n";
    if (request.method == "GET" && request.path() == "/stock") {
        LOUPE_ZONE("stock_lookup");
        const long quantity = std::max(1L, std::min(1000L, std::atol(request.query("quantity").c_str())));
        LOUPE_COUNTER("stock_quantity", quantity);
        busy_for(std::chrono::microseconds(20 + 6 * quantity));  // every line of the cart is looked up
        body = request.query("sku") + ": " + std::to_string(quantity) + " in stock\n";
        status = 200;
    }
    task.respond(response_headers, status);  // RETURN_OUT; writes traceresponse
    return status;
}

/// payment: POST /charge.
inline int serve_charge(const http_request& request, header_map& response_headers, std::string& body) {
    loupe::tasks::incoming_request task(request.headers, "POST /charge");
    int status = 404;
    body = "no such endpoint\n";
    if (request.method == "POST" && request.path() == "/charge") {
        LOUPE_ZONE("charge");
        busy_for(std::chrono::microseconds(100));
        body = "charged\n";
        status = 200;
    }
    task.respond(response_headers, status);
    return status;
}

/// main() of a child: `app_server --role inventory|payment --dir DIR
/// [--otlp URL]` (the inventory sends alice's requests there: live_export.hpp).
inline int run_role(int argc, char** argv) {
    std::string role, dir = ".", otlp;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string arg = argv[i];
        if (arg == "--role") {
            role = argv[i + 1];
        } else if (arg == "--dir") {
            dir = argv[i + 1];
        } else if (arg == "--otlp") {
            otlp = argv[i + 1];
        }
    }
    if (role != "inventory" && role != "payment") {
        std::fprintf(stderr, "app_server: --role '%s': expected inventory or payment\n", role.c_str());
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);
    // The stop signals, read from a signalfd: blocked before any thread starts,
    // so every thread inherits the mask (loupe's own threads block all signals).
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, s);
    const int signals =
        (::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) == 0) ? ::signalfd(-1, &stop_signals, SFD_CLOEXEC) : -1;
    if (signals < 0) {
        std::fprintf(stderr, "app_server (%s): signalfd: %s\n", role.c_str(), std::strerror(errno));
        return 1;
    }
    LOUPE_THREAD_NAME(role + "-main");
    std::optional<live_export> live;
    try {
        if (role == "inventory") {
            // Profiled: the front end starts and stops sessions here (docs/control.md).
            loupe::control::listen_options options;
            options.output_directory = dir;
            options.names = {"inventory"};  // the peer the front end calls it by: `loupe record` tags those calls
            loupe::control::listen(options);
            if (!otlp.empty()) live.emplace(otlp, "inventory");
        }
        http_service service(
            role, role == "inventory" ? http_service::handler(serve_stock) : http_service::handler(serve_charge));
        if (std::printf("listening on 127.0.0.1:%d\n", service.port()) < 0 || std::fflush(stdout) != 0) {
            throw std::runtime_error("cannot write to stdout: " + std::string(std::strerror(errno)));
        }
        // Serve until stdin closes (or fails) or a stop signal comes.
        for (bool serving = true; serving;) {
            pollfd p[2] = {{0, POLLIN, 0}, {signals, POLLIN, 0}};
            const int ready = ::poll(p, 2, -1);
            if (ready < 0) {
                if (errno == EINTR) continue;
                throw std::runtime_error("poll: " + std::string(std::strerror(errno)));
            }
            if (p[1].revents != 0) serving = false;
            if (p[0].revents != 0) {
                char discard[256];
                const ssize_t n = ::read(0, discard, sizeof discard);
                if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) serving = false;
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "app_server (%s): %s\n", role.c_str(), e.what());
        ::close(signals);
        return 1;
    }
    ::close(signals);
    if (live) std::fprintf(stderr, "%s\n", live->stop().c_str());
    if (role == "inventory") loupe::control::stop_listening();  // sessions still running end, files complete
    return 0;
}

}  // namespace app_server
