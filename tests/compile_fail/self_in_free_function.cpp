// expect: `self` \(arg<0>\) is used where there is no receiver
// A free function has no *this: its receiver type is void.
#include <loupe/params/chain.hpp>

#include <tuple>

struct Cart {
    int size() const { return 0; }
};

int main() {
    int a = 1;
    char buf[32];
    loupe::value_writer out(buf, sizeof buf);
    loupe::evaluate_chain(loupe::self | loupe::call(&Cart::size), nullptr, std::forward_as_tuple(a), out);
}
