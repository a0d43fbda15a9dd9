// One loupe instance per process, even when a shared library built with
// hidden visibility uses loupe too: a session started on either side records
// zones made on both sides, and both see the same global state.
#include <gtest/gtest.h>

#include <thread>

#include "plugin.hpp"
#include "support/recording.hpp"

using namespace loupe_test;

namespace {
void host_zones() {
    for (int i = 0; i < 7; ++i) {
        LOUPE_ZONE("host-zone");
    }
}
}  // namespace

TEST(SharedLibrary, HostAndPluginShareOneGlobalState) {
    EXPECT_EQ(plugin_hot_state_address(), static_cast<const void*>(&loupe::detail::g_hot));
    EXPECT_EQ(plugin_runtime_pointer_address(), static_cast<const void*>(&loupe::detail::runtime_pointer()));
}

TEST(SharedLibrary, HostSessionRecordsPluginZonesFromAnyThread) {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    auto session = loupe::start_session(memory_config(sink, "host"));
    plugin_record_zones(10);
    std::thread([] { plugin_record_zones(5); }).join();
    host_zones();
    const auto stats = session.stop();
    EXPECT_EQ(named(sink->events(), "plugin-zone").size(), 15u);
    EXPECT_EQ(named(sink->events(), "host-zone").size(), 7u);
    EXPECT_EQ(stats.delivered, 22u);
    EXPECT_EQ(stats.dropped, 0u);
}

TEST(SharedLibrary, PluginSessionRecordsHostZones) {
    EXPECT_EQ(plugin_session_count(&host_zones, "host-zone"), 7);
}
