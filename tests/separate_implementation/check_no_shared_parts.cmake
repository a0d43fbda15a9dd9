# An instrumenting file of a program built with LOUPE_SEPARATE_IMPLEMENTATION=1
# must refer to loupe's shared out-of-line parts without compiling them (that
# is the compile time the option saves): fails when the object defines one.
#   cmake -DNM=<nm> -DOBJECT=<file.o> -P check_no_shared_parts.cmake
foreach(input NM OBJECT)
    if(NOT ${input})
        message(FATAL_ERROR "check_no_shared_parts.cmake: -D${input}=... is missing")
    endif()
endforeach()
execute_process(COMMAND "${NM}" -C --defined-only "${OBJECT}"
    OUTPUT_VARIABLE defined RESULT_VARIABLE defined_rc ERROR_VARIABLE nm_error)
execute_process(COMMAND "${NM}" -C --undefined-only "${OBJECT}"
    OUTPUT_VARIABLE undefined RESULT_VARIABLE undefined_rc ERROR_VARIABLE nm_error2)
if(NOT defined_rc EQUAL 0 OR NOT undefined_rc EQUAL 0)
    message(FATAL_ERROR "${NM} could not read ${OBJECT}: ${nm_error}${nm_error2}")
endif()
# Every shared part: the functions that base/config.hpp's
# LOUPE_DETAIL_DEFINES_SHARED_PARTS guards, the function template instances
# LOUPE_DETAIL_SHARED_INSTANCE declares, and the fork handlers that
# LOUPE_DETAIL_SHARED_FORK_STEP leaves to the implementation file.
# (`runtime_call>(` ends the name of every instance for sites without
# compile-time chains: enter_method<site_chains<>, void, runtime_call> and
# the evaluations it calls.)
set(parts
    loupe::detail::push_context loupe::detail::pop_frame loupe::detail::report_context_misuse
    loupe::detail::refill_flow_ids loupe::detail::ring::fits_slow loupe::detail::ring::set_frame_aside
    loupe::detail::push_slow loupe::detail::refresh_sessions loupe::detail::steady_ticks
    loupe::detail::enter_zone_metrics loupe::detail::push_zone_with_metrics
    loupe::detail::runtime_call> loupe::detail::push_method_call<0> loupe::detail::push_method_unit<0>
    loupe::detail::push_method_set_aside<0> loupe::detail::read_pull_metric<0> loupe::detail::thread_cpu_ns
    loupe::detail::format_number loupe::detail::format_streamed_at
    loupe::detail::io_announce<0> loupe::detail::io_announce_path<0> loupe::detail::io_push<0>
    loupe::io::detail::create_registry
    loupe::detail::fork_prepare_steps loupe::io::detail::registry_fork_prepare
    loupe::detail::metric_registry_fork_prepare loupe::detail::clock_fork_prepare)
foreach(part IN LISTS parts)
    string(FIND "${defined}" "${part}(" at)
    if(NOT at EQUAL -1)
        message(FATAL_ERROR "${OBJECT} defines ${part}: with LOUPE_SEPARATE_IMPLEMENTATION=1 only the implementation file should")
    endif()
endforeach()
# The file uses context scopes, flows, zones, a method site with no
# compile-time chains, one whose parameter is printed by operator<<, and a
# wrapped read: it must refer to those parts, or this check would prove
# nothing.
foreach(part loupe::detail::push_context loupe::detail::pop_frame loupe::detail::refill_flow_ids
        loupe::detail::push_slow loupe::detail::refresh_sessions loupe::detail::runtime_call>
        loupe::detail::push_method_call<0> loupe::detail::format_streamed_at loupe::detail::io_announce<0>
        loupe::detail::io_push<0>)
    string(FIND "${undefined}" "${part}(" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "${OBJECT} does not refer to ${part}: the check proves nothing")
    endif()
endforeach()
message(STATUS "${OBJECT}: refers to loupe's shared parts, defines none of them")
