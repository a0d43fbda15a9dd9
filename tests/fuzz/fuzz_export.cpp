// Fuzz target: what `loupe export` reads from outside — the first byte picks
// the parser: 0 an endpoint URL (--otlp, OTEL_EXPORTER_OTLP_*ENDPOINT), 1 a
// key=value list (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES), 2 an
// HTTP reply head, 3 a chunked HTTP body, 4 an ExportTraceServiceResponse.
// Bad input must give the parser's error (with a message and a position
// inside the text), nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <loupe/export/detail/http_client.hpp>
#include <loupe/export/detail/key_values.hpp>
#include <loupe/export/detail/otlp_messages.hpp>
#include <loupe/export/detail/url.hpp>

namespace {
void check(bool ok) {
    if (!ok) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    namespace http = loupe::detail::http;
    namespace messages = loupe::detail::otlp_messages;
    switch (data[0] % 5) {
        case 0: {
            http::url u;
            const http::url_error e = http::parse_url(text, u);
            if (e) check(!e.what.empty() && e.position <= text.size() + 1);
            break;
        }
        case 1: {
            http::key_value_list list;
            const http::key_value_error e = http::parse_key_values(text, list);
            if (e) check(!e.what.empty() && e.position <= text.size() + 1);
            for (const auto& [key, value] : list) check(value.find('\n') == std::string::npos);
            break;
        }
        case 2: {
            http::response r;
            std::int64_t content_length = 0;
            bool chunked = false;
            std::string what;
            if (!http::client_detail::parse_head(text, r, content_length, chunked, what)) check(!what.empty());
            break;
        }
        case 3: {
            const std::string in(text);
            std::string body, what;
            const std::size_t max_body = 1024;
            const http::client_detail::parse_state s = http::client_detail::parse_chunked(in, 0, body, max_body, what);
            if (s == http::client_detail::parse_state::bad) check(!what.empty());
            check(body.size() <= max_body);
            break;
        }
        default: {
            messages::export_response r;
            (void)messages::decode_response(text, r);
            std::uint64_t spans = 0;
            (void)messages::count_spans(text, spans);
            (void)messages::status_message(text);
            break;
        }
    }
    return 0;
}
