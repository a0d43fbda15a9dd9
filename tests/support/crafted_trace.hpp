// Test helper: builds a one-thread trace with exactly the timestamps a test
// chooses (ties, zero-length zones), by feeding records through the .loupe
// encoder and reading the bytes back.
#pragma once

#include <loupe/format/encoder.hpp>
#include <loupe/format/reader.hpp>

#include <vector>

namespace loupe_test {

struct crafted_event {
    loupe::record_kind kind;
    const loupe::site* where;
    std::uint64_t begin_ns;
    std::uint64_t end_ns;
    double value = 0;
    std::uint64_t count = 0;  ///< for record_kind::dropped
    std::vector<loupe::metric_value> deltas = {};  ///< a zone's metric deltas (ZONE_METRICS)
    const loupe::zone_argument* arg = nullptr;      ///< for record_kind::zone_arg (begin_ns: its zone's)
};

/// The .loupe bytes of `events`, in the order the thread records them (a
/// zone when it ends), in a session that records `metrics`.
inline std::vector<unsigned char> crafted_trace_bytes(const std::vector<crafted_event>& events,
                                                      const std::vector<loupe::metric_info>& metrics = {}) {
    loupe::detail::trace_encoder encoder;
    loupe::session_info session{"crafted", 1000, 1'700'000'000'000'000'000ull, 42, loupe::clock_source::tsc,
                                metrics.data(), metrics.size(), {}, {}, {}, {}, 0};
    loupe::thread_info thread{1, 777, "crafted-thread", 1};
    loupe::record r;
    r.session = &session;
    r.kind = loupe::record_kind::session_begin;
    encoder.encode(r);
    for (const crafted_event& e : events) {
        loupe::record ev;
        ev.session = &session;
        ev.thread = &thread;
        ev.kind = e.kind;
        ev.where = e.where;
        ev.begin_ns = e.begin_ns;
        ev.end_ns = e.end_ns;
        ev.value = e.value;
        ev.count = e.count;
        ev.metrics = e.deltas.data();
        ev.metric_count = e.deltas.size();
        ev.arg = e.arg;
        encoder.encode(ev);
    }
    loupe::record end;
    end.session = &session;
    end.kind = loupe::record_kind::session_end;
    end.end_ns = 1'000'000;
    for (const crafted_event& e : events) {
        if (e.kind != loupe::record_kind::dropped && e.kind != loupe::record_kind::zone_arg) ++end.count;
    }
    encoder.encode(end);
    encoder.close_batch();
    return encoder.bytes();
}

/// `events` as a trace model (see crafted_trace_bytes).
inline loupe::trace crafted_trace(const std::vector<crafted_event>& events) {
    const std::vector<unsigned char> bytes = crafted_trace_bytes(events);
    return loupe::read_trace(bytes.data(), bytes.size());
}

}  // namespace loupe_test
