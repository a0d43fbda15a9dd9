// The always-on handle registry: metadata per descriptor, generations that
// protect a reopened descriptor from a stale close, the overflow map, dup,
// and backfill from /proc/self/fd.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include <loupe/io/handle_registry.hpp>

using loupe::io::handle_info;
using loupe::io::handle_registry;
using loupe::io::resource_kind;

TEST(HandleRegistry, RemembersWhatEachDescriptorIsUntilItCloses) {
    handle_registry registry(1024);
    const auto generation = registry.note_open(7, "/var/log/orders.log", resource_kind::file, 111, 42);
    handle_info info;
    ASSERT_TRUE(registry.lookup(7, info));
    EXPECT_EQ(info.name, "/var/log/orders.log");
    EXPECT_EQ(info.kind, resource_kind::file);
    EXPECT_EQ(info.open_ticks, 111u);
    EXPECT_EQ(info.opener_thread, 42u);
    EXPECT_EQ(info.generation, generation);
    EXPECT_FALSE(info.backfilled);

    const auto ticket = registry.begin_close(7);
    EXPECT_TRUE(registry.end_close(ticket, true));
    EXPECT_FALSE(registry.lookup(7, info));
    EXPECT_FALSE(registry.end_close(ticket, true));  // closed twice: nothing happens
}

TEST(HandleRegistry, AStaleCloseNeverWipesTheFileThatReusedTheDescriptor) {
    handle_registry registry(1024);
    registry.note_open(5, "/tmp/first", resource_kind::file, 1, 1);
    const auto ticket = registry.begin_close(5);  // thread X starts closing 5
    // ... the kernel frees 5, thread Y's open gets 5 and registers it ...
    registry.note_open(5, "/tmp/second", resource_kind::file, 2, 2);
    EXPECT_FALSE(registry.end_close(ticket, true));  // X's bookkeeping arrives late
    handle_info info;
    ASSERT_TRUE(registry.lookup(5, info));
    EXPECT_EQ(info.name, "/tmp/second");
}

TEST(HandleRegistry, AFailedCloseKeepsTheMetadata) {
    handle_registry registry(1024);
    registry.note_open(9, "/tmp/x", resource_kind::file, 1, 1);
    EXPECT_FALSE(registry.end_close(registry.begin_close(9), false));
    handle_info info;
    EXPECT_TRUE(registry.lookup(9, info));
}

TEST(HandleRegistry, DescriptorsBeyondTheCapacityAndNegativeOnesUseTheOverflowMap) {
    handle_registry registry(256);
    for (std::int64_t fd : {std::int64_t{256}, std::int64_t{100000}, std::int64_t{-3}}) {
        registry.note_open(fd, "/big/" + std::to_string(fd), resource_kind::file, 5, 6);
        handle_info info;
        ASSERT_TRUE(registry.lookup(fd, info)) << fd;
        EXPECT_EQ(info.name, "/big/" + std::to_string(fd));
        const auto stale = registry.begin_close(fd);
        registry.note_open(fd, "/big/reopened", resource_kind::file, 7, 8);
        EXPECT_FALSE(registry.end_close(stale, true)) << fd;
        EXPECT_TRUE(registry.end_close(registry.begin_close(fd), true)) << fd;
        EXPECT_FALSE(registry.lookup(fd, info)) << fd;
    }
}

TEST(HandleRegistry, DupSharesTheResourceAndSurvivesTheOriginalsClose) {
    handle_registry registry(1024);
    registry.note_open(3, "10.0.0.7:5432", resource_kind::socket, 1, 1);
    registry.note_dup(3, 11, 2, 2);
    handle_info original, copy;
    ASSERT_TRUE(registry.lookup(3, original));
    ASSERT_TRUE(registry.lookup(11, copy));
    EXPECT_EQ(copy.name, "10.0.0.7:5432");
    EXPECT_EQ(copy.kind, resource_kind::socket);
    EXPECT_EQ(copy.resource_id, original.resource_id);
    EXPECT_TRUE(registry.end_close(registry.begin_close(3), true));
    EXPECT_TRUE(registry.lookup(11, copy));
}

TEST(HandleRegistry, LongNamesAreCutAndFlagged) {
    handle_registry registry(1024);
    const std::string long_name(1000, 'p');
    registry.note_open(4, long_name, resource_kind::file, 1, 1);
    handle_info info;
    ASSERT_TRUE(registry.lookup(4, info));
    EXPECT_EQ(info.name.size(), handle_registry::max_name);
    EXPECT_TRUE(info.name_truncated);
}

TEST(HandleRegistry, BackfillsDescriptorsItDidNotSeeOpened) {
    handle_registry registry(1024);
    const int fd = ::open("/dev/null", O_RDONLY);
    ASSERT_GE(fd, 0);
    handle_info info;
    EXPECT_FALSE(registry.lookup(fd, info));
    ASSERT_TRUE(registry.lookup_or_backfill(fd, info));
    EXPECT_EQ(info.name, "/dev/null");
    EXPECT_EQ(info.kind, resource_kind::file);
    EXPECT_TRUE(info.backfilled);
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    ASSERT_TRUE(registry.lookup_or_backfill(pipe_fds[0], info));
    EXPECT_EQ(info.kind, resource_kind::pipe);
    EXPECT_FALSE(registry.lookup_or_backfill(1000, info));  // not open at all
    ::close(fd);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
}

// Threads open, close and reopen descriptors that collide on purpose; a
// reader never sees a name that was not written for that generation, and
// a stale close never removes a newer open.
TEST(HandleRegistry, ConcurrentOpenCloseReuseNeverTearsOrWipesMetadata) {
    handle_registry registry(512);
    std::atomic<bool> run{true};
    std::atomic<long> torn{0}, wiped{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; run.load(std::memory_order_relaxed); ++i) {
                const std::int64_t fd = i % 8;  // few descriptors: constant reuse
                const std::string name = "/t" + std::to_string(t) + "/" + std::string(static_cast<std::size_t>(i % 40), 'x');
                const auto ticket = registry.begin_close(fd);
                registry.note_open(fd, name, resource_kind::file, static_cast<std::uint64_t>(i),
                                   static_cast<std::uint64_t>(t));
                // Our open is newer than `ticket`: the late close must not remove anything.
                if (registry.end_close(ticket, true)) ++wiped;
                handle_info info;
                if (registry.lookup(fd, info)) {
                    // Every name ends with its own run of 'x' after "/t<n>/": check shape and opener.
                    const std::string prefix = "/t" + std::to_string(info.opener_thread) + "/";
                    if (info.name.rfind(prefix, 0) != 0 ||
                        info.name.find_first_not_of('x', prefix.size()) != std::string::npos ||
                        static_cast<std::uint64_t>(info.name.size() - prefix.size()) != info.open_ticks % 40) {
                        ++torn;
                    }
                }
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    run = false;
    for (auto& t : threads) t.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(wiped.load(), 0);
}

TEST(HandleRegistry, IdentifyGivesGenerationAndResourceWithoutTheName) {
    handle_registry registry(1024);
    std::uint64_t generation = 1, resource = 1;
    EXPECT_FALSE(registry.identify(9, generation, resource));
    EXPECT_EQ(generation, 0u);
    EXPECT_EQ(resource, 0u);
    const auto g = registry.note_open(9, "/srv/a", resource_kind::file, 1, 1);
    handle_info info;
    ASSERT_TRUE(registry.lookup(9, info));
    ASSERT_TRUE(registry.identify(9, generation, resource));
    EXPECT_EQ(generation, g);
    EXPECT_EQ(resource, info.resource_id);
    registry.note_open(2000, "/srv/overflow", resource_kind::file, 1, 1);  // beyond the direct array
    ASSERT_TRUE(registry.lookup(2000, info));
    ASSERT_TRUE(registry.identify(2000, generation, resource));
    EXPECT_EQ(resource, info.resource_id);
}

// A socket that learns its peer is a new resource (a session that was told
// the unnamed socket is told the named one), unless it was reopened since.
TEST(HandleRegistry, RenamingGivesANewResourceIdAndIgnoresAReopenedDescriptor) {
    handle_registry registry(1024);
    const auto g = registry.note_open(6, "", resource_kind::socket, 1, 1);
    EXPECT_TRUE(registry.is_unnamed(6));
    handle_info before, after;
    ASSERT_TRUE(registry.lookup(6, before));
    registry.note_name(6, g, "127.0.0.1:80");
    ASSERT_TRUE(registry.lookup(6, after));
    EXPECT_EQ(after.name, "127.0.0.1:80");
    EXPECT_EQ(after.kind, resource_kind::socket);
    EXPECT_NE(after.resource_id, before.resource_id);
    EXPECT_FALSE(registry.is_unnamed(6));
    EXPECT_FALSE(registry.is_unnamed(7)) << "not registered at all";
    registry.note_name(6, g, "stale");  // the generation moved on: ignored
    ASSERT_TRUE(registry.lookup(6, after));
    EXPECT_EQ(after.name, "127.0.0.1:80");
}

namespace {
// A connected pair of sockets at `address`, made without the wrappers:
// {client, accepted}; the listener is closed.
std::pair<int, int> connected_pair(const sockaddr* address, socklen_t length) {
    const int listener = ::socket(address->sa_family, SOCK_STREAM, 0);
    EXPECT_EQ(::bind(listener, address, length), 0);
    EXPECT_EQ(::listen(listener, 1), 0);
    sockaddr_storage bound{};
    socklen_t bound_length = sizeof bound;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &bound_length);
    const int client = ::socket(address->sa_family, SOCK_STREAM, 0);
    EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&bound), bound_length), 0);
    const int accepted = ::accept(listener, nullptr, nullptr);
    ::close(listener);
    return {client, accepted};
}

std::string port_name(int fd, bool peer) {
    sockaddr_in a{};
    socklen_t length = sizeof a;
    if (peer) {
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &length);
    } else {
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
    }
    return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}
}  // namespace

// Sockets made without the wrappers are named at first sight after their
// peer, as the wrappers name the ones they see connect or accept; one with
// no peer keeps the kernel's name.
TEST(HandleRegistry, BackfillNamesAConnectedSocketAfterItsPeer) {
    handle_registry registry(1024);
    sockaddr_in loopback{};
    loopback.sin_family = AF_INET;
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const auto [client, accepted] = connected_pair(reinterpret_cast<sockaddr*>(&loopback), sizeof loopback);
    ASSERT_GE(accepted, 0);
    handle_info info;
    ASSERT_TRUE(registry.lookup_or_backfill(client, info));
    EXPECT_EQ(info.name, port_name(client, true)) << "the client's end: the server's address";
    EXPECT_EQ(info.kind, resource_kind::socket);
    EXPECT_TRUE(info.backfilled);
    ASSERT_TRUE(registry.lookup_or_backfill(accepted, info));
    EXPECT_EQ(info.name, port_name(client, false)) << "the accepted end: the client's address";

    const int unconnected = ::socket(AF_INET, SOCK_DGRAM, 0);
    ASSERT_TRUE(registry.lookup_or_backfill(unconnected, info));
    EXPECT_EQ(info.name.rfind("socket:[", 0), 0u) << info.name;
    EXPECT_EQ(info.kind, resource_kind::socket);
    for (int fd : {client, accepted, unconnected}) ::close(fd);
}

// An abstract unix address is named "unix:@name"; the accepted end, whose
// client has no address, after the address it was accepted on.
TEST(HandleRegistry, BackfillNamesAbstractUnixSocketsAndTheirAcceptedEnd) {
    handle_registry registry(1024);
    const std::string abstract = "loupe-registry-test-" + std::to_string(::getpid());
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path + 1, abstract.data(), abstract.size());
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + abstract.size());
    const auto [client, accepted] = connected_pair(reinterpret_cast<sockaddr*>(&address), length);
    ASSERT_GE(accepted, 0);
    handle_info info;
    ASSERT_TRUE(registry.lookup_or_backfill(client, info));
    EXPECT_EQ(info.name, "unix:@" + abstract);
    ASSERT_TRUE(registry.lookup_or_backfill(accepted, info));
    EXPECT_EQ(info.name, "unix:@" + abstract) << "not unix:(unnamed)";
    ::close(client);
    ::close(accepted);
}
