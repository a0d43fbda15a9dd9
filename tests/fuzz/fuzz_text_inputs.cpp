// Fuzz target: the text an operator types, by parser — the first byte picks
// it: 0 thread filter, 1 parameter specs, 2 runtime chain, 3 method
// signature, 4 task rules. Bad text must give the parser's error (loupe::error, or
// chain_syntax_error for chains) with a message, nothing else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <loupe/core/filter.hpp>
#include <loupe/core/task_rules.hpp>
#include <loupe/params/detail/param_spec.hpp>
#include <loupe/params/detail/runtime_chain_parser.hpp>
#include <loupe/params/detail/signature_parser.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        switch (data[0] % 5) {
            case 0: (void)loupe::filter::parse(text).to_string(); break;
            case 1: (void)loupe::detail::parse_param_specs(text); break;
            case 2: (void)loupe::detail::parse_chain(text); break;
            case 3: (void)loupe::detail::parse_signature(text); break;
            default: {
                const loupe::task_rules rules = loupe::task_rules::parse(text);
                (void)rules.tags("inventory:8080", "GET /stock");
                break;
            }
        }
    } catch (const loupe::error& e) {
        if (e.what()[0] == '\0') __builtin_trap();  // an error says what is wrong
    } catch (const loupe::detail::chain_syntax_error& e) {
        if (e.what()[0] == '\0') __builtin_trap();
    }
    return 0;
}
