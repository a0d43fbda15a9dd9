// `loupe export FILE... --otlp URL [--gzip] [--batch-bytes N] [--retries N]
// [--progress] [--strict]`: converts each trace to OTLP spans (its own
// resource) and POSTs the batches, in order, to an OpenTelemetry
// collector over OTLP/HTTP (<loupe/export/otlp_http.hpp>). Progress on
// stderr when stderr is a terminal or with --progress; then always one
// summary line:
//   loupe: sent 2288 of 2288 spans in 1 of 1 batch to http://127.0.0.1:4318/v1/traces (1.1 MiB, 0 rejected, 0 retries)
// Exit status: 0 every span accepted; 1 a file could not be read, a batch
// was not delivered, or the collector rejected spans.
#pragma once

#include <loupe/base/error.hpp>
#include <loupe/export/otlp_http.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/viewer/otlp.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace loupe_cli {

/// What `loupe export` is asked to do (checked by the caller).
struct export_request {
    std::vector<std::string> files;
    loupe::decode_options decode;
    std::string endpoint;  ///< from --otlp, else the environment
    std::vector<std::pair<std::string, std::string>> headers;              ///< OTEL_EXPORTER_OTLP_HEADERS
    std::string service_name;                                              ///< OTEL_SERVICE_NAME
    std::vector<std::pair<std::string, std::string>> resource_attributes;  ///< OTEL_RESOURCE_ATTRIBUTES
    std::size_t batch_bytes = 0;  ///< 0: otlp_options' default
    bool gzip = false;
    unsigned retries = 5;
    bool progress = false;  ///< --progress (a terminal on stderr shows it anyway)
};

/// "sent 600 of 600 spans in 3 of 3 batches to URL (12.3 KiB, 0 rejected, 0 retries)".
inline std::string export_summary(const loupe::exporter::otlp_http_result& r, const export_request& request) {
    const auto plural = [](std::uint64_t n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    return "sent " + std::to_string(r.spans_sent) + " of " + plural(r.spans, "span", "spans") + " in " +
           std::to_string(r.batches_accepted) + " of " + plural(r.batches, "batch", "batches") + " to " +
           request.endpoint + " (" + loupe::report::detail::human_bytes(static_cast<double>(r.bytes)) +
           (request.gzip ? " gzip" : "") + ", " + std::to_string(r.spans_rejected) + " rejected, " +
           plural(r.retries, "retry", "retries") + ")";
}

/// Sends every file; prints progress, errors and the summary on stderr.
/// Returns the exit status (0 or 1). Throws nothing but std::bad_alloc.
inline int run_export(const export_request& r) {
    loupe::exporter::otlp_http_options http;
    http.endpoint = r.endpoint;
    http.headers = r.headers;
    http.gzip = r.gzip;
    http.max_retries = r.retries;
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    const bool progress = r.progress || terminal;
    bool line_open = false;  // a progress line without its newline (a terminal)
    const auto end_line = [&] {
        if (line_open) std::fputc('\n', stderr);
        line_open = false;
    };
    if (progress) {
        http.on_retry = [&](const loupe::exporter::otlp_retry_notice& n) {
            end_line();
            const auto ms = static_cast<long long>(n.wait.count());
            std::fprintf(stderr, "loupe: %s; retry %u of %u in %lld.%03lld s\n", n.reason.c_str(), n.retry,
                         r.retries, ms / 1000, ms % 1000);
        };
    }
    loupe::exporter::otlp_http_exporter exporter(http);
    loupe::viewer::otlp_options conversion;
    if (r.batch_bytes != 0) conversion.max_batch_bytes = r.batch_bytes;
    conversion.service_name = r.service_name;
    conversion.resource_attributes = r.resource_attributes;

    bool file_failed = false;
    for (const std::string& file : r.files) {
        try {
            loupe::trace t;
            try {
                t = loupe::read_trace_file(file, r.decode);
            } catch (const loupe::trace_error& e) {
                throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), file);
            }
            loupe::viewer::write_otlp(
                t,
                [&](std::string_view batch) {
                    exporter.send(batch);
                    if (!progress || exporter.stopped()) return;
                    const loupe::exporter::otlp_http_result& now = exporter.result();
                    std::fprintf(stderr, "%sloupe: %s: %llu batches, %llu spans, %s sent%s", terminal ? "\r" : "",
                                 file.c_str(), static_cast<unsigned long long>(now.batches_accepted),
                                 static_cast<unsigned long long>(now.spans_sent),
                                 loupe::report::detail::human_bytes(static_cast<double>(now.bytes)).c_str(),
                                 terminal ? "\033[K" : "\n");
                    line_open = terminal;
                },
                conversion);
        } catch (const loupe::error& e) {
            end_line();
            std::fprintf(stderr, "loupe: %s\n", e.what());
            file_failed = true;
        }
    }
    end_line();
    const loupe::exporter::otlp_http_result& result = exporter.result();
    if (!result.first_error.empty()) std::fprintf(stderr, "loupe: %s\n", result.first_error.c_str());
    if (result.spans_rejected != 0) {
        std::fprintf(stderr, "loupe: the collector rejected %llu %s%s%s\n",
                     static_cast<unsigned long long>(result.spans_rejected),
                     result.spans_rejected == 1 ? "span" : "spans", result.rejection_message.empty() ? "" : ": ",
                     result.rejection_message.c_str());
    }
    std::fprintf(stderr, "loupe: %s\n", export_summary(result, r).c_str());
    return file_failed || !result.ok() ? 1 : 0;
}

}  // namespace loupe_cli
