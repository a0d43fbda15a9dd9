// Writes a trace as OpenTelemetry spans in OTLP protobuf: a series of
// opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest
// messages (batches), each complete on its own (what an OTLP/HTTP exporter
// POSTs to /v1/traces) and at most otlp_options::max_batch_bytes long.
// Concatenated, the batches parse as one request, which is what
// write_otlp_file and `loupe convert --to otlp` write.
//
//   loupe::trace t = loupe::read_trace_file("out.loupe");
//   loupe::viewer::write_otlp(t, [](std::string_view batch) { send(batch); });
//   loupe::viewer::write_otlp_file(t, "out.pb");
//
// The mapping (docs/otlp.md): a zone, method call or I/O operation is a
// span whose parent is the zone around it on its thread. A span begun while
// its thread serves a task (tasks::task_scope, incoming_request) is in the
// task's W3C trace, with the task's tracestate and flags, and the outermost
// such span on the thread is a child of the task's span; outside tasks, one
// trace per outermost zone. Its site's code location, its thread, its
// context, its parameter values and its metric deltas are attributes;
// instants and counters inside a zone are events of its span, flows are
// links; the process is the resource, loupe the instrumentation scope.
//
// Cost: O(n log n) in the events of the largest thread; about 150-300
// bytes of output per span. Memory: the model, plus 24 bytes per event of
// the largest thread and one batch.
// Thread-safety: pure functions of their arguments; the callback runs on
// the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loupe/format/output_file.hpp"
#include "loupe/format/reader.hpp"
#include "loupe/viewer/detail/deflate.hpp"
#include "loupe/viewer/detail/otlp_batches.hpp"
#include "loupe/viewer/detail/otlp_window.hpp"
#include "loupe/viewer/detail/otlp_writer.hpp"
#include "loupe/viewer/detail/sources.hpp"

namespace loupe::viewer {

struct otlp_options {
    /// Largest batch (one ExportTraceServiceRequest), in bytes. A batch
    /// holds at least one span: a span larger than this on its own (a very
    /// long name or many parameter values, with a tiny limit) is sent alone
    /// in a larger batch. Default: 4 MiB, the default body limit of the
    /// OpenTelemetry Collector's OTLP receiver.
    std::size_t max_batch_bytes = 4 * 1024 * 1024;
    /// The resource's service.name; empty: the recording program's name
    /// (trace_session_info::program), or "unknown_service" when the trace
    /// does not say.
    std::string service_name;
    /// Most events (instants, counter samples) one span keeps, and most
    /// links (flows); the rest are counted in its dropped_events_count and
    /// dropped_links_count, as OpenTelemetry SDKs' span limits do.
    std::size_t max_events_per_span = 128;
    std::size_t max_links_per_span = 128;
    /// More resource attributes (string values), written after loupe's own
    /// (service.name, process.pid, process.executable.name,
    /// loupe.session.name); a key loupe writes itself, or given twice, is
    /// written once, the first time. A "service.name" here names the
    /// service when service_name is empty. OTEL_RESOURCE_ATTRIBUTES
    /// (<loupe/export/otlp_env.hpp>) fills it.
    std::vector<std::pair<std::string, std::string>> resource_attributes;
};

/// What a conversion wrote.
struct otlp_result {
    std::uint64_t spans = 0;
    std::uint64_t batches = 0;  ///< at least 1: a trace without spans gives one batch of its resource
    std::uint64_t bytes = 0;    ///< all batches together
};

/// Which spans one conversion writes when a session is exported piece by
/// piece while it runs (sinks/otlp_http_sink.hpp): on each thread, those
/// that ended in a range; see viewer/detail/otlp_window.hpp.
using otlp_window = loupe::detail::otlp::span_window;

namespace detail {
inline otlp_result write_otlp_spans(const trace& t, const std::function<void(std::string_view)>& on_batch,
                                    const otlp_options& options, const otlp_window* window) {
    const std::string resource =
        loupe::detail::otlp::encode_resource(t, options.service_name, options.resource_attributes);
    const std::string scope = loupe::detail::otlp::encode_scope(t);
    loupe::detail::otlp::batcher batches(resource, scope, options.max_batch_bytes, on_batch);
    loupe::detail::otlp::span_writer writer(t, batches, options.max_events_per_span, options.max_links_per_span,
                                            window);
    loupe::detail::write_viewer(t, writer);
    batches.finish();
    return {batches.spans(), batches.batches(), batches.bytes()};
}
}  // namespace detail

/// Encodes `t`, calling `on_batch(std::string_view)` with each finished
/// ExportTraceServiceRequest (valid during the call) in order. Exceptions
/// from the callback propagate (the conversion stops).
inline otlp_result write_otlp(const trace& t, const std::function<void(std::string_view)>& on_batch,
                              const otlp_options& options = {}) {
    return detail::write_otlp_spans(t, on_batch, options, nullptr);
}

/// write_otlp for the spans `window` selects, with ids made from what each
/// span is (its thread, begin, end, type and site) instead of its place in
/// `t`: a span written by one conversion and its parent written by another
/// agree on the parent's id.
inline otlp_result write_otlp_window(const trace& t, const std::function<void(std::string_view)>& on_batch,
                                     const otlp_options& options, const otlp_window& window) {
    return detail::write_otlp_spans(t, on_batch, options, &window);
}

/// The batches of `t`, concatenated (one request when parsed); `result`,
/// when given, receives the counts.
inline std::string to_otlp(const trace& t, const otlp_options& options = {}, otlp_result* result = nullptr) {
    std::string out;
    const otlp_result r = write_otlp(t, [&out](std::string_view batch) { out.append(batch.data(), batch.size()); },
                                     options);
    if (result) *result = r;
    return out;
}

/// Writes the concatenated batches of `t` to `path`. Throws loupe::error
/// naming the path when it cannot be written.
inline otlp_result write_otlp_file(const trace& t, const std::string& path, const otlp_options& options = {}) {
    otlp_result r;
    const std::string bytes = to_otlp(t, options, &r);
    loupe::detail::write_output_file(path, bytes);
    return r;
}

/// Compresses requests with gzip (RFC 1952), as an OTLP/HTTP body sent with
/// `Content-Encoding: gzip` (<loupe/export/otlp_http.hpp> does). loupe's own
/// deflate (the Perfetto writer's, fixed Huffman codes) and a CRC-32: about
/// 1–2 ns per byte; the demo trace's 1.1 MiB of spans became 119 KiB.
/// Keeps its scratch table (128 KiB) between calls.
/// Thread-safety: one object per thread.
class otlp_gzip {
public:
    /// Replaces `out` with the gzip member of `request` (less than 4 GiB).
    void compress(std::string_view request, std::string& out) {
        out.clear();
        loupe::detail::deflate::gzip_compress(request, out, table_);
    }

private:
    loupe::detail::deflate::match_table table_;
};

}  // namespace loupe::viewer
