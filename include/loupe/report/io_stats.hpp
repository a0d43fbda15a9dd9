// I/O statistics of a trace: what `loupe report FILE --io` prints.
//
//   auto report = loupe::report::io_stats(loupe::read_trace_file("out.loupe"), loupe::report::io_group::file);
//   std::cout << loupe::report::format_io_stats(report);   // or io_stats_json(report)
//
// Rows group operations by file (name of a file resource), socket (its
// peer), thread, a context field, or the innermost zone of the same thread
// that encloses the operation (only zones the session recorded count). Per
// row: operations, bytes in (read, recv, ...) and out (write, send, ...),
// errors, total/mean/max time, and throughput = bytes moved / total time of
// the row's operations (device speed as the callers saw it, not wall rate).
// Files are grouped by name: two opens of one path are one row.
// The rows always add up to the "all" row (operations, errors, bytes, time):
// grouped by file or socket, the operations no listed row holds (sockets or
// files, stdio, pipes, ...) are one last row, "other: " followed by what
// they were done on (io_other_row_prefix).
// Cost: O(n log n) in operations (zone grouping: per operation, a binary
// search and a walk over the enclosing zones). Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "loupe/format/reader.hpp"
#include "loupe/text/json.hpp"
#include "loupe/text/printable.hpp"
#include "loupe/report/zone_stats.hpp"

namespace loupe::report {

enum class io_group : std::uint8_t { file, socket, thread, client, user, session, request, app, component, zone };

inline const char* io_group_name(io_group g) noexcept {
    switch (g) {
        case io_group::file: return "file";
        case io_group::socket: return "socket";
        case io_group::thread: return "thread";
        case io_group::zone: return "zone";
        default: return context_field_name(static_cast<context_field>(static_cast<unsigned>(g) - 3));
    }
}
/// Parses an io_group_name; false when `name` is none of them.
inline bool parse_io_group(std::string_view name, io_group& out) noexcept {
    for (unsigned i = 0; i <= static_cast<unsigned>(io_group::zone); ++i) {
        if (name == io_group_name(static_cast<io_group>(i))) {
            out = static_cast<io_group>(i);
            return true;
        }
    }
    return false;
}

struct io_row {
    std::string label;
    std::uint64_t ops = 0;
    std::uint64_t errors = 0;     ///< operations that failed (result -errno)
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
    std::uint64_t total_ns = 0;
    std::uint64_t max_ns = 0;
    double mean_ns() const noexcept { return ops ? static_cast<double>(total_ns) / static_cast<double>(ops) : 0.0; }
    /// (bytes_in + bytes_out) / total time, in bytes per second; 0 without time.
    double throughput() const noexcept {
        return total_ns ? static_cast<double>(bytes_in + bytes_out) * 1e9 / static_cast<double>(total_ns) : 0.0;
    }
};

/// How the row of operations that no listed row holds begins ("other:
/// stdio, pipes"); only the file and socket groupings have one.
inline constexpr std::string_view io_other_row_prefix = "other: ";

struct io_report {
    std::string session;
    io_group grouping = io_group::file;
    bool complete = true;
    io_row total;                 ///< every operation of the trace
    /// By total time, largest first; then, grouped by file or socket, the
    /// row "other: ..." when some operations belong to no listed row. The
    /// rows add up to `total`.
    std::vector<io_row> rows;
    std::uint64_t files_opened = 0, files_closed = 0, files_deleted = 0;
    std::uint64_t connections_established = 0, connections_closed = 0;
    std::uint64_t bad_descriptor = 0;     ///< operations that failed with EBADF (closed twice, used after close, ...)
    std::uint64_t unknown_resource = 0;   ///< operations on descriptors the registry did not know
};

namespace detail {

// Per thread, its zones sorted by begin; finds the innermost one enclosing
// an interval (zones of one thread nest properly).
class enclosing_zones {
public:
    explicit enclosing_zones(const trace& t) {
        for (const trace_event& e : t.events) {
            if (e.type == event_type::zone) by_thread_[e.thread_id].push_back(&e);
        }
        for (auto& [thread, zones] : by_thread_) {
            std::sort(zones.begin(), zones.end(), [](const trace_event* a, const trace_event* b) {
                return a->begin_ns != b->begin_ns ? a->begin_ns < b->begin_ns : a->end_ns > b->end_ns;
            });
        }
    }
    const trace_event* innermost(std::uint64_t thread, std::uint64_t begin, std::uint64_t end) const {
        auto it = by_thread_.find(thread);
        if (it == by_thread_.end()) return nullptr;
        const auto& zones = it->second;
        auto after = std::upper_bound(zones.begin(), zones.end(), begin,
                                      [](std::uint64_t t, const trace_event* z) { return t < z->begin_ns; });
        // The latest-starting zone that began at or before `begin` and ends
        // at or after `end` is the innermost; siblings that ended are skipped.
        while (after != zones.begin()) {
            const trace_event* z = *--after;
            if (z->end_ns >= end) return z;
        }
        return nullptr;
    }

private:
    std::unordered_map<std::uint64_t, std::vector<const trace_event*>> by_thread_;
};

inline void add_op(io_row& row, const trace_io_op& op) {
    const std::uint64_t ns = op.end_ns - op.begin_ns;
    ++row.ops;
    row.total_ns += ns;
    row.max_ns = std::max(row.max_ns, ns);
    if (op.result < 0) {
        ++row.errors;
        return;
    }
    const io::direction d = io::op_direction(op.op);
    if (d == io::direction::in) row.bytes_in += static_cast<std::uint64_t>(op.result);
    if (d == io::direction::out) row.bytes_out += static_cast<std::uint64_t>(op.result);
}

// What an operation was done on, as the file and socket groupings see it:
// files and sockets have rows of their own there; the rest, and sockets
// (files) when grouping by file (socket), go to the "other" row, which is
// named after the categories it holds, in this order.
enum class io_category : std::uint8_t {
    file,                ///< a named file (or a path: unlink, rename)
    socket,              ///< any socket, named or not
    stdio,               ///< descriptors 0, 1, 2 as inherited (not opened through the wrappers)
    pipe,                ///< pipes, wrapped or inherited
    anon_inode,          ///< eventfd, epoll, timerfd, ... (anon_inode: in /proc/self/fd)
    unnamed,             ///< a resource without a name (a dup of a descriptor nobody knew)
    failed_open,         ///< open, socket, accept, ... that failed: no descriptor, no resource
    bad_descriptor,      ///< an operation that failed with EBADF: no resource
    unknown_descriptor,  ///< any other operation without a resource
};
inline constexpr unsigned io_category_count = 9;

inline const char* io_category_label(io_category c) noexcept {
    static constexpr const char* labels[io_category_count] = {
        "files", "sockets", "stdio", "pipes", "anon inodes", "unnamed", "failed opens", "bad descriptors",
        "unknown descriptors"};
    return labels[static_cast<unsigned>(c)];
}

inline io_category categorize(const trace_io_op& op, const trace_io_resource* r) noexcept {
    if (r == nullptr) {
        if (op.result == -EBADF) return io_category::bad_descriptor;
        if (op.result < 0 && io::op_opens(op.op)) return io_category::failed_open;
        return io_category::unknown_descriptor;
    }
    if (r->backfilled && op.fd >= 0 && op.fd <= 2) return io_category::stdio;  // whatever they point to
    if (r->kind == io::resource_kind::socket) return io_category::socket;
    if (r->kind == io::resource_kind::pipe) return io_category::pipe;
    if (r->kind == io::resource_kind::other) return io_category::anon_inode;
    return r->name.empty() ? io_category::unnamed : io_category::file;
}

// The row an operation (done on `r`) belongs to; false when no listed row
// holds it (grouping by file or socket), with `category` saying why.
inline bool io_label(const trace& t, const trace_io_op& op, const trace_io_resource* r, io_group g,
                     const enclosing_zones& zones, std::string& out, io_category& category) {
    switch (g) {
        case io_group::file:
            category = categorize(op, r);
            if (category != io_category::file) return false;
            out = r->name;
            return true;
        case io_group::socket:
            category = categorize(op, r);
            if (category != io_category::socket) return false;
            out = r->name.empty() ? "(unconnected socket)" : r->name;
            return true;
        case io_group::thread: {
            const trace_thread* th = t.find_thread(op.thread_id);
            out = th && !th->name.empty() ? th->name : "thread " + std::to_string(op.thread_id);
            return true;
        }
        case io_group::zone: {
            const trace_event* z = zones.innermost(op.thread_id, op.begin_ns, op.end_ns);
            const trace_site* site = z ? t.find_site(z->site_id) : nullptr;
            out = site ? site->name : "(no zone)";
            return true;
        }
        default: {
            const trace_context* c = t.context_of(op);
            const std::string& v = c ? c->fields[static_cast<unsigned>(g) - 3] : std::string();
            out = v.empty() ? "(unset)" : v;
            return true;
        }
    }
}

inline std::string human_bytes(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (unit < 4 && bytes >= 1024.0) {
        bytes /= 1024.0;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
    return buf;
}

}  // namespace detail

/// Sums the I/O operations of `t` into rows of `grouping`.
inline io_report io_stats(const trace& t, io_group grouping = io_group::file) {
    io_report r;
    r.session = t.session.name;
    r.grouping = grouping;
    r.complete = t.complete;
    r.total.label = "all";
    const detail::enclosing_zones zones(t);
    std::map<std::string, io_row> rows;
    io_row other;
    bool other_holds[detail::io_category_count] = {};
    std::string label;
    detail::io_category category = detail::io_category::file;
    for (const trace_io_op& op : t.io_ops) {
        detail::add_op(r.total, op);
        const trace_io_resource* res = t.find_io_resource(op.resource_id);
        const bool ok = op.result >= 0 || (op.op == io::op::connect && op.result == -EINPROGRESS);
        const bool socket = res && res->kind == io::resource_kind::socket;
        if (ok && (op.op == io::op::open || op.op == io::op::openat || op.op == io::op::fopen)) ++r.files_opened;
        if (ok && io::op_closes(op.op)) ++(socket ? r.connections_closed : r.files_closed);
        if (ok && op.op == io::op::unlink) ++r.files_deleted;
        if (ok && (op.op == io::op::connect || op.op == io::op::accept)) ++r.connections_established;
        if (op.result == -EBADF) ++r.bad_descriptor;
        if (op.resource_id == 0 && op.fd >= 0) ++r.unknown_resource;
        if (!detail::io_label(t, op, res, grouping, zones, label, category)) {
            detail::add_op(other, op);
            other_holds[static_cast<unsigned>(category)] = true;
            continue;
        }
        io_row& row = rows[label];
        if (row.label.empty()) row.label = label;
        detail::add_op(row, op);
    }
    for (auto& [key, row] : rows) r.rows.push_back(std::move(row));
    std::stable_sort(r.rows.begin(), r.rows.end(), [](const io_row& a, const io_row& b) { return a.total_ns > b.total_ns; });
    if (other.ops != 0) {
        other.label = std::string(io_other_row_prefix);
        const char* separator = "";
        for (unsigned c = 0; c < detail::io_category_count; ++c) {
            if (!other_holds[c]) continue;
            other.label += separator;
            other.label += detail::io_category_label(static_cast<detail::io_category>(c));
            separator = ", ";
        }
        r.rows.push_back(std::move(other));
    }
    return r;
}

/// A text table: one line per row, then the totals and the counts.
inline std::string format_io_stats(const io_report& r) {
    std::string out;
    char line[768];
    std::snprintf(line, sizeof line, "session \"%s\": %llu I/O operations%s\n\n", printable(r.session).c_str(),
                  static_cast<unsigned long long>(r.total.ops), r.complete ? "" : " (trace cut short)");
    out += line;
    if (r.total.ops == 0) {
        out += "no I/O recorded (a session records I/O with loupe::kinds::io, through loupe::io wrappers)\n";
        return out;
    }
    const char* const row = "%-40s %8s %7s %11s %11s %10s %10s %10s %12s\n";
    std::snprintf(line, sizeof line, row, io_group_name(r.grouping), "ops", "errors", "bytes in", "bytes out", "time",
                  "mean", "max", "throughput");
    out += line;
    auto emit = [&](const io_row& x) {
        std::snprintf(line, sizeof line, row, printable(x.label).c_str(), std::to_string(x.ops).c_str(),
                      std::to_string(x.errors).c_str(), detail::human_bytes(static_cast<double>(x.bytes_in)).c_str(),
                      detail::human_bytes(static_cast<double>(x.bytes_out)).c_str(),
                      detail::human_duration(static_cast<double>(x.total_ns)).c_str(),
                      detail::human_duration(x.mean_ns()).c_str(),
                      detail::human_duration(static_cast<double>(x.max_ns)).c_str(),
                      (detail::human_bytes(x.throughput()) + "/s").c_str());
        out += line;
    };
    for (const io_row& x : r.rows) emit(x);
    emit(r.total);
    std::snprintf(line, sizeof line,
                  "\nfiles: %llu opened, %llu closed, %llu deleted; connections: %llu established, %llu closed\n"
                  "anomalies: %llu operations on bad descriptors (EBADF), %llu on descriptors unknown to the registry\n",
                  static_cast<unsigned long long>(r.files_opened), static_cast<unsigned long long>(r.files_closed),
                  static_cast<unsigned long long>(r.files_deleted),
                  static_cast<unsigned long long>(r.connections_established),
                  static_cast<unsigned long long>(r.connections_closed),
                  static_cast<unsigned long long>(r.bad_descriptor),
                  static_cast<unsigned long long>(r.unknown_resource));
    out += line;
    return out;
}

namespace detail {
inline void append_io_row_json(std::string& out, const io_row& x) {
    out += "{\"label\":" + json::quote(x.label) + ",\"ops\":" + json::number(x.ops) +
           ",\"errors\":" + json::number(x.errors) + ",\"bytes_in\":" + json::number(x.bytes_in) +
           ",\"bytes_out\":" + json::number(x.bytes_out) + ",\"total_ns\":" + json::number(x.total_ns) +
           ",\"mean_ns\":" + json::number(x.mean_ns()) + ",\"max_ns\":" + json::number(x.max_ns) +
           ",\"throughput_bytes_per_s\":" + json::number(x.throughput()) + "}";
}
}  // namespace detail

/// The report as one JSON object (times in ns, throughput in bytes/s).
inline std::string io_stats_json(const io_report& r) {
    std::string out = "{\"session\":" + json::quote(r.session) + ",\"group_by\":\"" + io_group_name(r.grouping) +
                      "\",\"complete\":" + (r.complete ? "true" : "false") + ",\"total\":";
    detail::append_io_row_json(out, r.total);
    out += ",\"rows\":[";
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
        if (i) out += ',';
        detail::append_io_row_json(out, r.rows[i]);
    }
    out += "],\"files_opened\":" + json::number(r.files_opened) + ",\"files_closed\":" + json::number(r.files_closed) +
           ",\"files_deleted\":" + json::number(r.files_deleted) +
           ",\"connections_established\":" + json::number(r.connections_established) +
           ",\"connections_closed\":" + json::number(r.connections_closed) +
           ",\"bad_descriptor\":" + json::number(r.bad_descriptor) +
           ",\"unknown_resource\":" + json::number(r.unknown_resource) + "}\n";
    return out;
}

}  // namespace loupe::report
