// expect: field\(&T::member\) is applied to a value that is not a T
// The parameter is an Order; the field belongs to Line, an unrelated class.
#include <loupe/params/chain.hpp>

#include <tuple>

struct Line {
    int qty = 0;
};
struct Order {
    int id = 0;
};

int main() {
    Order order;
    char buf[32];
    loupe::value_writer out(buf, sizeof buf);
    loupe::evaluate_chain(loupe::arg<1> | loupe::field(&Line::qty), nullptr, std::forward_as_tuple(order), out);
}
