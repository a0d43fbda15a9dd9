# Helpers used by loupe's own CMake files. Nothing here changes a consumer's
# targets or flags: the functions below only touch targets that loupe itself
# builds for development (tests, benchmarks, examples, tools).

include_guard(GLOBAL)

# loupe_extract_version(<header> <out-var>)
# Reads LOUPE_VERSION_MAJOR/MINOR/PATCH from <header> (include/loupe/base/version.hpp,
# the one place the version is written) and sets <out-var> to "major.minor.patch".
function(loupe_extract_version header out_var)
    if(NOT EXISTS "${header}")
        message(FATAL_ERROR "loupe: cannot find ${header}")
    endif()
    file(STRINGS "${header}" lines REGEX "^#define LOUPE_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
    set(parts)
    foreach(part MAJOR MINOR PATCH)
        set(value "")
        foreach(line IN LISTS lines)
            if(line MATCHES "^#define LOUPE_VERSION_${part} +([0-9]+)")
                set(value "${CMAKE_MATCH_1}")
            endif()
        endforeach()
        if(value STREQUAL "")
            message(FATAL_ERROR "loupe: LOUPE_VERSION_${part} not found in ${header}")
        endif()
        list(APPEND parts "${value}")
    endforeach()
    list(JOIN parts "." version)
    set(${out_var} "${version}" PARENT_SCOPE)
endfunction()

# loupe_developer_target(<target>)
# Applies loupe's developer settings to one of loupe's own targets:
#   - warnings (-Wall -Wextra -Wshadow -Wpedantic), always, PRIVATE;
#   - -Werror when LOUPE_WARNINGS_AS_ERRORS is ON (CI turns it on);
#   - -fsanitize=<LOUPE_SANITIZE> (compile and link) when LOUPE_SANITIZE is set.
# Never call this on the INTERFACE target `loupe`: consumers choose their own
# warnings and sanitizers.
function(loupe_developer_target target)
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wpedantic)
        if(LOUPE_WARNINGS_AS_ERRORS)
            target_compile_options(${target} PRIVATE -Werror)
        endif()
        if(LOUPE_SANITIZE)
            set(san -fsanitize=${LOUPE_SANITIZE} -fno-omit-frame-pointer)
            if(LOUPE_SANITIZE MATCHES "undefined")
                # Make UBSan findings fatal, not just printed.
                list(APPEND san -fno-sanitize-recover=undefined)
            endif()
            target_compile_options(${target} PRIVATE ${san})
            target_link_options(${target} PRIVATE ${san})
        endif()
    elseif(MSVC)
        target_compile_options(${target} PRIVATE /W4)
        if(LOUPE_WARNINGS_AS_ERRORS)
            target_compile_options(${target} PRIVATE /WX)
        endif()
    endif()
endfunction()

# loupe_unity_test_target(<target>)
# With LOUPE_UNITY_TESTS (ON by default), builds a test suite of many files
# as a unity build, eight files to a translation unit: each test file's time
# goes into generating loupe's own inline code, which a unit generates once.
# g++ warns (-Wsubobject-linkage) about a test class whose fixture lives in
# an anonymous namespace of a file that is not the main file, which every
# test file of a unity build is; the warning is off for those targets.
function(loupe_unity_test_target target)
    if(LOUPE_UNITY_TESTS)
        set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
        if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
            target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
        endif()
    endif()
endfunction()
