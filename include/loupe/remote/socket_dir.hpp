// Where loupe's control endpoints live (docs/control.md): one Unix domain
// socket per listening process, `<dir>/<pid>.sock`, in a directory of the
// user's own. Shared by the endpoint (control/listen.hpp), which makes the
// directory and its socket, and by clients (remote/client.hpp, `loupe ps`),
// which look for sockets there.
//
// The directory is `$XDG_RUNTIME_DIR/loupe` when XDG_RUNTIME_DIR is set (and
// not empty), else `/tmp/loupe-<uid>`. It must be a real directory (not a
// symlink), owned by the effective user, with no permission bits for group
// or others: anything else is refused with a loupe::error naming the path
// and the reason, so that another user cannot plant or read sockets there.
//
// Cost: a few system calls per call. Thread-safety: every function may be
// called from any thread (they read the environment: do not call setenv at
// the same time).
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "loupe/base/error.hpp"

namespace loupe::remote {

/// The socket directory of the effective user (see above). Not checked.
inline std::string socket_directory() {
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    if (xdg != nullptr && xdg[0] != '\0') return std::string(xdg) + "/loupe";
    return "/tmp/loupe-" + std::to_string(static_cast<unsigned long>(::geteuid()));
}

/// Throws loupe::error unless `dir` is a directory (not a symlink) owned by
/// the effective user with mode 0700 or stricter.
inline void check_socket_directory(const std::string& dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        throw error("socket directory " + dir + ": " + std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        throw error("socket directory " + dir + " is a symbolic link; refused (it must be a directory of your own)");
    }
    if (!S_ISDIR(st.st_mode)) throw error("socket directory " + dir + " is not a directory; refused");
    if (st.st_uid != ::geteuid()) {
        throw error("socket directory " + dir + " is owned by uid " + std::to_string(st.st_uid) + ", not by uid " +
                    std::to_string(::geteuid()) + "; refused");
    }
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        throw error("socket directory " + dir + " has mode " + mode +
                    ", open to other users; refused (want 0700: chmod 700 " + dir + ")");
    }
}

/// Makes `dir` (mode 0700) when it does not exist, then checks it as
/// check_socket_directory does. Its parent must exist.
inline void make_socket_directory(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        throw error("cannot make socket directory " + dir + ": " + std::strerror(errno));
    }
    check_socket_directory(dir);
}

/// `<dir>/<pid>.sock`. Throws loupe::error when the path does not fit a
/// Unix socket address (108 bytes on Linux).
inline std::string socket_path(const std::string& dir, pid_t pid) {
    std::string path = dir + "/" + std::to_string(static_cast<long>(pid)) + ".sock";
    if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
        throw error("socket path " + path + " is longer than a Unix socket address allows (" +
                    std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                    " bytes); set XDG_RUNTIME_DIR to a shorter directory");
    }
    return path;
}

/// The pid of a socket named `<pid>.sock` (digits only, no leading zero);
/// false for any other name.
inline bool parse_socket_name(std::string_view name, pid_t& pid) {
    constexpr std::string_view suffix = ".sock";
    if (name.size() <= suffix.size() || name.size() > suffix.size() + 9) return false;
    if (name.substr(name.size() - suffix.size()) != suffix) return false;
    const std::string_view digits = name.substr(0, name.size() - suffix.size());
    if (digits[0] == '0') return false;
    long value = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + (c - '0');
    }
    pid = static_cast<pid_t>(value);
    return true;
}

/// True when no process `pid` exists (kill(pid, 0) fails with ESRCH): its
/// socket is stale. A process of another user (EPERM) counts as alive.
inline bool process_gone(pid_t pid) noexcept { return ::kill(pid, 0) != 0 && errno == ESRCH; }

/// The pids that have a socket in `dir` and are alive, ascending. Stale
/// sockets are skipped (not removed: their owner's next listen() removes
/// them). At most `limit` entries are read. Throws loupe::error when `dir`
/// cannot be read; an absent directory gives an empty list.
inline std::vector<pid_t> endpoint_pids(const std::string& dir, std::size_t limit = 4096) {
    std::vector<pid_t> pids;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
        if (errno == ENOENT) return pids;
        throw error("cannot read socket directory " + dir + ": " + std::strerror(errno));
    }
    std::size_t seen = 0;
    while (const dirent* e = ::readdir(d)) {
        if (++seen > limit) break;
        pid_t pid = 0;
        if (parse_socket_name(e->d_name, pid) && !process_gone(pid)) pids.push_back(pid);
    }
    ::closedir(d);
    std::sort(pids.begin(), pids.end());
    return pids;
}

}  // namespace loupe::remote
