// loupe: command-line tool for .loupe traces.
//
//   loupe dump  FILE [--json] [--partial]   every record, in file order
//   loupe stats FILE [--json] [--partial] [--by FIELD]
//                                           per-zone count/total/mean/min/p50/p99/max
//   loupe stats FILE --params [--top N] [--json] [--partial]
//                                           method call durations by parameter value
//   loupe stats FILE --flows [--json] [--partial]
//                                           time between consecutive points of flows
//   loupe convert FILE --to perfetto|chrome-json -o OUT [--partial] [--uncompressed]
//                                           a file for ui.perfetto.dev
//   loupe report FILE --io [--by GROUP] [--json] [--partial]
//                                           I/O per file, socket, thread, context field or zone
//   loupe report FILE --tree|--flat|--callers|--per-cpu|--per-thread [--metric M] [--json] [--partial]
//                                           call trees and totals of a metric (metric_reports.hpp)
//
// Exit status: 0 success, 1 the file cannot be read or is not a valid trace
// (one line "loupe: <file>: byte <offset>: <what>" on stderr) or has no
// usable --metric M ("loupe: <file>: <what>"), 2 bad usage.
#include <loupe/base/error.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/format/mapped_file.hpp>
#include <loupe/format/output_file.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/flow_stats.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/report/param_stats.hpp>
#include <loupe/report/zone_stats.hpp>
#include <loupe/base/version.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dump.hpp"
#include "metric_reports.hpp"

namespace {

const char* const usage_text =
    "usage: loupe <command> FILE [--json] [--partial] [--by FIELD]\n"
    "       loupe stats FILE --params [--top N] [--json] [--partial]\n"
    "       loupe stats FILE --flows [--json] [--partial]\n"
    "       loupe convert FILE --to FORMAT -o OUT [--partial] [--uncompressed]\n"
    "       loupe report FILE --io [--by GROUP] [--json] [--partial]\n"
    "       loupe report FILE --tree|--flat|--callers|--per-cpu|--per-thread [--metric M] [--json] [--partial]\n"
    "\n"
    "commands:\n"
    "  dump     print every record of the trace in file order\n"
    "  stats    print per-zone statistics (count, total, mean, min, p50, p99, max), overall and per thread\n"
    "           --params: per traced method and parameter spec, call count, total, mean and max\n"
    "           duration per parameter value (statuses such as NullInCall are values too)\n"
    "           --flows: per hop between consecutive points of a flow (from -> to), count,\n"
    "           share across threads, mean, p50, p99 and max time\n"
    "  convert  write the trace in a viewer format (open it in ui.perfetto.dev)\n"
    "  report   --io: I/O operations, bytes in/out, time, mean, max, throughput per group,\n"
    "           files opened/closed/deleted, connections, anomalies\n"
    "           --tree: per-thread call trees of a metric: Level, RL (recursion level), Calls,\n"
    "           Base (self), Cum (inclusive), Name\n"
    "           --flat: per routine Calls, Base, Cum (recursion counted once)\n"
    "           --callers: per routine, a stanza of its parents, itself and its children\n"
    "           --per-thread: each thread's metric totals next to the sum of its tree\n"
    "           --per-cpu: push metric totals per CPU\n"
    "\n"
    "options:\n"
    "  --json      machine-readable output (dump: JSON Lines, one object per record or event;\n"
    "              stats: one JSON object)\n"
    "  --partial   accept a trace that was cut short (no END record) and use its whole records\n"
    "  --by FIELD  stats: rows per thread (default) or per value of a context field:\n"
    "              thread, client, user, session, request, app, component\n"
    "              report --io: rows per file (default), socket, thread, zone or a context field\n"
    "  --io        report: the I/O report\n"
    "  --params    stats: call durations of traced methods by parameter value\n"
    "  --flows     stats: time between consecutive points of flows (LOUPE_FLOW)\n"
    "  --top N     stats --params: the N values with the most total time per method and spec\n"
    "              (default 10; 0: all)\n"
    "  --metric M  report --tree/--flat/--callers: the metric (default wall_time);\n"
    "              --per-thread/--per-cpu: only that metric (default: all)\n"
    "  --to FORMAT convert: perfetto (protobuf .pftrace) or chrome-json (Trace Event JSON)\n"
    "  -o OUT      convert: the output file\n"
    "  --uncompressed  convert --to perfetto: plain packets (for protoc --decode) instead of\n"
    "              deflate-compressed groups\n"
    "  --help      show this text\n"
    "  --version   show the loupe version\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "loupe: %s\n%s", message.c_str(), usage_text);
    return 2;
}

struct options {
    std::string command;
    std::string file;
    bool json = false;
    std::string by;  // --by, parsed once the command is known
    bool io = false;  // report --io
    loupe_cli::metric_report metrics = loupe_cli::metric_report::none;  // report --tree, --flat, ...
    std::string metric;  // report --metric
    loupe::decode_options decode;
    std::string format;  // convert
    std::string output;  // convert
    bool uncompressed = false;  // convert --to perfetto
    bool params = false;        // stats --params
    std::size_t top = 10;       // stats --params --top
    bool flows = false;         // stats --flows
};

int run(const options& o) {
    if (o.command == "dump") {
        const std::vector<unsigned char> bytes = loupe::read_trace_bytes(o.file);
        loupe_cli::dump_visitor dump(stdout, o.json);
        try {
            const loupe::decode_result r = loupe::decode_trace(bytes.data(), bytes.size(), dump, o.decode);
            if (!r.complete) {
                std::fflush(stdout);
                std::fprintf(stderr, "loupe: %s: trace cut short after byte %llu (no END record)\n", o.file.c_str(),
                             static_cast<unsigned long long>(r.bytes_used));
            }
        } catch (const loupe::trace_error& e) {
            std::fflush(stdout);  // records before the error stay visible
            throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), o.file);
        }
        return 0;
    }
    if (o.command == "convert") {
        // Straight from the (mapped) bytes, one thread at a time (no full model).
        const loupe::detail::mapped_file bytes(o.file);
        std::string out;
        try {
            if (o.format == "perfetto") {
                loupe::viewer::perfetto_options options;
                options.compress = !o.uncompressed;
                loupe::viewer::convert_to_perfetto(bytes.data(), bytes.size(), out, options, o.decode);
            } else {
                loupe::viewer::convert_to_chrome_json(bytes.data(), bytes.size(), out, o.decode);
            }
        } catch (const loupe::trace_error& e) {
            throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), o.file);
        }
        loupe::detail::write_output_file(o.output, out);
        return 0;
    }
    if (o.command == "report" && o.metrics != loupe_cli::metric_report::none) {
        return loupe_cli::run_metric_report(o.file, o.decode, o.metrics, o.metric, o.json);
    }
    if (o.command == "report") {
        loupe::report::io_group grouping = loupe::report::io_group::file;
        if (!o.by.empty()) loupe::report::parse_io_group(o.by, grouping);  // checked in main
        const loupe::report::io_report report = loupe::report::io_stats(loupe::read_trace_file(o.file, o.decode), grouping);
        const std::string text = o.json ? loupe::report::io_stats_json(report) : loupe::report::format_io_stats(report);
        std::fwrite(text.data(), 1, text.size(), stdout);
        return 0;
    }
    if (o.flows) {
        // A trace without flows is not an error: the report says so.
        const loupe::report::flow_report report = loupe::report::flow_stats(loupe::read_trace_file(o.file, o.decode));
        const std::string text =
            o.json ? loupe::report::flow_stats_json(report) : loupe::report::format_flow_stats(report);
        std::fwrite(text.data(), 1, text.size(), stdout);
        return 0;
    }
    if (o.params) {
        // A trace without parameter values is not an error: the report says so.
        const loupe::report::param_report report =
            loupe::report::param_stats(loupe::read_trace_file(o.file, o.decode), o.top);
        const std::string text =
            o.json ? loupe::report::param_stats_json(report) : loupe::report::format_param_stats(report);
        std::fwrite(text.data(), 1, text.size(), stdout);
        return 0;
    }
    loupe::report::group_by grouping = loupe::report::group_by::thread;
    if (!o.by.empty()) loupe::report::parse_group_by(o.by, grouping);  // checked in main
    const loupe::report::zone_report report =
        loupe::report::zone_stats(loupe::read_trace_file(o.file, o.decode), grouping);
    const std::string text = o.json ? loupe::report::zone_stats_json(report) : loupe::report::format_zone_stats(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    int by_at = 0;
    int metric_at = 0;
    int params_at = 0;
    int top_at = 0;
    int flows_at = 0;
    std::string report_flag;  // the first of --io, --tree, ... given
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        }
        if (arg == "--version") {
            std::printf("loupe %s\n", LOUPE_VERSION_STRING);
            return 0;
        }
        if (arg == "--json") {
            o.json = true;
        } else if (arg == "--partial") {
            o.decode.accept_truncated = true;
        } else if (arg == "--by") {
            if (i + 1 == argc) return usage_error("--by (argument " + std::to_string(i) + ") needs a FIELD");
            o.by = argv[++i];
            by_at = i;
        } else if (arg == "--io" || loupe_cli::parse_metric_report(arg) != loupe_cli::metric_report::none) {
            if (!report_flag.empty() && report_flag != arg) {
                return usage_error(arg + " (argument " + std::to_string(i) + "): one report at a time; " + report_flag +
                                   " was given before");
            }
            report_flag = arg;
            o.io = arg == "--io";
            o.metrics = loupe_cli::parse_metric_report(arg);
        } else if (arg == "--metric") {
            if (i + 1 == argc) return usage_error("--metric (argument " + std::to_string(i) + ") needs a metric name");
            o.metric = argv[++i];
            metric_at = i;
        } else if (arg == "--params") {
            o.params = true;
            params_at = i;
        } else if (arg == "--flows") {
            o.flows = true;
            flows_at = i;
        } else if (arg == "--top") {
            if (i + 1 == argc) return usage_error("--top (argument " + std::to_string(i) + ") needs a number N");
            const std::string n = argv[++i];
            top_at = i;
            char* end = nullptr;
            errno = 0;
            const unsigned long long value = std::strtoull(n.c_str(), &end, 10);
            if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) || *end != '\0' || errno == ERANGE ||
                value > 1000000000ull) {
                return usage_error("--top '" + n + "' (argument " + std::to_string(i) +
                                   "): expected a number of values, 0 (all) to 1000000000");
            }
            o.top = static_cast<std::size_t>(value);
        } else if (arg == "--uncompressed") {
            o.uncompressed = true;
        } else if (arg == "--to" || arg == "-o") {
            if (i + 1 == argc) {
                return usage_error(arg + " (argument " + std::to_string(i) + ") needs " +
                                   (arg == "--to" ? "a FORMAT" : "an output file"));
            }
            (arg == "--to" ? o.format : o.output) = argv[++i];
            if (arg == "--to" && o.format != "perfetto" && o.format != "chrome-json") {
                return usage_error("--to '" + o.format + "' (argument " + std::to_string(i) +
                                   "): expected perfetto or chrome-json");
            }
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usage_error("unknown option '" + arg + "' (argument " + std::to_string(i) + ")");
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.empty()) return usage_error("missing command; expected 'dump', 'stats', 'report' or 'convert'");
    o.command = positional[0];
    if (o.command != "dump" && o.command != "stats" && o.command != "convert" && o.command != "report") {
        return usage_error("unknown command '" + o.command + "'; expected 'dump', 'stats', 'report' or 'convert'");
    }
    if (o.command == "report" && report_flag.empty()) {
        return usage_error("report needs one of --io, --tree, --flat, --callers, --per-cpu, --per-thread");
    }
    if (o.command != "report" && !report_flag.empty()) return usage_error(report_flag + " applies to 'report' only");
    if (metric_at != 0 && o.metrics == loupe_cli::metric_report::none) {
        return usage_error("--metric (argument " + std::to_string(metric_at - 1) +
                           ") applies to report --tree, --flat, --callers, --per-cpu and --per-thread only");
    }
    if (metric_at != 0 && o.metric.empty()) {
        return usage_error("--metric (argument " + std::to_string(metric_at - 1) + ") needs a metric name, not ''");
    }
    if (!o.by.empty()) {
        loupe::report::group_by field;
        loupe::report::io_group group;
        if (o.command == "stats" && !loupe::report::parse_group_by(o.by, field)) {
            return usage_error("--by '" + o.by + "' (argument " + std::to_string(by_at) +
                               "): expected thread, client, user, session, request, app or component");
        }
        if (o.command == "report" && !o.io) {
            return usage_error("--by (argument " + std::to_string(by_at - 1) + ") applies to report --io, not " +
                               report_flag);
        }
        if (o.command == "report" && !loupe::report::parse_io_group(o.by, group)) {
            return usage_error("--by '" + o.by + "' (argument " + std::to_string(by_at) +
                               "): expected file, socket, thread, zone, client, user, session, request, app or component");
        }
        if (o.command != "stats" && o.command != "report") return usage_error("--by applies to 'stats' and 'report' only");
    }
    if (params_at != 0 && o.command != "stats") {
        return usage_error("--params (argument " + std::to_string(params_at) + ") applies to 'stats' only");
    }
    if (flows_at != 0 && o.command != "stats") {
        return usage_error("--flows (argument " + std::to_string(flows_at) + ") applies to 'stats' only");
    }
    if (flows_at != 0 && (params_at != 0 || !o.by.empty())) {
        return usage_error((params_at != 0 ? "--params (argument " + std::to_string(params_at)
                                           : "--by (argument " + std::to_string(by_at - 1)) +
                           ") does not apply to stats --flows (argument " + std::to_string(flows_at) + ")");
    }
    if (top_at != 0 && !o.params) {
        return usage_error("--top (argument " + std::to_string(top_at - 1) + ") applies to stats --params only");
    }
    if (o.params && !o.by.empty()) {
        return usage_error("--by (argument " + std::to_string(by_at - 1) +
                           ") does not apply to stats --params (argument " + std::to_string(params_at) + ")");
    }
    if (o.command == "convert" && (o.format.empty() || o.output.empty())) {
        return usage_error(std::string("convert needs ") + (o.format.empty() ? "--to FORMAT" : "-o OUT"));
    }
    if (o.command != "convert" && (!o.format.empty() || !o.output.empty() || o.uncompressed)) {
        return usage_error("--to, -o and --uncompressed apply to 'convert' only");
    }
    if (o.uncompressed && o.format != "perfetto") return usage_error("--uncompressed applies to --to perfetto only");
    if (positional.size() < 2) return usage_error("'" + o.command + "' needs a trace FILE");
    if (positional.size() > 2) return usage_error("unexpected argument '" + positional[2] + "'; expected one FILE");
    o.file = positional[1];
    try {
        const int status = run(o);
        // Output that could not be written (a full disk, a closed pipe) is an
        // error, not a success with the output lost.
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            std::fprintf(stderr, "loupe: cannot write output: %s\n", std::strerror(errno));
            return 1;
        }
        return status;
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "loupe: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "loupe: %s: %s\n", o.file.c_str(), e.what());
        return 1;
    }
}
