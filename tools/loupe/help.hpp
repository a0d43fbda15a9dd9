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
    "Reads .loupe traces.\n"
    "\n"
    "commands:\n"
    "  dump     print every record of a trace, in file order\n"
    "  stats    zone durations, parameter values (--params) or flow hops (--flows)\n"
    "  report   I/O (--io), call trees and totals of a metric (--tree, --flat, ...)\n"
    "  convert  write a trace for ui.perfetto.dev (Perfetto or Chrome JSON)\n"
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
    "\n"
    "Reports the I/O or a metric of a trace; one report at a time:\n"
    "  --io          I/O per group: operations, bytes in/out, time, throughput; anomalies\n"
    "  --tree        per-thread call trees: Level, RL (recursion level), Calls, Base (self),\n"
    "                Cum (inclusive), Name\n"
    "  --flat        per routine: Calls, Base, Cum (recursion counted once)\n"
    "  --callers     per routine, a stanza of its parents, itself and its children\n"
    "  --per-thread  each thread's metric totals next to the sum of its tree\n"
    "  --per-cpu     push metric totals per CPU\n"
    "\n"
    "options:\n"
    "  --by GROUP  --io: rows per file (default), socket, thread, zone or a context field\n"
    "  --metric M  --tree/--flat/--callers: the metric (default wall_time);\n"
    "              --per-thread/--per-cpu: only that metric (default: all)\n"
    "  --ns        --tree/--flat/--callers/--per-thread: times in nanoseconds, not 214 ms\n"
    "  --json      one JSON object (times always in nanoseconds)\n"
    "  --strict    refuse a trace cut short (read by default up to its last whole record)\n";

inline const char* const convert_help =
    "usage: loupe convert FILE --to perfetto|chrome-json -o OUT [--uncompressed] [--strict]\n"
    "\n"
    "Writes the trace for ui.perfetto.dev, then one line on stderr: events, output, size.\n"
    "\n"
    "options:\n"
    "  --to FORMAT     perfetto (protobuf .pftrace) or chrome-json (Trace Event JSON)\n"
    "  -o OUT          the output file; '-': stdout\n"
    "  --uncompressed  --to perfetto: plain packets (for protoc --decode), not deflated\n"
    "  --strict        refuse a trace cut short (read by default up to its last whole record)\n";

/// The help of `command`; nullptr when there is no such command.
inline const char* command_help(std::string_view command) noexcept {
    if (command == "dump") return dump_help;
    if (command == "stats") return stats_help;
    if (command == "report") return report_help;
    if (command == "convert") return convert_help;
    return nullptr;
}

}  // namespace loupe_cli
