#include "instrumented_work.hpp"

#include <loupe/io.hpp>
#include <loupe/params.hpp>

#include <optional>
#include <ostream>

separate_work_result separate_work(int i) {
    LOUPE_ZONE("separate_work");
    const std::string request = "r-" + std::to_string(i);
    loupe::context_scope scope({{loupe::context_field::user, "alice"}, {loupe::context_field::request, request}});
    loupe::field_scope component(loupe::context_field::component, "checkout");
    separate_work_result out;
    out.flow = loupe::new_flow_id();
    LOUPE_FLOW("separate hand-over", out.flow);
    const loupe::context now = loupe::capture_context();
    out.user = std::string(now.get(loupe::context_field::user));
    out.request = std::string(now.get(loupe::context_field::request));
    out.component = std::string(now.get(loupe::context_field::component));
    return out;
}

void separate_out_of_order_scopes() {
    std::optional<loupe::field_scope> outer(std::in_place, loupe::context_field::user, "outer");
    std::optional<loupe::field_scope> inner(std::in_place, loupe::context_field::request, "inner");
    outer.reset();  // before inner: out of order
    inner.reset();
}

std::ostream& operator<<(std::ostream& os, const separate_money& m) {
    return os << m.cents / 100 << '.' << (m.cents % 100 < 10 ? "0" : "") << m.cents % 100 << " EUR";
}

std::size_t separate_cart::add(const std::string& sku, int qty, const separate_money& price) {
    LOUPE_METHOD("separate_cart::add(std::string const&,int,separate_money const&)", sku, qty, price);
    return sku.size() + static_cast<std::size_t>(qty);
}

long separate_read(int fd, char* buffer, std::size_t n) { return loupe::io::read(fd, buffer, n); }
