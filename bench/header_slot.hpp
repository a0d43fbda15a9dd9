// A header setter for tasks::outgoing_call that keeps the traceparent's 55
// bytes in place, as a client library's request builder would: no
// allocation, so a benchmark measures the call, not the header map.
#pragma once

#include <cstring>
#include <string_view>

namespace loupe_bench {

struct header_slot {
    char value[64];
    void operator()(std::string_view, std::string_view v) noexcept {
        std::memcpy(value, v.data(), v.size() < sizeof value ? v.size() : sizeof value);
    }
};

}  // namespace loupe_bench
