// The calling thread's kernel id, for records that name OS threads (I/O
// openers, ring owners). glibc 2.30 and later declare gettid() in
// <unistd.h>; older ones need the system call number from <sys/syscall.h>
// (2,500 lines an instrumenting file should not compile).
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <cstdint>

#include "loupe/base/config.hpp"

#if LOUPE_OS_LINUX && !(defined(__GLIBC__) && defined(_GNU_SOURCE) && \
                        (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 30)))
#    include <sys/syscall.h>
#    define LOUPE_DETAIL_GETTID_SYSCALL 1
#endif

namespace loupe::detail {

/// The calling thread's kernel id (gettid), or pthread_self() elsewhere.
inline std::uint64_t current_os_tid() noexcept {
#if defined(LOUPE_DETAIL_GETTID_SYSCALL)
    return static_cast<std::uint64_t>(::syscall(SYS_gettid));
#elif LOUPE_OS_LINUX
    return static_cast<std::uint64_t>(::gettid());
#else
    return reinterpret_cast<std::uint64_t>(pthread_self());
#endif
}

}  // namespace loupe::detail
