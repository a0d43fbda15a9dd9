// Vocabulary of I/O profiling shared by the wrappers, the sinks and the
// reader: what an operation was (`io::op`), what it was done on
// (`resource_kind`), and the two views a sink receives (`io_operation`,
// `io_resource`). Plain data; no cost.
#pragma once

#include <cstdint>
#include <string_view>

namespace loupe::io {

/// What a descriptor refers to.
enum class resource_kind : std::uint8_t { unknown = 0, file = 1, socket = 2, pipe = 3, other = 4 };

inline const char* resource_kind_name(resource_kind k) noexcept {
    switch (k) {
        case resource_kind::file: return "file";
        case resource_kind::socket: return "socket";
        case resource_kind::pipe: return "pipe";
        case resource_kind::other: return "other";
        case resource_kind::unknown: break;
    }
    return "unknown";
}

/// The operation an I/O event records: the wrapper that ran it, or what a
/// host's own I/O layer says it did (io::op_scope). Values are stable: they
/// are written into traces.
enum class op : std::uint8_t {
    other = 0,
    open = 1, openat = 2, close = 3,
    read = 4, write = 5, pread = 6, pwrite = 7, readv = 8, writev = 9,
    unlink = 10, rename = 11,
    socket = 12, connect = 13, accept = 14, send = 15, recv = 16, sendto = 17, recvfrom = 18,
    dup = 19, dup2 = 20, fsync = 21,
    fopen = 22, fclose = 23, fread = 24, fwrite = 25,
    pipe = 26, socketpair = 27,
    dup3 = 28, fcntl_dupfd = 29, close_range = 30,
};
inline constexpr unsigned op_count = 31;

inline const char* op_name(op o) noexcept {
    static constexpr const char* names[op_count] = {
        "other", "open",   "openat", "close",  "read",     "write",    "pread",  "pwrite", "readv", "writev",
        "unlink", "rename", "socket", "connect", "accept", "send",     "recv",   "sendto", "recvfrom", "dup",
        "dup2",  "fsync",  "fopen",  "fclose", "fread",    "fwrite",   "pipe",   "socketpair", "dup3",
        "fcntl(F_DUPFD)", "close_range"};
    const unsigned i = static_cast<unsigned>(o);
    return i < op_count ? names[i] : "other";
}

/// Which way an operation moves data: bytes of `in` ops count as read,
/// of `out` ops as written; `none` ops move no payload (open, close, ...).
enum class direction : std::uint8_t { none, in, out };

inline direction op_direction(op o) noexcept {
    switch (o) {
        case op::read: case op::pread: case op::readv: case op::recv: case op::recvfrom: case op::fread:
            return direction::in;
        case op::write: case op::pwrite: case op::writev: case op::send: case op::sendto: case op::fwrite:
            return direction::out;
        default:
            return direction::none;
    }
}

/// Ops that make a descriptor refer to a resource (open, socket, accept, ...)
/// and ops that end that.
inline bool op_opens(op o) noexcept {
    return o == op::open || o == op::openat || o == op::fopen || o == op::socket || o == op::accept ||
           o == op::pipe || o == op::socketpair || o == op::dup || o == op::dup2 || o == op::dup3 ||
           o == op::fcntl_dupfd;
}
inline bool op_closes(op o) noexcept { return o == op::close || o == op::fclose || o == op::close_range; }

}  // namespace loupe::io

namespace loupe {

/// One I/O operation, as a sink sees it (record_kind::io).
struct io_operation {
    io::op op = io::op::other;
    std::int64_t fd = -1;            ///< descriptor operated on (-1: none, e.g. unlink)
    std::int64_t result = 0;         ///< bytes moved / new descriptor / 0 when >= 0; -errno on failure
    std::uint64_t resource_id = 0;   ///< io_resource::id it was done on; 0: unknown to the registry
};

/// What a descriptor referred to (record_kind::io_resource), sent to a
/// session before the first operation on it that the session receives.
struct io_resource {
    std::uint64_t id = 0;            ///< unique per open in this process (dup keeps it)
    io::resource_kind kind = io::resource_kind::unknown;
    std::string_view name;           ///< path, "peer <addr>" for sockets, ...
    std::uint64_t open_ns = 0;       ///< loupe clock at open; 0 when not seen opened (backfilled)
    std::uint64_t opener_os_tid = 0; ///< OS thread that opened it; 0 when unknown
    bool name_truncated = false;
    bool backfilled = false;         ///< learned from /proc/self/fd, not seen opened
};

}  // namespace loupe
