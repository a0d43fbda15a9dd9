// The help texts of `loupe`: the global help (`loupe --help`, `loupe help`)
// lists the commands; each command has its own (`loupe CMD --help`,
// `loupe help CMD`) with its usage, what it does and its options.
#pragma once

#include <string_view>

namespace loupe_cli {

inline const char* const global_help =
    "usage: loupe <command> FILE [options]\n"
    "       loupe <command> --help\n"
    "\n"
    "Reads .loupe traces; starts and stops sessions in running processes.\n"
    "commands:\n"
    "  dump     print every record of a trace, in file order\n"
    "  stats    zone durations, parameter values (--params) or flow hops (--flows)\n"
    "  report   I/O (--io), call trees and totals of a metric (--tree, ...), tasks (--tasks)\n"
    "  convert  write a trace for ui.perfetto.dev (Perfetto, Chrome JSON) or as OTLP spans\n"
    "  merge    join the traces of several processes by task: a trace set, or one timeline\n"
    "  export   send traces as OTLP spans to an OpenTelemetry collector (OTLP/HTTP)\n"
    "  ps       this user's processes that listen for loupe (loupe::control::listen)\n"
    "  start, set, stop, status, record  sessions in such processes (record: several at once)\n"
    "  help     show this text; 'loupe help <command>': that command's help\n"
    "\n"
    "options:\n"
    "  --help     show help (after a command: that command's)\n"
    "  --version  show the loupe version\n"
    "\n"
    "Run 'loupe <command> --help' for a command's options.\n";

inline const char* const dump_help =
    "usage: loupe dump FILE [--json] [--strict]\n"
    "\n"
    "Prints every record of the trace in file order.\n"
    "\n"
    "options:\n"
    "  --json     JSON Lines: one object per record and per event, each with its byte offset\n"
    "  --strict   refuse a trace cut short (read by default up to its last whole record)\n";

inline const char* const stats_help =
    "usage: loupe stats FILE [--by FIELD] [--json] [--strict]\n"
    "       loupe stats FILE --params [--top N] [--json] [--strict]\n"
    "       loupe stats FILE --flows [--json] [--strict]\n"
    "\n"
    "Per zone, overall and per thread: count, total, mean, min, p50, p99, max.\n"
    "\n"
    "options:\n"
    "  --by FIELD  rows per thread (default) or per value of a context field:\n"
    "              client, user, session, request, app, component\n"
    "  --params    per traced method and parameter spec, call durations per value;\n"
    "              then per zone and argument key (LOUPE_ZONE_ARG), zone durations per value\n"
    "  --top N     --params: the N values with the most total time (default 10; 0: all)\n"
    "  --flows     per hop between consecutive points of a flow: count, share across\n"
    "              threads, mean, p50, p99, max\n"
    "  --json      one JSON object\n"
    "  --strict    refuse a trace cut short (read by default up to its last whole record)\n";

inline const char* const report_help =
    "usage: loupe report FILE --io [--by GROUP] [--json] [--strict]\n"
    "       loupe report FILE --tree|--flat|--callers|--per-thread|--per-cpu [--metric M] [--ns]\n"
    "                         [--json] [--strict]\n"
    "       loupe report FILE... --tasks [--json] [--strict]\n"
    "\n"
    "Reports the I/O or a metric of a trace, or the tasks of traces; one report at a time:\n"
    "  --io          I/O per group: operations, bytes in/out, time, throughput; anomalies\n"
    "  --tree        per-thread call trees: Level, RL (recursion level), Calls, Base (self),\n"
    "                Cum (inclusive), Name\n"
    "  --flat        per routine: Calls, Base, Cum (recursion counted once)\n"
    "  --callers     per routine, a stanza of its parents, itself and its children\n"
    "  --per-thread  each thread's metric totals next to the sum of its tree\n"
    "  --per-cpu     push metric totals per CPU\n"
    "  --tasks       each task across processes (the FILEs, or trace sets, joined): its calls as\n"
    "                a tree, self times, critical path; per process and call: count, p50/p95/p99\n"
    "\n"
    "options:\n"
    "  --by GROUP  --io: rows per file (default), socket, thread, zone or a context field\n"
    "  --metric M  --tree/--flat/--callers: the metric (default wall_time);\n"
    "              --per-thread/--per-cpu: only that metric (default: all)\n"
    "  --ns        --tree/--flat/--callers/--per-thread: times in nanoseconds, not 214 ms\n"
    "  --json      one JSON object (times always in nanoseconds)\n"
    "  --strict    refuse a trace cut short (read by default up to its last whole record)\n";

inline const char* const convert_help =
    "usage: loupe convert FILE --to perfetto|chrome-json|otlp -o OUT [--uncompressed] [--batch-bytes N]\n"
    "                     [--strict]\n"
    "\n"
    "Writes the trace for ui.perfetto.dev, or as OpenTelemetry spans (OTLP protobuf), then\n"
    "one line on stderr: what was written (events; spans and batches for otlp), output, size.\n"
    "\n"
    "options:\n"
    "  --to FORMAT     perfetto (protobuf .pftrace), chrome-json (Trace Event JSON) or otlp\n"
    "                  (ExportTraceServiceRequest batches, concatenated)\n"
    "  -o OUT          the output file; '-': stdout\n"
    "  --uncompressed  --to perfetto: plain packets (for protoc --decode), not deflated\n"
    "  --batch-bytes N --to otlp: largest batch in bytes (default 4194304)\n"
    "  --strict        refuse a trace cut short (read by default up to its last whole record)\n";

inline const char* const merge_help =
    "usage: loupe merge FILE... -o OUT [--to loupe|perfetto|chrome-json] [--uncompressed] [--strict]\n"
    "\n"
    "Joins the traces of several processes by task (W3C trace id and call id): each call's\n"
    "client and server sides, every process on one timeline (clock offsets estimated from the\n"
    "calls, causality clamped). Writes OUT, then one paragraph on stderr: traces, hosts, tasks,\n"
    "calls joined, opaque (callee not profiled), unlinked, clamped, clock offsets and uncertainty.\n"
    "A FILE may be a trace set itself.\n"
    "\n"
    "options:\n"
    "  -o OUT          the output file; '-': stdout (then --to is needed)\n"
    "  --to FORMAT     loupe: a trace set, the traces back to back (loupe report OUT --tasks reads\n"
    "                  it); perfetto or chrome-json: one process per trace, calls linked by arrows.\n"
    "                  Default: by OUT's extension, .loupe, .pftrace or .json\n"
    "  --uncompressed  --to perfetto: plain packets, not deflated\n"
    "  --strict        refuse a trace cut short (read by default up to its last whole record)\n";

inline const char* const export_help =
    "usage: loupe export FILE... --otlp URL [--gzip] [--batch-bytes N] [--retries N] [--progress]\n"
    "                    [--strict]\n"
    "\n"
    "Sends each trace as OpenTelemetry spans (its own resource) to a collector: HTTP/1.1 POSTs of\n"
    "OTLP protobuf to URL, in order. Plain HTTP, no TLS: for a TLS backend, run an OpenTelemetry\n"
    "Collector on localhost and send to it. Then one line on stderr: spans and batches sent,\n"
    "bytes, spans rejected, retries.\n"
    "\n"
    "options:\n"
    "  --otlp URL      http://HOST[:PORT]/PATH, e.g. http://127.0.0.1:4318/v1/traces; default:\n"
    "                  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces\n"
    "  --gzip          compress each request (Content-Encoding: gzip)\n"
    "  --batch-bytes N largest request in bytes (default 4194304)\n"
    "  --retries N     retries of a batch on 429, 502, 503, 504 or a connection error, with\n"
    "                  exponential backoff from 1 s (Retry-After honoured, waits at most 30 s;\n"
    "                  default 5; 0 to 100)\n"
    "  --progress      show progress on stderr (shown anyway when stderr is a terminal)\n"
    "  --strict        refuse a trace cut short (read by default up to its last whole record)\n"
    "\n"
    "environment: OTEL_EXPORTER_OTLP_HEADERS (key=value,... sent with each request),\n"
    "  OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES (key=value,... added to the resource)\n"
    "\n"
    "exit status: 0 every span accepted; 1 a file could not be read, a batch was not delivered,\n"
    "or the collector rejected spans; 2 bad usage (a bad OTEL_* variable too)\n";

inline const char* const ps_help =
    "usage: loupe ps\n"
    "\n"
    "Lists this user's processes that listen for loupe commands (loupe::control::listen),\n"
    "from the socket directory ($XDG_RUNTIME_DIR/loupe, else /tmp/loupe-UID): PID, program,\n"
    "sessions running. Sockets of processes that died are skipped. Exit 1 when a listed\n"
    "process could not be reached (one line per process on stderr).\n";

inline const char* const start_help =
    "usage: loupe start PID -o FILE [--name N] [--kinds K] [--filter F] [--params FILE]\n"
    "                   [--task-rules R] [--metrics M] [--ring-bytes N] [--memory-budget N]\n"
    "                   [--overflow drop|block] [--otlp URL] [--for DURATION]\n"
    "\n"
    "Starts a session in process PID, which writes the trace to FILE (and with --otlp\n"
    "sends its spans to an OpenTelemetry collector while it runs).\n"
    "\n"
    "options:\n"
    "  -o FILE          the trace, relative to the process's output directory (or absolute\n"
    "                   inside it; see 'loupe status PID')\n"
    "  --name N         the session's name (default remote-1, remote-2, ...)\n"
    "  --kinds K        zones,instants,counters,io,methods,flows,tasks or all (default all)\n"
    "  --filter F       record only threads whose context matches F, e.g. 'user == \"alice\"'\n"
    "  --params FILE    parameter specs, one per line (read here, sent to the process)\n"
    "  --task-rules R   which outgoing calls carry the task's context, e.g. 'tag peer=inventory*'\n"
    "  --metrics M      metrics per zone, comma-separated (e.g. cpu_time,alloc_bytes)\n"
    "  --ring-bytes N   per-thread ring size\n"
    "  --memory-budget N  bytes the session's rings may grow to in all (default 64 MiB;\n"
    "                   0: rings never grow)\n"
    "  --overflow P     drop (default) or block when a ring is full\n"
    "  --otlp URL       also send the spans, 2-4 s after they end, to this OTLP/HTTP endpoint\n"
    "                   (e.g. http://127.0.0.1:4318/v1/traces; the process's OTEL_EXPORTER_OTLP_HEADERS,\n"
    "                   OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES apply; without a service name,\n"
    "                   the process's first name, else its program); 'stop' prints what the\n"
    "                   collector accepted\n"
    "  --for DURATION   stop by itself after 500ms, 10s, 5m, 1h ...\n";

inline const char* const set_help =
    "usage: loupe set PID NAME [--filter F] [--params FILE] [--task-rules R]\n"
    "\n"
    "Changes the thread filter, the parameter specs or the task rules of session NAME in\n"
    "process PID while it runs. Invalid text is refused and the old settings stay.\n";

inline const char* const stop_help =
    "usage: loupe stop PID NAME\n"
    "\n"
    "Stops session NAME in process PID. When it returns the trace file is complete; prints\n"
    "the file and the session's final counts.\n";

inline const char* const status_help =
    "usage: loupe status PID [PID...]\n"
    "\n"
    "Shows each process's endpoint (program, loupe version, output directory, connections\n"
    "refused) and the sessions started through it with their counts. Exit 1 when a process\n"
    "could not be reached.\n";

inline const char* const record_help =
    "usage: loupe record --pids PID,PID,... --for DURATION -o DIR [--name N] [--kinds K]\n"
    "                    [--filter F] [--params FILE] [--task-rules R] [--metrics M]\n"
    "                    [--ring-bytes N] [--memory-budget N] [--overflow drop|block] [--otlp URL]\n"
    "                    [--progress]\n"
    "\n"
    "Starts one session (the same options in each) in every process named, one after the\n"
    "other as fast as they answer, stops them together after DURATION and copies their\n"
    "traces into DIR as NAME-PID.loupe (its first name, else its program); one line per\n"
    "process, then a summary. Then it joins them by task (as 'loupe merge') into\n"
    "DIR/merged.loupe and DIR/merged.pftrace.\n"
    "Each session also stops by itself a minute after DURATION should this command die.\n"
    "\n"
    "Task rules: every process is told the names of all those recorded (the 'names' that\n"
    "'loupe status' shows: listen_options::names, else OTEL_SERVICE_NAME) as the rules'\n"
    "'profiled' list, so that only calls to them carry the task: 'profiled N, ...; tag\n"
    "profiled', or the list then --task-rules R when given.\n"
    "\n"
    "options:\n"
    "  --pids LIST      the processes (also as arguments after the command)\n"
    "  --for DURATION   how long: 500ms, 10s, 5m, 1h ...\n"
    "  -o DIR           where the traces are collected (made if missing)\n"
    "  --progress       a line per second on stderr (shown anyway when stderr is a terminal)\n"
    "  (the session options are start's: see 'loupe start --help')\n"
    "\n"
    "exit status: 0 every process recorded; 1 one could not be reached or its trace not\n"
    "collected (the others are); 2 bad usage\n";

/// The help of `command`; nullptr when there is no such command.
inline const char* command_help(std::string_view command) noexcept {
    if (command == "dump") return dump_help;
    if (command == "stats") return stats_help;
    if (command == "report") return report_help;
    if (command == "convert") return convert_help;
    if (command == "ps") return ps_help;
    if (command == "start") return start_help;
    if (command == "set") return set_help;
    if (command == "stop") return stop_help;
    if (command == "status") return status_help;
    if (command == "record") return record_help;
    if (command == "export") return export_help;
    if (command == "merge") return merge_help;
    return nullptr;
}

}  // namespace loupe_cli
