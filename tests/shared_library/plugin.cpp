#include "plugin.hpp"

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <memory>
#include <string>

extern "C" {

const void* plugin_hot_state_address() { return &loupe::detail::g_hot; }

const void* plugin_runtime_pointer_address() { return &loupe::detail::runtime_pointer(); }

void plugin_record_zones(int n) {
    for (int i = 0; i < n; ++i) {
        LOUPE_ZONE("plugin-zone");
    }
}

long plugin_session_count(void (*host_work)(), const char* name) {
    try {
        auto sink = std::make_shared<loupe::sinks::memory_sink>();
        loupe::session_config cfg;
        cfg.name = "plugin";
        cfg.sinks = {sink};
        auto session = loupe::start_session(cfg);
        host_work();
        session.stop();
        long n = 0;
        for (const auto& e : sink->events()) n += e.name == name ? 1 : 0;
        return n;
    } catch (...) {
        return -1;
    }
}
}
