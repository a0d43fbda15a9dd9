// `loupe merge FILE... -o OUT [--to loupe|perfetto|chrome-json]
// [--uncompressed] [--strict]` and `loupe report FILE... --tasks [--json]
// [--strict]`: the traces of several processes joined by task
// (report/task_join.hpp).
//
// merge writes OUT ('-': stdout), by default in the format its extension
// names (.loupe, .pftrace, .json):
// - loupe: a trace set, the inputs' traces back to back, each intact
//   (format/trace_set.hpp); reading it joins them again, the same way;
// - perfetto, chrome-json: one process per trace on one timeline, the calls
//   as slices linked by flow arrows (report/task_slices.hpp).
// Then one paragraph on stderr:
//   loupe: merged 3 traces (3 processes, 2 hosts) into 'tasks.loupe' (loupe, 1.2 MiB): 3 tasks,
//   12 calls: 6 joined, 2 opaque, 0 unlinked, 1 via unprofiled, 0 clamped; clocks: host1
//   reference, host2 +5.00 ms ± 50.0 us (4 calls)
// report --tasks prints the task report (report/task_report.hpp).
//
// A FILE may itself be a trace set. The inputs are read one at a time, front
// to back, their pages dropped once read (mapped_file::use::sequential),
// and only their task points are kept; the .loupe output is copied from
// the inputs as they are read, and needs of the join only its counts
// (task_detail::counts: one task's calls at a time). So memory is a window
// of one input, the points of one input and the sides of all
// (task_join.hpp: about 36 bytes per task point); report --tasks and the
// viewers' formats also hold the model (64 bytes per task point).
// Exit status as the other commands: 1 an input cannot be read or is not a
// valid trace ("loupe: FILE: byte N: what"), or OUT cannot be written; 2
// bad usage.
#pragma once

#include <loupe/base/error.hpp>
#include <loupe/format/decoder.hpp>
#include <loupe/format/mapped_file.hpp>
#include <loupe/format/output_file.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/format/trace_set.hpp>
#include <loupe/report/io_stats.hpp>
#include <loupe/report/task_join.hpp>
#include <loupe/report/task_report.hpp>
#include <loupe/report/task_slices.hpp>
#include <loupe/viewer/chrome_json.hpp>
#include <loupe/viewer/perfetto.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#    include <malloc.h>
#endif

namespace loupe_cli {

/// Bad usage of merge or report --tasks: what was wrong, naming the argument.
struct task_usage {
    std::string problem;
};

struct merge_request {
    std::vector<std::string> files;
    std::string output;  ///< a path, or "-" for stdout
    std::string format;  ///< "loupe", "perfetto" or "chrome-json"
    bool uncompressed = false;
    loupe::decode_options decode;
};

struct task_report_request {
    std::vector<std::string> files;
    bool json = false;
    loupe::decode_options decode;
};

/// Whether the command line is `loupe report ... --tasks ...`.
inline bool asks_for_task_report(const std::string& command, int argc, char** argv) {
    if (command != "report") return false;
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--tasks") return true;
    }
    return false;
}

namespace detail {

// The format an output's extension names; "" when none.
inline std::string format_of(const std::string& path) {
    const auto ends = [&](std::string_view suffix) {
        return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends(".loupe")) return "loupe";
    if (ends(".pftrace") || ends(".perfetto-trace")) return "perfetto";
    if (ends(".json")) return "chrome-json";
    return {};
}

// The options both commands share: --strict, --partial. Returns whether
// `arg` was one.
inline bool common_option(const std::string& arg, int i, loupe::decode_options& decode, int& strict_at,
                          int& partial_at) {
    if (arg == "--strict") {
        decode.accept_truncated = false;
        strict_at = i;
        return true;
    }
    if (arg == "--partial") {
        partial_at = i;
        return true;
    }
    return false;
}

inline void check_strict(int strict_at, int partial_at) {
    if (strict_at != 0 && partial_at != 0) {
        throw task_usage{"--partial (argument " + std::to_string(partial_at) + ") and --strict (argument " +
                         std::to_string(strict_at) + ") contradict each other"};
    }
}

inline bool is_option(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

}  // namespace detail

/// Reads the arguments of `loupe merge`. Throws task_usage.
inline merge_request parse_merge(int argc, char** argv) {
    merge_request r;
    r.decode.accept_truncated = true;
    int strict_at = 0, partial_at = 0, uncompressed_at = 0;
    bool command_seen = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (detail::common_option(arg, i, r.decode, strict_at, partial_at)) continue;
        if (arg == "-o" || arg == "--to") {
            if (i + 1 == argc) {
                throw task_usage{arg + " (argument " + std::to_string(i) + ") needs " +
                                 (arg == "-o" ? "an output file" : "a FORMAT")};
            }
            (arg == "-o" ? r.output : r.format) = argv[++i];
            if (arg == "--to" && r.format != "loupe" && r.format != "perfetto" && r.format != "chrome-json") {
                throw task_usage{"--to '" + r.format + "' (argument " + std::to_string(i) +
                                 "): expected loupe, perfetto or chrome-json"};
            }
        } else if (arg == "--uncompressed") {
            r.uncompressed = true;
            uncompressed_at = i;
        } else if (detail::is_option(arg)) {
            throw task_usage{"unknown option '" + arg + "' (argument " + std::to_string(i) + ")"};
        } else if (!command_seen) {
            command_seen = true;  // "merge"
        } else {
            r.files.push_back(arg);
        }
    }
    detail::check_strict(strict_at, partial_at);
    if (r.files.empty()) throw task_usage{"'merge' needs at least one trace FILE"};
    if (r.output.empty()) throw task_usage{"merge needs -o OUT"};
    if (r.format.empty()) r.format = r.output == "-" ? std::string() : detail::format_of(r.output);
    if (r.format.empty()) {
        throw task_usage{"cannot tell the format of '" + r.output +
                         "' from its name (.loupe, .pftrace or .json): give --to loupe, perfetto or chrome-json"};
    }
    if (uncompressed_at != 0 && r.format != "perfetto") {
        throw task_usage{"--uncompressed (argument " + std::to_string(uncompressed_at) +
                         ") applies to the perfetto format only"};
    }
    for (const std::string& f : r.files) {
        if (f == r.output) throw task_usage{"-o '" + r.output + "' is also an input; write the merge elsewhere"};
    }
    return r;
}

/// Reads the arguments of `loupe report FILE... --tasks`. Throws task_usage.
inline task_report_request parse_task_report(int argc, char** argv) {
    task_report_request r;
    r.decode.accept_truncated = true;
    int strict_at = 0, partial_at = 0;
    bool command_seen = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (detail::common_option(arg, i, r.decode, strict_at, partial_at)) continue;
        if (arg == "--tasks") continue;
        if (arg == "--json") {
            r.json = true;
        } else if (arg == "--io" || arg == "--tree" || arg == "--flat" || arg == "--callers" || arg == "--per-cpu" ||
                   arg == "--per-thread") {
            throw task_usage{arg + " (argument " + std::to_string(i) + "): one report at a time; --tasks was given"};
        } else if (detail::is_option(arg)) {
            throw task_usage{"unknown option '" + arg + "' (argument " + std::to_string(i) +
                             "); report --tasks takes --json and --strict"};
        } else if (!command_seen) {
            command_seen = true;  // "report"
        } else {
            r.files.push_back(arg);
        }
    }
    detail::check_strict(strict_at, partial_at);
    if (r.files.empty()) throw task_usage{"'report' needs a trace FILE"};
    return r;
}

namespace detail {

// Which trace of which file (0-based) an input is.
struct input_origin {
    std::string file;
    std::size_t index = 0;
    std::size_t of = 1;
};

// A trace cut short is read up to its last whole record; one line says so.
inline void say_cut_short(const input_origin& o) {
    const std::string which =
        o.of == 1 ? o.file : o.file + " (trace " + std::to_string(o.index + 1) + " of " + std::to_string(o.of) + ")";
    std::fprintf(stderr,
                 "loupe: %s: trace cut short (no END record): read up to its last whole record; --strict refuses "
                 "such a trace\n",
                 which.c_str());
}

// Writes `bytes` to `f`, or throws naming `path`.
inline void write_all(std::FILE* f, const unsigned char* bytes, std::size_t size, const std::string& path) {
    if (size != 0 && std::fwrite(bytes, 1, size, f) != size) {
        throw loupe::error("cannot write '" + path + "': " + std::strerror(errno));
    }
}

// Writes bytes [offset, offset + size) of `bytes` to `f`, a step of
// read_progress at a time, each dropped from memory once written.
inline void copy_released(std::FILE* f, loupe::detail::mapped_file& bytes, std::uint64_t offset, std::uint64_t size,
                          const std::string& path) {
    constexpr std::uint64_t chunk = loupe::read_progress_step;
    for (std::uint64_t at = offset; at < offset + size; at += chunk) {
        const auto n = static_cast<std::size_t>(std::min(chunk, offset + size - at));
        write_all(f, bytes.data() + at, n, path);
        bytes.release(static_cast<std::size_t>(at), static_cast<std::size_t>(at) + n);
    }
}

// The input traces' task points joined, keeping `keep` (each trace read
// once, its events checked and not kept, its pages dropped as read);
// `copy_to` (when given) receives the bytes of every input trace, in order,
// as they are read.
inline loupe::report::task_forest join_files(const std::vector<std::string>& files, const loupe::decode_options& decode,
                                             loupe::report::task_detail keep, std::uint64_t& events,
                                             std::FILE* copy_to = nullptr, const std::string& copy_path = {},
                                             std::uint64_t* copied = nullptr) {
    loupe::report::task_joiner joiner;
    for (const std::string& file : files) {
        loupe::detail::mapped_file bytes(file, loupe::detail::mapped_file::use::sequential);
        // What was read of the bytes from `offset` on is dropped.
        const auto release_from = [&bytes](std::size_t offset) {
            return [&bytes, offset](std::size_t begin, std::size_t end) { bytes.release(offset + begin, offset + end); };
        };
        std::vector<loupe::trace_segment> segments;
        try {
            segments = loupe::split_trace_set(bytes.data(), bytes.size(), decode, release_from(0));
        } catch (const loupe::trace_error& e) {
            throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), file);
        }
        for (std::size_t k = 0; k < segments.size(); ++k) {
            const loupe::trace_segment& s = segments[k];
            try {
                joiner.add(bytes.data() + s.offset, static_cast<std::size_t>(s.size), decode,
                           release_from(static_cast<std::size_t>(s.offset)));
            } catch (const loupe::trace_error& e) {
                const std::string where = segments.size() == 1 ? std::string()
                                                                : "trace " + std::to_string(k + 1) + " of " +
                                                                      std::to_string(segments.size()) + " (from byte " +
                                                                      std::to_string(s.offset) + "): ";
                throw loupe::trace_error(e.offset() + s.offset, where + e.detail(), e.truncated(), file);
            }
            if (copy_to != nullptr) {
                copy_released(copy_to, bytes, s.offset, s.size, copy_path);
                if (copied != nullptr) *copied += s.size;
            }
        }
        for (std::size_t k = 0; k < segments.size(); ++k) {
            if (!segments[k].ended) say_cut_short({file, k, segments.size()});
        }
    }
    loupe::report::task_forest forest = joiner.finish(keep);
    for (const loupe::report::task_input& in : forest.inputs) events += in.events;
    return forest;
}

// "host1 reference, host2 +5.00 ms ± 50.0 us (4 calls), host3 not aligned".
inline std::string clocks_summary(const loupe::report::task_forest& f) {
    namespace rep = loupe::report;
    std::string out;
    for (const rep::clock_domain& d : f.alignment.domains) {
        if (!out.empty()) out += ", ";
        out += d.name.empty() ? f.inputs[d.inputs.front()].label + " (no clock domain)" : rep::printable(d.name);
        if (d.reference) {
            out += " reference";
        } else if (!d.aligned) {
            out += " not aligned";
        } else {
            out += " " + rep::detail::signed_duration(d.offset_ns) + " \u00b1 " + rep::detail::human_ns(d.uncertainty_ns) +
                   " (" + std::to_string(d.samples) + (d.samples == 1 ? " call)" : " calls)");
        }
    }
    return out;
}

inline std::string merge_summary(const loupe::report::task_forest& f, const merge_request& r, std::uint64_t bytes,
                                 std::uint64_t events) {
    std::set<std::string> hosts;
    for (const loupe::report::task_input& in : f.inputs) hosts.insert(in.host.empty() ? in.clock_domain : in.host);
    const loupe::report::task_counts& k = f.counts;
    const auto n = [](std::uint64_t v, const char* one, const char* many) {
        return std::to_string(v) + " " + (v == 1 ? one : many);
    };
    const std::string where = r.output == "-" ? std::string("stdout") : "'" + r.output + "'";
    return "merged " + n(f.inputs.size(), "trace", "traces") + " (" + n(events, "event", "events") + ", " +
           n(hosts.size(), "host", "hosts") + ") into " + where + " (" + r.format + ", " +
           loupe::report::detail::human_bytes(static_cast<double>(bytes)) + "): " + n(k.tasks, "task", "tasks") + ", " +
           n(k.calls, "call", "calls") + ": " + std::to_string(k.joined) + " joined, " + std::to_string(k.opaque) +
           " opaque, " + std::to_string(k.unlinked) + " unlinked, " + std::to_string(k.via_unprofiled) +
           " via unprofiled, " + std::to_string(k.clamped) + " clamped, " + std::to_string(k.open) +
           " open; clocks: " + clocks_summary(f);
}

// From now on, buffers of 128 KiB and more are mapped, and unmapped when
// freed (glibc; elsewhere nothing): the join frees each input's points once
// paired, and a vector that grows its old buffer. glibc otherwise raises
// that threshold to the largest buffer freed, up to 32 MiB, and what is
// freed below it stays in the heap, resident. For the trace set output and
// the task report; the viewers' outputs, grown by doubling to hundreds of
// MB, are written faster from the heap.
inline void unmap_freed_buffers() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

// The pid each input is shown as: its own, unless an earlier input has it
// (then pid + k * 2^22, above any Linux pid).
inline std::vector<std::uint32_t> distinct_pids(const loupe::report::task_forest& f) {
    std::set<std::uint32_t> used;
    std::vector<std::uint32_t> out;
    for (const loupe::report::task_input& in : f.inputs) {
        std::uint32_t pid = in.pid;
        for (std::uint32_t k = 1; used.count(pid) != 0; ++k) pid = in.pid + k * (1u << 22);
        used.insert(pid);
        out.push_back(pid);
    }
    return out;
}

}  // namespace detail

/// Runs `loupe merge` (see the top of this file). Throws loupe::error
/// (trace_error naming the file and byte for a bad input).
inline int run_merge(const merge_request& r) {
    std::uint64_t events = 0;
    std::uint64_t bytes = 0;
    loupe::report::task_forest forest;
    if (r.format == "loupe") {
        detail::unmap_freed_buffers();
        // Copied as read into OUT.tmp, renamed once every input proved valid.
        const bool to_stdout = r.output == "-";
        const std::string temp = to_stdout ? r.output : r.output + ".tmp";
        std::FILE* out = to_stdout ? stdout : std::fopen(temp.c_str(), "wb");
        if (out == nullptr) throw loupe::error("cannot open '" + temp + "' for writing: " + std::strerror(errno));
        try {
            forest = detail::join_files(r.files, r.decode, loupe::report::task_detail::counts, events, out,
                                        to_stdout ? "stdout" : temp, &bytes);
            if (std::fflush(out) != 0) throw loupe::error("cannot write '" + temp + "': " + std::strerror(errno));
            if (!to_stdout) {
                const int closed = std::fclose(out);
                out = nullptr;
                if (closed != 0) throw loupe::error("cannot write '" + temp + "': " + std::strerror(errno));
                if (std::rename(temp.c_str(), r.output.c_str()) != 0) {
                    throw loupe::error("cannot rename '" + temp + "' to '" + r.output + "': " + std::strerror(errno));
                }
            }
        } catch (...) {
            if (!to_stdout) {
                if (out != nullptr) std::fclose(out);
                std::remove(temp.c_str());
            }
            throw;
        }
    } else {
        // The join from the task points, then each trace whole, one at a
        // time, with its calls as slices, on the merged timeline.
        forest = detail::join_files(r.files, r.decode, loupe::report::task_detail::trees, events);
        const std::vector<std::uint32_t> pids = detail::distinct_pids(forest);
        std::string text;
        loupe::viewer::perfetto_options perfetto;
        perfetto.compress = !r.uncompressed;
        loupe::viewer::perfetto_set_writer to_perfetto(text, perfetto);
        loupe::viewer::chrome_json_set_writer to_json(text);
        std::uint32_t input = 0;
        for (const std::string& file : r.files) {
            const loupe::detail::mapped_file m(file);
            try {
                const std::vector<loupe::trace_segment> segments = loupe::split_trace_set(m.data(), m.size(), r.decode);
                for (const loupe::trace_segment& s : segments) {
                    loupe::trace t =
                        loupe::read_trace(m.data() + s.offset, static_cast<std::size_t>(s.size), r.decode);
                    loupe::report::add_task_slices(t, input, forest);
                    const loupe::viewer::trace_placement placement{-forest.alignment.offset_of(input), pids[input]};
                    if (r.format == "perfetto") {
                        to_perfetto.add(t, placement);
                    } else {
                        to_json.add(t, placement);
                    }
                    ++input;
                }
            } catch (const loupe::trace_error& e) {
                throw loupe::trace_error(e.offset(), e.detail(), e.truncated(), file);
            }
        }
        if (r.format == "chrome-json") to_json.finish();
        if (r.output == "-") {
            if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
                throw loupe::error(std::string("cannot write output: ") + std::strerror(errno));
            }
        } else {
            loupe::detail::write_output_file(r.output, text);
        }
        bytes = text.size();
    }
    std::fprintf(stderr, "loupe: %s\n", detail::merge_summary(forest, r, bytes, events).c_str());
    return 0;
}

/// Runs `loupe report FILE... --tasks`: the task report on stdout.
inline int run_task_report(const task_report_request& r) {
    detail::unmap_freed_buffers();
    std::uint64_t events = 0;
    const loupe::report::task_report report =
        loupe::report::report_tasks(detail::join_files(r.files, r.decode, loupe::report::task_detail::trees, events));
    const std::string text =
        r.json ? loupe::report::task_report_json(report) : loupe::report::format_task_report(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

/// `loupe merge ...` or `loupe report ... --tasks ...` from the command
/// line. Throws task_usage for bad usage, loupe::error for the rest.
inline int run_task_command(const std::string& command, int argc, char** argv) {
    if (command == "merge") return run_merge(parse_merge(argc, argv));
    return run_task_report(parse_task_report(argc, argv));
}

}  // namespace loupe_cli
