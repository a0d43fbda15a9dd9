// The file sink's writer thread: a file that stops taking bytes stalls the
// writer, not the collector; every byte handed over reaches the file, in
// order, however small the buffers and the queue; write errors found by the
// writer are reported once.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/captured_errors.hpp"
#include "support/recording.hpp"
#include "support/trace_files.hpp"

using namespace loupe_test;

namespace {

std::size_t zones_named_in(const loupe::trace& t, const std::string& name) {
    std::size_t n = 0;
    for (const auto& e : t.events) {
        const auto* site = t.find_site(e.site_id);
        if (site != nullptr && site->name == name) ++n;
    }
    return n;
}

// Zones named "writer-seq" carrying no argument: `n` of them, on this thread.
void record_writer_zones(int n) {
    for (int i = 0; i < n; ++i) {
        LOUPE_ZONE("writer-seq");
    }
}

}  // namespace

// The file is a FIFO that nobody reads yet: the pipe fills and the writer
// thread waits in write(2). The collector must still deliver every zone to
// the session's other sink. (Before the writer thread, the collector itself
// waited in write(2) and the other sink stayed short until the pipe was
// read.) Then the pipe is read to its end: the bytes are one whole trace.
TEST(FileWriter, AFileThatStopsTakingBytesDoesNotStopTheCollector) {
    const std::string path = temp_trace_path("writer_fifo");
    ::unlink(path.c_str());
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
    const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // so the sink's open does not wait
    ASSERT_GE(reader, 0) << std::strerror(errno);

    constexpr int zones = 50000;  // about 200 KB encoded: more than a pipe holds (64 KiB)
    std::atomic<int> delivered{0};
    auto counting = std::make_shared<loupe::sinks::callback_sink>([&](const loupe::record& r) {
        if (r.kind == record_kind::zone) delivered.fetch_add(1, std::memory_order_relaxed);
    });
    loupe::session_config cfg;
    cfg.name = "stalled-file";
    cfg.overflow = loupe::overflow_policy::block;
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path, 4096), counting};
    auto session = loupe::start_session(cfg);
    std::thread producer(record_writer_zones, zones);  // blocks, as a `block` session does, if the collector waits

    // Waits until the other sink has them all: the collector went past the
    // stalled file. (A minute is the test's own patience, not a timing.)
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (delivered.load() < zones && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(delivered.load(), zones) << "the collector waited for the file";

    // Now read the pipe to its end (the sink closes it when the session stops).
    std::vector<unsigned char> bytes;
    std::thread drain([&] {
        const int flags = ::fcntl(reader, F_GETFL);
        ::fcntl(reader, F_SETFL, flags & ~O_NONBLOCK);
        unsigned char chunk[65536];
        for (;;) {
            const ssize_t n = ::read(reader, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            bytes.insert(bytes.end(), chunk, chunk + n);
        }
    });
    producer.join();
    const loupe::session_stats stats = session.stop();
    drain.join();
    ::close(reader);
    ::unlink(path.c_str());

    EXPECT_EQ(stats.sink_failures, 0u);
    EXPECT_EQ(stats.dropped, 0u);
    const loupe::trace t = loupe::read_trace(bytes.data(), bytes.size());  // throws if cut or damaged
    EXPECT_TRUE(t.complete);
    EXPECT_EQ(t.session.name, "stalled-file");
    EXPECT_EQ(zones_named_in(t, "writer-seq"), static_cast<std::size_t>(zones));
}

// Buffers of 1 KiB and a queue of 2 KiB: the collector hands over often and
// waits for room often. Every counter value reaches the file, in order.
TEST(FileWriter, SmallBuffersAndAFullQueueLoseNothing) {
    const std::string path = temp_trace_path("writer_small");
    constexpr int zones = 50000;
    loupe::session_config cfg;
    cfg.name = "small-buffers";
    cfg.overflow = loupe::overflow_policy::block;
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path, 1024, 2048)};
    auto session = loupe::start_session(cfg);
    std::thread producer([] {
        for (int i = 0; i < zones; ++i) {
            LOUPE_COUNTER("writer-ordered", i);
        }
    });
    producer.join();
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.delivered, static_cast<std::uint64_t>(zones));
    EXPECT_EQ(stats.dropped, 0u);

    const loupe::trace t = loupe::read_trace_file(path);
    ::unlink(path.c_str());
    EXPECT_TRUE(t.complete);
    std::int64_t expected = 0;
    for (const auto& e : t.events) {
        const auto* site = t.find_site(e.site_id);
        if (site == nullptr || site->name != "writer-ordered") continue;
        ASSERT_EQ(e.value, static_cast<double>(expected)) << "value " << expected << " out of order or missing";
        ++expected;
    }
    EXPECT_EQ(expected, zones);
}

// A full disk found by the writer thread in the middle of the session (small
// buffers, so the first failing write is long before the session stops):
// reported once, naming the file and the OS reason; the session stops.
TEST(FileWriter, AFullDiskFoundByTheWriterIsReportedOnce) {
    if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
    captured_errors errors;
    auto mem = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "full-mid-session";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>("/dev/full", 1024), mem};
    auto session = loupe::start_session(cfg);
    record_writer_zones(20000);
    const loupe::session_stats stats = session.stop();
    EXPECT_EQ(stats.sink_failures, 1u);
    EXPECT_GT(stats.records_undelivered, 0u);
    EXPECT_EQ(named(mem->events(), "writer-seq").size(), 20000u) << "the other sink keeps everything";
    const auto messages = errors.messages();
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("/dev/full"), std::string::npos) << messages[0];
    EXPECT_NE(messages[0].find("No space left on device"), std::string::npos) << messages[0];
}

// A sink driven by hand, without a session, on one thread: close() returns
// once every byte is in the file, and bytes_written() says how many.
TEST(FileWriter, CloseWaitsForEveryByteAndCountsThem) {
    const std::string path = temp_trace_path("writer_by_hand");
    {
        loupe::sinks::file_sink sink(path, 512, 1024);
        loupe::session_info info;
        info.name = "by-hand";
        loupe::thread_info thread;
        thread.id = 1;
        loupe::record r;
        r.kind = loupe::record_kind::session_begin;
        r.session = &info;
        r.thread = &thread;
        sink.write(r);
        loupe::site where{"by-hand-zone", __FILE__, "test", __LINE__, loupe::site_kind::zone};
        for (int i = 0; i < 5000; ++i) {
            loupe::record z;
            z.kind = loupe::record_kind::zone;
            z.where = &where;
            z.thread = &thread;
            z.session = &info;
            z.begin_ns = 1000 + 10 * static_cast<std::uint64_t>(i);
            z.end_ns = z.begin_ns + 5;
            sink.write(z);
        }
        loupe::record end;
        end.kind = loupe::record_kind::session_end;
        end.session = &info;
        end.thread = &thread;
        end.count = 5000;
        sink.write(end);
        sink.close();
        struct stat st {};
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_EQ(sink.bytes_written(), static_cast<std::uint64_t>(st.st_size));
        EXPECT_GT(st.st_size, 5000);
    }
    const loupe::trace t = loupe::read_trace_file(path);
    ::unlink(path.c_str());
    EXPECT_TRUE(t.complete);
    EXPECT_EQ(zones_named_in(t, "by-hand-zone"), 5000u);
}
