// expect: signature_parameter_count<1, 3>
// A signature with one parameter, given three arguments.
#include <loupe/params.hpp>

struct A {
    void m(int a) { LOUPE_METHOD("A::m(int)", a, a, a); }
};

int main() { A().m(1); }
