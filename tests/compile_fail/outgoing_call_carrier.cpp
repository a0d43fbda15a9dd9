// expect: the carrier is a std::map or std::unordered_map of std::string to std::string
// outgoing_call writes traceparent into a header map or through a setter: anything else is named at the call.
#include <string>
#include <vector>

#include <loupe/tasks.hpp>

int main() {
    std::vector<std::string> headers;
    loupe::tasks::outgoing_call call("inventory", "GET /stock", headers);
    return call.tagged() ? 1 : 0;
}
