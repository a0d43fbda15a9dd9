// Every I/O wrapper on its failure path behaves exactly like the call it
// wraps: the same return value and the same errno, with no session and with
// a session recording I/O; and a recording session gets the failed operation
// with -errno as its result.
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

struct failing_call {
    const char* name;
    loupe::io::op op;  // what a recording session must see
    std::function<long()> raw;
    std::function<long()> wrapped;
};

struct outcome {
    long result;
    int error;
};

outcome run(const std::function<long()>& call) {
    errno = 0;
    const long result = call();
    return {result, errno};
}

std::vector<failing_call> failing_calls() {
    static char buffer[16];
    static iovec vec{buffer, sizeof buffer};
    static sockaddr_in address{};
    static socklen_t length = sizeof address;
    const std::string missing_path = std::string(LOUPE_TEST_BINARY_DIR) + "/no/such/dir/file";
    static std::string missing;
    missing = missing_path;
    const int bad = -1;
    using loupe::io::op;
    std::vector<failing_call> calls = {
        {"open", op::open, [] { return long{::open(missing.c_str(), O_RDONLY)}; },
         [] { return long{loupe::io::open(missing.c_str(), O_RDONLY)}; }},
        {"openat", op::openat, [] { return long{::openat(AT_FDCWD, missing.c_str(), O_RDONLY)}; },
         [] { return long{loupe::io::openat(AT_FDCWD, missing.c_str(), O_RDONLY)}; }},
        {"close", op::close, [=] { return long{::close(bad)}; }, [=] { return long{loupe::io::close(bad)}; }},
        {"read", op::read, [=] { return long{::read(bad, buffer, sizeof buffer)}; },
         [=] { return long{loupe::io::read(bad, buffer, sizeof buffer)}; }},
        {"write", op::write, [=] { return long{::write(bad, buffer, sizeof buffer)}; },
         [=] { return long{loupe::io::write(bad, buffer, sizeof buffer)}; }},
        {"pread", op::pread, [=] { return long{::pread(bad, buffer, sizeof buffer, 0)}; },
         [=] { return long{loupe::io::pread(bad, buffer, sizeof buffer, 0)}; }},
        {"pwrite", op::pwrite, [=] { return long{::pwrite(bad, buffer, sizeof buffer, 0)}; },
         [=] { return long{loupe::io::pwrite(bad, buffer, sizeof buffer, 0)}; }},
        {"readv", op::readv, [=] { return long{::readv(bad, &vec, 1)}; },
         [=] { return long{loupe::io::readv(bad, &vec, 1)}; }},
        {"writev", op::writev, [=] { return long{::writev(bad, &vec, 1)}; },
         [=] { return long{loupe::io::writev(bad, &vec, 1)}; }},
        {"fsync", op::fsync, [=] { return long{::fsync(bad)}; }, [=] { return long{loupe::io::fsync(bad)}; }},
        {"unlink", op::unlink, [] { return long{::unlink(missing.c_str())}; },
         [] { return long{loupe::io::unlink(missing.c_str())}; }},
        {"rename", op::rename, [] { return long{std::rename(missing.c_str(), (missing + ".2").c_str())}; },
         [] { return long{loupe::io::rename(missing.c_str(), (missing + ".2").c_str())}; }},
        {"socket", op::socket, [] { return long{::socket(AF_INET, 0x7fff, 0)}; },
         [] { return long{loupe::io::socket(AF_INET, 0x7fff, 0)}; }},
        {"connect", op::connect,
         [=] { return long{::connect(bad, reinterpret_cast<const sockaddr*>(&address), sizeof address)}; },
         [=] { return long{loupe::io::connect(bad, reinterpret_cast<const sockaddr*>(&address), sizeof address)}; }},
        {"accept", op::accept, [=] { return long{::accept(bad, reinterpret_cast<sockaddr*>(&address), &length)}; },
         [=] { return long{loupe::io::accept(bad, reinterpret_cast<sockaddr*>(&address), &length)}; }},
        {"send", op::send, [=] { return long{::send(bad, buffer, sizeof buffer, 0)}; },
         [=] { return long{loupe::io::send(bad, buffer, sizeof buffer, 0)}; }},
        {"recv", op::recv, [=] { return long{::recv(bad, buffer, sizeof buffer, 0)}; },
         [=] { return long{loupe::io::recv(bad, buffer, sizeof buffer, 0)}; }},
        {"sendto", op::sendto,
         [=] {
             return long{::sendto(bad, buffer, sizeof buffer, 0, reinterpret_cast<const sockaddr*>(&address),
                                  sizeof address)};
         },
         [=] {
             return long{loupe::io::sendto(bad, buffer, sizeof buffer, 0, reinterpret_cast<const sockaddr*>(&address),
                                           sizeof address)};
         }},
        {"recvfrom", op::recvfrom,
         [=] {
             return long{::recvfrom(bad, buffer, sizeof buffer, 0, reinterpret_cast<sockaddr*>(&address), &length)};
         },
         [=] {
             return long{
                 loupe::io::recvfrom(bad, buffer, sizeof buffer, 0, reinterpret_cast<sockaddr*>(&address), &length)};
         }},
        {"dup", op::dup, [=] { return long{::dup(bad)}; }, [=] { return long{loupe::io::dup(bad)}; }},
        {"dup2", op::dup2, [=] { return long{::dup2(bad, 900)}; }, [=] { return long{loupe::io::dup2(bad, 900)}; }},
        {"dup3", op::dup3, [=] { return long{::dup3(bad, 900, 0)}; },
         [=] { return long{loupe::io::dup3(bad, 900, 0)}; }},
        {"fcntl(F_DUPFD)", op::fcntl_dupfd, [=] { return long{::fcntl(bad, F_DUPFD, 10)}; },
         [=] { return long{loupe::io::fcntl(bad, F_DUPFD, 10)}; }},
        {"socketpair", op::socketpair,
         [] {
             int fds[2];
             return long{::socketpair(AF_INET, SOCK_STREAM, 0, fds)};
         },
         [] {
             int fds[2];
             return long{loupe::io::socketpair(AF_INET, SOCK_STREAM, 0, fds)};
         }},
        {"fopen", op::fopen, [] { return std::fopen(missing.c_str(), "r") == nullptr ? -1L : 0L; },
         [] { return loupe::io::fopen(missing.c_str(), "r") == nullptr ? -1L : 0L; }},
    };
#if defined(__linux__)
    calls.push_back({"accept4", op::accept,  // recorded as an accept
                     [=] { return long{::accept4(bad, reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC)}; },
                     [=] {
                         return long{
                             loupe::io::accept4(bad, reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC)};
                     }});
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    calls.push_back({"close_range", op::close_range, [] { return long{::close_range(10, 5, 0)}; },
                     [] { return long{loupe::io::close_range(10, 5, 0)}; }});
#endif
    return calls;
}

void expect_same_as_raw(const failing_call& c, const char* when) {
    const outcome raw = run(c.raw);
    const outcome wrapped = run(c.wrapped);
    EXPECT_EQ(wrapped.result, raw.result) << c.name << " " << when;
    EXPECT_EQ(wrapped.error, raw.error) << c.name << " " << when;
    EXPECT_LT(raw.result, 0) << c.name << ": the raw call was meant to fail";
    EXPECT_NE(raw.error, 0) << c.name;
}

TEST(IoFailurePaths, EveryWrapperReturnsTheRawResultAndErrnoWithoutASession) {
    for (const failing_call& c : failing_calls()) expect_same_as_raw(c, "(no session)");
}

TEST(IoFailurePaths, EveryWrapperReturnsTheRawResultAndErrnoAndIsRecordedWithIt) {
    auto memory = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "io-failures";
    cfg.kinds = loupe::kinds::io;
    cfg.sinks = {memory};
    loupe::session session = loupe::start_session(cfg);
    const std::vector<failing_call> calls = failing_calls();
    std::vector<int> errors;
    for (const failing_call& c : calls) {
        expect_same_as_raw(c, "(recorded)");
        errors.push_back(run(c.raw).error);
    }
    session.stop();

    std::vector<loupe::sinks::memory_event> ops;
    for (const auto& e : memory->events()) {
        if (e.kind == loupe::record_kind::io) ops.push_back(e);
    }
    ASSERT_EQ(ops.size(), calls.size()) << "one recorded operation per wrapped call";
    for (std::size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(ops[i].io.op, calls[i].op) << calls[i].name;
        EXPECT_EQ(ops[i].io.result, -errors[i]) << calls[i].name << ": recorded with -errno";
    }
}

}  // namespace
