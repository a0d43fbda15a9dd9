// `loupe convert FILE --to perfetto|chrome-json|otlp -o OUT [--uncompressed]
// [--batch-bytes N] [--strict]`: writes the trace in a viewer format, or as
// OTLP spans, to OUT ('-': stdout), then one line on stderr saying what was
// written:
//   loupe: wrote 20 events to 'demo.pftrace' (perfetto, 1.3 KiB)
//   loupe: wrote 12 spans in 1 batch to 'demo.pb' (otlp, 2.1 KiB)
#pragma once

#include <loupe/base/error.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/format/mapped_file.hpp>
#include <loupe/format/output_file.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/otlp.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace loupe_cli {

/// What `loupe convert` is asked to do.
struct convert_request {
    std::string file;
    loupe::decode_options decode;
    std::string format;  ///< "perfetto", "chrome-json" or "otlp"
    std::string output;  ///< a path, or "-" for stdout
    bool uncompressed = false;
    std::size_t batch_bytes = 0;  ///< otlp: largest batch; 0: otlp_options' default
};

/// Counts the events (zones, instants, counters, ...) of a trace.
class event_counter final : public loupe::trace_visitor {
public:
    void on_event(std::uint64_t /*offset*/, const loupe::trace_event& /*event*/) override { ++events_; }
    std::uint64_t events() const noexcept { return events_; }

private:
    std::uint64_t events_ = 0;
};

/// "20 events to 'demo.pftrace' (perfetto, 1.3 KiB)": the line convert prints.
inline std::string conversion_summary(std::uint64_t events, const convert_request& r, std::size_t bytes) {
    const std::string where = r.output == "-" ? std::string("stdout") : "'" + r.output + "'";
    return std::to_string(events) + (events == 1 ? " event" : " events") + " to " + where + " (" + r.format + ", " +
           loupe::report::detail::human_bytes(static_cast<double>(bytes)) + ")";
}

/// "12 spans in 1 batch to 'demo.pb' (otlp, 2.1 KiB)": the line convert
/// prints for --to otlp.
inline std::string otlp_summary(const loupe::viewer::otlp_result& result, const convert_request& r) {
    const std::string where = r.output == "-" ? std::string("stdout") : "'" + r.output + "'";
    return std::to_string(result.spans) + (result.spans == 1 ? " span" : " spans") + " in " +
           std::to_string(result.batches) + (result.batches == 1 ? " batch" : " batches") + " to " + where +
           " (otlp, " + loupe::report::detail::human_bytes(static_cast<double>(result.bytes)) + ")";
}

/// Converts `r.file` from its mapped bytes (to a viewer format one thread
/// at a time, without the full model; to OTLP through the model), writes
/// the result and prints the summary line on stderr.
/// Throws loupe::trace_error naming the file for a bad trace, loupe::error
/// when the output cannot be written.
inline int run_convert(const convert_request& r) {
    const loupe::detail::mapped_file bytes(r.file);
    std::string out;
    event_counter counter;
    loupe::viewer::otlp_result spans;
    try {
        if (r.format == "otlp") {
            // Spans need the whole model: a flow links spans of any threads.
            const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size(), r.decode);
            loupe::viewer::otlp_options options;
            if (r.batch_bytes != 0) options.max_batch_bytes = r.batch_bytes;
            spans = loupe::viewer::write_otlp(
                t, [&out](std::string_view batch) { out.append(batch.data(), batch.size()); }, options);
        } else if (r.format == "perfetto") {
            loupe::viewer::perfetto_options options;
            options.compress = !r.uncompressed;
            loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out, options, r.decode);
        } else {
            loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), out, r.decode);
        }
        // The viewer converters do not say how many events they wrote: one
        // more pass (a small fraction of the conversion) counts them.
        if (r.format != "otlp") loupe::decode_trace(bytes.data(), bytes.size(), counter, r.decode);
    } catch (const loupe::trace_error& e) {
        throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), r.file);
    }
    if (r.output == "-") {
        // Checked here, so that the summary never claims output that was lost.
        if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
            throw loupe::error(std::string("cannot write output: ") + std::strerror(errno));
        }
    } else {
        loupe::detail::write_output_file(r.output, out);
    }
    const std::string summary =
        r.format == "otlp" ? otlp_summary(spans, r) : conversion_summary(counter.events(), r, out.size());
    std::fprintf(stderr, "loupe: wrote %s\n", summary.c_str());
    return 0;
}

}  // namespace loupe_cli
