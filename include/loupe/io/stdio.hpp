// Drop-in wrappers for C stdio streams: loupe::io::fopen, fclose, fread,
// fwrite. A stream is registered and recorded through its descriptor
// (fileno), so its operations and those on the same descriptor through
// posix.hpp are one resource. fread/fwrite record the bytes moved (items ×
// size); a failed call with nothing moved records -errno. A null stream
// fails with EBADF (the std functions' behaviour is undefined).
//
// Cost and thread-safety: as posix.hpp. Note that stdio buffers: a recorded
// fread may be served from the stream's buffer without a system call.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>

#include "loupe/io/run_op.hpp"

namespace loupe::io {

namespace detail {
// A null stream (undefined behaviour for std::fclose/fread/fwrite) fails
// with EBADF instead of crashing, and counts as an anomaly.
template <class T>
T null_stream(T failed) noexcept {
    registry().note_bad_descriptor();
    errno = EBADF;
    return failed;
}
}  // namespace detail

/// std::fopen; registers the stream's descriptor as the file `path`. On
/// failure returns null with fopen's errno, recorded as a failed fopen.
inline std::FILE* fopen(const char* path, const char* mode) noexcept {
    std::FILE* stream = nullptr;
    detail::run_opening(
        op::fopen,
        [&]() -> int {
            stream = std::fopen(path, mode);
            return stream != nullptr ? ::fileno(stream) : -1;  // failed: errno as fopen left it
        },
        [&](std::int64_t fd) { detail::register_open(fd, path ? path : "", resource_kind::file); });
    return stream;
}

/// std::fclose; the registry forgets the stream's descriptor.
inline int fclose(std::FILE* stream) noexcept {
    if (stream == nullptr) return detail::null_stream(EOF);
    return detail::run_closing(op::fclose, ::fileno(stream), [&] { return std::fclose(stream); });
}

namespace detail {
// fread/fwrite: `transfer()` returns the items moved; recorded as bytes
// (items × size), or -errno when nothing moved and the stream has an error.
template <class Transfer>
std::size_t run_stream(op what, std::size_t size, std::size_t count, std::FILE* stream, Transfer&& transfer) noexcept {
    if (stream == nullptr) return null_stream(std::size_t{0});
    std::size_t items = 0;
    run_on(what, ::fileno(stream), [&]() -> std::int64_t {
        items = transfer();
        if (items == 0 && count != 0 && size != 0 && std::ferror(stream)) return -1;
        return static_cast<std::int64_t>(items * size);
    });
    return items;
}
}  // namespace detail

/// std::fread. Returns items read, as std::fread does.
inline std::size_t fread(void* buffer, std::size_t size, std::size_t count, std::FILE* stream) noexcept {
    return detail::run_stream(op::fread, size, count, stream, [&] { return std::fread(buffer, size, count, stream); });
}

/// std::fwrite. Returns items written, as std::fwrite does.
inline std::size_t fwrite(const void* buffer, std::size_t size, std::size_t count, std::FILE* stream) noexcept {
    return detail::run_stream(op::fwrite, size, count, stream, [&] { return std::fwrite(buffer, size, count, stream); });
}

}  // namespace loupe::io
