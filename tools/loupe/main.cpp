// loupe: command-line tool for .loupe traces.
//
//   loupe dump    FILE [--json] [--strict]        every record, in file order
//   loupe stats   FILE [--by FIELD] [--json] [--strict]
//                                                  per-zone count/total/mean/min/p50/p99/max
//   loupe stats   FILE --params [--top N] [--json] [--strict]
//                                                  method call durations by parameter value
//   loupe stats   FILE --flows [--json] [--strict]
//                                                  time between consecutive points of flows
//   loupe convert FILE --to perfetto|chrome-json|otlp -o OUT [--uncompressed] [--batch-bytes N] [--strict]
//                                                  a file for ui.perfetto.dev (convert.hpp)
//   loupe export  FILE... --otlp URL [--gzip] [--batch-bytes N] [--retries N] [--progress] [--strict]
//                                                  OTLP/HTTP to a collector (export.hpp)
//   loupe report  FILE --io [--by GROUP] [--json] [--strict]
//                                                  I/O per file, socket, thread, context field or zone
//   loupe report  FILE --tree|--flat|--callers|--per-cpu|--per-thread [--metric M] [--ns] [--json] [--strict]
//                                                  call trees and totals of a metric (metric_reports.hpp)
//   loupe report  FILE... --tasks [--json] [--strict]
//                                                  tasks across processes: trees, critical paths (merge.hpp)
//   loupe merge   FILE... -o OUT [--to loupe|perfetto|chrome-json] [--uncompressed] [--strict]
//                                                  traces of several processes joined by task (merge.hpp)
//   loupe --help, loupe help [CMD], loupe CMD --help   the global or a command's help (help.hpp)
//
// Exit status: 0 success, 1 the file cannot be read or is not a valid trace
// (one line "loupe: <file>: byte <offset>: <what>" on stderr) or has no
// usable --metric M ("loupe: <file>: <what>"), 2 bad usage (one line
// "loupe: <what>" naming the argument, then "try 'loupe CMD --help'").
// export: 0 every span accepted, 1 a file unreadable, a batch not
// delivered or spans rejected, 2 bad usage (a bad OTEL_* variable too).
#include <loupe/base/error.hpp>
#include <loupe/base/version.hpp>
#include <loupe/export/otlp_env.hpp>
#include <loupe/export/otlp_http.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/format/mapped_file.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/flow_stats.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/report/param_stats.hpp>
#include <loupe/report/zone_stats.hpp>

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "convert.hpp"
#include "dump.hpp"
#include "export.hpp"
#include "help.hpp"
#include "merge.hpp"
#include "metric_reports.hpp"
#include "remote_commands.hpp"

namespace {

// A trace cut short (the process died) is read up to its last whole record
// unless --strict.
loupe::decode_options accepting_cut_short() {
    loupe::decode_options d;
    d.accept_truncated = true;
    return d;
}

struct options {
    std::string command;
    std::string file;
    bool json = false;
    std::string by;                                                        // --by, parsed once the command is known
    bool io = false;                                                       // report --io
    loupe_cli::metric_report metrics = loupe_cli::metric_report::none;     // report --tree, --flat, ...
    std::string metric;                                                    // report --metric
    loupe::report::time_format times = loupe::report::time_format::human;  // report --ns: raw_ns
    loupe::decode_options decode = accepting_cut_short();  // --strict: refuse a trace cut short
    bool strict = false;
    std::string format;         // convert
    std::string output;         // convert
    bool uncompressed = false;  // convert --to perfetto
    std::size_t batch_bytes = 0;  // convert --to otlp; 0: the default
    bool params = false;        // stats --params
    std::size_t top = 10;       // stats --params --top
    bool flows = false;         // stats --flows
    std::vector<std::string> files;  // export: every FILE
    loupe_cli::export_request exporting;  // export: --otlp, --gzip, --retries, --progress, the environment
};

// Options followed by a value (which may look like anything).
bool takes_value(std::string_view arg) {
    return arg == "--by" || arg == "--metric" || arg == "--top" || arg == "--to" || arg == "-o" || arg == "--otlp" ||
           arg == "--retries" || arg == "--batch-bytes";
}

bool is_option(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

// What the command line asks for before any checking: the command (its first
// word that is neither an option nor an option's value; empty when none) and
// whether --help/-h or --version comes first.
struct command_line {
    std::string command;
    bool help = false;
    bool version = false;
};

command_line scan(int argc, char** argv) {
    command_line c;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (takes_value(arg)) {
            ++i;
        } else if ((arg == "--help" || arg == "-h") && !c.version) {
            c.help = true;
        } else if (arg == "--version" && !c.help) {
            c.version = true;
        } else if (!is_option(arg) && c.command.empty()) {
            c.command = arg;
        }
    }
    return c;
}

// Every command, for the messages about a missing or unknown one.
constexpr const char* command_list =
    "dump, stats, report, convert, merge, export, ps, start, set, stop, status or record";

std::string unknown_command(const std::string& command) {
    return "unknown command '" + command + "'; expected " + command_list;
}

// Bad usage: one line saying what was wrong, one pointing at the help.
int usage_error(const std::string& command, const std::string& message) {
    const std::string help =
        loupe_cli::command_help(command) != nullptr ? "loupe " + command + " --help" : "loupe --help";
    std::fprintf(stderr, "loupe: %s\ntry '%s'\n", message.c_str(), help.c_str());
    return 2;
}

// `loupe help [CMD]`: the global help, or CMD's.
int run_help(int argc, char** argv) {
    std::vector<std::string> words;  // after "help"
    bool after_help = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (after_help) words.push_back(arg);
        after_help = after_help || arg == "help";
    }
    if (words.empty()) {
        std::fputs(loupe_cli::global_help, stdout);
        return 0;
    }
    const char* help = loupe_cli::command_help(words[0]);
    if (help == nullptr) {
        return usage_error("help", "help: " + unknown_command(words[0]));
    }
    if (words.size() > 1) {
        return usage_error("help", "help: unexpected argument '" + words[1] + "'; expected one command");
    }
    std::fputs(help, stdout);
    return 0;
}

// export: the files, and what the environment adds (OTEL_*: the endpoint
// when --otlp is not given, headers, the resource); what is wrong, or "".
std::string check_export(const std::vector<std::string>& positional, options& o) {
    o.files.assign(positional.begin() + 1, positional.end());
    loupe_cli::export_request& e = o.exporting;
    e.files = o.files;
    e.decode = o.decode;
    e.batch_bytes = o.batch_bytes;
    loupe::exporter::otlp_env env;
    const std::string problem = loupe::exporter::read_otlp_env(env);
    if (!problem.empty()) return problem;
    if (e.endpoint.empty()) e.endpoint = env.endpoint;
    if (e.endpoint.empty()) {
        return "export needs --otlp URL (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)";
    }
    e.headers = env.headers;
    e.service_name = env.service_name;
    e.resource_attributes = env.resource_attributes;
    return {};
}

// Reads the arguments into `o` and checks them: an empty string, or what is
// wrong (naming the argument).
std::string parse_arguments(int argc, char** argv, options& o) {
    int by_at = 0;
    int metric_at = 0;
    int params_at = 0;
    int top_at = 0;
    int flows_at = 0;
    int ns_at = 0;
    int partial_at = 0;
    int strict_at = 0;
    std::string report_flag;  // the first of --io, --tree, ... given
    std::string export_flag;  // the first of --otlp, --gzip, --retries, --progress given
    int export_flag_at = 0;
    int json_at = 0;
    int batch_bytes_at = 0;
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--json") {
            o.json = true;
            json_at = i;
        } else if (arg == "--partial") {  // the default; kept for scripts that pass it
            partial_at = i;
        } else if (arg == "--strict") {
            o.strict = true;
            o.decode.accept_truncated = false;
            strict_at = i;
        } else if (arg == "--by") {
            if (i + 1 == argc) return "--by (argument " + std::to_string(i) + ") needs a FIELD";
            o.by = argv[++i];
            by_at = i;
        } else if (arg == "--io" || loupe_cli::parse_metric_report(arg) != loupe_cli::metric_report::none) {
            if (!report_flag.empty() && report_flag != arg) {
                return arg + " (argument " + std::to_string(i) + "): one report at a time; " + report_flag +
                       " was given before";
            }
            report_flag = arg;
            o.io = arg == "--io";
            o.metrics = loupe_cli::parse_metric_report(arg);
        } else if (arg == "--metric") {
            if (i + 1 == argc) return "--metric (argument " + std::to_string(i) + ") needs a metric name";
            o.metric = argv[++i];
            metric_at = i;
        } else if (arg == "--params") {
            o.params = true;
            params_at = i;
        } else if (arg == "--flows") {
            o.flows = true;
            flows_at = i;
        } else if (arg == "--top") {
            if (i + 1 == argc) return "--top (argument " + std::to_string(i) + ") needs a number N";
            const std::string n = argv[++i];
            top_at = i;
            char* end = nullptr;
            errno = 0;
            const unsigned long long value = std::strtoull(n.c_str(), &end, 10);
            if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) || *end != '\0' || errno == ERANGE ||
                value > 1000000000ull) {
                return "--top '" + n + "' (argument " + std::to_string(i) +
                       "): expected a number of values, 0 (all) to 1000000000";
            }
            o.top = static_cast<std::size_t>(value);
        } else if (arg == "--ns") {
            ns_at = i;
        } else if (arg == "--otlp") {
            if (i + 1 == argc) return "--otlp (argument " + std::to_string(i) + ") needs a URL";
            const std::string url = argv[++i];
            const std::string problem = loupe::exporter::check_endpoint(url);
            if (!problem.empty()) return "--otlp '" + url + "' (argument " + std::to_string(i) + "): " + problem;
            o.exporting.endpoint = url;
            if (export_flag.empty()) {
                export_flag = arg;
                export_flag_at = i - 1;
            }
        } else if (arg == "--gzip" || arg == "--progress") {
            (arg == "--gzip" ? o.exporting.gzip : o.exporting.progress) = true;
            if (export_flag.empty()) {
                export_flag = arg;
                export_flag_at = i;
            }
        } else if (arg == "--retries") {
            if (i + 1 == argc) return "--retries (argument " + std::to_string(i) + ") needs a number N";
            const std::string n = argv[++i];
            char* end = nullptr;
            errno = 0;
            const unsigned long long value = std::strtoull(n.c_str(), &end, 10);
            if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) || *end != '\0' || errno == ERANGE ||
                value > 100) {
                return "--retries '" + n + "' (argument " + std::to_string(i) +
                       "): expected a number of retries, 0 to 100";
            }
            o.exporting.retries = static_cast<unsigned>(value);
            if (export_flag.empty()) {
                export_flag = arg;
                export_flag_at = i - 1;
            }
        } else if (arg == "--uncompressed") {
            o.uncompressed = true;
        } else if (arg == "--batch-bytes") {
            if (i + 1 == argc) return "--batch-bytes (argument " + std::to_string(i) + ") needs a number of bytes";
            const std::string n = argv[++i];
            char* end = nullptr;
            errno = 0;
            const unsigned long long value = std::strtoull(n.c_str(), &end, 10);
            if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) || *end != '\0' || errno == ERANGE ||
                value < 1024 || value > (1ull << 32)) {
                return "--batch-bytes '" + n + "' (argument " + std::to_string(i) +
                       "): expected a number of bytes, 1024 to 4294967296";
            }
            o.batch_bytes = static_cast<std::size_t>(value);
            batch_bytes_at = i - 1;
        } else if (arg == "--to" || arg == "-o") {
            if (i + 1 == argc) {
                return arg + " (argument " + std::to_string(i) + ") needs " +
                       (arg == "--to" ? "a FORMAT" : "an output file");
            }
            (arg == "--to" ? o.format : o.output) = argv[++i];
            if (arg == "--to" && o.format != "perfetto" && o.format != "chrome-json" && o.format != "otlp") {
                return "--to '" + o.format + "' (argument " + std::to_string(i) +
                       "): expected perfetto, chrome-json or otlp";
            }
        } else if (is_option(arg)) {
            return "unknown option '" + arg + "' (argument " + std::to_string(i) + ")";
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.empty()) return std::string("missing command; expected ") + command_list;
    o.command = positional[0];
    if (o.command != "dump" && o.command != "stats" && o.command != "convert" && o.command != "report" &&
        o.command != "export") {
        return unknown_command(o.command);
    }
    if (o.command == "report" && report_flag.empty()) {
        return "report needs one of --io, --tasks, --tree, --flat, --callers, --per-cpu, --per-thread";
    }
    if (o.command != "report" && !report_flag.empty()) return report_flag + " applies to 'report' only";
    if (metric_at != 0 && o.metrics == loupe_cli::metric_report::none) {
        return "--metric (argument " + std::to_string(metric_at - 1) +
               ") applies to report --tree, --flat, --callers, --per-cpu and --per-thread only";
    }
    if (ns_at != 0 && !loupe_cli::takes_ns(o.metrics)) {
        return "--ns (argument " + std::to_string(ns_at) +
               ") applies to report --tree, --flat, --callers and --per-thread only";
    }
    if (metric_at != 0 && o.metric.empty()) {
        return "--metric (argument " + std::to_string(metric_at - 1) + ") needs a metric name, not ''";
    }
    if (!o.by.empty()) {
        loupe::report::group_by field;
        loupe::report::io_group group;
        if (o.command == "stats" && !loupe::report::parse_group_by(o.by, field)) {
            return "--by '" + o.by + "' (argument " + std::to_string(by_at) +
                   "): expected thread, client, user, session, request, app or component";
        }
        if (o.command == "report" && !o.io) {
            return "--by (argument " + std::to_string(by_at - 1) + ") applies to report --io, not " + report_flag;
        }
        if (o.command == "report" && !loupe::report::parse_io_group(o.by, group)) {
            return "--by '" + o.by + "' (argument " + std::to_string(by_at) +
                   "): expected file, socket, thread, zone, client, user, session, request, app or component";
        }
        if (o.command != "stats" && o.command != "report") return "--by applies to 'stats' and 'report' only";
    }
    if (params_at != 0 && o.command != "stats") {
        return "--params (argument " + std::to_string(params_at) + ") applies to 'stats' only";
    }
    if (flows_at != 0 && o.command != "stats") {
        return "--flows (argument " + std::to_string(flows_at) + ") applies to 'stats' only";
    }
    if (flows_at != 0 && (params_at != 0 || !o.by.empty())) {
        return (params_at != 0 ? "--params (argument " + std::to_string(params_at)
                               : "--by (argument " + std::to_string(by_at - 1)) +
               ") does not apply to stats --flows (argument " + std::to_string(flows_at) + ")";
    }
    if (top_at != 0 && !o.params) {
        return "--top (argument " + std::to_string(top_at - 1) + ") applies to stats --params only";
    }
    if (o.params && !o.by.empty()) {
        return "--by (argument " + std::to_string(by_at - 1) + ") does not apply to stats --params (argument " +
               std::to_string(params_at) + ")";
    }
    if (o.command == "convert" && (o.format.empty() || o.output.empty())) {
        return std::string("convert needs ") + (o.format.empty() ? "--to FORMAT" : "-o OUT");
    }
    if (o.command != "convert" && (!o.format.empty() || !o.output.empty() || o.uncompressed)) {
        return "--to, -o and --uncompressed apply to 'convert' only";
    }
    if (o.uncompressed && o.format != "perfetto") return "--uncompressed applies to --to perfetto only";
    if (o.batch_bytes != 0 && o.format != "otlp" && o.command != "export") {
        return "--batch-bytes (argument " + std::to_string(batch_bytes_at) +
               ") applies to convert --to otlp and export only";
    }
    if (!export_flag.empty() && o.command != "export") {
        return export_flag + " (argument " + std::to_string(export_flag_at) + ") applies to 'export' only";
    }
    if (partial_at != 0 && strict_at != 0) {
        return "--partial (argument " + std::to_string(partial_at) + ") and --strict (argument " +
               std::to_string(strict_at) + ") contradict each other";
    }
    if (positional.size() < 2) return "'" + o.command + "' needs a trace FILE";
    if (o.command == "export" && json_at != 0) {
        return "--json (argument " + std::to_string(json_at) + ") does not apply to 'export'";
    }
    if (o.command == "export") return check_export(positional, o);
    if (positional.size() > 2) return "unexpected argument '" + positional[2] + "'; expected one FILE";
    o.file = positional[1];
    o.times = ns_at != 0 ? loupe::report::time_format::raw_ns : loupe::report::time_format::human;
    return {};
}

// A trace cut short (no END record: the process died while it recorded) is
// read up to its last whole record; one line on stderr says how much of the
// file that is. The check reads the records' framing only, not the events.
void say_if_cut_short(const options& o) {
    if (o.strict) return;  // refused where it is read
    struct stat st {};
    if (::stat(o.file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;  // a stream is read once, by the command
    const loupe::detail::mapped_file bytes(o.file);
    loupe::trace_visitor nothing;
    loupe::detail::trace_decoder framing(bytes.data(), bytes.size(), nothing);
    framing.decode_events = false;
    loupe::decode_result r;
    try {
        r = framing.run(o.decode);
    } catch (const loupe::trace_error&) {
        return;  // a damaged trace: the command's own read names the error
    }
    if (r.complete) return;
    const auto used = static_cast<unsigned long long>(r.bytes_used);
    const auto size = static_cast<unsigned long long>(bytes.size());
    std::fprintf(stderr,
                 "loupe: %s: trace cut short (no END record): read up to its last whole record, byte %llu of %llu "
                 "(%llu bytes lost); --strict refuses such a trace\n",
                 o.file.c_str(), used, size, size - used);
}

int run(const options& o) {
    if (o.command == "export") {
        for (const std::string& file : o.files) {
            options one = o;
            one.file = file;
            say_if_cut_short(one);
        }
        return loupe_cli::run_export(o.exporting);
    }
    say_if_cut_short(o);
    if (o.command == "dump") {
        const std::vector<unsigned char> bytes = loupe::read_trace_bytes(o.file);
        loupe_cli::dump_visitor dump(stdout, o.json);
        try {
            loupe::decode_trace(bytes.data(), bytes.size(), dump, o.decode);
        } catch (const loupe::trace_error& e) {
            std::fflush(stdout);  // records before the error stay visible
            throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), o.file);
        }
        return 0;
    }
    if (o.command == "convert") {
        return loupe_cli::run_convert({o.file, o.decode, o.format, o.output, o.uncompressed, o.batch_bytes});
    }
    if (o.command == "report" && o.metrics != loupe_cli::metric_report::none) {
        return loupe_cli::run_metric_report(o.file, o.decode, o.metrics, o.metric, o.json, o.times);
    }
    if (o.command == "report") {
        loupe::report::io_group grouping = loupe::report::io_group::file;
        if (!o.by.empty()) loupe::report::parse_io_group(o.by, grouping);  // checked in parse_arguments
        const loupe::report::io_report report =
            loupe::report::io_stats(loupe::read_trace_file(o.file, o.decode), grouping);
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
    if (!o.by.empty()) loupe::report::parse_group_by(o.by, grouping);  // checked in parse_arguments
    const loupe::report::zone_report report =
        loupe::report::zone_stats(loupe::read_trace_file(o.file, o.decode), grouping);
    const std::string text = o.json ? loupe::report::zone_stats_json(report) : loupe::report::format_zone_stats(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const command_line c = scan(argc, argv);
    if (c.version) {
        std::printf("loupe %s\n", LOUPE_VERSION_STRING);
        return 0;
    }
    if (c.help && (c.command.empty() || c.command == "help")) {
        std::fputs(loupe_cli::global_help, stdout);
        return 0;
    }
    if (c.help) {
        const char* help = loupe_cli::command_help(c.command);
        if (help == nullptr) return usage_error(c.command, unknown_command(c.command));
        std::fputs(help, stdout);
        return 0;
    }
    if (c.command == "help") return run_help(argc, argv);
    if (c.command == "merge" || loupe_cli::asks_for_task_report(c.command, argc, argv)) {  // merge.hpp
        try {
            const int status = loupe_cli::run_task_command(c.command, argc, argv);
            if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
                std::fprintf(stderr, "loupe: cannot write output: %s\n", std::strerror(errno));
                return 1;
            }
            return status;
        } catch (const loupe_cli::task_usage& u) {
            return usage_error(c.command, u.problem);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            return 1;
        }
    }
    if (loupe_cli::is_remote_command(c.command)) {  // ps, start, set, stop, status, record (remote_commands.hpp)
        try {
            return loupe_cli::run_remote(argc, argv);
        } catch (const loupe_cli::remote_usage& u) {
            return usage_error(c.command, u.problem);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            return 1;
        }
    }
    options o;
    const std::string problem = parse_arguments(argc, argv, o);
    if (!problem.empty()) return usage_error(c.command, problem);
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
