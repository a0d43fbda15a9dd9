// The demo's application: a toy shop with three endpoints, instrumented the
// way a runtime would use loupe: zones around the work, counters for sizes,
// a push metric of its own, "shop.items_priced" (the cart lines priced at
// checkout, charged to the zone that prices them), and two traced methods
// whose parameters sessions can record (parameter tracing): every endpoint
// runs its statements through db::execute_sql (database.hpp: a compile-time
// chain gives the table), and checkout prices an `order` with
// pricing::price, whose runtime spec `chain=call(line_count)` reaches the
// order's size through the reflection registry (registered below).
// Checkout calls two other processes (services.hpp) over HTTP: inventory
// (`GET /stock`, profiled) and payment (`POST /charge`, not profiled), each
// an outgoing_call of the request's task (service_client.hpp), passing the
// user, session and request id on in headers.
// The work is simulated with busy loops whose length depends on the input
// (and, for statements, on the table), so that some users' requests are
// measurably slower than others'; pricing also builds one line of text per
// item, so big carts allocate more. Its data lives in three files opened when
// the shop starts (so before any session): a catalog read by searches, a cart
// store written by cart updates, and an order journal appended at checkout,
// all through loupe::io.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/metrics/metric.hpp>
#include <loupe/params.hpp>
#include <loupe/params/reflect.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "database.hpp"
#include "http.hpp"
#include "service_client.hpp"

namespace app_server {

/// An order at checkout: one line of text per item of the cart.
class order {
public:
    order(std::string session, std::vector<std::string> lines) : session_(std::move(session)), lines_(std::move(lines)) {}
    std::size_t line_count() const { return lines_.size(); }
    const std::string& session() const { return session_; }

private:
    std::string session_;
    std::vector<std::string> lines_;
};

/// Prices orders. `price` is a traced method: a spec on
/// `app_server::pricing::price(order const&)` can record any value its
/// receiver or its order leads to, e.g. `param=1; chain=call(line_count)`.
class pricing {
public:
    /// The order's price in cents: looks the products up, then works per line.
    std::int64_t price(const order& o) const {
        LOUPE_METHOD("app_server::pricing::price(order const&)", o);
        db::execute_sql("SELECT price FROM products WHERE sku IN (" + std::to_string(o.line_count()) + " skus)");
        busy_for(std::chrono::microseconds(10 + 12 * static_cast<long>(o.line_count())));
        return 999 * static_cast<std::int64_t>(o.line_count());
    }

    /// What runtime chains may reach (specs name these; nothing else is
    /// exposed): order's getters and db::table_of.
    static void register_reflection() {
        loupe::reflect<order>("app_server::order")
            .method("line_count", &order::line_count)
            .method("session", &order::session);
        db::register_reflection();
    }
};

/// The services a checkout calls: one keep-alive connection to each, per
/// worker thread.
struct downstream {
    downstream(int inventory_port, int payment_port) : inventory(inventory_port), payment(payment_port) {}
    service_client inventory;
    service_client payment;
};

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
        pricing::register_reflection();
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
    int handle(const http_request& request, std::string& body, downstream& services) {
        const std::string path = request.path();
        if (path == "/search") return search(request, body);
        if (path == "/cart/add") return add_to_cart(request, body);
        if (path == "/checkout") return checkout(request, body, services);
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
            db::execute_sql("SELECT id, name FROM products WHERE name LIKE '%" + query + "%'");
            busy_for(std::chrono::microseconds(15 + 15 * query.size()));
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
            db::execute_sql("SELECT items FROM carts WHERE session = '" + request.header("x-session") + "'");
            busy_for(std::chrono::microseconds(12));
        }
        LOUPE_COUNTER("cart_items", items);
        {
            LOUPE_ZONE("save_cart");
            const std::string record = request.header("x-session") + " " + std::to_string(items) + "\n";
            const std::size_t slot = std::hash<std::string>{}(request.header("x-session")) % 64;
            loupe::io::pwrite(carts_fd_, record.data(), record.size(), static_cast<off_t>(slot * 64));
            db::execute_sql("UPDATE carts SET items = " + std::to_string(items) + " WHERE session = '" +
                            request.header("x-session") + "'");
            busy_for(std::chrono::microseconds(17));
        }
        body = "cart has " + std::to_string(items) + " items\n";
        return 200;
    }

    int checkout(const http_request& request, std::string& body, downstream& services) {
        LOUPE_FUNCTION();
        std::size_t items;
        {
            LOUPE_ZONE("load_cart");
            std::lock_guard<std::mutex> lock(mutex_);
            items = carts_[request.header("x-session")];
            db::execute_sql("SELECT items FROM carts WHERE session = '" + request.header("x-session") + "'");
            busy_for(std::chrono::microseconds(12));
        }
        {
            LOUPE_ZONE("check_stock");  // the inventory process: longer for bigger carts
            http_response stock;
            const int status = call_service(services.inventory, "inventory", "GET /stock", "GET",
                                            "/stock?sku=cart-" + request.header("x-session") +
                                                "&quantity=" + std::to_string(items),
                                            passed_on(request), stock);
            if (status != 200) return failed("inventory", status, body);
        }
        {
            LOUPE_ZONE("price_order");  // grows with the cart: big carts are slow and allocate more
            const std::string session = request.header("x-session");
            std::vector<std::string> order_lines;
            for (std::size_t i = 1; i <= items; ++i) order_lines.push_back(session + " item " + std::to_string(i));
            pricing_.price(order(session, std::move(order_lines)));
            loupe::metric_add(items_priced_, static_cast<std::int64_t>(items));
        }
        {
            LOUPE_ZONE("charge_card");  // the payment process (not profiled)
            busy_for(std::chrono::microseconds(20));  // the card's checks, here
            http_response charged;
            const int status = call_service(services.payment, "payment", "POST /charge", "POST", "/charge",
                                            passed_on(request), charged);
            if (status != 200) return failed("payment", status, body);
        }
        {
            LOUPE_ZONE("write_order");
            const std::string line = "order " + request.header("x-session") + " " + std::to_string(items) + " items\n";
            loupe::io::write(orders_fd_, line.data(), line.size());
            db::execute_sql("INSERT INTO orders VALUES ('" + request.header("x-session") + "', " +
                            std::to_string(items) + ")");
            std::lock_guard<std::mutex> lock(mutex_);
            carts_[request.header("x-session")] = 0;
            ++orders_;
        }
        body = "order placed (" + std::to_string(items) + " items)\n";
        return 200;
    }

    // The caller's identity, passed on to the services a request calls.
    static header_map passed_on(const http_request& request) {
        return {{"x-user", request.header("x-user")},
                {"x-session", request.header("x-session")},
                {"x-request-id", request.header("x-request-id")}};
    }
    // A service failed: 502, naming it.
    static int failed(const char* service, int status, std::string& body) {
        body = std::string(service) + (status < 0 ? ": no answer\n" : ": status " + std::to_string(status) + "\n");
        return 502;
    }

    static constexpr std::size_t catalog_page = 4096;
    static constexpr int catalog_pages = 16;

    const loupe::metric_id items_priced_ = loupe::metric("shop.items_priced", "items");
    std::string catalog_path_, carts_path_, orders_path_;
    int catalog_ = -1, carts_fd_ = -1, orders_fd_ = -1;
    std::mutex mutex_;
    std::map<std::string, std::size_t> carts_;  // session id -> items
    pricing pricing_;
    std::uint64_t orders_ = 0;
};

}  // namespace app_server
