// The calling thread's kernel id, for records that name OS threads (I/O
// openers, ring owners). Apart from the hot path's headers: it needs
// <sys/syscall.h>, which an instrumenting file does not.
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <cstdint>

#include "loupe/base/config.hpp"

#if LOUPE_OS_LINUX
#    include <sys/syscall.h>
#endif

namespace loupe::detail {

/// The calling thread's kernel id (gettid), or pthread_self() elsewhere.
inline std::uint64_t current_os_tid() noexcept {
#if LOUPE_OS_LINUX
    return static_cast<std::uint64_t>(::syscall(SYS_gettid));
#else
    return reinterpret_cast<std::uint64_t>(pthread_self());
#endif
}

}  // namespace loupe::detail
