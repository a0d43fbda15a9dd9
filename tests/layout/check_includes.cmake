# Checks that every include in loupe's headers and in the CLI goes down the
# layers: one layer per folder of include/loupe/, each with its own detail/.
#
#   cmake -DLOUPE_SOURCE_DIR=<root> -P tests/layout/check_includes.cmake
#
# <root> is the tree to check: it holds include/loupe/ and (optionally)
# tools/loupe/. CTest runs it on the real source tree (Layout.IncludesGoDownTheLayers)
# and on tests/layout/bad_tree/, whose known violations it must report
# (Layout.CheckerCatchesViolations).
#
# Prints one line per violation, `<file>:<line>: <what>`, then fails with the
# count; on success prints how many files and includes it checked.
#
# Every line that starts with `#include` counts, wherever it is (inside
# `#if 0` or a /* */ comment too): the script does not preprocess, so an
# include that is really there can never hide. Only `#include "loupe/..."`
# and `#include <loupe/...>` are loupe includes; other `<...>` includes are
# system headers. In include/loupe/ a quoted include must be spelled
# `loupe/...` (a relative path would slip past the rules); in tools/loupe/ a
# quoted relative include must name a file of tools/loupe/ itself.

cmake_minimum_required(VERSION 3.16)  # IN_LIST, continue(), list(FILTER), list(POP_FRONT)

# ---- The table: the only place the rules are written -------------------------
# <layer>:<the layers it may include besides itself, comma-separated>.
# A folder of include/loupe/ that is not here is an error: a new layer is
# added here on purpose.
set(loupe_layer_table
    "base:"
    "text:"
    "metrics:base"
    "core:base,metrics"
    "io:base,core"
    "params:base,core,text"
    "flow:base,core"
    "tasks:base,core,text"
    "format:base"
    "report:base,format,text"
    "viewer:base,format,text"
    "export:base,format,text,viewer"
    "sinks:base,core,format,viewer,text,export"
    "remote:base,text"
    "control:base,core,text,remote,sinks")
# tools/loupe/* (the CLI reads traces; it must never pull in the recorder).
set(loupe_tools_may_include base format text report viewer export remote)
# Also the rules:
#  - <layer>/detail/ may be included only from <layer>/ (and its detail/);
#  - files directly in include/loupe/ are umbrellas for users: they may
#    include anything; no file in a layer folder, and no file of the CLI,
#    may include an umbrella;
#  - every included loupe header must exist;
#  - no include cycle among the headers (a file that needs another's
#    definitions and is needed by it is two jobs in two files, or one).
# ------------------------------------------------------------------------------

if(NOT DEFINED LOUPE_SOURCE_DIR OR LOUPE_SOURCE_DIR STREQUAL "")
    message(FATAL_ERROR "check_includes: pass the tree to check, -DLOUPE_SOURCE_DIR=<root> (the folder holding include/loupe/)")
endif()
get_filename_component(root "${LOUPE_SOURCE_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${root}/include/loupe")
    message(FATAL_ERROR "check_includes: ${root}/include/loupe is not a folder (LOUPE_SOURCE_DIR must be the root of the tree)")
endif()

# The table, parsed: loupe_layers and loupe_may_include_<layer>.
set(loupe_layers)
foreach(row IN LISTS loupe_layer_table)
    if(NOT row MATCHES "^([a-z_0-9]+):([a-z_0-9,]*)$")
        message(FATAL_ERROR "check_includes: bad row `${row}` in the layer table (want layer:a,b,c)")
    endif()
    list(APPEND loupe_layers "${CMAKE_MATCH_1}")
    string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
    set(loupe_may_include_${CMAKE_MATCH_1} ${allowed})
endforeach()
foreach(layer IN LISTS loupe_layers ITEMS tools)
    if(layer STREQUAL "tools")
        set(allowed ${loupe_tools_may_include})
    else()
        set(allowed ${loupe_may_include_${layer}})
    endif()
    foreach(other IN LISTS allowed)
        if(NOT other IN_LIST loupe_layers)
            message(FATAL_ERROR "check_includes: the table lets ${layer} include `${other}`, which is not a layer of the table")
        endif()
    endforeach()
endforeach()

# "base, metrics" (or "std only") for the messages.
function(loupe_allowed_text layer out)
    if(layer STREQUAL "tools/loupe")
        set(allowed ${loupe_tools_may_include})
    else()
        set(allowed ${loupe_may_include_${layer}})
    endif()
    if(allowed)
        list(JOIN allowed ", " text)
    else()
        set(text "std only")
    endif()
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(violations)        # "<file>:<line>: <what>", in file order
set(include_count 0)
set(file_count 0)
set(unknown_folders)   # reported once per folder

# Checks one include `target` (the path after loupe/, e.g. core/zone.hpp) of
# `from` (a layer name, "umbrella" or "tools/loupe"); appends to violations.
function(loupe_check_loupe_include where from target)
    if(NOT EXISTS "${root}/include/loupe/${target}" OR IS_DIRECTORY "${root}/include/loupe/${target}")
        list(APPEND violations "${where}: ${from} includes loupe/${target}, which does not exist (no include/loupe/${target})")
        set(violations "${violations}" PARENT_SCOPE)
        return()
    endif()
    if(NOT target MATCHES "/")
        # An umbrella (a file directly in include/loupe/).
        if(NOT from STREQUAL "umbrella")
            list(APPEND violations "${where}: ${from} may not include the umbrella ${target} (umbrellas are for users: include the layer headers)")
        endif()
        set(violations "${violations}" PARENT_SCOPE)
        return()
    endif()
    string(REGEX MATCH "^[^/]+" to "${target}")
    if(NOT to IN_LIST loupe_layers)
        # Reported once for the folder (it holds at least this file).
        set(violations "${violations}" PARENT_SCOPE)
        return()
    endif()
    if(from STREQUAL "umbrella" OR from STREQUAL to OR from MATCHES "unknown layer")
        return()  # umbrellas may include anything; a layer its own folder
    endif()
    if(from STREQUAL "tools/loupe")
        set(allowed ${loupe_tools_may_include})
    else()
        set(allowed ${loupe_may_include_${from}})
    endif()
    if(NOT to IN_LIST allowed)
        loupe_allowed_text("${from}" text)
        list(APPEND violations "${where}: ${from} may not include ${target} (${from} may include: ${text})")
    elseif(target MATCHES "^[^/]+/detail/")
        list(APPEND violations "${where}: ${from} may not include ${target} (${to}/detail/ is private to ${to})")
    endif()
    set(violations "${violations}" PARENT_SCOPE)
endfunction()

# Reads the includes of `file`; `from` is its layer, "umbrella" or "tools/loupe".
function(loupe_check_file file from)
    file(RELATIVE_PATH rel "${root}" "${file}")
    file(READ "${file}" content)
    set(count 0)
    if(content MATCHES "#[ \t]*include")
        # One list element per line: neutralise what CMake lists treat
        # specially (';' separates, '[' ']' group, '\' escapes) first.
        string(REPLACE "\r" "" content "${content}")
        string(REPLACE "\\" "/" content "${content}")
        string(REPLACE ";" "," content "${content}")
        string(REPLACE "[" "(" content "${content}")
        string(REPLACE "]" ")" content "${content}")
        string(REPLACE "\n" ";" lines "${content}")
        set(number 0)
        foreach(line IN LISTS lines)
            math(EXPR number "${number} + 1")
            if(NOT line MATCHES "^[ \t]*#[ \t]*include")
                continue()
            endif()
            if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]*)[>\"]")
                list(APPEND violations "${rel}:${number}: cannot read this include (write #include \"loupe/...\" or <...>)")
                continue()
            endif()
            set(quote "${CMAKE_MATCH_1}")
            set(path "${CMAKE_MATCH_2}")
            math(EXPR count "${count} + 1")
            if(path MATCHES "^loupe/(.+)$")
                set(target "${CMAKE_MATCH_1}")
                loupe_check_loupe_include("${rel}:${number}" "${from}" "${target}")
                if(rel MATCHES "^include/loupe/(.+)$")  # an edge of the include graph
                    string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_1}" node)
                    list(APPEND edges_${node} "${target}")
                    set(edges_${node} "${edges_${node}}" PARENT_SCOPE)
                endif()
            elseif(quote STREQUAL "\"")
                if(from STREQUAL "tools/loupe")
                    get_filename_component(dir "${file}" DIRECTORY)
                    get_filename_component(resolved "${dir}/${path}" ABSOLUTE)
                    file(RELATIVE_PATH inside "${root}/tools/loupe" "${resolved}")
                    if(NOT EXISTS "${resolved}")
                        list(APPEND violations "${rel}:${number}: tools/loupe includes \"${path}\", which does not exist")
                    elseif(inside MATCHES "^\\.\\./")
                        list(APPEND violations "${rel}:${number}: tools/loupe includes \"${path}\", outside tools/loupe/ by a relative path (include loupe headers as <loupe/...>)")
                    endif()
                else()
                    list(APPEND violations "${rel}:${number}: ${from} includes \"${path}\" by a relative path (write \"loupe/...\" so that the layer rules apply)")
                endif()
            endif()
            # Any other <...> is a system header.
        endforeach()
    endif()
    math(EXPR total "${include_count} + ${count}")
    set(include_count "${total}" PARENT_SCOPE)
    set(violations "${violations}" PARENT_SCOPE)
endfunction()

set(source_regex "\\.(h|hh|hpp|hxx|inl|ipp|tpp|c|cc|cpp|cxx)$")

# The library's headers.
file(GLOB_RECURSE headers LIST_DIRECTORIES false "${root}/include/loupe/*")
list(FILTER headers INCLUDE REGEX "${source_regex}")
list(SORT headers)
foreach(file IN LISTS headers)
    file(RELATIVE_PATH inside "${root}/include/loupe" "${file}")
    if(NOT inside MATCHES "/")
        set(from "umbrella")
    else()
        string(REGEX MATCH "^[^/]+" from "${inside}")
        if(NOT from IN_LIST loupe_layers)
            if(NOT from IN_LIST unknown_folders)
                list(APPEND unknown_folders "${from}")
                list(APPEND violations "include/loupe/${from}/: unknown layer folder `${from}` (add it to the table at the top of tests/layout/check_includes.cmake, with what it may include)")
            endif()
            # Its own includes are still checked for existence and umbrellas.
            set(from "${from} (unknown layer)")
        endif()
    endif()
    loupe_check_file("${file}" "${from}")
    math(EXPR file_count "${file_count} + 1")
endforeach()
if(file_count EQUAL 0)
    message(FATAL_ERROR "check_includes: no header found under ${root}/include/loupe/")
endif()

# The command-line tool.
file(GLOB_RECURSE tool_files LIST_DIRECTORIES false "${root}/tools/loupe/*")
list(FILTER tool_files INCLUDE REGEX "${source_regex}")
list(SORT tool_files)
foreach(file IN LISTS tool_files)
    loupe_check_file("${file}" "tools/loupe")
    math(EXPR file_count "${file_count} + 1")
endforeach()

# Include cycles: peel off the headers that include no header still left,
# then those that no header still left includes; what remains lies on a
# cycle.
set(remaining)
foreach(file IN LISTS headers)
    file(RELATIVE_PATH inside "${root}/include/loupe" "${file}")
    list(APPEND remaining "${inside}")
endforeach()
foreach(direction out in)
    set(changed TRUE)
    while(changed)
        set(changed FALSE)
        set(kept)
        foreach(node IN LISTS remaining)
            string(MAKE_C_IDENTIFIER "${node}" id)
            set(linked FALSE)
            if(direction STREQUAL "out")
                foreach(target IN LISTS edges_${id})
                    if(target IN_LIST remaining)
                        set(linked TRUE)
                        break()
                    endif()
                endforeach()
            else()
                foreach(other IN LISTS remaining)
                    string(MAKE_C_IDENTIFIER "${other}" other_id)
                    if(node IN_LIST edges_${other_id})
                        set(linked TRUE)
                        break()
                    endif()
                endforeach()
            endif()
            if(linked)
                list(APPEND kept "${node}")
            else()
                set(changed TRUE)
            endif()
        endforeach()
        set(remaining "${kept}")
    endwhile()
endforeach()
# Each cycle on its own line: the headers that reach one another.
function(loupe_reach start out)  # the headers of `remaining` reachable from start
    set(seen)
    set(queue "${start}")
    while(queue)
        list(POP_FRONT queue node)
        string(MAKE_C_IDENTIFIER "${node}" id)
        foreach(target IN LISTS edges_${id})
            if(target IN_LIST remaining AND NOT target IN_LIST seen)
                list(APPEND seen "${target}")
                list(APPEND queue "${target}")
            endif()
        endforeach()
    endwhile()
    set(${out} "${seen}" PARENT_SCOPE)
endfunction()
set(placed)
foreach(node IN LISTS remaining)
    if(node IN_LIST placed)
        continue()
    endif()
    loupe_reach("${node}" from_node)
    set(cycle)
    foreach(other IN LISTS from_node)
        loupe_reach("${other}" from_other)
        if(node IN_LIST from_other)
            list(APPEND cycle "${other}")
        endif()
    endforeach()
    if(cycle)
        list(SORT cycle)
        list(APPEND placed ${cycle})
        list(JOIN cycle ", " text)
        list(APPEND violations "include/loupe/: include cycle among ${text}")
    endif()
endforeach()

list(LENGTH violations violation_count)
if(violation_count GREATER 0)
    foreach(violation IN LISTS violations)
        message("${violation}")
    endforeach()
    # The summary on its own line first: message(FATAL_ERROR) wraps its text.
    message("check_includes: ${violation_count} layout violations (${file_count} files, ${include_count} includes checked in ${root})")
    message(FATAL_ERROR "check_includes: ${violation_count} layout violations")
endif()
message("check_includes: ${file_count} files, ${include_count} includes checked in ${root}: every include goes down the layers")
