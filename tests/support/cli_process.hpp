// Test helper: runs the loupe command-line tool (LOUPE_CLI_PATH) through the
// shell, as a user would, and captures its exit status, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "support/trace_files.hpp"

namespace loupe_test {

struct run_result {
    int status = -1;  ///< the exit status; -1 when killed by a signal
    std::string out;
    std::string err;
};

/// Runs `ENV 'loupe' ARGS`: `args` and `env` (e.g. "XDG_RUNTIME_DIR='/tmp/x'"
/// or "env -u NAME") are shell text, quoted by the caller.
inline run_result run_loupe(const std::string& args, const std::string& env = "") {
    const std::string out = temp_trace_path("cli_stdout") + ".txt";
    const std::string err = temp_trace_path("cli_stderr") + ".txt";
    const std::string command = env + " '" + LOUPE_CLI_PATH + "' " + args + " >'" + out + "' 2>'" + err + "'";
    run_result r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

/// Runs `loupe ARGS` with XDG_RUNTIME_DIR = `runtime_dir` (where it looks
/// for the processes' control endpoints).
inline run_result run_loupe_in(const std::string& runtime_dir, const std::string& args) {
    return run_loupe(args, "XDG_RUNTIME_DIR='" + runtime_dir + "'");
}

/// The lines of `text`.
inline std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace loupe_test
