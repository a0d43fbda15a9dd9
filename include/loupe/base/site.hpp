// Static per-call-site metadata: what a record points at instead of copying
// names. One `site` per macro call site, constant-initialized, so a record
// carries one pointer and the name is interned once per session.
#pragma once

#include <cstdint>

namespace loupe {

/// What kind of event a call site produces. Also the bit that the global
/// "armed" mask and a session's `kinds` use (see `event_kinds`).
/// `flow` and `flow_end` are points of a flow (flow.hpp): the first starts or
/// continues the flow its call gives, the second ends it.
/// `unit` is never a call site's kind: it marks the header record of a
/// multi-record unit in a ring (core/unit_codec.hpp).
enum class site_kind : std::uint8_t {
    zone = 1,
    instant = 2,
    counter = 3,
    io = 4,
    method = 5,
    flow = 6,
    flow_end = 7,
    unit = 8,
    zone_arg = 9,  ///< a zone argument's key (core/zone_arg.hpp); rides its zone, not a session kind
    task = 10,     ///< the gate of task points (tasks/call_scopes.hpp); never a site's own kind
    zone_metrics = 11,  ///< a zone's metric deltas in a ring (core/zone_metrics.hpp); never a site's own kind
};

/// Number of session-recordable site_kind values plus one (kinds index
/// arrays by their value; `unit` and `zone_arg` are not recordable, their
/// slots stay empty; `zone_metrics` marks ring records only and has none).
inline constexpr unsigned site_kind_slots = 11;

/// Bit masks of event kinds, for `session_config::kinds`.
namespace kinds {
inline constexpr std::uint32_t zones = 1u << static_cast<unsigned>(site_kind::zone);
inline constexpr std::uint32_t instants = 1u << static_cast<unsigned>(site_kind::instant);
inline constexpr std::uint32_t counters = 1u << static_cast<unsigned>(site_kind::counter);
/// I/O operations through loupe::io (io.hpp). `site_kind::io` is not a
/// call-site kind: operations carry an op code, and events of a hand-made
/// site of that kind are ignored.
inline constexpr std::uint32_t io = 1u << static_cast<unsigned>(site_kind::io);
/// Method calls (LOUPE_METHOD, LOUPE_FUNCTION_PARAMS; params.hpp): timed like
/// zones, with the values of the session's parameter specs. A method site's
/// events reach sinks as zones (`record::method` set); `site_kind::method`
/// is the gate's bit, never a site's own kind.
inline constexpr std::uint32_t methods = 1u << static_cast<unsigned>(site_kind::method);
/// Flow points (LOUPE_FLOW, LOUPE_FLOW_END; flow.hpp): the arrows that link
/// the work one request does on several threads (or processes).
inline constexpr std::uint32_t flows =
    1u << static_cast<unsigned>(site_kind::flow) | 1u << static_cast<unsigned>(site_kind::flow_end);
/// Task points (tasks/call_scopes.hpp): the four interception points of the
/// calls between processes, which `loupe merge` joins into task trees.
inline constexpr std::uint32_t tasks = 1u << static_cast<unsigned>(site_kind::task);
inline constexpr std::uint32_t all = zones | instants | counters | io | methods | flows | tasks;
}  // namespace kinds

/// The `kinds` bit of one site kind.
constexpr std::uint32_t kind_bit(site_kind k) noexcept { return 1u << static_cast<unsigned>(k); }

/// Metadata of one call site. Must outlive every session that records from it:
/// the macros make it a function-local `static constexpr`. Building one by hand
/// (the non-macro API) needs static storage duration too.
///
/// Thread-safety: immutable; safe to share.
struct site {
    const char* name;      ///< zone/instant/counter name, UTF-8, never null
    const char* file;      ///< source file, or "" when unknown
    const char* function;  ///< enclosing function, or "" when unknown
    std::uint32_t line;    ///< source line, 0 when unknown
    site_kind kind;
};

}  // namespace loupe
