// Test helpers: record a small session into a .loupe file and read its bytes.
#pragma once

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>
#include <loupe/format/reader.hpp>

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/file_bytes.hpp"

namespace loupe_test {

/// A path in the test binary directory, unique per process and tag.
inline std::string temp_trace_path(const std::string& tag) {
    return std::string(LOUPE_TEST_BINARY_DIR) + "/" + tag + "_" + std::to_string(::getpid()) + ".loupe";
}

/// Records a small, varied session into `path`: two named threads serving
/// users "ann" and "b\xff" with nested zones, instants and counters.
/// Returns the session stats.
inline loupe::session_stats write_small_trace(const std::string& path,
                                              std::shared_ptr<loupe::sink> also = nullptr) {
    loupe::session_config cfg;
    cfg.name = "small";
    cfg.sinks = {std::make_shared<loupe::sinks::file_sink>(path)};
    if (also) cfg.sinks.push_back(also);
    auto session = loupe::start_session(cfg);
    auto work = [](const char* thread_name, int n) {
        LOUPE_THREAD_NAME(thread_name);
        // Each thread serves a user; beta's name is not valid UTF-8 (\xff).
        loupe::context_scope who({{loupe::context_field::user, thread_name[0] == 'a' ? "ann" : "b\xff"},
                                  {loupe::context_field::app, "shop"}});
        for (int i = 0; i < n; ++i) {
            LOUPE_ZONE("outer");
            {
                LOUPE_ZONE("inner");
                LOUPE_COUNTER("depth", i * 0.5);
            }
            LOUPE_INSTANT("tick");
        }
    };
    std::thread a(work, "alpha", 3);
    a.join();
    std::thread b(work, "beta", 2);
    b.join();
    return session.stop();
}

}  // namespace loupe_test
