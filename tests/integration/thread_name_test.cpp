// Thread names: LOUPE_THREAD_NAME names the thread in loupe's records only;
// the OS name changes only when asked, and never the main thread's (its OS
// name is the process's: ps, pgrep -x, and threads created later inherit it).
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <thread>

namespace {

std::string read_comm(const std::string& path) {
    std::ifstream in(path);
    std::string name;
    std::getline(in, name);
    return name;
}

std::string process_comm() { return read_comm("/proc/self/comm"); }
std::string own_thread_comm() { return read_comm("/proc/thread-self/comm"); }

// The thread name the session's records give zone "thread_name.zone".
std::string recorded_thread_name(const loupe::sinks::memory_sink& mem) {
    for (const auto& e : mem.events()) {
        if (e.kind == loupe::record_kind::zone && e.name == "thread_name.zone") return e.thread_name;
    }
    return "(no zone)";
}

template <class Body>
std::string record_one_zone(Body body) {
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "names";
    cfg.kinds = loupe::kinds::zones;
    cfg.sinks = {mem};
    auto session = loupe::start_session(cfg);
    body();
    session.stop();
    return recorded_thread_name(*mem);
}

void one_zone() { LOUPE_ZONE("thread_name.zone"); }

TEST(ThreadName, NamingTheMainThreadLeavesTheProcessNameAlone) {
    const std::string before = process_comm();
    ASSERT_FALSE(before.empty());
    const std::string recorded = record_one_zone([] {
        LOUPE_THREAD_NAME("main");
        one_zone();
    });
    EXPECT_EQ(recorded, "main");
    EXPECT_EQ(process_comm(), before);
    // Asked to rename the OS thread too: still not the main thread's.
    loupe::set_thread_name("main-again", loupe::thread_name_scope::also_os);
    EXPECT_EQ(process_comm(), before);
    loupe::set_thread_name("");  // back to the OS name for later tests
}

TEST(ThreadName, AnotherThreadKeepsItsOsNameUnlessAsked) {
    const std::string process = process_comm();
    std::string recorded, os_after_default, os_after_asked;
    std::thread([&] {
        recorded = record_one_zone([] {
            LOUPE_THREAD_NAME("worker-of-the-day");
            one_zone();
        });
        os_after_default = own_thread_comm();
        loupe::set_thread_name("worker-of-the-day", loupe::thread_name_scope::also_os);
        os_after_asked = own_thread_comm();
    }).join();
    EXPECT_EQ(recorded, "worker-of-the-day");
    EXPECT_EQ(os_after_default, process);           // inherited from the process, untouched
    EXPECT_EQ(os_after_asked, "worker-of-the-d");  // Linux keeps 15 bytes
    EXPECT_EQ(process_comm(), process);
}

}  // namespace
