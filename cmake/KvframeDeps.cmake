# Every dependency comes from a Debian package installed by scripts/setup.sh.
# Nothing is downloaded at configure or build time.
find_package(PkgConfig REQUIRED)
find_package(simdjson REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
add_library(kvframe::xxhash ALIAS PkgConfig::XXHASH)
if(KVFRAME_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(KVFRAME_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
