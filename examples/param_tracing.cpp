// Parameter tracing: "which parameter values make this method slow?",
// answered without rebuilding. The patent's SQL case (US 9,129,056 ¶0159):
// `execute_sql(sql)` is traced with a chain that extracts the table name, so
// the report gives the time per table; and a getter chain on a domain object
// (an order's line count) shows which order sizes cost most.
//
// The program runs a small workload twice: first with a session whose specs
// are compile-time chains registered at the sites (chain=@table), then —
// while the workload keeps running — with specs changed to runtime chains
// that reach the same values through the reflection registry. It writes
// param_tracing.loupe and prints the report `loupe stats FILE --params`
// prints.
//
// usage: param_tracing [FILE]
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/params.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/param_stats.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace db {

/// The table an SQL statement works on: the word after FROM, INTO or UPDATE.
std::string table_of(const std::string& sql) {
    for (const char* keyword : {"FROM ", "INTO ", "UPDATE "}) {
        const std::size_t at = sql.find(keyword);
        if (at == std::string::npos) continue;
        const std::size_t begin = at + std::char_traits<char>::length(keyword);
        return sql.substr(begin, sql.find_first_of(" ;(", begin) - begin);
    }
    return "?";
}

void busy_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

/// Runs a statement. Some tables are slower than others: what the trace is
/// to find out.
void execute_sql(const std::string& sql) {
    LOUPE_FUNCTION_CHAINS("db::execute_sql(std::string const&)", (sql),
                          loupe::named("table", loupe::arg<1> | loupe::apply(&table_of)));
    const std::string table = table_of(sql);
    busy_for(std::chrono::microseconds(table == "orders" ? 120 : table == "audit_log" ? 60 : 15));
}

}  // namespace db

namespace shop {

struct Line {
    std::string sku;
    int qty;
};

class Order {
public:
    Order(std::string customer, std::vector<Line> lines) : customer_(std::move(customer)), lines_(std::move(lines)) {}
    std::size_t line_count() const { return lines_.size(); }
    const std::string& customer() const { return customer_; }
    const std::vector<Line>& lines() const { return lines_; }

private:
    std::string customer_;
    std::vector<Line> lines_;
};

class Checkout {
public:
    void price(const Order& order) {
        LOUPE_METHOD_CHAINS("shop::Checkout::price(Order const&)", (order),
                            loupe::named("lines", loupe::arg<1> | loupe::call(&Order::line_count)));
        db::execute_sql("SELECT price FROM products WHERE sku IN (...)");
        db::busy_for(std::chrono::microseconds(10 * static_cast<int>(order.line_count())));
        db::execute_sql("INSERT INTO orders VALUES ('" + order.customer() + "', ...)");
    }
};

// What runtime chains may reach (specs name these; nothing else is exposed).
const bool reflected = [] {
    loupe::reflect<Order>("shop::Order").method("line_count", &Order::line_count).method("customer", &Order::customer);
    loupe::reflect_function("db::table_of", &db::table_of);
    return true;
}();

}  // namespace shop

namespace {

void workload(int rounds) {
    shop::Checkout checkout;
    for (int i = 0; i < rounds; ++i) {
        std::vector<shop::Line> lines(static_cast<std::size_t>(1 + i % 4) * 5, shop::Line{"SKU", 1});
        checkout.price(shop::Order(i % 2 ? "alice" : "bob", std::move(lines)));
        db::execute_sql("UPDATE audit_log SET seen = 1");
        db::execute_sql("SELECT name FROM users WHERE id = 7");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "param_tracing.loupe";
    try {
        loupe::session_config config;
        config.name = "sql-by-table";
        config.kinds = loupe::kinds::methods;
        config.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
        // Compile-time chains registered at the sites, selected by name.
        config.params =
            "method=db::execute_sql(std::string const&); chain=@table\n"
            "method=shop::Checkout::price(Order const&); chain=@lines\n";
        loupe::session session = loupe::start_session(config);
        workload(100);
        // The same questions through runtime chains (changed while running):
        // the reflection registry resolves apply(db::table_of) and call(line_count).
        session.set_params(
            "method=execute_sql(std::string const&); param=1; chain=apply(db::table_of); name=table\n"
            "method=Checkout::price(Order const&); param=1; chain=call(line_count); name=lines\n"
            "method=Checkout::price(Order const&); param=1; chain=call(customer); name=customer\n");
        workload(100);
        const loupe::session_stats stats = session.stop();
        std::printf("%llu method calls recorded in %s\n\n", static_cast<unsigned long long>(stats.delivered),
                    path.c_str());

        const loupe::trace trace = loupe::read_trace_file(path);
        std::printf("== time by parameter value (loupe stats %s --params) ==\n", path.c_str());
        std::fputs(loupe::report::format_param_stats(loupe::report::param_stats(trace, 5)).c_str(), stdout);
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "param_tracing: %s\n", e.what());
        return 1;
    }
    return 0;
}
