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

# runtime tokenizer: PCRE2 (with JIT) runs the pre-tokenizer regexes.
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
add_library(kvframe::pcre2 ALIAS PkgConfig::PCRE2)

# runtime model: libtorch. Debian's libtorch-dev (1.13, CPU) by default; a GPU
# host points KVFRAME_LIBTORCH at the libtorch inside its torch 2.x. The code
# uses only API both share. Fuzz builds (clang + sanitizers) turn it off.
option(KVFRAME_TORCH "Build the libtorch model runtime and what needs it" ON)
set(KVFRAME_LIBTORCH "" CACHE PATH
  "libtorch CMake prefix; empty: Debian's libtorch-dev. GPU host: python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'")
if(KVFRAME_TORCH)
  if(KVFRAME_LIBTORCH)
    # The CMake folder and the libtorch root two levels above it: TorchConfig
    # looks its libraries up by prefix, and must not find a system libtorch first.
    get_filename_component(KVFRAME_LIBTORCH_ROOT "${KVFRAME_LIBTORCH}/../.." ABSOLUTE)
    list(PREPEND CMAKE_PREFIX_PATH "${KVFRAME_LIBTORCH}" "${KVFRAME_LIBTORCH_ROOT}")
  endif()
  find_package(Torch REQUIRED)
  add_library(kvframe_torch INTERFACE)
  target_link_libraries(kvframe_torch INTERFACE ${TORCH_LIBRARIES})
  add_library(kvframe::torch ALIAS kvframe_torch)
  # at::parallel_for is a header template: with Debian's OpenMP build of
  # libtorch it splits work only in code compiled with -fopenmp, and silently
  # runs on one thread otherwise. (torch 2.x wheels bundle their own renamed
  # libgomp; linking the system one beside it would start a second pool.)
  if(NOT KVFRAME_LIBTORCH)
    find_package(OpenMP REQUIRED COMPONENTS CXX)
    target_link_libraries(kvframe_torch INTERFACE OpenMP::OpenMP_CXX)
  endif()
  # torch 2.5 added scaled_dot_product_attention's enable_gqa and flash
  # attention's seqused_k: CUDA attention then runs fused
  # (runtime/model/fused_attention.h), and a CUDA libtorch replays decoding
  # steps from CUDA graphs (decode_graph.h). 1.13 keeps the explicit path.
  if(Torch_VERSION VERSION_GREATER_EQUAL 2.5)
    target_compile_definitions(kvframe_torch INTERFACE KVFRAME_TORCH_SDPA)
    if(TORCH_CUDA_LIBRARIES)
      target_compile_definitions(kvframe_torch INTERFACE KVFRAME_TORCH_CUDA_GRAPHS)
    endif()
  endif()
  # torch 2.9 has a fused RMSNorm kernel on CUDA (Model::Impl::rms_norm).
  if(Torch_VERSION VERSION_GREATER_EQUAL 2.9)
    target_compile_definitions(kvframe_torch INTERFACE KVFRAME_TORCH_FUSED_RMS_NORM)
  endif()
  message(STATUS "kvframe: libtorch ${Torch_VERSION} from ${Torch_DIR}")
endif()

# bridge: ZeroMQ through cppzmq (header-only C++ over libzmq), flatbuffers
# (header-only at run time) and flatc, which compiles protocol/kvframe.fbs.
find_package(cppzmq REQUIRED)
add_library(kvframe::zmq ALIAS cppzmq)
find_package(FlatBuffers REQUIRED)
add_library(kvframe_flatbuffers INTERFACE)
target_include_directories(kvframe_flatbuffers SYSTEM INTERFACE
  $<TARGET_PROPERTY:flatbuffers::flatbuffers,INTERFACE_INCLUDE_DIRECTORIES>)
# Keeps flexbuffers.h header-only: its lenient string-to-number conversions
# would otherwise use a C locale object defined in libflatbuffers. kvframe's
# readers check a value's type before converting, so the locale never matters.
target_compile_definitions(kvframe_flatbuffers INTERFACE FLATBUFFERS_LOCALE_INDEPENDENT=0)
add_library(kvframe::flatbuffers ALIAS kvframe_flatbuffers)
find_program(FLATC flatc REQUIRED)
