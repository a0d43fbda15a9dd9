// The registry's capacity is set before its first use (its own process, so
// nothing used the registry before main). Descriptors at or beyond the
// capacity live in the overflow map and are attributed like any other.
#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace {

constexpr std::size_t capacity = 512;
bool capacity_accepted = false;

TEST(IoRegistryCapacity, IsSetBeforeFirstUseAndFixedAfter) {
    EXPECT_TRUE(capacity_accepted);
    EXPECT_EQ(loupe::io::registry().capacity(), capacity);
    EXPECT_FALSE(loupe::io::set_registry_capacity(4096)) << "the registry exists: changing it must be refused";
    EXPECT_EQ(loupe::io::registry().capacity(), capacity);
}

TEST(IoRegistryCapacity, DescriptorsBeyondTheDirectArrayUseTheOverflowMap) {
    const int high = static_cast<int>(capacity) + 100;
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_cur <= static_cast<rlim_t>(high)) {
        if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max <= static_cast<rlim_t>(high)) {
            GTEST_SKIP() << "RLIMIT_NOFILE is " << limit.rlim_max;
        }
        limit.rlim_cur = static_cast<rlim_t>(high) + 1;
        ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
    }
    const std::string path = std::string(LOUPE_TEST_BINARY_DIR) + "/io_overflow_" + std::to_string(::getpid());
    const int fd = loupe::io::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    const auto overflow_before = loupe::io::registry().anomalies().overflow_opens;
    ASSERT_EQ(loupe::io::dup2(fd, high), high);
    EXPECT_EQ(loupe::io::registry().anomalies().overflow_opens, overflow_before + 1);

    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.kinds = loupe::kinds::io;
    cfg.sinks = {mem};
    auto session = loupe::start_session(cfg);
    EXPECT_EQ(loupe::io::write(high, "z", 1), 1);
    session.stop();

    EXPECT_EQ(loupe::io::close(high), 0);
    loupe::io::handle_info info;
    EXPECT_FALSE(loupe::io::registry().lookup(high, info)) << "close must clear the overflow entry";
    loupe::io::close(fd);
    ::unlink(path.c_str());

    std::uint64_t resource = 0;
    std::string name;
    for (const auto& e : mem->events()) {
        if (e.kind == loupe::record_kind::io && e.io.op == loupe::io::op::write) resource = e.io.resource_id;
    }
    for (const auto& e : mem->events()) {
        if (e.kind == loupe::record_kind::io_resource && e.resource.id == resource) name = e.resource_name;
    }
    ASSERT_NE(resource, 0u);
    EXPECT_EQ(name, path);
}

}  // namespace

int main(int argc, char** argv) {
    capacity_accepted = loupe::io::set_registry_capacity(capacity);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
