// expect: arg<N> is beyond the method's parameters
// arg<3> on a function with two parameters.
#include <loupe/params/chain.hpp>

#include <tuple>

int main() {
    int a = 1, b = 2;
    char buf[32];
    loupe::value_writer out(buf, sizeof buf);
    loupe::evaluate_chain(loupe::arg<3>, nullptr, std::forward_as_tuple(a, b), out);
}
