// The shop's "database": every endpoint runs SQL-like statements through
// db::execute_sql, a traced function (parameter tracing, US 9,129,056
// ¶0159). Its site registers a compile-time chain, `table`, that extracts the
// table a statement works on (loupe::apply(&table_of)), so a session whose
// specs say `chain=@table` gets the time per table — which statements are
// slow is a matter of their parameter, not of the function. Some tables are
// slower than others (simulated with busy loops): orders has no index, so
// its inserts are slow; carts is small and fast.
//
// `table_of` is also registered in the reflection registry, so a runtime
// spec can reach the same value: `param=1; chain=apply(app_server::db::table_of)`.
#pragma once

#include <loupe/loupe.hpp>
#include <loupe/params.hpp>
#include <loupe/params/reflect.hpp>

#include <chrono>
#include <string>

namespace app_server {

inline void busy_for(std::chrono::microseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

namespace db {

/// The table an SQL statement works on: the word after FROM, INTO or UPDATE
/// ("?" when there is none).
inline std::string table_of(const std::string& sql) {
    for (const char* keyword : {"FROM ", "INTO ", "UPDATE "}) {
        const std::size_t at = sql.find(keyword);
        if (at == std::string::npos) continue;
        const std::size_t begin = at + std::char_traits<char>::length(keyword);
        return sql.substr(begin, sql.find_first_of(" ;(", begin) - begin);
    }
    return "?";
}

/// What a statement on `table` costs (the simulated work).
inline std::chrono::microseconds statement_cost(const std::string& table) {
    if (table == "orders") return std::chrono::microseconds(90);    // no index: every insert scans
    if (table == "products") return std::chrono::microseconds(25);  // a LIKE or IN over the catalog
    return std::chrono::microseconds(8);                              // carts: one row by key
}

/// Runs a statement. Traced: specs can ask for `chain=@table` (the table it
/// works on) or any runtime chain on its one parameter.
inline void execute_sql(const std::string& sql) {
    LOUPE_FUNCTION_CHAINS("app_server::db::execute_sql(std::string const&)", (sql),
                          loupe::named("table", loupe::arg<1> | loupe::apply(&table_of)));
    busy_for(statement_cost(table_of(sql)));
}

/// Makes `table_of` reachable from runtime chains (`apply(app_server::db::table_of)`).
inline void register_reflection() { loupe::reflect_function("app_server::db::table_of", &table_of); }

}  // namespace db

}  // namespace app_server
