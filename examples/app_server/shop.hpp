// The demo's application: a toy shop with three endpoints, instrumented the
// way a runtime would use loupe (zones around the work, counters for sizes).
// The work is simulated with busy loops whose length depends on the input,
// so that some users' requests are measurably slower than others'.
#pragma once

#include <loupe/loupe.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "http.hpp"

namespace app_server {

inline void busy_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

class shop {
public:
    /// Handles one request; returns the status and fills `body`.
    int handle(const http_request& request, std::string& body) {
        const std::string path = request.path();
        if (path == "/search") return search(request, body);
        if (path == "/cart/add") return add_to_cart(request, body);
        if (path == "/checkout") return checkout(request, body);
        body = "no such endpoint\n";
        return 404;
    }

    /// The endpoint name a path belongs to (used as the `component` field).
    static const char* endpoint(const std::string& path) {
        if (path == "/search") return "search";
        if (path == "/cart/add") return "cart";
        if (path == "/checkout") return "checkout";
        return "unknown";
    }

private:
    int search(const http_request& request, std::string& body) {
        LOUPE_FUNCTION();
        const std::string query = request.target.substr(request.target.find('=') + 1);
        {
            LOUPE_ZONE("query_index");
            busy_for(std::chrono::microseconds(40 + 15 * query.size()));
        }
        {
            LOUPE_ZONE("render_results");
            busy_for(std::chrono::microseconds(30));
        }
        body = "results for " + query + "\n";
        return 200;
    }

    int add_to_cart(const http_request& request, std::string& body) {
        LOUPE_FUNCTION();
        std::size_t items;
        {
            LOUPE_ZONE("load_cart");
            std::lock_guard<std::mutex> lock(mutex_);
            items = ++carts_[request.header("x-session")];
            busy_for(std::chrono::microseconds(20));
        }
        LOUPE_COUNTER("cart_items", items);
        {
            LOUPE_ZONE("save_cart");
            busy_for(std::chrono::microseconds(25));
        }
        body = "cart has " + std::to_string(items) + " items\n";
        return 200;
    }

    int checkout(const http_request& request, std::string& body) {
        LOUPE_FUNCTION();
        std::size_t items;
        {
            LOUPE_ZONE("load_cart");
            std::lock_guard<std::mutex> lock(mutex_);
            items = carts_[request.header("x-session")];
            busy_for(std::chrono::microseconds(20));
        }
        {
            LOUPE_ZONE("price_order");  // grows with the cart: big carts are slow
            busy_for(std::chrono::microseconds(30 + 12 * items));
        }
        {
            LOUPE_ZONE("charge_card");
            busy_for(std::chrono::microseconds(120));
        }
        {
            LOUPE_ZONE("write_order");
            std::lock_guard<std::mutex> lock(mutex_);
            carts_[request.header("x-session")] = 0;
            ++orders_;
        }
        body = "order placed (" + std::to_string(items) + " items)\n";
        return 200;
    }

    std::mutex mutex_;
    std::map<std::string, std::size_t> carts_;  // session id -> items
    std::uint64_t orders_ = 0;
};

}  // namespace app_server
