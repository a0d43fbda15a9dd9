// I/O profiling: the always-on handle registry, drop-in wrappers for POSIX
// and stdio calls, and an op scope for a host's own I/O layer.
//
//   #include <loupe/io.hpp>
//   int fd = loupe::io::open("orders.db", O_RDONLY);   // where you called ::open
//   loupe::io::read(fd, buf, n);                       // recorded while a session records kinds::io
//
// A session started after the open still sees the read as a read of
// "orders.db", with the time it was opened. `loupe report FILE --io` sums
// operations by file, socket peer, thread, context field or zone.
#pragma once

#include "loupe/io/handle_registry.hpp"
#include "loupe/io/op_scope.hpp"
#include "loupe/io/posix.hpp"
#include "loupe/io/stdio.hpp"
#include "loupe/base/io_types.hpp"
