// RAII scope for a host's own I/O layer (an async engine, a storage driver,
// a TLS library): records one I/O operation from construction to
// destruction, on the descriptor given, as the io wrappers do.
//
//   loupe::io::op_scope op(loupe::io::op::read, fd);
//   const ssize_t n = engine.read(fd, buf, size);
//   op.set_result(n < 0 ? -errno : n);
//
// Cost: nothing recording, one relaxed load and a branch; recording, a
// registry lookup, two clock reads and a 64-byte ring push.
// Thread-safety: create and destroy on one thread (like a zone).
#pragma once

#include <cstdint>

#include "loupe/base/config.hpp"
#include "loupe/io/detail/io_record.hpp"
#include "loupe/base/io_types.hpp"

namespace loupe::io {

class op_scope {
public:
    /// An operation `what` on descriptor `fd` (-1: none) begins now.
    explicit op_scope(op what, std::int64_t fd) noexcept : what_(what), fd_(fd) {
#if LOUPE_ENABLED
        sessions_ = loupe::detail::io_sessions();
        if (LOUPE_UNLIKELY(sessions_ != 0)) {
            resource_ = loupe::detail::io_announce(fd, sessions_);
            t0_ = loupe::detail::read_ticks();
        }
#endif
    }
    ~op_scope() {
#if LOUPE_ENABLED
        if (LOUPE_UNLIKELY(sessions_ != 0)) {
            loupe::detail::io_push(what_, fd_, result_, resource_, t0_, loupe::detail::read_ticks(), sessions_);
        }
#endif
    }
    op_scope(const op_scope&) = delete;
    op_scope& operator=(const op_scope&) = delete;
    static void* operator new(std::size_t) = delete;  // lives on the stack

    /// Bytes moved (or the new descriptor, or 0) on success; -errno on failure.
    void set_result(std::int64_t result) noexcept { result_ = result; }
    /// True when a session records this operation.
    bool recording() const noexcept { return sessions_ != 0; }

private:
    // Same layout with LOUPE_ENABLED=0, where only sessions_ and result_ are read.
    [[maybe_unused]] op what_;
    [[maybe_unused]] std::int64_t fd_;
    std::int64_t result_ = 0;
    std::uint64_t sessions_ = 0;
    [[maybe_unused]] std::uint64_t resource_ = 0;
    [[maybe_unused]] std::uint64_t t0_ = 0;
};

}  // namespace loupe::io
