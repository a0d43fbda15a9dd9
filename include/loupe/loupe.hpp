// loupe — instrumentation for application-server runtimes.
//
// The one include for code that instruments: zones, instants, counters,
// context scopes, flows and thread names. It compiles none of the runtime:
// the translation units that start sessions include <loupe/session.hpp>;
// method sites need <loupe/params.hpp>, I/O wrappers <loupe/io.hpp>.
//
// Quick start:
//
//     #include <loupe/loupe.hpp>       // in every file that instruments
//     #include <loupe/session.hpp>     // where sessions start
//
//     void handle(Request& r) {
//         LOUPE_ZONE("handle");            // recorded only while a session runs
//         ...
//     }
//
//     int main() {
//         loupe::session_config cfg;
//         cfg.sinks = {std::make_shared<loupe::sinks::file_sink>("run.loupe")};
//         loupe::session s = loupe::start_session(cfg);
//         serve();
//         s.stop();                         // then: loupe stats run.loupe
//     }
//
// Every macro below is a thin wrapper: it makes one static `loupe::site` per
// call site (name, file, line, function) and a uniquely named local. With
// LOUPE_ENABLED=0 each expands to nothing and its arguments are not evaluated.
#pragma once

#include "loupe/base/config.hpp"
#include "loupe/base/site.hpp"
#include "loupe/base/version.hpp"
#include "loupe/core/context.hpp"
#include "loupe/core/thread.hpp"
#include "loupe/core/zone.hpp"
#include "loupe/core/zone_arg.hpp"
#include "loupe/flow/flow.hpp"

#define LOUPE_DETAIL_SITE(var, name, kind) \
    static constexpr ::loupe::site var { name, __FILE__, LOUPE_DETAIL_FUNCTION, __LINE__, ::loupe::site_kind::kind }

#define LOUPE_DETAIL_ZONE(id, name) LOUPE_DETAIL_ZONE_AS(id, LOUPE_DETAIL_CAT(id, _scope), name)
#define LOUPE_DETAIL_ZONE_AS(id, var, name)                     \
    LOUPE_DETAIL_SITE(LOUPE_DETAIL_CAT(id, _site), name, zone); \
    ::loupe::zone_scope var { LOUPE_DETAIL_CAT(id, _site) }

#define LOUPE_DETAIL_NAMED_ZONE(id, name) LOUPE_DETAIL_NAMED_ZONE_AS(id, LOUPE_DETAIL_CAT(id, _scope), name)
#define LOUPE_DETAIL_NAMED_ZONE_AS(id, var, name)                                                    \
    LOUPE_DETAIL_SITE(LOUPE_DETAIL_CAT(id, _site), "(more zone names than loupe keeps)", zone);       \
    ::loupe::zone_scope var { LOUPE_DETAIL_CAT(id, _site), name }

#if LOUPE_ENABLED

/// Records the enclosing block as a zone named `name` (a string literal).
#    define LOUPE_ZONE(name) LOUPE_DETAIL_ZONE(LOUPE_DETAIL_CAT(loupe_zone_, __COUNTER__), name)

/// Records the enclosing block as a zone named at run time: `name` is a
/// std::string_view, std::string or C string (read once, when the zone
/// begins; not evaluated when LOUPE_ENABLED=0). Each distinct name at a call
/// site is its own site in traces (interned when first recorded; a repeated
/// name costs a lookup). Past loupe's limit of distinct names, the zone is
/// named "(more zone names than loupe keeps)".
#    define LOUPE_ZONE_NAMED(name) LOUPE_DETAIL_NAMED_ZONE(LOUPE_DETAIL_CAT(loupe_zone_, __COUNTER__), name)

/// As LOUPE_ZONE and LOUPE_ZONE_NAMED, with the zone in a local variable
/// `var` (a loupe::zone_scope) that LOUPE_ZONE_ARG refers to. With
/// LOUPE_ENABLED=0 no variable is declared: use `var` through the macros only.
#    define LOUPE_ZONE_AS(var, name) LOUPE_DETAIL_ZONE_AS(LOUPE_DETAIL_CAT(loupe_zone_, __COUNTER__), var, name)
#    define LOUPE_ZONE_NAMED_AS(var, name) \
        LOUPE_DETAIL_NAMED_ZONE_AS(LOUPE_DETAIL_CAT(loupe_zone_, __COUNTER__), var, name)

/// Records an argument of the zone `var` (from LOUPE_ZONE_AS): `key` a string
/// literal, `value` a bool, integer, enum, floating-point number or text
/// (std::string, std::string_view, a C string; cut to 256 bytes). `value` is
/// evaluated only when the zone is recorded, at most once. Shown with the
/// zone in dumps, the slowest-zones report and both viewers.
#    define LOUPE_ZONE_ARG(var, key, value)                                                                \
        do {                                                                                               \
            if (LOUPE_UNLIKELY((var).recording())) {                                                       \
                static constexpr ::loupe::zone_arg_site loupe_zone_arg_site{                               \
                    {key, __FILE__, LOUPE_DETAIL_FUNCTION, __LINE__, ::loupe::site_kind::zone_arg},        \
                    ::loupe::detail::zone_arg_kind_of<decltype(value)>()};                                 \
                (var).arg(loupe_zone_arg_site, value);                                                     \
            }                                                                                              \
        } while (0)

/// Records the enclosing function as a zone named after it.
#    define LOUPE_FUNCTION() LOUPE_DETAIL_ZONE(LOUPE_DETAIL_CAT(loupe_zone_, __COUNTER__), __func__)

/// Records a point in time named `name`.
#    define LOUPE_INSTANT(name)                                                      \
        do {                                                                         \
            LOUPE_DETAIL_SITE(loupe_instant_site, name, instant);                   \
            ::loupe::instant(loupe_instant_site);                                    \
        } while (0)

/// Records `value` (converted to double) of the counter `name`. `value` is
/// evaluated only when a session records counters from this thread (after
/// its filters), at most once.
#    define LOUPE_COUNTER(name, value)                                                               \
        do {                                                                                         \
            LOUPE_DETAIL_SITE(loupe_counter_site, name, counter);                                    \
            if (LOUPE_UNLIKELY(::loupe::detail::armed() & ::loupe::kinds::counters)) {               \
                const ::std::uint64_t loupe_counter_sessions =                                       \
                    ::loupe::detail::sessions_for(::loupe::site_kind::counter);                      \
                if (loupe_counter_sessions != 0)                                                     \
                    ::loupe::detail::push_counter(loupe_counter_site, loupe_counter_sessions,        \
                                                  static_cast<double>(value));                       \
            }                                                                                        \
        } while (0)

/// Records a point named `name` that starts or continues the flow `id`
/// (a std::uint64_t from loupe::new_flow_id(); see flow.hpp). `id` is
/// evaluated once, whether or not anything records.
#    define LOUPE_FLOW(name, id)                                                     \
        do {                                                                         \
            LOUPE_DETAIL_SITE(loupe_flow_site, name, flow);                          \
            ::loupe::flow(loupe_flow_site, id);                                      \
        } while (0)

/// Records a point named `name` that ends the flow `id` (as LOUPE_FLOW).
#    define LOUPE_FLOW_END(name, id)                                                 \
        do {                                                                         \
            LOUPE_DETAIL_SITE(loupe_flow_site, name, flow_end);                      \
            ::loupe::flow(loupe_flow_site, id);                                      \
        } while (0)

/// Names the calling thread in traces (see loupe::set_thread_name).
#    define LOUPE_THREAD_NAME(name) ::loupe::set_thread_name(name)

#else

#    define LOUPE_ZONE(name) static_cast<void>(0)
#    define LOUPE_ZONE_NAMED(name) static_cast<void>(0)
#    define LOUPE_ZONE_AS(var, name) static_cast<void>(0)
#    define LOUPE_ZONE_NAMED_AS(var, name) static_cast<void>(0)
#    define LOUPE_ZONE_ARG(var, key, value) static_cast<void>(0)
#    define LOUPE_FUNCTION() static_cast<void>(0)
#    define LOUPE_INSTANT(name) static_cast<void>(0)
#    define LOUPE_COUNTER(name, value) static_cast<void>(0)
#    define LOUPE_FLOW(name, id) static_cast<void>(0)
#    define LOUPE_FLOW_END(name, id) static_cast<void>(0)
#    define LOUPE_THREAD_NAME(name) static_cast<void>(0)

#endif
