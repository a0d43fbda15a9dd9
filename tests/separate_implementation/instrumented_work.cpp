#include "instrumented_work.hpp"

#include <optional>

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
