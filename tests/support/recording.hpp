// Test helpers: run a session into a memory sink and look at what arrived.
#pragma once

#include <loupe/loupe.hpp>
#include <loupe/session.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace loupe_test {

using loupe::record_kind;
using loupe::sinks::memory_event;

inline loupe::session_config memory_config(std::shared_ptr<loupe::sinks::memory_sink> sink,
                                           std::string name = "test") {
    loupe::session_config cfg;
    cfg.name = std::move(name);
    cfg.sinks = {std::move(sink)};
    return cfg;
}

inline std::vector<memory_event> of_kind(const std::vector<memory_event>& events, record_kind kind) {
    std::vector<memory_event> out;
    for (const auto& e : events) {
        if (e.kind == kind) out.push_back(e);
    }
    return out;
}

inline std::vector<memory_event> named(const std::vector<memory_event>& events, const std::string& name) {
    std::vector<memory_event> out;
    for (const auto& e : events) {
        if (e.name == name) out.push_back(e);
    }
    return out;
}

inline std::uint64_t dropped_total(const std::vector<memory_event>& events) {
    std::uint64_t n = 0;
    for (const auto& e : events) {
        if (e.kind == record_kind::dropped) n += e.count;
    }
    return n;
}

}  // namespace loupe_test
