// A sink that sends a session's spans to an OpenTelemetry collector while
// the session runs: OTLP/HTTP (protobuf), the mapping of docs/otlp.md.
//
//   auto otlp = loupe::sinks::otlp_http_sink::from_env();  // OTEL_EXPORTER_OTLP_* and friends
//   loupe::session_config cfg;
//   cfg.sinks = {otlp};
//   loupe::session s = loupe::start_session(cfg);
//   ...
//   s.stop();  // sends the rest, waits for it (at most shutdown_timeout)
//
// How it works: the collector thread encodes the records into windows of
// `export_interval` and converts each window into requests
// (detail/otlp_live_windows.hpp); a sender thread of the sink POSTs them
// (detail/otlp_sender.hpp). A span reaches the collector one to two
// intervals after it ended (default 2-4 s, plus up to the collector's
// 1 s flush), with its parent when that ended within about one interval
// after it; a zone longer than that is exported without the zones that
// ended inside it before its last window (they are roots of their own, or
// children of their task's span). Host threads are never involved: the
// hot path costs what it costs with any sink.
//
// Never silent: a request that cannot be sent (the collector is down, it
// answers an error, the queue is full) is counted in stats() and the
// first such failure is reported at once through loupe's error handler;
// when the session stops and anything was not accepted, close() fails
// with the counts, so the session's stats show a sink failure. Plain HTTP
// only: put an OpenTelemetry Collector on localhost in front of a TLS
// backend (docs/otlp.md).
//
// fork(): the child neither sends nor stops anything of the parent's
// sessions (their sinks stay with the parent, docs/sessions.md).
// Thread-safety: used by one session at a time; loupe calls it from the
// collector only; stats() from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "loupe/base/error.hpp"
#include "loupe/core/sink.hpp"
#include "loupe/export/otlp_env.hpp"
#include "loupe/export/otlp_http.hpp"
#include "loupe/sinks/detail/otlp_live_windows.hpp"
#include "loupe/sinks/detail/otlp_sender.hpp"
#include "loupe/viewer/otlp.hpp"

namespace loupe::sinks {

struct otlp_http_sink_options {
    /// Where and how to send: endpoint (default
    /// http://127.0.0.1:4318/v1/traces), headers, gzip, retries. The live
    /// sink's defaults wait less than `loupe export`'s: a request gives up
    /// after 30 s of retries, a connection after 5 s, a reply after 10 s.
    exporter::otlp_http_options http = live_defaults();
    /// How spans are made: service name, resource attributes, request size
    /// (default 4 MiB), span limits.
    viewer::otlp_options conversion;
    /// How often a window is cut and converted (checked at the collector's
    /// flush, about once a second). Longer: parents found for longer zones,
    /// spans later at the collector.
    std::chrono::milliseconds export_interval{2000};
    /// A window is cut early when its encoded records reach this (about
    /// 4-6 bytes per event): bounds the sink's memory to about three
    /// windows and one window pair's decoded model.
    std::size_t max_window_bytes = std::size_t{8} << 20;
    /// Requests waiting for the sender, in bytes; past it a request is
    /// dropped (counted, reported).
    std::size_t max_queue_bytes = std::size_t{32} << 20;
    /// How long a session's stop waits for the queue to be sent; then
    /// retries are cut short and what is left counts as unsent.
    std::chrono::milliseconds shutdown_timeout{5000};

    static exporter::otlp_http_options live_defaults() {
        exporter::otlp_http_options h;
        h.connect_timeout = std::chrono::milliseconds(5000);
        h.request_timeout = std::chrono::milliseconds(10000);
        h.max_retry_time = std::chrono::milliseconds(30000);
        h.max_backoff = std::chrono::milliseconds(5000);
        return h;
    }
};

/// Sends the spans of each session it is given to an OTLP/HTTP endpoint.
class otlp_http_sink final : public sink {
public:
    /// Throws loupe::error when `options.http.endpoint` is not an http:// URL
    /// ("otlp_http_sink: endpoint 'htp://x': position 1: ...").
    explicit otlp_http_sink(otlp_http_sink_options options = {})
        : options_(std::move(options)),
          sender_(options_.http, options_.max_queue_bytes),
          windows_(options_.conversion, options_.max_window_bytes,
                   [this](std::string&& request, std::uint64_t spans) { sender_.enqueue(std::move(request), spans); }) {
        const std::string problem = exporter::check_endpoint(options_.http.endpoint);
        if (!problem.empty()) {
            throw error("otlp_http_sink: endpoint '" + options_.http.endpoint + "': " + problem);
        }
    }
    ~otlp_http_sink() override { sender_.stop(std::chrono::milliseconds(0)); }
    otlp_http_sink(const otlp_http_sink&) = delete;
    otlp_http_sink& operator=(const otlp_http_sink&) = delete;

    /// `defaults` with what the OpenTelemetry environment variables say
    /// (<loupe/export/otlp_env.hpp>): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
    /// OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS (added),
    /// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES (added). Throws
    /// loupe::error naming the variable and the position of a bad value.
    static otlp_http_sink_options options_from_env(
        otlp_http_sink_options defaults = {},
        const std::function<const char*(const char*)>& get = [](const char* name) {
            return static_cast<const char*>(std::getenv(name));
        }) {
        exporter::otlp_env env;
        const std::string problem = exporter::read_otlp_env(env, get);
        if (!problem.empty()) throw error("otlp_http_sink: " + problem);
        if (!env.endpoint.empty()) defaults.http.endpoint = env.endpoint;
        defaults.http.headers.insert(defaults.http.headers.end(), env.headers.begin(), env.headers.end());
        if (!env.service_name.empty()) defaults.conversion.service_name = env.service_name;
        auto& attributes = defaults.conversion.resource_attributes;
        attributes.insert(attributes.end(), env.resource_attributes.begin(), env.resource_attributes.end());
        return defaults;
    }
    /// A sink made with options_from_env(defaults).
    static std::shared_ptr<otlp_http_sink> from_env(otlp_http_sink_options defaults = {}) {
        return std::make_shared<otlp_http_sink>(options_from_env(std::move(defaults)));
    }

    /// Starts the sender. Throws loupe::error when another session uses the sink.
    void open() override {
        if (in_use_) throw error("otlp_http_sink '" + options_.http.endpoint + "': already used by a running session");
        in_use_ = true;
        baseline_ = sender_.snapshot();
        window_started_ = std::chrono::steady_clock::now();
        sender_.start();
    }
    void abandon() noexcept override {
        sender_.stop(std::chrono::milliseconds(0));
        in_use_ = false;
    }

    void write(const record& r) override { windows_.write(r); }

    /// Cuts the window once export_interval has passed since the last cut.
    void flush() override {
        const auto now = std::chrono::steady_clock::now();
        if (!windows_.active() || now - window_started_ < options_.export_interval) return;
        window_started_ = now;
        windows_.cut();
    }

    /// Waits for the session's requests to be sent (at most
    /// shutdown_timeout). Throws loupe::error with the counts when any span
    /// of the session was not accepted.
    void close() override {
        if (!in_use_) return;
        in_use_ = false;
        sender_.stop(options_.shutdown_timeout);
        const otlp_http_sink_stats s = sender_.snapshot();
        const std::uint64_t spans = s.spans - baseline_.spans;
        const std::uint64_t lost = s.spans_lost() - baseline_.spans_lost();
        if (lost == 0) return;
        std::string what = "otlp_http_sink '" + options_.http.endpoint + "': " + std::to_string(lost) + " of " +
                           std::to_string(spans) + " spans not accepted (";
        const auto part = [&what](std::uint64_t n, const char* text) {
            if (n == 0) return;
            if (what.back() != '(') what += ", ";
            what += std::to_string(n) + " " + text;
        };
        part(s.spans_failed - baseline_.spans_failed, "not delivered");
        part(s.spans_queue_full - baseline_.spans_queue_full, "dropped, queue full");
        part(s.spans_unsent - baseline_.spans_unsent, "unsent at stop");
        part(s.spans_rejected - baseline_.spans_rejected, "rejected by the collector");
        what += ")";
        if (!s.first_error.empty()) what += "; first error: " + s.first_error;
        throw error(what);
    }

    /// What the sink did so far, over all its sessions.
    otlp_http_sink_stats stats() const { return sender_.snapshot(); }
    const otlp_http_sink_options& options() const noexcept { return options_; }

private:
    otlp_http_sink_options options_;
    detail::otlp_sender sender_;
    detail::otlp_live_windows windows_;
    std::chrono::steady_clock::time_point window_started_;
    otlp_http_sink_stats baseline_;  // at the session's open
    bool in_use_ = false;  // open() until close() or abandon()
};

}  // namespace loupe::sinks
