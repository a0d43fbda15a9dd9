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
# Every function that base/config.hpp's LOUPE_DETAIL_DEFINES_SHARED_PARTS guards.
set(parts push_context pop_frame report_context_misuse refill_flow_ids ring::fits_slow ring::set_frame_aside
    push_slow refresh_sessions steady_ticks enter_zone_metrics push_zone_with_metrics)
foreach(part IN LISTS parts)
    string(FIND "${defined}" "loupe::detail::${part}(" at)
    if(NOT at EQUAL -1)
        message(FATAL_ERROR "${OBJECT} defines loupe::detail::${part}: with LOUPE_SEPARATE_IMPLEMENTATION=1 only the implementation file should")
    endif()
endforeach()
# The file uses context scopes, flows and zones: it must refer to those parts,
# or this check would prove nothing.
foreach(part push_context pop_frame refill_flow_ids push_slow refresh_sessions)
    string(FIND "${undefined}" "loupe::detail::${part}(" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "${OBJECT} does not refer to loupe::detail::${part}: the check proves nothing")
    endif()
endforeach()
message(STATUS "${OBJECT}: refers to loupe's shared parts, defines none of them")
