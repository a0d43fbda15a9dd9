// The demo's HTTP server, the shop's front end: listens on 127.0.0.1 (an
// ephemeral port), accepts connections on one thread and serves each
// keep-alive connection on a worker from a fixed pool. Every request runs
// under a context scope built from its headers (user, session, request id)
// plus app and component, which is what lets a session record only one
// user's requests, and under an incoming_request scope: the request is a
// task (W3C Trace Context; the load generator sends no traceparent, so each
// task starts here) whose calls to the inventory and payment processes are
// its children, and the response carries its traceresponse. Accepted sockets
// go through loupe::io, so they are registered (named after their peer) from
// the moment they exist, long before a session starts. A request's
// X-Loupe-Flow header (the client's flow id) is continued where the request
// is handled and where its response goes out. Each worker keeps its own
// connections to the inventory and payment services.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/tasks.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http.hpp"
#include "shop.hpp"

namespace app_server {

class server {
public:
    /// `inventory_port` and `payment_port`: where the services a checkout
    /// calls listen on 127.0.0.1.
    server(int workers, const std::string& data_dir, int inventory_port, int payment_port) : shop_(data_dir) {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (listener_ < 0) throw std::runtime_error("socket() failed");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 64) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            ::close(listener_);
            throw std::runtime_error("cannot listen on 127.0.0.1");
        }
        port_ = ntohs(addr.sin_port);
        for (int i = 0; i < workers; ++i) {
            workers_.emplace_back([this, i, inventory_port, payment_port] {
                LOUPE_THREAD_NAME("http-worker-" + std::to_string(i + 1));
                downstream services(inventory_port, payment_port);
                serve_connections(services);
            });
        }
        acceptor_ = std::thread([this] {
            LOUPE_THREAD_NAME("http-acceptor");
            accept_loop();
        });
    }

    ~server() {
        stopping_ = true;
        ::shutdown(listener_, SHUT_RDWR);
        ::close(listener_);
        acceptor_.join();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        for (auto& w : workers_) w.join();
    }

    int port() const { return port_; }
    std::uint64_t requests_served() const { return served_.load(); }

private:
    void accept_loop() {
        while (!stopping_) {
            const int fd = loupe::io::accept(listener_, nullptr, nullptr);
            if (fd < 0) continue;
            std::lock_guard<std::mutex> lock(mutex_);
            connections_.push_back(fd);
            cv_.notify_one();
        }
    }

    void serve_connections(downstream& services) {
        for (;;) {
            int fd;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                cv_.wait(lock, [this] { return done_ || !connections_.empty(); });
                if (connections_.empty()) return;
                fd = connections_.front();
                connections_.pop_front();
            }
            serve(fd, services);
            loupe::io::close(fd);
        }
    }

    void serve(int fd, downstream& services) {
        std::string buffer;
        http_request request;
        while (read_request(fd, buffer, request)) {
            std::string body;
            int status;
            {
                // Who this request is for, from its headers: one context change.
                loupe::context_scope who({{loupe::context_field::user, request.header("x-user")},
                                          {loupe::context_field::session, request.header("x-session")},
                                          {loupe::context_field::request, request.header("x-request-id")},
                                          {loupe::context_field::app, "shop"},
                                          {loupe::context_field::component, shop::endpoint(request.path())}});
                // The request as a task: the caller's (traceparent) or, as
                // here, a new one. The calls checkout makes belong to it.
                const std::string call = request.method + " " + request.path();
                loupe::tasks::incoming_request task(request.headers, call);
                // The client's flow: 0 (no flow) when the header is missing or bad.
                const std::uint64_t flow = loupe::parse_flow_id(request.header("x-loupe-flow"));
                {
                    LOUPE_ZONE("handle_request");
                    LOUPE_FLOW("request received", flow);
                    status = shop_.handle(request, body, services);
                }
                ++served_;
                header_map response_headers;
                task.respond(response_headers, status);  // traceresponse
                // Still in the request's context: its response is its I/O.
                LOUPE_ZONE("write_response");
                LOUPE_FLOW("response sent", flow);
                if (!write_response(fd, status, body, response_headers)) return;
            }
        }
    }

    int listener_ = -1;
    int port_ = 0;
    shop shop_;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> served_{0};
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<int> connections_;
    bool done_ = false;
    std::thread acceptor_;
    std::vector<std::thread> workers_;
};

}  // namespace app_server
