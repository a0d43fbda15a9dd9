// Naming threads in traces.
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

#include "loupe/core/os_thread_id.hpp"
#include "loupe/core/recorder.hpp"

namespace loupe {

/// Whether `set_thread_name` also renames the thread for the OS.
enum class thread_name_scope : unsigned char {
    /// loupe's records only (the default): `ps`, `top` and debuggers keep
    /// the name the program gave.
    loupe_only,
    /// Also the OS thread name (Linux keeps 15 bytes), so `top -H` and
    /// debuggers agree with the trace. Never on the main thread: its OS name
    /// is the process's (`ps`, `pgrep -x`, and threads created later
    /// inherit it), so the main thread keeps it.
    also_os,
};

/// Names the calling thread in every trace from now on (up to 63 bytes; longer
/// names are cut at a UTF-8 character boundary). Sessions see the rename from
/// the thread's next event on. The OS name changes only when asked (`scope`),
/// and never the main thread's.
///
/// Cost: a copy (and with `thread_name_scope::also_os` a system call); call it when
/// a thread starts, not per event.
/// Thread-safety: names the calling thread only; any thread may call it.
inline void set_thread_name(std::string_view name, thread_name_scope scope = thread_name_scope::loupe_only) noexcept {
    detail::thread_state& ts = detail::t_state;
    std::size_t n = name.size() < detail::max_thread_name ? name.size() : detail::max_thread_name;
    while (n > 0 && n < name.size() && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
    std::memcpy(ts.pending_name, name.data(), n);
    ts.pending_name[n] = '\0';
    ts.epoch = 0;  // filters on `thread` see the new name from the next event
#if LOUPE_OS_LINUX
    if (scope == thread_name_scope::also_os && detail::current_os_tid() != static_cast<std::uint64_t>(::getpid())) {
        char os_name[16];
        std::size_t m = n < 15 ? n : 15;
        while (m > 0 && m < n && (static_cast<unsigned char>(name[m]) & 0xC0) == 0x80) --m;
        std::memcpy(os_name, name.data(), m);
        os_name[m] = '\0';
        pthread_setname_np(pthread_self(), os_name);
    }
#else
    (void)scope;
#endif
    if (ts.owned_ring != nullptr) {
        try {
            ts.owned_ring->set_name(ts.pending_name);
        } catch (...) {  // out of memory: the old name stays
        }
    }
}

}  // namespace loupe
