// The plug-in point of the recorder: how a capability (I/O, parameter
// tracing, ...) has the collector decode what it writes into a thread's ring.
//
// A capability writes a *unit*: a header record whose `where` points at a
// `unit_marker` it owns, followed by payload records (raw bytes). The
// collector hands the payload to the marker's codec where it lies in the
// ring (or reassembled, when the unit wraps round the ring's end); the codec
// turns it into a `record` and sends it to the unit's sessions through
// `unit_delivery`. The core knows no capability: a new one defines its marker
// and codec next to its own code (see io/detail/io_wire.hpp,
// params/detail/method_wire.hpp, docs/architecture.md).
//
// Thread-safety: codecs run on the collector thread only, one unit at a time.
// Cost: none on the host's hot path; one indirect call per unit on the
// collector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "loupe/base/clock.hpp"
#include "loupe/base/record.hpp"
#include "loupe/base/site.hpp"
#include "loupe/core/unit_marker.hpp"

namespace loupe::detail {

/// A session that a unit is being sent to, as a codec sees it.
class unit_session {
public:
    /// The session's slot (what `sessions` bits and per-session data use).
    virtual int slot() const noexcept = 0;
    /// Sends the session's parameter specs up to index `count - 1` (and its
    /// pending apply errors) if its sinks have not had them yet.
    virtual void send_param_specs(std::uint32_t count) noexcept = 0;

protected:
    ~unit_session() = default;
};

/// One complete unit, handed to its codec.
class unit_delivery {
public:
    const unsigned char* data = nullptr;  ///< the payload
    std::size_t bytes = 0;                ///< its size (at most the collector's buffer)
    std::uint64_t ticks = 0;              ///< the header record's t0
    std::uint64_t end_ticks = 0;          ///< the header record's t1
    /// The record the codec fills and sends: `thread` is set; the codec sets
    /// the rest (kind, times, the view it decoded) and leaves `session` and
    /// `metrics` to `send`. Views it points at must live until `send` returns.
    record* rec = nullptr;

    /// This process's clock.
    const tick_clock* clock = nullptr;

    /// Ticks of this process's clock to nanoseconds.
    std::uint64_t to_ns(std::uint64_t t) const noexcept { return clock->to_ns(t); }

    /// Sends `*rec` to every live session the unit was captured for (not to
    /// a session that started after `ticks`), with the zone metric deltas
    /// that came with the unit, if any. `event`: counts as a delivered event
    /// (definitions such as contexts do not). `each` runs before each send.
    template <class Each>
    void send(bool event, Each&& each) noexcept {
        using callable = std::remove_reference_t<Each>;
        send_each(
            event, [](void* f, unit_session& s) noexcept { (*static_cast<callable*>(f))(s); },
            const_cast<void*>(static_cast<const void*>(&each)));
    }
    void send(bool event) noexcept { send_each(event, nullptr, nullptr); }

protected:
    ~unit_delivery() = default;
    virtual void send_each(bool event, void (*each)(void*, unit_session&) noexcept, void* context) noexcept = 0;
};

}  // namespace loupe::detail
