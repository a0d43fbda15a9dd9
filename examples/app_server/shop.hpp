// The demo's application: a toy shop with three endpoints, instrumented the
// way a runtime would use loupe: zones around the work, counters for sizes,
// and a push metric of its own, "shop.items_priced" (the cart lines priced
// at checkout, charged to the zone that prices them).
// The work is simulated with busy loops whose length depends on the input,
// so that some users' requests are measurably slower than others'; pricing
// also builds one line of text per item, so big carts allocate more. Its data
// lives in three files opened when the shop starts (so before any session):
// a catalog read by searches, a cart store written by cart updates, and an
// order journal appended at checkout, all through loupe::io.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/metrics.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "http.hpp"

namespace app_server {

inline void busy_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

class shop {
public:
    explicit shop(const std::string& data_dir)
        : catalog_path_(data_dir + "/catalog.db"), carts_path_(data_dir + "/carts.db"),
          orders_path_(data_dir + "/orders.log") {
        catalog_ = loupe::io::open(catalog_path_.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
        carts_fd_ = loupe::io::open(carts_path_.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
        orders_fd_ = loupe::io::open(orders_path_.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_APPEND, 0644);
        if (catalog_ < 0 || carts_fd_ < 0 || orders_fd_ < 0) {
            throw std::runtime_error("cannot create the shop's files in '" + data_dir + "'");
        }
        const std::string page(catalog_page, 'c');
        for (int i = 0; i < catalog_pages; ++i) loupe::io::write(catalog_, page.data(), page.size());
    }
    ~shop() {
        for (int fd : {catalog_, carts_fd_, orders_fd_}) loupe::io::close(fd);
        for (const std::string* path : {&catalog_path_, &carts_path_, &orders_path_}) loupe::io::unlink(path->c_str());
    }
    shop(const shop&) = delete;
    shop& operator=(const shop&) = delete;

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
            char page[catalog_page];
            const std::size_t at = std::hash<std::string>{}(query) % catalog_pages;
            loupe::io::pread(catalog_, page, sizeof page, static_cast<off_t>(at * catalog_page));
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
            const std::string record = request.header("x-session") + " " + std::to_string(items) + "\n";
            const std::size_t slot = std::hash<std::string>{}(request.header("x-session")) % 64;
            loupe::io::pwrite(carts_fd_, record.data(), record.size(), static_cast<off_t>(slot * 64));
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
            LOUPE_ZONE("price_order");  // grows with the cart: big carts are slow and allocate more
            const std::string session = request.header("x-session");
            std::vector<std::string> order_lines;
            for (std::size_t i = 1; i <= items; ++i) order_lines.push_back(session + " item " + std::to_string(i));
            busy_for(std::chrono::microseconds(30 + 12 * items));
            loupe::metric_add(items_priced_, static_cast<std::int64_t>(items));
        }
        {
            LOUPE_ZONE("charge_card");
            busy_for(std::chrono::microseconds(120));
        }
        {
            LOUPE_ZONE("write_order");
            const std::string line = "order " + request.header("x-session") + " " + std::to_string(items) + " items\n";
            loupe::io::write(orders_fd_, line.data(), line.size());
            std::lock_guard<std::mutex> lock(mutex_);
            carts_[request.header("x-session")] = 0;
            ++orders_;
        }
        body = "order placed (" + std::to_string(items) + " items)\n";
        return 200;
    }

    static constexpr std::size_t catalog_page = 4096;
    static constexpr int catalog_pages = 16;

    const loupe::metric_id items_priced_ = loupe::metric("shop.items_priced", "items");
    std::string catalog_path_, carts_path_, orders_path_;
    int catalog_ = -1, carts_fd_ = -1, orders_fd_ = -1;
    std::mutex mutex_;
    std::map<std::string, std::size_t> carts_;  // session id -> items
    std::uint64_t orders_ = 0;
};

}  // namespace app_server
