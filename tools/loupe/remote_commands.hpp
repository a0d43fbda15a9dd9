// `loupe ps|start|set|stop|status`: sessions in running processes, through
// their control endpoints (docs/control.md). The other commands read
// traces; these talk to processes that called loupe::control::listen().
//
// Exit status: 0 success; 1 a process could not be reached or refused the
// request (one line "loupe: process PID: <what>" per process on stderr);
// 2 bad usage (one line naming the argument, then the help hint).
#pragma once

#include <loupe/base/error.hpp>
#include <loupe/remote/client.hpp>
#include <loupe/remote/protocol.hpp>
#include <loupe/remote/reply.hpp>
#include <loupe/remote/socket_dir.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace loupe_cli {

/// A usage problem of a remote command: the message (naming the argument).
struct remote_usage {
    std::string problem;
};

inline bool is_remote_command(const std::string& command) {
    return command == "ps" || command == "start" || command == "set" || command == "stop" || command == "status";
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
inline loupe::remote::json_value ask(pid_t pid, const std::string& line) {
    loupe::remote::connection c(pid);
    loupe::remote::json_value r = loupe::remote::parse_reply(c.exchange(line));
    if (!r.flag("ok")) throw loupe::error("process " + std::to_string(pid) + ": " + r.str("error", "failed"));
    return r;
}

inline void print_stats(const loupe::remote::json_value& s) {
    std::printf("  delivered %llu, dropped %llu, sink failures %llu\n",
                static_cast<unsigned long long>(s.u64("delivered")), static_cast<unsigned long long>(s.u64("dropped")),
                static_cast<unsigned long long>(s.u64("sink_failures")));
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
            std::printf("%-8s %-16s %s\n", "PID", "PROGRAM", "SESSIONS");
            return 0;  // no process of this user ever listened
        }
        std::fprintf(stderr, "loupe: %s\n", e.what());
        return 1;
    }
    std::printf("%-8s %-16s %s\n", "PID", "PROGRAM", "SESSIONS");
    int status = 0;
    for (const pid_t pid : pids) {
        try {
            loupe::remote::connection c(pid, dir);
            const loupe::remote::json_value info = loupe::remote::parse_reply(c.exchange("info"));
            if (!info.flag("ok")) throw loupe::error("process " + std::to_string(pid) + ": " + info.str("error"));
            std::printf("%-8ld %-16s %llu\n", static_cast<long>(pid), info.str("program").c_str(),
                        static_cast<unsigned long long>(info.u64("sessions_running")));
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
            std::printf("process %ld (%s), loupe %s, output directory %s, %llu refused\n", static_cast<long>(pid),
                        info.str("program").c_str(), info.str("loupe_version").c_str(),
                        info.str("output_directory").c_str(), static_cast<unsigned long long>(info.u64("refused")));
            const loupe::remote::json_value* sessions = list.find("sessions");
            if (sessions == nullptr || sessions->items.empty()) std::printf("  no sessions\n");
            if (sessions != nullptr) {
                for (const auto& s : sessions->items) {
                    std::printf("  %s  %s  %s\n", s.str("name").c_str(), s.flag("running") ? "running" : "stopped",
                                s.str("output").c_str());
                    if (!s.str("filter").empty()) std::printf("    filter %s\n", s.str("filter").c_str());
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

}  // namespace remote_detail

/// Runs `loupe ps|start|set|stop|status` (argv as main got it). Throws
/// remote_usage for bad usage.
inline int run_remote(int argc, char** argv) {
    using namespace remote_detail;
    std::string command;
    std::vector<std::pair<std::string, int>> positional;
    std::string name, kinds, filter, params_file, metrics, output, ring_bytes, overflow;
    int filter_at = 0, params_at = 0;
    std::uint64_t for_ms = 0;
    bool has_filter = false;
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
            filter_at = i;
            has_filter = true;
        } else if (arg == "--params") {
            params_file = value("a FILE of parameter specs");
            params_at = i;
        } else if (arg == "--metrics")
            metrics = value("metric names (e.g. cpu_time)");
        else if (arg == "--ring-bytes")
            ring_bytes = value("a number of bytes");
        else if (arg == "--overflow")
            overflow = value("drop or block");
        else if (arg == "--for") {
            const std::string v = value("a duration (e.g. 10s)");
            for_ms = parse_duration(v, i);
        } else if (arg == "-o")
            output = value("an output FILE");
        else if (arg.size() > 1 && arg[0] == '-')
            throw remote_usage{"unknown option '" + arg + "' (argument " + std::to_string(i) + ")"};
        else if (command.empty())
            command = arg;
        else
            positional.emplace_back(arg, i);
    }
    const bool start_options = !name.empty() || !kinds.empty() || !metrics.empty() || !output.empty() ||
                               !ring_bytes.empty() || !overflow.empty() || for_ms != 0;
    if (command != "start" && start_options) {
        throw remote_usage{"--name, --kinds, --metrics, --ring-bytes, --overflow, --for and -o apply to 'start' only"};
    }
    if (command != "start" && command != "set" && (has_filter || !params_file.empty())) {
        throw remote_usage{"--filter and --params apply to 'start' and 'set' only"};
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
    std::string line;
    if (command == "start") {
        if (positional.size() > 1)
            throw remote_usage{"unexpected argument '" + positional[1].first + "'; expected one PID"};
        if (output.empty()) throw remote_usage{"start needs -o FILE (inside the process's output directory)"};
        line = "start output=" + loupe::remote::quote_value(output);
        if (!name.empty()) line += "; name=" + loupe::remote::quote_value(name);
        if (!kinds.empty()) line += "; kinds=" + loupe::remote::quote_value(kinds);
        if (has_filter) line += "; filter=" + loupe::remote::quote_value(filter);
        if (!params_file.empty())
            line += "; params=" + loupe::remote::quote_value(read_text_file(params_file, params_at));
        if (!metrics.empty()) line += "; metrics=" + loupe::remote::quote_value(metrics);
        if (!ring_bytes.empty()) line += "; ring_bytes=" + loupe::remote::quote_value(ring_bytes);
        if (!overflow.empty()) line += "; overflow=" + loupe::remote::quote_value(overflow);
        if (for_ms != 0) line += "; duration_ms=" + std::to_string(for_ms);
    } else {
        if (positional.size() < 2) throw remote_usage{"'" + command + "' needs a PID and a session NAME"};
        if (positional.size() > 2)
            throw remote_usage{"unexpected argument '" + positional[2].first + "'; expected PID NAME"};
        const std::string& session = positional[1].first;
        if (command == "stop") {
            line = "stop " + session;
        } else {
            if (!has_filter && params_file.empty()) throw remote_usage{"set needs --filter F or --params FILE"};
            line = "set " + session;
            if (has_filter) line += " filter=" + loupe::remote::quote_value(filter) + ";";
            if (!params_file.empty())
                line += " params=" + loupe::remote::quote_value(read_text_file(params_file, params_at));
        }
    }
    (void)filter_at;
    try {
        const loupe::remote::json_value r = ask(pid, line);
        if (command == "start") {
            std::printf("started session %s in process %ld: writing %s\n", r.str("started").c_str(),
                        static_cast<long>(pid), r.str("output").c_str());
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
