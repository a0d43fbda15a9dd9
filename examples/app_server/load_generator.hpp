// The demo's built-in load: one client thread per (user, session) pair, each
// on its own keep-alive connection, sending a user-specific mix of requests.
// alice fills big carts before checking out (slow checkouts: carts of 3, 7
// and 14 items in turn), bob mostly searches, carol does a bit of everything.
// Each request starts a flow (loupe::new_flow_id) whose id travels in an
// X-Loupe-Flow header, as it would to a server in another process: the
// server continues it, and the client ends it when the response is in, so
// the trace draws client -> worker -> client. The client thread is annotated
// with the request's user, session and request id while it waits, so a
// session filtered to one user records that user's flow points.
//
// Two modes: a fixed number of requests per client with two checkpoints
// (the one-second demo), or, with requests_per_client 0, requests until
// cancel() with a pause between them (`app_server --serve`).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <loupe/loupe.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http.hpp"

namespace app_server {

class load_generator {
public:
    /// requests_per_client 0: until cancel(), `pause` between requests, no checkpoints.
    load_generator(int port, int requests_per_client, std::chrono::microseconds pause = {})
        : port_(port), per_client_(requests_per_client), pause_(pause) {
        const char* const users[] = {"alice", "bob", "carol"};
        for (const char* user : users) {
            for (int session = 1; session <= 2; ++session) {
                clients_.emplace_back([this, user, session] { run_client(user, session); });
            }
        }
    }
    ~load_generator() {
        cancel();  // on an error path: the clients stop at their next request
        release(2);
        join();
    }

    /// Makes every client stop before its next request.
    void cancel() { cancelled_ = true; }

    /// Blocks until every client has reached checkpoint `n` (1 or 2) or
    /// finished early (after a failure).
    void wait_for_checkpoint(int n) {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return arrived_[n - 1] == clients_.size(); });
    }
    /// Lets the clients go on past checkpoint `n` (and every earlier one).
    void release(int n) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            released_ = std::max(released_, n);
        }
        cv_.notify_all();
    }

    void join() {
        for (auto& c : clients_) {
            if (c.joinable()) c.join();
        }
    }
    std::uint64_t completed() const { return completed_.load(); }
    std::uint64_t failed() const { return failed_.load(); }
    std::uint64_t total() const { return static_cast<std::uint64_t>(per_client_) * clients_.size(); }

private:
    static std::string next_target(const std::string& user, int i) {
        if (user == "alice") {  // 3 adds, checkout, 7 adds, checkout, 14 adds, checkout
            const int at = i % 27;
            return at == 3 || at == 11 || at == 26 ? "/checkout" : "/cart/add";
        }
        if (user == "bob") return i % 10 == 9 ? "/cart/add" : "/search?q=lamp" + std::string(i % 5, 's');
        switch (i % 3) {
            case 0: return "/search?q=chair";
            case 1: return "/cart/add";
            default: return "/checkout";
        }
    }

    // Called by a client at checkpoint `n`: counts it in and waits for release.
    void checkpoint(int n) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++arrived_[n - 1];
        cv_.notify_all();
        cv_.wait(lock, [&] { return released_ >= n; });
    }
    // Called by a client that stops early: counts it in at the checkpoints
    // it will never reach, so the driver does not wait for it.
    void skip_checkpoints_after(int reached) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int n = reached + 1; n <= 2; ++n) ++arrived_[n - 1];
        cv_.notify_all();
    }

    void run_client(const std::string& user, int session) {
        int reached = 0;
        run_requests(user, session, reached);
        skip_checkpoints_after(reached);
    }

    void run_requests(const std::string& user, int session, int& reached) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(static_cast<std::uint16_t>(port_));
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            failed_ += static_cast<std::uint64_t>(per_client_);
            if (fd >= 0) ::close(fd);
            return;
        }
        const std::string session_id = user + "-s" + std::to_string(session);
        std::string buffer;
        std::uint64_t sent = 0;  // the request ids
        for (int i = 0; (per_client_ == 0 || i < per_client_) && !cancelled_; ++i, ++sent) {
            if (per_client_ == 0) {
                i %= 27 * 10 * 3;  // forever: the same mix (next_target's periods), no overflow
                std::this_thread::sleep_for(pause_);
            } else if (reached < 2 && i == (reached + 1) * per_client_ / 3) {
                checkpoint(++reached);
            }
            const std::string target = next_target(user, i);
            const std::string method = target.rfind("/search", 0) == 0 ? "GET" : "POST";
            const std::string request_id = session_id + "-r" + std::to_string(sent);
            const std::uint64_t flow = loupe::new_flow_id();
            const std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User: " + user +
                                        "\r\nX-Session: " + session_id + "\r\nX-Request-Id: " + request_id +
                                        "\r\nX-Loupe-Flow: " + loupe::flow_id_text(flow) +
                                        "\r\nContent-Length: 0\r\n\r\n";
            loupe::context_scope who({{loupe::context_field::user, user},
                                      {loupe::context_field::session, session_id},
                                      {loupe::context_field::request, request_id},
                                      {loupe::context_field::app, "load-generator"}});
            LOUPE_FLOW("request sent", flow);
            if (!send_all(fd, request) || read_response(fd, buffer) != 200) {
                ++failed_;
                break;
            }
            LOUPE_FLOW_END("response received", flow);
            ++completed_;
        }
        ::close(fd);
    }

    int port_;
    int per_client_;
    std::chrono::microseconds pause_;
    std::atomic<std::uint64_t> completed_{0};
    std::atomic<std::uint64_t> failed_{0};
    std::atomic<bool> cancelled_{false};
    std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t arrived_[2] = {0, 0};
    int released_ = 0;
    std::vector<std::thread> clients_;
};

}  // namespace app_server
