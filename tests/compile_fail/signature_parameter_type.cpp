// expect: signature_parameter_type<2, (long int|long), double>
// The second parameter spelled "long", given a double.
#include <loupe/params.hpp>

void price(int count, double amount) { LOUPE_FUNCTION_PARAMS("price(int, long const&)", count, amount); }

int main() { price(1, 2.5); }
