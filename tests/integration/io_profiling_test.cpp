// I/O profiling end to end: wrappers -> registry -> ring -> collector ->
// sinks and .loupe files -> reader -> report.
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/io_stats.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "support/recording.hpp"
#include "support/trace_files.hpp"

namespace {

using loupe_test::of_kind;
using loupe_test::record_kind;
using loupe_test::temp_trace_path;

std::string temp_file(const std::string& tag) {
    return std::string(LOUPE_TEST_BINARY_DIR) + "/io_" + tag + "_" + std::to_string(::getpid()) + ".dat";
}

loupe::session_config io_config(std::shared_ptr<loupe::sink> sink, std::string filter = "") {
    loupe::session_config cfg;
    cfg.name = "io";
    cfg.kinds = loupe::kinds::io | loupe::kinds::zones;
    cfg.sinks = {std::move(sink)};
    cfg.filter = std::move(filter);
    return cfg;
}

// The resource announced with id `id` in a memory sink's records.
const loupe::sinks::memory_event* resource_of(const std::vector<loupe::sinks::memory_event>& events, std::uint64_t id) {
    for (const auto& e : events) {
        if (e.kind == record_kind::io_resource && e.resource.id == id) return &e;
    }
    return nullptr;
}

std::vector<loupe::sinks::memory_event> ops_of(const std::vector<loupe::sinks::memory_event>& events, loupe::io::op o) {
    std::vector<loupe::sinks::memory_event> out;
    for (const auto& e : events) {
        if (e.kind == record_kind::io && e.io.op == o) out.push_back(e);
    }
    return out;
}

// Creates `path` with the raw open(2): loupe does not see this open.
int open_unseen(const std::string& path) { return ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644); }

TEST(IoProfiling, LateStartNamesTheFileOpenedBeforeTheSession) {
    const std::string path = temp_file("late");
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(loupe::io::write(fd, "hello", 5), 5);  // no session yet: not recorded
    std::this_thread::sleep_for(std::chrono::milliseconds(2));

    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    char buf[8] = {};
    EXPECT_EQ(loupe::io::pread(fd, buf, sizeof buf, 0), 5);
    EXPECT_EQ(std::string(buf, 5), "hello");
    session.stop();
    loupe::io::close(fd);
    ::unlink(path.c_str());

    const auto events = mem->events();
    const auto reads = ops_of(events, loupe::io::op::pread);
    ASSERT_EQ(reads.size(), 1u);
    EXPECT_EQ(reads[0].io.result, 5);
    EXPECT_EQ(reads[0].io.fd, fd);
    EXPECT_LE(reads[0].begin_ns, reads[0].end_ns);
    EXPECT_TRUE(ops_of(events, loupe::io::op::write).empty()) << "the write before the session was recorded";
    const auto* res = resource_of(events, reads[0].io.resource_id);
    ASSERT_NE(res, nullptr) << "the read's resource was not announced";
    EXPECT_EQ(res->resource_name, path);
    EXPECT_EQ(res->resource.kind, loupe::io::resource_kind::file);
    EXPECT_FALSE(res->resource.backfilled);
    const std::uint64_t session_start = of_kind(events, record_kind::session_begin).at(0).begin_ns;
    EXPECT_GT(res->resource.open_ns, 0u);
    EXPECT_LT(res->resource.open_ns, session_start) << "the open time must be the original one, before the session";
    EXPECT_EQ(res->resource.opener_os_tid, static_cast<std::uint64_t>(::gettid()));
}

TEST(IoProfiling, DescriptorsOpenedWithoutTheWrappersAreBackfilled) {
    const std::string path = temp_file("backfill");
    const int fd = open_unseen(path);
    ASSERT_GE(fd, 0);
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    EXPECT_EQ(loupe::io::write(fd, "abc", 3), 3);
    session.stop();
    loupe::io::close(fd);
    ::unlink(path.c_str());

    const auto events = mem->events();
    const auto writes = ops_of(events, loupe::io::op::write);
    ASSERT_EQ(writes.size(), 1u);
    const auto* res = resource_of(events, writes[0].io.resource_id);
    ASSERT_NE(res, nullptr);
    EXPECT_TRUE(res->resource.backfilled);
    EXPECT_EQ(res->resource_name, path) << "/proc/self/fd gives the path";
    EXPECT_EQ(res->resource.open_ns, 0u) << "the open time of a backfilled descriptor is unknown";
}

// A descriptor opened outside the wrappers and then dup'ed through them is
// named at the dup (learned late, from /proc/self/fd): the copy and the
// original are one named resource, not descriptor numbers.
TEST(IoProfiling, ADupOfADescriptorOpenedOutsideTheWrappersNamesBoth) {
    const std::string path = temp_file("dup_backfill");
    const int fd = open_unseen(path);
    ASSERT_GE(fd, 0);
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    const int copy = loupe::io::dup(fd);
    ASSERT_GE(copy, 0);
    EXPECT_EQ(loupe::io::write(copy, "abc", 3), 3);
    EXPECT_EQ(loupe::io::write(fd, "def", 3), 3);
    session.stop();
    loupe::io::close(copy);
    loupe::io::close(fd);
    ::unlink(path.c_str());

    const auto events = mem->events();
    const auto writes = ops_of(events, loupe::io::op::write);
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[0].io.resource_id, writes[1].io.resource_id) << "the copy and the original are one resource";
    const auto* res = resource_of(events, writes[0].io.resource_id);
    ASSERT_NE(res, nullptr);
    EXPECT_EQ(res->resource_name, path);
    EXPECT_TRUE(res->resource.backfilled) << "named late, from /proc/self/fd";
}

TEST(IoProfiling, TraceFileRoundTripAndFileReport) {
    const std::string data = temp_file("roundtrip");
    const std::string trace_path = temp_trace_path("io_roundtrip");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    {
        LOUPE_ZONE("save");
        const int fd = loupe::io::open(data.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        EXPECT_EQ(loupe::io::write(fd, "0123456789", 10), 10);
        iovec parts[2] = {{const_cast<char*>("ab"), 2}, {const_cast<char*>("cde"), 3}};
        EXPECT_EQ(loupe::io::writev(fd, parts, 2), 5);
        EXPECT_EQ(loupe::io::fsync(fd), 0);
        EXPECT_EQ(loupe::io::close(fd), 0);
    }
    {
        LOUPE_ZONE("load");
        const int fd = loupe::io::open(data.c_str(), O_RDONLY);
        char buf[64];
        EXPECT_EQ(loupe::io::read(fd, buf, sizeof buf), 15);
        EXPECT_EQ(loupe::io::read(fd, buf, sizeof buf), 0);
        EXPECT_EQ(loupe::io::close(fd), 0);
    }
    EXPECT_EQ(loupe::io::unlink(data.c_str()), 0);
    EXPECT_EQ(loupe::io::unlink(data.c_str()), -1);  // gone: ENOENT, recorded as an error
    EXPECT_EQ(errno, ENOENT) << "the wrapper must leave errno as the call did";
    const loupe::session_stats stats = session.stop();

    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    ASSERT_EQ(t.io_ops.size(), 11u);
    EXPECT_EQ(stats.delivered, t.events.size() + t.io_ops.size());
    const std::vector<std::string> expected = {"open", "write", "writev", "fsync", "close", "open",
                                               "read", "read",  "close",  "unlink", "unlink"};
    std::vector<std::string> ops;
    for (const auto& op : t.io_ops) ops.push_back(loupe::io::op_name(op.op));
    EXPECT_EQ(ops, expected);
    for (const auto& op : t.io_ops) {
        const loupe::trace_io_resource* r = t.find_io_resource(op.resource_id);
        ASSERT_NE(r, nullptr) << loupe::io::op_name(op.op);
        EXPECT_EQ(r->name, data);
    }
    EXPECT_EQ(t.io_ops.back().result, -ENOENT);

    const auto by_file = loupe::report::io_stats(t, loupe::report::io_group::file);
    ASSERT_EQ(by_file.rows.size(), 1u);
    EXPECT_EQ(by_file.rows[0].label, data);
    EXPECT_EQ(by_file.rows[0].ops, 11u);
    EXPECT_EQ(by_file.rows[0].bytes_out, 15u);
    EXPECT_EQ(by_file.rows[0].bytes_in, 15u);
    EXPECT_EQ(by_file.rows[0].errors, 1u);
    EXPECT_EQ(by_file.files_opened, 2u);
    EXPECT_EQ(by_file.files_closed, 2u);
    EXPECT_EQ(by_file.files_deleted, 1u);

    const auto by_zone = loupe::report::io_stats(t, loupe::report::io_group::zone);
    std::map<std::string, loupe::report::io_row> zones;
    for (const auto& row : by_zone.rows) zones[row.label] = row;
    EXPECT_EQ(zones["save"].bytes_out, 15u);
    EXPECT_EQ(zones["save"].ops, 5u);
    EXPECT_EQ(zones["load"].bytes_in, 15u);
    EXPECT_EQ(zones["load"].ops, 4u);
    EXPECT_EQ(zones["(no zone)"].ops, 2u);
    EXPECT_NE(loupe::report::format_io_stats(by_file).find("files: 2 opened, 2 closed, 1 deleted"), std::string::npos);
}

TEST(IoProfiling, DupKeepsTheResourceAndDup2ReplacesTheTarget) {
    const std::string a = temp_file("dup_a"), b = temp_file("dup_b");
    const int fa = loupe::io::open(a.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    const int fb = loupe::io::open(b.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fa, 0);
    ASSERT_GE(fb, 0);
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    const int copy = loupe::io::dup(fa);
    EXPECT_EQ(loupe::io::write(copy, "x", 1), 1);
    EXPECT_EQ(loupe::io::dup2(fa, fb), fb);  // fb now refers to a's file
    EXPECT_EQ(loupe::io::write(fb, "y", 1), 1);
    session.stop();
    for (int fd : {fa, fb, copy}) loupe::io::close(fd);
    ::unlink(a.c_str());
    ::unlink(b.c_str());

    const auto events = mem->events();
    const auto writes = ops_of(events, loupe::io::op::write);
    ASSERT_EQ(writes.size(), 2u);
    for (const auto& w : writes) {
        const auto* res = resource_of(events, w.io.resource_id);
        ASSERT_NE(res, nullptr);
        EXPECT_EQ(res->resource_name, a) << "write on fd " << w.io.fd;
    }
    EXPECT_EQ(writes[0].io.resource_id, writes[1].io.resource_id) << "a dup is the same resource";
}

TEST(IoProfiling, Dup3AndFcntlDupfdRegisterCopiesAndCloseRangeForgetsTheRange) {
    const std::string path = temp_file("dup3");
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    const int copy3 = loupe::io::dup3(fd, 900, O_CLOEXEC);
    ASSERT_EQ(copy3, 900);
    const int copy_fcntl = loupe::io::fcntl(fd, F_DUPFD_CLOEXEC, 901);
    ASSERT_GE(copy_fcntl, 901);
    EXPECT_EQ(loupe::io::fcntl(fd, F_GETFD), 0) << "other commands pass straight through";
    loupe::io::handle_info original, a, b;
    ASSERT_TRUE(loupe::io::registry().lookup(fd, original));
    ASSERT_TRUE(loupe::io::registry().lookup(copy3, a));
    ASSERT_TRUE(loupe::io::registry().lookup(copy_fcntl, b));
    EXPECT_EQ(a.name, path);
    EXPECT_EQ(a.resource_id, original.resource_id);
    EXPECT_EQ(b.resource_id, original.resource_id);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    const int closed = loupe::io::close_range(900, ~0u, 0);
    if (closed != 0 && errno == ENOSYS) {
        loupe::io::close(copy3);
        loupe::io::close(copy_fcntl);
    } else {
        EXPECT_EQ(closed, 0);
        EXPECT_FALSE(loupe::io::registry().lookup(copy3, a)) << "close_range must forget what it closed";
        EXPECT_FALSE(loupe::io::registry().lookup(copy_fcntl, b));
        EXPECT_EQ(::fcntl(copy3, F_GETFD), -1) << "and really close it";
    }
#else
    loupe::io::close(copy3);
    loupe::io::close(copy_fcntl);
#endif
    EXPECT_TRUE(loupe::io::registry().lookup(fd, original)) << "outside the range: kept";
    loupe::io::close(fd);
    ::unlink(path.c_str());
}

TEST(IoProfiling, LoopbackSocketsAreNamedByPeerAndCounted) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listener, 4), 0);
    socklen_t length = sizeof address;
    ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
    const std::string server_name = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));

    const std::string trace_path = temp_trace_path("io_sockets");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    const int client = loupe::io::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(client, 0);
    ASSERT_EQ(loupe::io::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    sockaddr_in peer{};
    socklen_t peer_length = sizeof peer;
    const int served = loupe::io::accept(listener, reinterpret_cast<sockaddr*>(&peer), &peer_length);
    ASSERT_GE(served, 0);
    EXPECT_EQ(peer.sin_family, AF_INET) << "accept must still fill the caller's address";
    const std::string client_name = "127.0.0.1:" + std::to_string(ntohs(peer.sin_port));
    EXPECT_EQ(loupe::io::send(client, "ping!", 5, 0), 5);
    char buf[16];
    EXPECT_EQ(loupe::io::recv(served, buf, sizeof buf, 0), 5);
    EXPECT_EQ(loupe::io::close(client), 0);
    EXPECT_EQ(loupe::io::close(served), 0);
    session.stop();
    ::close(listener);

    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    const auto by_socket = loupe::report::io_stats(t, loupe::report::io_group::socket);
    std::map<std::string, loupe::report::io_row> rows;
    for (const auto& row : by_socket.rows) rows[row.label] = row;
    EXPECT_EQ(rows[server_name].bytes_out, 5u) << "the client's socket is named after the server it connected to";
    EXPECT_EQ(rows[client_name].bytes_in, 5u) << "the accepted socket is named after the client";
    EXPECT_EQ(by_socket.connections_established, 2u);  // connect + accept
    EXPECT_EQ(by_socket.connections_closed, 2u);
}

TEST(IoProfiling, PipesSocketpairsOpenatVectorAndDatagramCallsAreRecorded) {
    const std::string dir = std::string(LOUPE_TEST_BINARY_DIR);
    const int dirfd = loupe::io::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dirfd, 0);
    const std::string leaf = "io_openat_" + std::to_string(::getpid());
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    int p[2], sp[2];
    ASSERT_EQ(loupe::io::pipe(p), 0);
    ASSERT_EQ(loupe::io::socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    EXPECT_EQ(loupe::io::write(p[1], "pipe", 4), 4);
    char buf[8];
    iovec in{buf, sizeof buf};
    EXPECT_EQ(loupe::io::readv(p[0], &in, 1), 4);
    EXPECT_EQ(loupe::io::send(sp[0], "pair", 4, 0), 4);
    EXPECT_EQ(loupe::io::recv(sp[1], buf, sizeof buf, 0), 4);
    const int f = loupe::io::openat(dirfd, leaf.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(f, 0);
    const int udp = loupe::io::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(9);  // discard: nobody listens, a datagram is sent all the same
    EXPECT_EQ(loupe::io::sendto(udp, "x", 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 1);
    for (int fd : {p[0], p[1], sp[0], sp[1], f, udp, dirfd}) EXPECT_EQ(loupe::io::close(fd), 0);
    loupe::io::unlink((dir + "/" + leaf).c_str());
    session.stop();

    const auto events = mem->events();
    auto name_of = [&](loupe::io::op o) {
        const auto ops = ops_of(events, o);
        if (ops.empty()) return std::string("(no ") + loupe::io::op_name(o) + ")";
        const auto* r = resource_of(events, ops[0].io.resource_id);
        return r ? r->resource_name : std::string("(unannounced)");
    };
    EXPECT_EQ(name_of(loupe::io::op::write), "pipe (write end)");
    EXPECT_EQ(name_of(loupe::io::op::readv), "pipe (read end)");
    EXPECT_EQ(name_of(loupe::io::op::send), "socketpair");
    EXPECT_EQ(name_of(loupe::io::op::openat), dir + "/" + leaf) << "a relative openat is named after its directory";
    EXPECT_EQ(name_of(loupe::io::op::sendto), "127.0.0.1:9") << "an unconnected socket is named at its first sendto";
    EXPECT_EQ(ops_of(events, loupe::io::op::readv).at(0).io.result, 4);
    EXPECT_EQ(ops_of(events, loupe::io::op::close).size(), 7u);
}

TEST(IoProfiling, StdioStreamsRecordBytes) {
    const std::string path = temp_file("stdio");
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    std::FILE* f = loupe::io::fopen(path.c_str(), "w+");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(loupe::io::fwrite("abcdefgh", 4, 2, f), 2u);
    std::rewind(f);
    char buf[8];
    EXPECT_EQ(loupe::io::fread(buf, 1, sizeof buf, f), 8u);
    EXPECT_EQ(loupe::io::fclose(f), 0);
    EXPECT_EQ(loupe::io::fclose(nullptr), EOF);  // no crash
    session.stop();
    ::unlink(path.c_str());

    const auto events = mem->events();
    ASSERT_EQ(ops_of(events, loupe::io::op::fwrite).size(), 1u);
    EXPECT_EQ(ops_of(events, loupe::io::op::fwrite)[0].io.result, 8);
    EXPECT_EQ(ops_of(events, loupe::io::op::fread)[0].io.result, 8);
    ASSERT_EQ(ops_of(events, loupe::io::op::fclose).size(), 1u);
    const auto* res = resource_of(events, ops_of(events, loupe::io::op::fclose)[0].io.resource_id);
    ASSERT_NE(res, nullptr);
    EXPECT_EQ(res->resource_name, path);
}

// fopen of a path that cannot be opened behaves as std::fopen: null, the
// same errno; recorded as a failed fopen with -errno when a session records
// I/O, and the host keeps running either way.
TEST(IoProfiling, FailedFopenReturnsNullWithFopensErrnoRecordedOrNot) {
    const std::string missing = std::string(LOUPE_TEST_BINARY_DIR) + "/no/such/dir/file.dat";
    errno = 0;
    std::FILE* raw = std::fopen(missing.c_str(), "r");
    const int raw_errno = errno;
    ASSERT_EQ(raw, nullptr);
    ASSERT_NE(raw_errno, 0);

    errno = 0;
    EXPECT_EQ(loupe::io::fopen(missing.c_str(), "r"), nullptr);  // nothing records
    EXPECT_EQ(errno, raw_errno);

    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    errno = 0;
    EXPECT_EQ(loupe::io::fopen(missing.c_str(), "r"), nullptr);  // recorded
    EXPECT_EQ(errno, raw_errno);
    session.stop();

    const auto opens = ops_of(mem->events(), loupe::io::op::fopen);
    ASSERT_EQ(opens.size(), 1u);
    EXPECT_EQ(opens[0].io.result, -raw_errno);
    EXPECT_EQ(opens[0].io.fd, -1);
}

TEST(IoProfiling, OpScopeRecordsAHostsOwnIoLayer) {
    const std::string path = temp_file("scope");
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    {
        loupe::io::op_scope op(loupe::io::op::write, fd);
        EXPECT_TRUE(op.recording());
        op.set_result(::write(fd, "engine", 6));  // the host's own call
    }
    session.stop();
    loupe::io::close(fd);
    ::unlink(path.c_str());
    const auto writes = ops_of(mem->events(), loupe::io::op::write);
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_EQ(writes[0].io.result, 6);
    EXPECT_EQ(resource_of(mem->events(), writes[0].io.resource_id)->resource_name, path);
}

TEST(IoProfiling, BadDescriptorsAreCountedNotMisattributed) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    const auto before = loupe::io::registry().anomalies().bad_descriptor;
    const std::string path = temp_file("bad");
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_EQ(loupe::io::close(fd), 0);
    auto session = loupe::start_session(io_config(mem));
    char c;
    EXPECT_EQ(loupe::io::read(-1, &c, 1), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(loupe::io::close(fd), -1);  // closed twice
    EXPECT_EQ(loupe::io::read(fd, &c, 1), -1);  // used after close
    EXPECT_EQ(loupe::io::read(1 << 30, &c, 1), -1);  // far beyond any capacity
    session.stop();
    ::unlink(path.c_str());
    EXPECT_EQ(loupe::io::registry().anomalies().bad_descriptor - before, 4u);
    const auto events = mem->events();
    std::size_t failed = 0;
    for (const auto& e : of_kind(events, record_kind::io)) {
        EXPECT_EQ(e.io.result, -EBADF);
        EXPECT_EQ(e.io.resource_id, 0u) << "a closed descriptor must not be attributed to a file";
        ++failed;
    }
    EXPECT_EQ(failed, 4u);
    EXPECT_TRUE(of_kind(events, record_kind::io_resource).empty());
}

TEST(IoProfiling, LoupesOwnOutputIsNotProfiled) {
    const std::string trace_path = temp_trace_path("io_self");
    const std::string data = temp_file("self");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    const int fd = loupe::io::open(data.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    for (int i = 0; i < 200; ++i) loupe::io::write(fd, "data", 4);  // keeps the collector writing meanwhile
    loupe::io::close(fd);
    session.stop();
    ::unlink(data.c_str());
    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    ASSERT_FALSE(t.io_resources.empty());
    for (const auto& r : t.io_resources) EXPECT_EQ(r.name, data) << "loupe's own file showed up as profiled I/O";
    for (const auto& op : t.io_ops) EXPECT_NE(op.resource_id, 0u);
}

TEST(IoProfiling, AFilterThatExcludesAThreadRecordsNoneOfItsIo) {
    const std::string path = temp_file("filter");
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem, R"(user == "alice")"));
    auto serve = [&](const char* user, int writes) {
        loupe::context_scope who({{loupe::context_field::user, user}});
        for (int i = 0; i < writes; ++i) loupe::io::write(fd, user, 1);
    };
    std::thread bob(serve, "bob", 50);
    std::thread alice(serve, "alice", 7);
    bob.join();
    alice.join();
    session.stop();
    loupe::io::close(fd);
    ::unlink(path.c_str());
    const auto writes = ops_of(mem->events(), loupe::io::op::write);
    EXPECT_EQ(writes.size(), 7u) << "only alice's writes may be recorded";
}

TEST(IoProfiling, ReportGroupsByContextFieldAndThread) {
    const std::string data = temp_file("by_user");
    const std::string trace_path = temp_trace_path("io_by_user");
    const int fd = loupe::io::open(data.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    auto serve = [&](const char* user, int writes) {
        loupe::set_thread_name(std::string("serves-") + user);
        loupe::context_scope who({{loupe::context_field::user, user}});
        for (int i = 0; i < writes; ++i) loupe::io::write(fd, "12345678", 8);
    };
    std::thread alice(serve, "alice", 3);
    alice.join();
    std::thread bob(serve, "bob", 5);
    bob.join();
    session.stop();
    loupe::io::close(fd);
    ::unlink(data.c_str());
    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());

    std::map<std::string, loupe::report::io_row> by_user, by_thread;
    for (auto& row : loupe::report::io_stats(t, loupe::report::io_group::user).rows) by_user[row.label] = row;
    for (auto& row : loupe::report::io_stats(t, loupe::report::io_group::thread).rows) by_thread[row.label] = row;
    EXPECT_EQ(by_user.size(), 2u);
    EXPECT_EQ(by_user["alice"].ops, 3u);
    EXPECT_EQ(by_user["alice"].bytes_out, 24u);
    EXPECT_EQ(by_user["bob"].bytes_out, 40u);
    EXPECT_EQ(by_thread["serves-bob"].ops, 5u);
    const std::string json = loupe::report::io_stats_json(loupe::report::io_stats(t, loupe::report::io_group::user));
    EXPECT_NE(json.find("\"group_by\":\"user\""), std::string::npos);
    EXPECT_NE(json.find("{\"label\":\"bob\",\"ops\":5,\"errors\":0,\"bytes_in\":0,\"bytes_out\":40"), std::string::npos)
        << json;
}

// Threads open, use and close their own files while others do the same, so
// descriptors are reused across threads all the time. Every recorded
// operation must name the file of the thread that did it, and the registry
// must never hold a name that is not what the descriptor refers to while
// its owner uses it.
TEST(IoProfiling, ConcurrentOpenCloseReuseNeverMisattributes) {
    constexpr int threads = 4, rounds = 300;
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(io_config(mem));
    std::atomic<int> wrong_names{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < threads; ++w) {
        workers.emplace_back([&, w] {
            const std::string path = temp_file("stress" + std::to_string(w));
            loupe::set_thread_name("stress" + std::to_string(w));
            for (int i = 0; i < rounds; ++i) {
                const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR, 0644);
                if (fd < 0) continue;
                loupe::io::handle_info info;
                if (!loupe::io::registry().lookup(fd, info) || info.name != path) ++wrong_names;
                loupe::io::write(fd, "x", 1);
                loupe::io::close(fd);
            }
            ::unlink(path.c_str());
        });
    }
    for (auto& t : workers) t.join();
    session.stop();
    EXPECT_EQ(wrong_names.load(), 0);
    const auto events = mem->events();
    std::map<std::uint64_t, std::string> names;
    for (const auto& e : of_kind(events, record_kind::io_resource)) names[e.resource.id] = e.resource_name;
    std::size_t writes = 0;
    for (const auto& e : ops_of(events, loupe::io::op::write)) {
        ++writes;
        const std::string expected = temp_file("stress" + e.thread_name.substr(6));
        EXPECT_EQ(names[e.io.resource_id], expected) << "fd " << e.io.fd;
    }
    EXPECT_EQ(writes + loupe_test::dropped_total(events), static_cast<std::size_t>(threads * rounds));
}

}  // namespace

namespace {

// A TCP listener on 127.0.0.1 (an ephemeral port), made without the
// wrappers; `name` is its address as loupe names it.
struct loopback_listener {
    int fd = -1;
    sockaddr_in address{};
    std::string name;
    loopback_listener() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 8) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            ADD_FAILURE() << "cannot listen on 127.0.0.1";
        }
        name = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    }
    ~loopback_listener() { ::close(fd); }
    // A client connected without the wrappers (as code that does not use loupe::io).
    int raw_client() const {
        const int c = ::socket(AF_INET, SOCK_STREAM, 0);
        if (::connect(c, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) ADD_FAILURE() << "connect";
        return c;
    }
};

// "127.0.0.1:port" of a socket's own end.
std::string local_name(int fd) {
    sockaddr_in a{};
    socklen_t length = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
    return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

// The name of the resource each recorded recv was done on, by descriptor.
std::map<std::int64_t, std::string> recv_names(const loupe::trace& t) {
    std::map<std::int64_t, std::string> names;
    for (const auto& op : t.io_ops) {
        if (op.op != loupe::io::op::recv) continue;
        const loupe::trace_io_resource* r = t.find_io_resource(op.resource_id);
        names[op.fd] = r ? r->name : "(no resource)";
    }
    return names;
}

}  // namespace

// A server's accepted connections are named after the client at the other
// end, like the client's socket is named after the server: through accept
// (also without an address buffer, as servers often call it), accept4, and
// for a descriptor accepted without the wrappers, when it is first used.
TEST(IoProfiling, AcceptedSocketsAreNamedByTheirPeerNotTheKernelsInode) {
    loopback_listener listener;
    const std::string trace_path = temp_trace_path("io_accepted");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    const int c1 = listener.raw_client(), c2 = listener.raw_client(), c3 = listener.raw_client();
    const int s1 = loupe::io::accept(listener.fd, nullptr, nullptr);
    const int s2 = loupe::io::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
    const int s3 = ::accept(listener.fd, nullptr, nullptr);  // not through loupe: named at its first recv
    ASSERT_GE(s1, 0);
    ASSERT_GE(s2, 0);
    ASSERT_GE(s3, 0);
    EXPECT_NE(::fcntl(s2, F_GETFD) & FD_CLOEXEC, 0) << "accept4 must pass its flags";
    char buf[8];
    for (const auto& [client, served] : {std::pair{c1, s1}, std::pair{c2, s2}, std::pair{c3, s3}}) {
        ASSERT_EQ(::send(client, "hi", 2, 0), 2);
        EXPECT_EQ(loupe::io::recv(served, buf, sizeof buf, 0), 2);
    }
    const std::map<int, std::string> clients = {{s1, local_name(c1)}, {s2, local_name(c2)}, {s3, local_name(c3)}};
    for (int fd : {s1, s2, s3}) loupe::io::close(fd);
    for (int fd : {c1, c2, c3}) ::close(fd);
    session.stop();

    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    const auto names = recv_names(t);
    ASSERT_EQ(names.size(), 3u);
    for (const auto& [served, client] : clients) {
        EXPECT_EQ(names.at(served), client) << "the socket accepted on fd " << served << " is named after its client";
        EXPECT_EQ(names.at(served).find("socket:["), std::string::npos);
    }
    const auto by_socket = loupe::report::io_stats(t, loupe::report::io_group::socket);
    EXPECT_EQ(by_socket.connections_established, 2u) << "accept and accept4 (the raw accept was not seen)";
}

// Code that connects without the wrappers (the demo's load generator) and
// sends and receives through them: its socket is named after the server.
TEST(IoProfiling, ASocketConnectedWithoutTheWrappersIsNamedAfterItsPeer) {
    loopback_listener listener;
    const int client = listener.raw_client();
    const int served = ::accept(listener.fd, nullptr, nullptr);
    ASSERT_GE(served, 0);
    const std::string trace_path = temp_trace_path("io_raw_client");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    ASSERT_EQ(::send(served, "hello", 5, 0), 5);
    char buf[8];
    EXPECT_EQ(loupe::io::recv(client, buf, sizeof buf, 0), 5);
    session.stop();
    loupe::io::close(client);
    ::close(served);

    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    const auto names = recv_names(t);
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names.at(client), listener.name);
}

// A unix-socket server's accepted connections have no client address: they
// are named after the path they were accepted on, the name the client's
// end of the same connection gets at connect.
TEST(IoProfiling, AcceptedUnixSocketsAreNamedAfterTheirPath) {
    const std::string path = temp_file("unix_sock");
    ::unlink(path.c_str());
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    ASSERT_LT(path.size(), sizeof address.sun_path);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listener, 2), 0);
    const std::string trace_path = temp_trace_path("io_unix");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    const int client = loupe::io::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_EQ(loupe::io::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    const int served = loupe::io::accept(listener, nullptr, nullptr);
    ASSERT_GE(served, 0);
    EXPECT_EQ(loupe::io::send(client, "ab", 2, 0), 2);
    char buf[4];
    EXPECT_EQ(loupe::io::recv(served, buf, sizeof buf, 0), 2);
    loupe::io::close(client);
    loupe::io::close(served);
    session.stop();
    ::close(listener);
    ::unlink(path.c_str());

    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    const auto names = recv_names(t);
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names.at(served), "unix:" + path) << "not unix:(unnamed)";
    std::map<std::string, loupe::report::io_row> rows;
    for (const auto& row : loupe::report::io_stats(t, loupe::report::io_group::socket).rows) rows[row.label] = row;
    // Both ends of the connection are one row: connect, accept, send, recv and the two closes.
    EXPECT_EQ(rows["unix:" + path].ops, 6u);
    EXPECT_EQ(rows.count("unix:(unnamed)"), 0u);
}

// Every grouping's rows add up to the "all" row: a trace with a file, a TCP
// connection, a socketpair, a pipe, stdout and stderr, a failed open and a
// bad descriptor. Grouped by file (socket), what no file (socket) row holds
// is one row named after what it was done on.
TEST(IoProfiling, EveryGroupingsRowsAddUpToTheTotal) {
    loopback_listener listener;
    const std::string data = temp_file("sum_data");
    const std::string missing = std::string(LOUPE_TEST_BINARY_DIR) + "/no/such/dir/file";
    const std::string trace_path = temp_trace_path("io_sum");
    auto session = loupe::start_session(io_config(std::make_shared<loupe::sinks::file_sink>(trace_path)));
    std::string client_name;
    {
        LOUPE_ZONE("files");
        loupe::context_scope who({{loupe::context_field::user, "alice"}});
        const int fd = loupe::io::open(data.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        EXPECT_EQ(loupe::io::write(fd, "0123456789", 10), 10);
        char buf[16];
        EXPECT_EQ(loupe::io::pread(fd, buf, sizeof buf, 0), 10);
        EXPECT_EQ(loupe::io::close(fd), 0);
        EXPECT_EQ(loupe::io::open(missing.c_str(), O_RDONLY), -1);  // a failed open
        EXPECT_EQ(loupe::io::read(-1, buf, 1), -1);                  // a bad descriptor
        EXPECT_EQ(loupe::io::unlink(data.c_str()), 0);
    }
    {
        LOUPE_ZONE("network");
        const int client = loupe::io::socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_EQ(loupe::io::connect(client, reinterpret_cast<const sockaddr*>(&listener.address),
                                     sizeof listener.address),
                  0);
        const int served = loupe::io::accept(listener.fd, nullptr, nullptr);
        ASSERT_GE(served, 0);
        client_name = local_name(client);
        char buf[16];
        EXPECT_EQ(loupe::io::send(client, "request", 7, 0), 7);
        EXPECT_EQ(loupe::io::recv(served, buf, sizeof buf, 0), 7);
        EXPECT_EQ(loupe::io::send(served, "reply", 5, 0), 5);
        EXPECT_EQ(loupe::io::recv(client, buf, sizeof buf, 0), 5);
        int pair[2];
        ASSERT_EQ(loupe::io::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
        EXPECT_EQ(loupe::io::send(pair[0], "pair", 4, 0), 4);
        EXPECT_EQ(loupe::io::recv(pair[1], buf, sizeof buf, 0), 4);
        for (int fd : {client, served, pair[0], pair[1]}) EXPECT_EQ(loupe::io::close(fd), 0);
    }
    {
        loupe::context_scope who({{loupe::context_field::user, "bob"}});
        int p[2];
        ASSERT_EQ(loupe::io::pipe(p), 0);
        EXPECT_EQ(loupe::io::write(p[1], "pipe", 4), 4);
        char buf[8];
        EXPECT_EQ(loupe::io::read(p[0], buf, sizeof buf), 4);
        for (int fd : p) EXPECT_EQ(loupe::io::close(fd), 0);
        EXPECT_EQ(loupe::io::write(STDERR_FILENO, "", 0), 0);  // inherited stdio, nothing printed
        EXPECT_EQ(loupe::io::fwrite("", 1, 0, stdout), 0u);
    }
    session.stop();
    const loupe::trace t = loupe::read_trace_file(trace_path);
    std::remove(trace_path.c_str());
    ASSERT_EQ(t.io_ops.size(), 28u);

    std::map<std::string, loupe::report::io_report> reports;
    for (unsigned g = 0; g <= static_cast<unsigned>(loupe::report::io_group::zone); ++g) {
        const auto grouping = static_cast<loupe::report::io_group>(g);
        const loupe::report::io_report r = loupe::report::io_stats(t, grouping);
        const char* name = loupe::report::io_group_name(grouping);
        loupe::report::io_row sum;
        for (const auto& row : r.rows) {
            sum.ops += row.ops;
            sum.errors += row.errors;
            sum.bytes_in += row.bytes_in;
            sum.bytes_out += row.bytes_out;
            sum.total_ns += row.total_ns;
            sum.max_ns = std::max(sum.max_ns, row.max_ns);
        }
        EXPECT_EQ(r.total.ops, 28u) << name;
        EXPECT_EQ(sum.ops, r.total.ops) << name;
        EXPECT_EQ(sum.errors, r.total.errors) << name;
        EXPECT_EQ(sum.bytes_in, r.total.bytes_in) << name;
        EXPECT_EQ(sum.bytes_out, r.total.bytes_out) << name;
        EXPECT_EQ(sum.total_ns, r.total.total_ns) << name;
        EXPECT_EQ(sum.max_ns, r.total.max_ns) << name;
        reports[name] = r;
    }
    using strings = std::vector<std::string>;
    auto sorted = [](strings v) {
        std::sort(v.begin(), v.end());
        return v;
    };
    auto labels = [&](const loupe::report::io_report& r) {
        strings out;
        for (const auto& row : r.rows) out.push_back(row.label);
        return sorted(out);
    };
    const auto& by_file = reports["file"];
    EXPECT_EQ(labels(by_file), sorted({data, "other: sockets, stdio, pipes, failed opens, bad descriptors"}));
    EXPECT_EQ(by_file.rows.back().label.rfind("other: ", 0), 0u) << "the other row comes last, before all";
    EXPECT_EQ(by_file.rows.front().ops, 5u) << "open, write, pread, close, unlink of " << data;
    const auto& by_socket = reports["socket"];
    // socket() itself was done on a socket not yet connected, hence not yet named.
    EXPECT_EQ(labels(by_socket), sorted({"(unconnected socket)", listener.name, client_name,
                                         "other: files, stdio, pipes, failed opens, bad descriptors", "socketpair"}));
    std::map<std::string, loupe::report::io_row> sockets;
    for (const auto& row : by_socket.rows) sockets[row.label] = row;
    EXPECT_EQ(sockets[listener.name].bytes_out, 7u) << "the client's end, named after the server";
    EXPECT_EQ(sockets[client_name].bytes_in, 7u) << "the accepted end, named after the client";
    EXPECT_EQ(sockets["socketpair"].ops, 5u);  // socketpair, send, recv, 2 closes
    EXPECT_EQ(labels(reports["user"]), sorted({"(unset)", "alice", "bob"}));
    EXPECT_EQ(labels(reports["zone"]), sorted({"(no zone)", "files", "network"}));

    const std::string text = loupe::report::format_io_stats(by_file);
    EXPECT_NE(text.find("other: sockets, stdio, pipes, failed opens, bad descriptors"), std::string::npos) << text;
    const std::string json = loupe::report::io_stats_json(by_socket);
    EXPECT_NE(json.find("{\"label\":\"other: files, stdio, pipes, failed opens, bad descriptors\",\"ops\":"),
              std::string::npos)
        << json;
}
