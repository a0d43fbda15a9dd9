// expect: call\(&T::f\) needs a const member function
// call() takes const, no-argument member functions only: a non-const getter could change the traced object.
#include <loupe/params/chain.hpp>

struct Counter {
    int next() { return ++n; }
    int n = 0;
};

static constexpr auto chain = loupe::arg<1> | loupe::call(&Counter::next);

int main() { return static_cast<int>(chain.size()); }
