# What `cmake --install` adds beside the files the targets install themselves
# (install() next to kvframe_client, kvframe-serve and the tools), and CPack.
#
#   component client: libkvframe_client.so, include/kvframe/client/, the CMake
#                     package (find_package(kvframe) -> kvframe::client) and
#                     kvframe.pc: what a game's build needs
#   component server: kvframe-serve and the command-line tools
#
# docs/install.md shows the commands; tests/install/ builds programs against
# an installed tree.
include(CMakePackageConfigHelpers)

set(KVFRAME_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kvframe)

# --- find_package(kvframe) ----------------------------------------------------
install(EXPORT kvframeTargets NAMESPACE kvframe:: DESTINATION ${KVFRAME_CMAKE_DIR}
  FILE kvframeTargets.cmake COMPONENT client)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kvframeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kvframeConfig.cmake INSTALL_DESTINATION ${KVFRAME_CMAKE_DIR})
# Before 1.0 a minor version may change the C ABI (kvframe_client.h), so a
# caller asking for 0.1 accepts 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kvframeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kvframeConfig.cmake ${PROJECT_BINARY_DIR}/kvframeConfigVersion.cmake
  DESTINATION ${KVFRAME_CMAKE_DIR} COMPONENT client)

# --- pkg-config ---------------------------------------------------------------
# Relocatable: the prefix is found from the .pc file's own folder, so a tree
# installed with `cmake --install build --prefix DIR` (any DIR) or unpacked
# from the .deb reads right without a rebuild.
set(kvframe_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH KVFRAME_PC_TO_PREFIX /prefix/${kvframe_pc_dir} /prefix)
string(REGEX REPLACE "/$" "" KVFRAME_PC_TO_PREFIX "${KVFRAME_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/kvframe.pc.in ${PROJECT_BINARY_DIR}/kvframe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kvframe.pc DESTINATION ${kvframe_pc_dir} COMPONENT client)

# --- cpack -G DEB -------------------------------------------------------------
# One package holding both components. Its dependencies are read off the
# installed binaries by dpkg-shlibdeps (dpkg-dev, part of build-essential):
# libtorch, libzmq, libpcre2, ... as Debian names them, at the versions this
# machine built against. A libtorch from elsewhere (KVFRAME_LIBTORCH: a GPU
# host's torch wheel) belongs to no Debian package, which dpkg-shlibdeps
# refuses; such a package lists the rest by name and needs that libtorch
# installed beside it.
set(CPACK_PACKAGE_NAME kvframe)
set(CPACK_PACKAGE_VENDOR "kvframe")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "LLM server for game state frames, and the C client games link")
set(CPACK_PACKAGE_DESCRIPTION
  "kvframe-serve keeps a game's JSON state as reusable KV-cache blocks and answers NPC queries \
with schema-valid actions; libkvframe_client is the C client (with a C++ wrapper) a game links, \
found by find_package(kvframe) or pkg-config kvframe.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "kvframe maintainers <kvframe@localhost>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
find_program(KVFRAME_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(KVFRAME_DPKG_SHLIBDEPS AND NOT KVFRAME_LIBTORCH)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # What the client and the server link, by Debian 12's names.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libzmq5, libstdc++6, libpcre2-8-0, libxxhash0, libsimdjson14")
  if(KVFRAME_TORCH AND NOT KVFRAME_LIBTORCH)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libtorch1.13, libgomp1")
  endif()
endif()
include(CPack)
