# Install rules and package files for find_package(loupe CONFIG), plus a
# build-tree export so a consumer can point loupe_DIR at a build directory.

include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(LOUPE_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/loupe")

install(TARGETS loupe EXPORT loupeTargets)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/loupe" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT loupeTargets NAMESPACE loupe:: DESTINATION "${LOUPE_CMAKE_INSTALL_DIR}")

configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/loupeConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/loupeConfig.cmake"
    INSTALL_DESTINATION "${LOUPE_CMAKE_INSTALL_DIR}")
# Header-only: the package fits any architecture.
write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/loupeConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}"
    COMPATIBILITY SameMajorVersion
    ARCH_INDEPENDENT)
install(FILES
    "${PROJECT_BINARY_DIR}/loupeConfig.cmake"
    "${PROJECT_BINARY_DIR}/loupeConfigVersion.cmake"
    DESTINATION "${LOUPE_CMAKE_INSTALL_DIR}")

export(EXPORT loupeTargets NAMESPACE loupe:: FILE "${PROJECT_BINARY_DIR}/loupeTargets.cmake")
