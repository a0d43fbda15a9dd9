// Fuzz target: a .loupe file's bytes, converted to a Perfetto trace, to
// Chrome JSON and to OTLP in memory, as `loupe convert` does. A malformed
// file must give loupe::trace_error, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include <loupe/format/reader.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/otlp.hpp>
#include <loupe/viewer/perfetto.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string out;
    try {
        loupe::viewer::convert_to_perfetto(data, size, out);
    } catch (const loupe::trace_error&) {
    }
    try {
        loupe::viewer::convert_to_chrome_json(data, size, out);
    } catch (const loupe::trace_error&) {
    }
    try {
        out = loupe::viewer::to_otlp(loupe::read_trace(data, size));
    } catch (const loupe::trace_error&) {
    }
    return 0;
}
