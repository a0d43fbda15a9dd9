// Sends OTLP trace requests (the batches loupe::viewer::write_otlp makes)
// to an OpenTelemetry collector over OTLP/HTTP: one HTTP/1.1 POST of
// `application/x-protobuf` per batch, optionally gzip-compressed, with
// retries on 429, 502, 503, 504 and connection errors (exponential
// backoff, Retry-After honoured and capped), and the collector's partial
// success read back.
//
//   loupe::exporter::otlp_http_options http;
//   http.endpoint = "http://127.0.0.1:4318/v1/traces";
//   const loupe::exporter::otlp_http_result r =
//       loupe::exporter::export_otlp_http(loupe::read_trace_file("out.loupe"), {}, http);
//   if (!r.ok()) std::fprintf(stderr, "%s\n", r.first_error.c_str());
//
// Plain HTTP only, no TLS: to reach a TLS backend, run an OpenTelemetry
// Collector on localhost and let it forward (docs/otlp.md).
//
// Errors are values (otlp_http_result), never exceptions, except
// std::bad_alloc and what the caller's callbacks throw. After a batch that
// could not be delivered (retries spent, or a reply that is not to be
// retried), the exporter sends nothing more: later batches are counted,
// not sent, so one dead endpoint costs one batch's retries, not every
// batch's.
//
// Cost: per batch one TCP connection and one request; gzip about 1–2 ns
// per byte; the wait between attempts (at most max_backoff each, at most
// max_retry_time per batch). Blocking, on the calling thread.
// Thread-safety: an otlp_http_exporter is used by one thread at a time;
// distinct exporters are independent.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "loupe/export/detail/http_client.hpp"
#include "loupe/export/detail/otlp_messages.hpp"
#include "loupe/export/detail/url.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/viewer/otlp.hpp"

namespace loupe::exporter {

/// A retry about to happen, for a progress display.
struct otlp_retry_notice {
    std::uint64_t batch = 0;          ///< 1-based, across the exporter's life
    unsigned retry = 0;               ///< 1 for the first retry of this batch
    std::string reason;               ///< "HTTP 503 Service Unavailable", or the connection error
    std::chrono::milliseconds wait{};  ///< before the retry
};

struct otlp_http_options {
    /// Where to POST: http://HOST[:PORT][/PATH] (OTLP/HTTP's is /v1/traces).
    std::string endpoint = "http://127.0.0.1:4318/v1/traces";
    /// Sent with every request (e.g. an API key). Host, Content-Length,
    /// Content-Type, Content-Encoding, Connection and Transfer-Encoding are
    /// loupe's own: given ones with these names are ignored.
    std::vector<std::pair<std::string, std::string>> headers;
    /// Compress each body (Content-Encoding: gzip).
    bool gzip = false;
    /// Retries of one batch after its first attempt (0: none).
    unsigned max_retries = 5;
    std::chrono::milliseconds connect_timeout{10000};  ///< per address of the host
    std::chrono::milliseconds request_timeout{30000};  ///< sending one request and reading its reply
    /// The wait before the first retry; it doubles at each retry.
    std::chrono::milliseconds initial_backoff{1000};
    /// The longest wait between two attempts, a Retry-After included.
    std::chrono::milliseconds max_backoff{30000};
    /// No retry starts later than this after a batch's first attempt.
    std::chrono::milliseconds max_retry_time{120000};
    /// Called before each retry's wait; optional.
    std::function<void(const otlp_retry_notice&)> on_retry;
    /// Waits the time before a retry and returns true, or returns false to
    /// give the batch up (it counts as not delivered); optional. Default:
    /// sleeps. The live sink (sinks/otlp_http_sink.hpp) waits on its queue
    /// so that a session's stop can cut a retry short.
    std::function<bool(std::chrono::milliseconds)> wait;
};

/// What an exporter did.
struct otlp_http_result {
    std::uint64_t batches = 0;           ///< handed to the exporter
    std::uint64_t batches_accepted = 0;  ///< answered 2xx (partial successes included)
    std::uint64_t spans = 0;             ///< in the batches handed over
    std::uint64_t spans_sent = 0;        ///< in the accepted batches (the rejected ones included)
    std::uint64_t spans_rejected = 0;    ///< partial_success.rejected_spans, summed
    std::uint64_t retries = 0;           ///< attempts after a batch's first
    std::uint64_t bytes = 0;             ///< bodies of the accepted batches, as sent (compressed with gzip)
    std::uint64_t uncompressed_bytes = 0;  ///< the same before compression
    std::string first_error;             ///< why the first batch not delivered was not ("" when none)
    std::string rejection_message;       ///< the first partial_success.error_message that was not empty
    /// Every span sent and accepted.
    bool ok() const noexcept {
        return batches_accepted == batches && spans_rejected == 0 && first_error.empty();
    }
};

/// What is wrong with `url` as an endpoint ("position 8: missing host
/// after http://"), or "" when it is a valid http:// URL.
inline std::string check_endpoint(std::string_view url) {
    loupe::detail::http::url parsed;
    const loupe::detail::http::url_error e = loupe::detail::http::parse_url(url, parsed);
    if (!e) return {};
    return e.position != 0 ? "position " + std::to_string(e.position) + ": " + e.what : e.what;
}

/// The spans in an ExportTraceServiceRequest (0 when it does not parse).
inline std::uint64_t spans_in_request(std::string_view request) {
    std::uint64_t spans = 0;
    loupe::detail::otlp_messages::count_spans(request, spans);
    return spans;
}

/// Sends batches, one call each, in order.
class otlp_http_exporter {
public:
    explicit otlp_http_exporter(otlp_http_options options) : options_(std::move(options)) {
        const std::string problem = check_endpoint(options_.endpoint);
        if (!problem.empty()) {
            stopped_ = true;
            result_.first_error = "endpoint '" + options_.endpoint + "': " + problem;
        } else {
            loupe::detail::http::parse_url(options_.endpoint, url_);
        }
    }

    /// POSTs one ExportTraceServiceRequest, retrying as the options say.
    /// True when the collector accepted it (a partial success is accepted:
    /// see result().spans_rejected); false when it was not delivered, or
    /// not sent because an earlier batch was not.
    bool send(std::string_view batch) {
        std::uint64_t spans = 0;
        loupe::detail::otlp_messages::count_spans(batch, spans);  // 0 for bytes that do not parse; sent anyway
        ++result_.batches;
        result_.spans += spans;
        if (stopped_) return false;

        std::string_view body = batch;
        if (options_.gzip) {
            gzip_.compress(batch, compressed_);
            body = compressed_;
        }
        using clock = std::chrono::steady_clock;
        const clock::time_point first = clock::now();
        const loupe::detail::http::timeouts limits{options_.connect_timeout, options_.request_timeout};
        std::chrono::milliseconds backoff = std::max(options_.initial_backoff, std::chrono::milliseconds(0));
        for (unsigned attempt = 0;; ++attempt) {
            const loupe::detail::http::response r = loupe::detail::http::post(
                url_, options_.headers, body, options_.gzip ? "gzip" : "", limits);
            std::string reason;
            bool retryable = false;
            if (r.fail == loupe::detail::http::response::failure::none && r.status >= 200 && r.status < 300) {
                accepted(r, spans, body.size(), batch.size());
                return true;
            }
            if (r.fail != loupe::detail::http::response::failure::none) {
                reason = r.error;
                // A reply we cannot read is the server's fault, not the network's: not retried.
                retryable = r.fail != loupe::detail::http::response::failure::protocol &&
                            r.fail != loupe::detail::http::response::failure::resolve;
            } else {
                reason = url_.authority() + ": HTTP " + std::to_string(r.status) +
                         (r.reason.empty() ? std::string() : " " + r.reason);
                const std::string detail = reply_text(r);
                if (!detail.empty()) reason += ": " + detail;
                retryable = r.status == 429 || r.status == 502 || r.status == 503 || r.status == 504;
            }
            std::chrono::milliseconds wait = backoff;
            if (r.retry_after >= 0) wait = std::chrono::milliseconds(static_cast<std::int64_t>(r.retry_after) * 1000);
            wait = std::min(wait, std::max(options_.max_backoff, std::chrono::milliseconds(0)));
            const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - first);
            bool give_up = !retryable || attempt >= options_.max_retries || elapsed + wait > options_.max_retry_time;
            bool cut_short = false;
            if (!give_up) {
                if (options_.on_retry) options_.on_retry(otlp_retry_notice{result_.batches, attempt + 1, reason, wait});
                if (options_.wait) {
                    give_up = cut_short = !options_.wait(wait);
                } else if (wait.count() > 0) {
                    std::this_thread::sleep_for(wait);
                }
            }
            if (give_up) {
                std::string why = reason;
                if (cut_short) {
                    why += " (batch " + std::to_string(result_.batches) + ", retries stopped after " +
                           std::to_string(attempt + 1) + (attempt == 0 ? " attempt)" : " attempts)");
                } else if (retryable && attempt > 0) {
                    why += " (batch " + std::to_string(result_.batches) + ", given up after " +
                           std::to_string(attempt) + (attempt == 1 ? " retry)" : " retries)");
                } else {
                    why += " (batch " + std::to_string(result_.batches) + ")";
                }
                if (result_.first_error.empty()) result_.first_error = why;
                stopped_ = true;
                return false;
            }
            ++result_.retries;
            backoff = std::min(backoff * 2, std::max(options_.max_backoff, std::chrono::milliseconds(1)));
        }
    }

    const otlp_http_result& result() const noexcept { return result_; }
    /// Whether a batch was not delivered (or the endpoint is not valid):
    /// send() sends nothing more.
    bool stopped() const noexcept { return stopped_; }
    /// "127.0.0.1:4318", as messages name the endpoint ("" when not valid).
    std::string authority() const { return url_.host.empty() ? std::string() : url_.authority(); }

private:
    void accepted(const loupe::detail::http::response& r, std::uint64_t spans, std::size_t sent, std::size_t raw) {
        ++result_.batches_accepted;
        result_.spans_sent += spans;
        result_.bytes += sent;
        result_.uncompressed_bytes += raw;
        loupe::detail::otlp_messages::export_response reply;
        const bool json = r.content_type.find("json") != std::string::npos;
        if (json || !loupe::detail::otlp_messages::decode_response(r.body, reply)) return;
        if (reply.rejected_spans > 0) result_.spans_rejected += static_cast<std::uint64_t>(reply.rejected_spans);
        if (result_.rejection_message.empty() && !reply.error_message.empty()) {
            result_.rejection_message = printable(reply.error_message);
        }
    }

    // What an error reply says: a google.rpc.Status's message, else its
    // first line of text; bounded, control characters shown as '?'.
    static std::string reply_text(const loupe::detail::http::response& r) {
        std::string text;
        if (r.content_type.find("protobuf") != std::string::npos) {
            text = loupe::detail::otlp_messages::status_message(r.body);
        } else if (r.content_type.find("text") != std::string::npos || r.content_type.find("json") != std::string::npos) {
            text = r.body.substr(0, r.body.find('\n'));
        }
        return printable(text);
    }

    static std::string printable(std::string text) {
        if (text.size() > 200) text = text.substr(0, 200) + "...";
        for (char& c : text) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        }
        return text;
    }

    otlp_http_options options_;
    loupe::detail::http::url url_;
    otlp_http_result result_;
    bool stopped_ = false;
    std::string compressed_;
    viewer::otlp_gzip gzip_;
};

/// Converts `t` (loupe::viewer::write_otlp, with `conversion`) and sends
/// its batches to `http.endpoint` as they are made.
inline otlp_http_result export_otlp_http(const trace& t, const viewer::otlp_options& conversion,
                                         const otlp_http_options& http) {
    otlp_http_exporter exporter(http);
    viewer::write_otlp(t, [&exporter](std::string_view batch) { exporter.send(batch); }, conversion);
    return exporter.result();
}

}  // namespace loupe::exporter
