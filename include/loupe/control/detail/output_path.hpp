// Where a session started through the control endpoint may write: inside
// the output directory the process owner gave listen() (its real path).
// A requested path is refused, with a loupe::error naming it and the
// reason, when it has a `..` component, is absolute outside the directory,
// names a folder that does not exist, reaches outside the directory through
// a symlink (the real path of its folder is checked), or names an existing
// symlink or non-regular file.
//
// The check and the sink's open are two steps: a process of the same user
// that swaps a folder for a symlink in between is not defended against
// (that user could write the file anyway).
#pragma once

#include <limits.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "loupe/base/error.hpp"

namespace loupe::control::detail {

/// The real path of `dir`, which must be a directory; throws loupe::error.
inline std::string real_directory(const std::string& dir) {
    char* real = ::realpath(dir.c_str(), nullptr);
    if (real == nullptr) throw error("output directory " + dir + ": " + std::strerror(errno));
    std::string out(real);
    std::free(real);
    struct stat st {};
    if (::stat(out.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw error("output directory " + dir + " is not a directory");
    }
    return out;
}

inline bool inside(const std::string& root, const std::string& path) {
    if (root == "/") return !path.empty() && path[0] == '/';
    return path == root ||
           (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

/// The path to open for `requested` (relative to `root`, or absolute inside
/// it); `root` is a real path (real_directory). Throws loupe::error.
inline std::string resolve_output(const std::string& root, const std::string& requested) {
    const std::string what = "output '" + requested + "'";
    if (requested.empty()) throw error("output: expected a file name");
    // No `..` component anywhere.
    std::size_t from = 0;
    for (std::size_t i = 0; i <= requested.size(); ++i) {
        if (i == requested.size() || requested[i] == '/') {
            if (requested.compare(from, i - from, "..") == 0 && i - from == 2) {
                throw error(what + ": '..' (byte " + std::to_string(from) + ") is not allowed; name a file inside " +
                            root);
            }
            from = i + 1;
        }
    }
    std::string relative = requested;
    if (requested[0] == '/') {
        if (!inside(root, requested) || requested.size() <= root.size() + 1) {
            throw error(what + " is outside the output directory " + root);
        }
        relative = requested.substr(root == "/" ? 1 : root.size() + 1);
    }
    const std::size_t slash = relative.rfind('/');
    const std::string folder = slash == std::string::npos ? std::string() : relative.substr(0, slash);
    const std::string base = slash == std::string::npos ? relative : relative.substr(slash + 1);
    if (base.empty() || base == ".") throw error(what + ": expected a file name, not a folder");
    const std::string parent = folder.empty() ? root : root + "/" + folder;
    char* real = ::realpath(parent.c_str(), nullptr);
    if (real == nullptr) throw error(what + ": folder " + parent + ": " + std::strerror(errno));
    const std::string real_parent(real);
    std::free(real);
    if (!inside(root, real_parent)) {
        throw error(what + " leaves the output directory " + root + " through a symbolic link (its folder is " +
                    real_parent + ")");
    }
    const std::string path = (real_parent == "/" ? std::string() : real_parent) + "/" + base;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) throw error(what + " is a symbolic link; refused");
        if (!S_ISREG(st.st_mode)) throw error(what + " exists and is not a regular file");
    }
    return path;
}

}  // namespace loupe::control::detail
