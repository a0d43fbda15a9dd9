// The OpenTelemetry exporter's standard environment variables, read and
// checked:
//
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  the full URL of the traces endpoint
//   OTEL_EXPORTER_OTLP_ENDPOINT         a base URL; "/v1/traces" is appended
//                                       (used when the first is not set)
//   OTEL_EXPORTER_OTLP_HEADERS          key=value,... sent with each request
//                                       (values percent-decoded)
//   OTEL_SERVICE_NAME                   the resource's service.name
//   OTEL_RESOURCE_ATTRIBUTES            key=value,... added to the resource
//                                       (values percent-decoded; service.name
//                                       from OTEL_SERVICE_NAME wins)
//
// A variable set to the empty string counts as not set, as the
// specification says. A bad value is an error naming the variable and the
// 1-based position in its value; nothing throws but std::bad_alloc.
//
//   loupe::exporter::otlp_env env;
//   const std::string problem = loupe::exporter::read_otlp_env(env);
//   if (!problem.empty()) { /* "OTEL_EXPORTER_OTLP_HEADERS: position 4: expected key=value" */ }
//
// Cost: linear in the variables' lengths. Thread-safety: reads the
// environment (std::getenv by default): not safe against a concurrent
// setenv, like any getenv.
#pragma once

#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/export/detail/key_values.hpp"
#include "loupe/export/otlp_http.hpp"

namespace loupe::exporter {

/// What the environment says; empty fields where it says nothing.
struct otlp_env {
    std::string endpoint;         ///< the traces endpoint's full URL
    std::string endpoint_source;  ///< the variable it came from
    std::vector<std::pair<std::string, std::string>> headers;
    std::string service_name;
    std::vector<std::pair<std::string, std::string>> resource_attributes;
};

/// Reads the variables through `get` (a getenv). Returns "" and fills
/// `out`, or what is wrong ("OTEL_EXPORTER_OTLP_ENDPOINT 'https://x':
/// position 1: https is not supported ...").
inline std::string read_otlp_env(otlp_env& out,
                                 const std::function<const char*(const char*)>& get = [](const char* name) {
                                     return static_cast<const char*>(std::getenv(name));
                                 }) {
    out = otlp_env{};
    const auto value = [&](const char* name) {
        const char* v = get(name);
        return v != nullptr ? std::string(v) : std::string();
    };
    const std::string traces = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    const std::string base = value("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (!traces.empty()) {
        out.endpoint = traces;
        out.endpoint_source = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
    } else if (!base.empty()) {
        out.endpoint = base + (base.back() == '/' ? "v1/traces" : "/v1/traces");
        out.endpoint_source = "OTEL_EXPORTER_OTLP_ENDPOINT";
    }
    if (!out.endpoint.empty()) {
        const std::string problem = check_endpoint(out.endpoint);
        if (!problem.empty()) {
            return out.endpoint_source + " '" + (traces.empty() ? base : traces) + "': " + problem;
        }
    }
    const auto key_values = [&](const char* name, std::vector<std::pair<std::string, std::string>>& list) {
        const std::string text = value(name);
        const loupe::detail::http::key_value_error e = loupe::detail::http::parse_key_values(text, list);
        if (!e) return std::string();
        // Headers often hold a key: their value is not repeated in the message.
        const bool secret = std::string_view(name) == "OTEL_EXPORTER_OTLP_HEADERS";
        return std::string(name) + (secret ? std::string() : " '" + text + "'") + ": position " +
               std::to_string(e.position) + ": " + e.what;
    };
    std::string problem = key_values("OTEL_EXPORTER_OTLP_HEADERS", out.headers);
    if (problem.empty()) problem = key_values("OTEL_RESOURCE_ATTRIBUTES", out.resource_attributes);
    if (!problem.empty()) return problem;
    out.service_name = value("OTEL_SERVICE_NAME");
    return {};
}

}  // namespace loupe::exporter
