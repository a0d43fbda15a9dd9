// `app_server --serve --otlp URL`: the front end and the inventory each run
// a session that records alice's requests and sends them, while they serve,
// to an OpenTelemetry collector (loupe's live OTLP sink): the checkouts and
// the stock requests they make arrive as one trace per request, across the
// two services.
#pragma once

#include <loupe/session.hpp>
#include <loupe/sinks/otlp_http_sink.hpp>

#include <memory>
#include <optional>
#include <string>

namespace app_server {

class live_export {
public:
    /// Starts the session; the sink takes OTEL_EXPORTER_OTLP_HEADERS and
    /// OTEL_RESOURCE_ATTRIBUTES from the environment, the endpoint and the
    /// service name from here. Throws loupe::error (a bad URL, a bad
    /// variable).
    live_export(const std::string& url, const std::string& service) : service_(service) {
        loupe::sinks::otlp_http_sink_options options = loupe::sinks::otlp_http_sink::options_from_env();
        options.http.endpoint = url;
        options.conversion.service_name = service;
        sink_ = std::make_shared<loupe::sinks::otlp_http_sink>(options);
        loupe::session_config cfg;
        cfg.name = "otlp-" + service;
        cfg.filter = R"(user == "alice")";
        cfg.sinks = {sink_};
        session_.emplace(loupe::start_session(cfg));
    }
    live_export(const live_export&) = delete;
    live_export& operator=(const live_export&) = delete;
    ~live_export() { stop(); }

    /// Stops the session (the sink sends the rest) and says what the
    /// collector accepted: "frontend: 1200 of 1200 spans accepted by URL".
    /// Idempotent: later calls return "".
    std::string stop() {
        if (!session_) return {};
        session_->stop();
        session_.reset();
        const loupe::sinks::otlp_http_sink_stats s = sink_->stats();
        return service_ + ": " + std::to_string(s.spans_accepted - s.spans_rejected) + " of " +
               std::to_string(s.spans) + " spans accepted by " + sink_->options().http.endpoint;
    }

private:
    std::string service_;
    std::shared_ptr<loupe::sinks::otlp_http_sink> sink_;
    std::optional<loupe::session> session_;
};

}  // namespace app_server
