// A consumer program: records one zone into a memory sink and exits 0 only if
// it arrived. Shared by the find_package and add_subdirectory projects.
#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <cstdio>
#include <memory>

#ifndef LOUPE_ENABLED
#error "loupe::loupe must define LOUPE_ENABLED for its consumers"
#endif
#if LOUPE_ENABLED != 1
#error "LOUPE_ENABLED should be 1 for a target without LOUPE_COMPILE_OUT"
#endif

int main() {
    auto sink = std::make_shared<loupe::sinks::memory_sink>();
    loupe::session_config cfg;
    cfg.name = "consumer";
    cfg.sinks = {sink};
    auto session = loupe::start_session(cfg);
    {
        LOUPE_ZONE("consumer-zone");
    }
    const auto stats = session.stop();
    std::printf("consumer: loupe %s, %llu event(s) delivered\n", LOUPE_VERSION_STRING,
                static_cast<unsigned long long>(stats.delivered));
    return stats.delivered == 1 ? 0 : 1;
}
