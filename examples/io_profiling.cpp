// io_profiling: I/O profiling with a late start. Files are opened at
// startup, while nothing records; workers read and write them; a session
// that records only I/O starts later, runs for a while and stops; the report
// still names every file, with the time it was opened, because loupe's handle
// registry is always on.
//
// usage: io_profiling [TRACE]   (default io_profiling.loupe; then try
//        loupe report io_profiling.loupe --io --by thread)
#include <fcntl.h>
#include <unistd.h>

#include <loupe/io.hpp>
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>
#include <loupe/report/io_stats.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    const std::string trace_path = argc > 1 ? argv[1] : "io_profiling.loupe";
    const std::string dir = trace_path.rfind('/') == std::string::npos ? "." : trace_path.substr(0, trace_path.rfind('/'));
    const std::string table_a = dir + "/table_a.db", table_b = dir + "/table_b.db", log = dir + "/app.log";

    // Startup: open everything (registered: name, open time, opening thread).
    const int a = loupe::io::open(table_a.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    const int b = loupe::io::open(table_b.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    std::FILE* journal = loupe::io::fopen(log.c_str(), "w");
    if (a < 0 || b < 0 || journal == nullptr) {
        std::perror("io_profiling: cannot create its files");
        return 1;
    }
    const std::string page(4096, 'x');
    for (int i = 0; i < 64; ++i) loupe::io::write(b, page.data(), page.size());

    // Workers: inserts into table A, lookups in table B (only read), a log line each.
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int w = 0; w < 3; ++w) {
        workers.emplace_back([&, w] {
            loupe::set_thread_name("worker-" + std::to_string(w + 1));
            char buf[4096];
            for (unsigned i = 0; !stop.load(); ++i) {
                LOUPE_ZONE("transaction");
                loupe::io::pread(b, buf, sizeof buf, static_cast<off_t>((i * 7 + w) % 64) * 4096);
                if (i % 4 == 0) loupe::io::write(a, buf, 512);
                if (i % 16 == 0) loupe::io::fwrite("committed\n", 1, 10, journal);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        });
    }

    // Later: an operator starts an I/O session, lets it run, stops it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    loupe::session_config config;
    config.name = "io-late-start";
    config.kinds = loupe::kinds::io | loupe::kinds::zones;
    config.sinks = {std::make_shared<loupe::sinks::file_sink>(trace_path)};
    loupe::session session = loupe::start_session(config);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const loupe::session_stats stats = session.stop();
    stop = true;
    for (auto& t : workers) t.join();
    loupe::io::fclose(journal);
    for (int fd : {a, b}) loupe::io::close(fd);
    for (const std::string* path : {&table_a, &table_b, &log}) loupe::io::unlink(path->c_str());

    const loupe::trace trace = loupe::read_trace_file(trace_path);
    std::printf("session '%s': %llu records delivered, %llu dropped -> %s\n\n", config.name.c_str(),
                static_cast<unsigned long long>(stats.delivered), static_cast<unsigned long long>(stats.dropped),
                trace_path.c_str());
    std::printf("files the session saw, all opened before it started:\n");
    for (const auto& r : trace.io_resources) {
        const double before_ms = static_cast<double>(trace.session.start_ns - r.open_ns) / 1e6;
        std::printf("  %-40s opened %.1f ms before the session\n", r.name.c_str(), before_ms);
    }
    std::printf("\n");
    std::fputs(loupe::report::format_io_stats(loupe::report::io_stats(trace, loupe::report::io_group::file)).c_str(),
               stdout);
    return 0;
}
