// expect: the end of this chain is not traceable
// A chain that ends on a class with no traceable<T> specialization.
#include <loupe/params/chain.hpp>

#include <tuple>

struct Item {
    int qty = 0;
};

int main() {
    Item item;
    char buf[32];
    loupe::value_writer out(buf, sizeof buf);
    loupe::evaluate_chain(loupe::arg<1>, nullptr, std::forward_as_tuple(item), out);
}
