// `loupe ps|start|set|stop|status|record`: sessions in running processes, through
// their control endpoints (docs/control.md). The other commands read
// traces; these talk to processes that called loupe::control::listen().
//
// Exit status: 0 success; 1 a process could not be reached or refused the
// request (one line "loupe: process PID: <what>" per process on stderr);
// 2 bad usage (one line naming the argument, then the help hint).
#pragma once

#include <loupe/base/error.hpp>
#include <loupe/export/otlp_http.hpp>
#include <loupe/remote/client.hpp>
#include <loupe/remote/protocol.hpp>
#include <loupe/remote/reply.hpp>
#include <loupe/remote/socket_dir.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "merge.hpp"

namespace loupe_cli {

/// A usage problem of a remote command: the message (naming the argument).
struct remote_usage {
    std::string problem;
};

inline bool is_remote_command(const std::string& command) {
    return command == "ps" || command == "start" || command == "set" || command == "stop" || command == "status" ||
           command == "record";
}

namespace remote_detail {

inline pid_t parse_pid(const std::string& text, int at) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || v <= 0 || v > 4194304 || text[0] == '+') {
        throw remote_usage{"PID '" + text + "' (argument " + std::to_string(at) + "): expected a process id"};
    }
    return static_cast<pid_t>(v);
}

// "10s", "500ms", "2m", "1h" → milliseconds.
inline std::uint64_t parse_duration(const std::string& text, int at) {
    const std::string bad =
        "--for '" + text + "' (argument " + std::to_string(at) + "): expected a duration such as 500ms, 10s, 5m or 1h";
    std::size_t i = 0;
    std::uint64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && n < 1000000000ull) n = n * 10 + (text[i++] - '0');
    if (i == 0) throw remote_usage{bad};
    const std::string unit = text.substr(i);
    std::uint64_t ms = 0;
    if (unit == "ms")
        ms = n;
    else if (unit == "s" || unit.empty())
        ms = n * 1000;
    else if (unit == "m")
        ms = n * 60000;
    else if (unit == "h")
        ms = n * 3600000;
    else
        throw remote_usage{bad};
    if (ms == 0 || ms > loupe::remote::max_duration_ms) throw remote_usage{bad};
    return ms;
}

inline std::string read_text_file(const std::string& path, int at) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw remote_usage{"--params '" + path + "' (argument " + std::to_string(at) + "): cannot read the file"};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Sends one request; the reply, or throws loupe::error naming the process
// (an error reply included).
// A stop waits for the session's file to be complete and its live OTLP
// export to be sent (at most the sink's shutdown timeout and one request's):
// it may take longer than other requests.
inline constexpr std::chrono::milliseconds stop_reply_timeout{60000};

inline loupe::remote::json_value ask(pid_t pid, const std::string& line,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    loupe::remote::connection c(pid, {}, timeout);
    loupe::remote::json_value r = loupe::remote::parse_reply(c.exchange(line));
    if (!r.flag("ok")) throw loupe::error("process " + std::to_string(pid) + ": " + r.str("error", "failed"));
    return r;
}

// "  otlp URL: N of M spans accepted[; first error]" for a session with a live
// OTLP export (start's --otlp), else nothing.
inline void print_otlp(const loupe::remote::json_value& s) {
    if (s.find("otlp") == nullptr) return;
    std::printf("  otlp %s: %llu of %llu spans accepted%s%s\n", s.str("otlp").c_str(),
                static_cast<unsigned long long>(s.u64("otlp_accepted")),
                static_cast<unsigned long long>(s.u64("otlp_spans")), s.str("otlp_error").empty() ? "" : "; ",
                s.str("otlp_error").c_str());
}

inline void print_stats(const loupe::remote::json_value& s) {
    std::printf("  delivered %llu, dropped %llu, sink failures %llu\n",
                static_cast<unsigned long long>(s.u64("delivered")), static_cast<unsigned long long>(s.u64("dropped")),
                static_cast<unsigned long long>(s.u64("sink_failures")));
    print_otlp(s);
}

// The names a process's peers call it by (info's "names").
inline std::vector<std::string> names_of(const loupe::remote::json_value& info) {
    std::vector<std::string> names;
    if (const loupe::remote::json_value* list = info.find("names")) {
        for (const auto& n : list->items) {
            if (n.kind == loupe::remote::json_value::type::string) names.push_back(n.text);
        }
    }
    return names;
}

// "a, b" ("-" when there are none).
inline std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "-" : out;
}

inline int run_ps() {
    const std::string dir = loupe::remote::socket_directory();
    std::vector<pid_t> pids;
    try {
        loupe::remote::check_socket_directory(dir);
        pids = loupe::remote::endpoint_pids(dir);
    } catch (const loupe::error& e) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT) {
            std::printf("%-8s %-16s %-8s %s\n", "PID", "PROGRAM", "SESSIONS", "NAMES");
            return 0;  // no process of this user ever listened
        }
        std::fprintf(stderr, "loupe: %s\n", e.what());
        return 1;
    }
    std::printf("%-8s %-16s %-8s %s\n", "PID", "PROGRAM", "SESSIONS", "NAMES");
    int status = 0;
    for (const pid_t pid : pids) {
        try {
            loupe::remote::connection c(pid, dir);
            const loupe::remote::json_value info = loupe::remote::parse_reply(c.exchange("info"));
            if (!info.flag("ok")) throw loupe::error("process " + std::to_string(pid) + ": " + info.str("error"));
            std::printf("%-8ld %-16s %-8llu %s\n", static_cast<long>(pid), info.str("program").c_str(),
                        static_cast<unsigned long long>(info.u64("sessions_running")), joined(names_of(info)).c_str());
        } catch (const loupe::error& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            status = 1;
        }
    }
    return status;
}

inline int run_status(const std::vector<pid_t>& pids) {
    int status = 0;
    for (const pid_t pid : pids) {
        try {
            const loupe::remote::json_value info = ask(pid, "info");
            const loupe::remote::json_value list = ask(pid, "list");
            std::printf("process %ld (%s), loupe %s, output directory %s, %llu refused, names %s\n",
                        static_cast<long>(pid), info.str("program").c_str(), info.str("loupe_version").c_str(),
                        info.str("output_directory").c_str(), static_cast<unsigned long long>(info.u64("refused")),
                        joined(names_of(info)).c_str());
            const loupe::remote::json_value* sessions = list.find("sessions");
            if (sessions == nullptr || sessions->items.empty()) std::printf("  no sessions\n");
            if (sessions != nullptr) {
                for (const auto& s : sessions->items) {
                    std::printf("  %s  %s  %s\n", s.str("name").c_str(), s.flag("running") ? "running" : "stopped",
                                s.str("output").c_str());
                    if (!s.str("filter").empty()) std::printf("    filter %s\n", s.str("filter").c_str());
                    if (!s.str("task_rules").empty()) std::printf("    task rules %s\n", s.str("task_rules").c_str());
                    std::printf("  ");
                    print_stats(s);
                }
            }
        } catch (const loupe::error& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            status = 1;
        }
    }
    return status;
}

// `loupe record`: one session of the same name in every process of `pids`,
// started one after the other as fast as the endpoints answer, stopped
// together after `for_ms`, the files copied into `dir`.
struct record_request {
    std::vector<pid_t> pids;
    std::uint64_t for_ms = 0;
    std::string dir;
    std::string name;
    std::string start_options;  // "; kinds=...; filter=..." as `start` takes them, without task_rules
    bool has_task_rules = false;
    std::string task_rules;  // --task-rules, when given
    bool progress = false;
};

struct recorded_process {
    pid_t pid = 0;
    std::string program;
    std::vector<std::string> names;  // what its peers call it (info's "names")
    std::string output;              // where the process wrote the trace
};

// The task rules every recorded process gets: the names of all of them as
// the `profiled` list, then the user's rules, or `tag profiled` (only calls
// to a recorded process carry the task) when there are none. Without any
// name, the user's rules as they are (none: every call is tagged). A name
// the rules cannot hold (a '"', '\\' or control byte) is left out and said.
inline std::string profiled_rules(const std::vector<recorded_process>& procs, const record_request& r) {
    std::string list;
    for (const recorded_process& p : procs) {
        for (const std::string& n : p.names) {
            if (n.find_first_of("\"\\") != std::string::npos ||
                std::any_of(n.begin(), n.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
                std::fprintf(stderr, "loupe: process %ld: its name '%s' cannot be a task rules value; left out\n",
                             static_cast<long>(p.pid), n.c_str());
                continue;
            }
            list += (list.empty() ? "profiled \"" : ", \"") + n + "\"";
        }
    }
    if (list.empty()) return r.task_rules;
    return list + (r.has_task_rules ? "\n" + r.task_rules : std::string("; tag profiled"));
}

// What a collected trace is named after: the process's first name (what its
// peers call it), else its program ("process" when neither is known), with
// every byte but letters, digits, '.', '-' and '_' made '_'.
inline std::string collected_name(const recorded_process& p) {
    std::string name = !p.names.empty() ? p.names.front() : !p.program.empty() ? p.program : "process";
    for (char& c : name) {
        const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                          c == '-' || c == '_';
        if (!kept) c = '_';
    }
    if (name.find_first_not_of('.') == std::string::npos) name = "process";  // "." and ".." name no file
    return name;
}

// Sums the session's counts over the processes (for progress lines).
inline void record_counts(const std::vector<recorded_process>& procs, const std::string& name,
                          unsigned long long& delivered, unsigned long long& dropped) {
    delivered = dropped = 0;
    for (const recorded_process& p : procs) {
        try {
            const loupe::remote::json_value list = ask(p.pid, "list");
            const loupe::remote::json_value* sessions = list.find("sessions");
            if (sessions == nullptr) continue;
            for (const auto& s : sessions->items) {
                if (s.str("name") != name) continue;
                delivered += s.u64("delivered");
                dropped += s.u64("dropped");
            }
        } catch (const loupe::error&) {  // reported when it is stopped
        }
    }
}

inline int run_record(const record_request& r) {
    std::error_code ec;
    std::filesystem::create_directories(r.dir, ec);
    if (ec) {
        std::fprintf(stderr, "loupe: cannot make the directory '%s': %s\n", r.dir.c_str(), ec.message().c_str());
        return 1;
    }
    int status = 0;
    // Who is there, and by which names their peers call them.
    std::vector<recorded_process> reached;
    for (const pid_t pid : r.pids) {
        try {
            const loupe::remote::json_value info = ask(pid, "info");
            recorded_process p;
            p.pid = pid;
            p.program = info.str("program");
            p.names = names_of(info);
            reached.push_back(std::move(p));
        } catch (const loupe::error& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            status = 1;
        }
    }
    const std::string rules = profiled_rules(reached, r);
    std::string options = r.start_options;
    if (!rules.empty()) options += "; task_rules=" + loupe::remote::quote_value(rules);
    if (rules != r.task_rules) std::printf("task rules: %s\n", rules.c_str());
    // The sessions stop by themselves a minute after the recording should
    // end, should this command die before it stops them.
    const std::uint64_t safety_ms = std::min<std::uint64_t>(r.for_ms + 60000, loupe::remote::max_duration_ms);
    std::vector<recorded_process> started;
    const auto first_start = std::chrono::steady_clock::now();
    for (recorded_process& p : reached) {
        try {
            const loupe::remote::json_value reply =
                ask(p.pid, "start output=" +
                               loupe::remote::quote_value(r.name + "-" + std::to_string(p.pid) + ".loupe") +
                               "; name=" + loupe::remote::quote_value(r.name) + options +
                               "; duration_ms=" + std::to_string(safety_ms));
            p.output = reply.str("output");
            started.push_back(std::move(p));
        } catch (const loupe::error& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            status = 1;
        }
    }
    if (started.empty()) {
        std::fprintf(stderr, "loupe: no process could be recorded\n");
        return 1;
    }
    const double spread_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first_start).count();
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(r.for_ms);
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= end) break;
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(end - now, std::chrono::seconds(1)));
        if (r.progress) {
            unsigned long long delivered = 0, dropped = 0;
            record_counts(started, r.name, delivered, dropped);
            const double left =
                std::max(0.0, std::chrono::duration<double>(end - std::chrono::steady_clock::now()).count());
            std::fprintf(stderr, "loupe: recording, %.1f s left: %zu processes, %llu events, %llu dropped\n", left,
                         started.size(), delivered, dropped);
        }
    }
    unsigned long long events = 0, dropped = 0;
    std::size_t collected = 0;
    std::vector<std::string> files;
    for (const recorded_process& p : started) {
        try {
            const loupe::remote::json_value stopped = ask(p.pid, "stop " + r.name, stop_reply_timeout);
            events += stopped.u64("delivered");
            dropped += stopped.u64("dropped");
            const std::filesystem::path target =
                std::filesystem::path(r.dir) / (collected_name(p) + "-" + std::to_string(p.pid) + ".loupe");
            if (!std::filesystem::equivalent(p.output, target, ec)) {
                std::filesystem::copy_file(p.output, target, std::filesystem::copy_options::overwrite_existing, ec);
                if (ec) throw loupe::error("process " + std::to_string(p.pid) + ": cannot copy " + p.output + " to " +
                                           target.string() + ": " + ec.message());
            }
            std::printf("process %ld (%s): %llu events, %llu dropped -> %s\n", static_cast<long>(p.pid),
                        p.program.c_str(), static_cast<unsigned long long>(stopped.u64("delivered")),
                        static_cast<unsigned long long>(stopped.u64("dropped")), target.string().c_str());
            print_otlp(stopped);
            files.push_back(target.string());
            ++collected;
        } catch (const loupe::error& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            status = 1;
        }
    }
    std::printf("recorded %zu of %zu processes for %.1f s (started within %.1f ms): %llu events, %llu dropped, in %s\n",
                collected, r.pids.size(), static_cast<double>(r.for_ms) / 1000.0, spread_ms, events, dropped,
                r.dir.c_str());
    // The processes' traces joined by task (loupe merge), next to them: a
    // trace set for the commands, and one timeline for Perfetto's UI.
    for (const char* format : {"loupe", "perfetto"}) {
        if (files.empty()) break;
        merge_request m;
        m.files = files;
        m.format = format;
        m.output = (std::filesystem::path(r.dir) / (m.format == "loupe" ? "merged.loupe" : "merged.pftrace")).string();
        try {
            if (run_merge(m) != 0) status = 1;
        } catch (const loupe::error& e) {
            std::fprintf(stderr, "loupe: %s\n", e.what());
            status = 1;
        }
    }
    return status;
}

// "123,456" -> pids.
inline std::vector<pid_t> parse_pid_list(const std::string& text, int at) {
    std::vector<pid_t> pids;
    std::size_t from = 0;
    for (;;) {
        const std::size_t comma = text.find(',', from);
        pids.push_back(parse_pid(text.substr(from, comma - from), at));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return pids;
}

}  // namespace remote_detail

/// Runs `loupe ps|start|set|stop|status|record` (argv as main got it). Throws
/// remote_usage for bad usage.
inline int run_remote(int argc, char** argv) {
    using namespace remote_detail;
    std::string command;
    std::vector<std::pair<std::string, int>> positional;
    std::string name, kinds, filter, params_file, metrics, output, ring_bytes, memory_budget, overflow, task_rules, otlp;
    int params_at = 0;
    std::uint64_t for_ms = 0;
    bool has_filter = false, has_rules = false, progress = false;
    std::vector<pid_t> pid_list;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](const char* what) {
            if (i + 1 == argc) throw remote_usage{arg + " (argument " + std::to_string(i) + ") needs " + what};
            return std::string(argv[++i]);
        };
        if (arg == "--name")
            name = value("a session NAME");
        else if (arg == "--kinds")
            kinds = value("KINDS (e.g. zones,io)");
        else if (arg == "--filter") {
            filter = value("a FILTER");
            has_filter = true;
        } else if (arg == "--task-rules") {
            task_rules = value("task RULES (e.g. 'tag peer=inventory*')");
            has_rules = true;
        } else if (arg == "--params") {
            params_file = value("a FILE of parameter specs");
            params_at = i;
        } else if (arg == "--metrics")
            metrics = value("metric names (e.g. cpu_time)");
        else if (arg == "--ring-bytes")
            ring_bytes = value("a number of bytes");
        else if (arg == "--memory-budget")
            memory_budget = value("a number of bytes (0: rings never grow)");
        else if (arg == "--overflow")
            overflow = value("drop or block");
        else if (arg == "--otlp") {
            otlp = value("an OTLP/HTTP URL (e.g. http://127.0.0.1:4318/v1/traces)");
            const std::string problem = loupe::exporter::check_endpoint(otlp);
            if (!problem.empty()) {
                throw remote_usage{"--otlp '" + otlp + "' (argument " + std::to_string(i) + "): " + problem};
            }
        }
        else if (arg == "--for") {
            const std::string v = value("a duration (e.g. 10s)");
            for_ms = parse_duration(v, i);
        } else if (arg == "--pids") {
            const std::string v = value("process ids, e.g. 4242,4243");
            pid_list = parse_pid_list(v, i);
        } else if (arg == "--progress")
            progress = true;
        else if (arg == "-o")
            output = value(command == "record" ? "an output DIR" : "an output FILE");
        else if (arg.size() > 1 && arg[0] == '-')
            throw remote_usage{"unknown option '" + arg + "' (argument " + std::to_string(i) + ")"};
        else if (command.empty())
            command = arg;
        else
            positional.emplace_back(arg, i);
    }
    const bool start_options = !name.empty() || !kinds.empty() || !metrics.empty() || !output.empty() ||
                               !ring_bytes.empty() || !memory_budget.empty() || !overflow.empty() || for_ms != 0 ||
                               !otlp.empty();
    const bool starts = command == "start" || command == "record";
    if (!starts && start_options) {
        throw remote_usage{
            "--name, --kinds, --metrics, --ring-bytes, --memory-budget, --overflow, --otlp, --for and -o apply to "
            "'start' and 'record' only"};
    }
    if (!starts && command != "set" && (has_filter || has_rules || !params_file.empty())) {
        throw remote_usage{"--filter, --task-rules and --params apply to 'start', 'record' and 'set' only"};
    }
    if (command != "record" && (!pid_list.empty() || progress)) {
        throw remote_usage{"--pids and --progress apply to 'record' only"};
    }
    // The session options start and record send.
    std::string session_options;
    if (has_filter) session_options += "; filter=" + loupe::remote::quote_value(filter);
    if (!params_file.empty())
        session_options += "; params=" + loupe::remote::quote_value(read_text_file(params_file, params_at));
    if (!kinds.empty()) session_options += "; kinds=" + loupe::remote::quote_value(kinds);
    if (!metrics.empty()) session_options += "; metrics=" + loupe::remote::quote_value(metrics);
    if (!ring_bytes.empty()) session_options += "; ring_bytes=" + loupe::remote::quote_value(ring_bytes);
    if (!memory_budget.empty()) session_options += "; memory_budget=" + loupe::remote::quote_value(memory_budget);
    if (!overflow.empty()) session_options += "; overflow=" + loupe::remote::quote_value(overflow);
    if (!otlp.empty()) session_options += "; otlp=" + loupe::remote::quote_value(otlp);
    if (command == "record") {
        for (const auto& [text, at] : positional) pid_list.push_back(parse_pid(text, at));
        if (pid_list.empty()) throw remote_usage{"record needs --pids PID,PID,... (or PIDs)"};
        if (for_ms == 0) throw remote_usage{"record needs --for DURATION (e.g. 5s)"};
        if (output.empty()) throw remote_usage{"record needs -o DIR, where the traces are collected"};
        record_request r;
        r.pids = pid_list;
        r.for_ms = for_ms;
        r.dir = output;
        r.name = name.empty() ? "record-" + std::to_string(::getpid()) : name;
        r.start_options = session_options;
        r.has_task_rules = has_rules;
        r.task_rules = task_rules;
        r.progress = progress || ::isatty(2) != 0;
        return run_record(r);
    }
    if (command == "ps") {
        if (!positional.empty())
            throw remote_usage{"unexpected argument '" + positional[0].first + "'; 'ps' takes none"};
        return run_ps();
    }
    if (positional.empty()) throw remote_usage{"'" + command + "' needs a PID"};
    const pid_t pid = parse_pid(positional[0].first, positional[0].second);
    if (command == "status") {
        std::vector<pid_t> pids;
        for (const auto& [text, at] : positional) pids.push_back(parse_pid(text, at));
        return run_status(pids);
    }
    if (has_rules) session_options += "; task_rules=" + loupe::remote::quote_value(task_rules);
    std::string line;
    if (command == "start") {
        if (positional.size() > 1)
            throw remote_usage{"unexpected argument '" + positional[1].first + "'; expected one PID"};
        if (output.empty()) throw remote_usage{"start needs -o FILE (inside the process's output directory)"};
        line = "start output=" + loupe::remote::quote_value(output);
        if (!name.empty()) line += "; name=" + loupe::remote::quote_value(name);
        line += session_options;
        if (for_ms != 0) line += "; duration_ms=" + std::to_string(for_ms);
    } else {
        if (positional.size() < 2) throw remote_usage{"'" + command + "' needs a PID and a session NAME"};
        if (positional.size() > 2)
            throw remote_usage{"unexpected argument '" + positional[2].first + "'; expected PID NAME"};
        const std::string& session = positional[1].first;
        if (command == "stop") {
            line = "stop " + session;
        } else {
            if (!has_filter && !has_rules && params_file.empty()) {
                throw remote_usage{"set needs --filter F, --task-rules R or --params FILE"};
            }
            line = "set " + session + " " + session_options.substr(2);  // "; filter=…; …" without the first "; "
        }
    }
    try {
        const loupe::remote::json_value r =
            ask(pid, line, command == "stop" ? stop_reply_timeout : std::chrono::milliseconds(5000));
        if (command == "start") {
            std::printf("started session %s in process %ld: writing %s%s%s\n", r.str("started").c_str(),
                        static_cast<long>(pid), r.str("output").c_str(), otlp.empty() ? "" : ", sending to ",
                        otlp.c_str());
        } else if (command == "set") {
            std::printf("session %s in process %ld: filter now '%s'\n", r.str("set").c_str(), static_cast<long>(pid),
                        r.str("filter").c_str());
        } else {
            std::printf("stopped session %s in process %ld: %s complete\n", r.str("stopped").c_str(),
                        static_cast<long>(pid), r.str("output").c_str());
            print_stats(r);
        }
        return 0;
    } catch (const loupe::error& e) {
        std::fprintf(stderr, "loupe: %s\n", e.what());
        return 1;
    }
}

}  // namespace loupe_cli
