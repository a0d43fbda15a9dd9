// loupe — the one place the version is written. CMake parses these lines.
#pragma once

#define LOUPE_VERSION_MAJOR 0
#define LOUPE_VERSION_MINOR 1
#define LOUPE_VERSION_PATCH 0

/// One integer: major * 10000 + minor * 100 + patch.
#define LOUPE_VERSION \
    (LOUPE_VERSION_MAJOR * 10000 + LOUPE_VERSION_MINOR * 100 + LOUPE_VERSION_PATCH)

#define LOUPE_DETAIL_STR2(x) #x
#define LOUPE_DETAIL_STR(x) LOUPE_DETAIL_STR2(x)
/// "major.minor.patch"
#define LOUPE_VERSION_STRING                                                     \
    LOUPE_DETAIL_STR(LOUPE_VERSION_MAJOR) "." LOUPE_DETAIL_STR(LOUPE_VERSION_MINOR) "." \
        LOUPE_DETAIL_STR(LOUPE_VERSION_PATCH)
