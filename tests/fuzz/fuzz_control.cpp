// Fuzz target: the control protocol's texts (docs/control.md) — the first
// byte picks the parser: 0 a request line as an endpoint reads it
// (remote::parse_request: command, config keys and values, quoting), 1 a
// reply line as a client reads it (remote::parse_reply). Bad text must give
// the parser's error (loupe::error) with a message, nothing else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <loupe/remote/protocol.hpp>
#include <loupe/remote/reply.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        if (data[0] % 2 == 0) {
            const loupe::remote::request r = loupe::remote::parse_request(text);
            // What a client would send for the same config parses back the same.
            if (r.command == loupe::remote::command::start && !r.start.filter.empty()) {
                const std::string again = "start filter=" + loupe::remote::quote_value(r.start.filter);
                if (loupe::remote::parse_request(again).start.filter != r.start.filter) __builtin_trap();
            }
        } else {
            (void)loupe::remote::parse_reply(text);
        }
    } catch (const loupe::error& e) {
        if (e.what()[0] == '\0') __builtin_trap();  // an error says what is wrong
    }
    return 0;
}
