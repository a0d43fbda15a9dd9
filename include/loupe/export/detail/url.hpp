// Parses the URL of an OTLP/HTTP endpoint: http://HOST[:PORT][/PATH].
// HOST is a name, an IPv4 address or a bracketed IPv6 address; PORT 1 to
// 65535 (default 80); PATH defaults to "/". https:// is refused with its
// own message (no TLS here), as are user info, a query or a fragment.
//
// Cost: linear in the URL. Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loupe::detail::http {

struct url {
    std::string host;  ///< without brackets for IPv6
    std::uint16_t port = 80;
    std::string path = "/";  ///< starts with '/'
    /// "host:port" ("[::1]:4318" for IPv6), as messages name the endpoint.
    std::string authority() const {
        const bool v6 = host.find(':') != std::string::npos;
        return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
    }
    /// The Host header's value.
    std::string host_header() const {
        const bool v6 = host.find(':') != std::string::npos;
        const std::string h = v6 ? "[" + host + "]" : host;
        return port == 80 ? h : h + ":" + std::to_string(port);
    }
};

/// What parse_url found wrong: a message and the 1-based position of the
/// character it is about (0: the whole URL).
struct url_error {
    std::string what;
    std::size_t position = 0;
    explicit operator bool() const noexcept { return !what.empty(); }
};

inline bool url_host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_';
}

/// Parses `text` into `out`; returns what is wrong, or an empty error.
inline url_error parse_url(std::string_view text, url& out) {
    out = url{};
    if (text.empty()) return {"empty URL; expected http://HOST:PORT/PATH", 0};
    constexpr std::string_view scheme = "http://";
    const auto lower_prefix = [&](std::string_view p) {
        if (text.size() < p.size()) return false;
        for (std::size_t i = 0; i < p.size(); ++i) {
            char c = text[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c != p[i]) return false;
        }
        return true;
    };
    if (lower_prefix("https://")) {
        return {"https is not supported (loupe sends plain HTTP, no TLS); send to an OpenTelemetry Collector on "
                "localhost (http://127.0.0.1:4318/v1/traces) that forwards over TLS",
                1};
    }
    if (!lower_prefix(scheme)) return {"expected a URL starting with http://", 1};
    std::size_t i = scheme.size();
    const std::size_t host_at = i;
    if (i < text.size() && text[i] == '[') {
        const std::size_t close = text.find(']', i);
        if (close == std::string_view::npos) return {"'[' of an IPv6 address without ']'", i + 1};
        for (std::size_t k = i + 1; k < close; ++k) {
            const char c = text[k];
            if (!(c == ':' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                return {std::string("unexpected '") + c + "' in an IPv6 address", k + 1};
            }
        }
        if (close == i + 1) return {"empty IPv6 address", i + 1};
        out.host = std::string(text.substr(i + 1, close - i - 1));
        i = close + 1;
    } else {
        while (i < text.size() && url_host_char(text[i])) ++i;
        out.host = std::string(text.substr(host_at, i - host_at));
        if (out.host.empty()) {
            if (i < text.size()) return {std::string("unexpected '") + text[i] + "' where the host should be", i + 1};
            return {"missing host after http://", i + 1};
        }
    }
    if (i < text.size() && text[i] == ':') {
        const std::size_t port_at = ++i;
        std::uint32_t port = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            port = port * 10 + static_cast<std::uint32_t>(text[i] - '0');
            if (port > 65535) return {"port out of range; expected 1 to 65535", port_at + 1};
            ++i;
        }
        if (i == port_at) return {"missing port number after ':'", port_at + 1};
        if (port == 0) return {"port 0; expected 1 to 65535", port_at + 1};
        out.port = static_cast<std::uint16_t>(port);
    }
    if (i < text.size() && text[i] == '@') return {"user info in the URL is not supported", i + 1};
    if (i < text.size() && text[i] != '/') {
        return {std::string("unexpected '") + text[i] + "' after the host; expected ':PORT' or '/PATH'", i + 1};
    }
    if (i < text.size()) {
        for (std::size_t k = i; k < text.size(); ++k) {
            const auto c = static_cast<unsigned char>(text[k]);
            if (c == '?' || c == '#') return {std::string("a query or fragment ('") + text[k] + "') is not supported", k + 1};
            if (c <= 0x20 || c >= 0x7f) return {"a space or control character in the path", k + 1};
        }
        out.path = std::string(text.substr(i));
    }
    return {};
}

}  // namespace loupe::detail::http
