# CUDA kernels for kv_diff's block placement (kv_diff/placement_cuda.cu).
#
# KVFRAME_CUDA: AUTO (default) builds them when a CUDA compiler is found, ON
# requires one, OFF never builds them. Without them everything still works on
# CUDA tensors through the libtorch path, only slower. The kernels use the CUDA
# runtime alone (no torch headers: Debian's CPU libtorch has none), so they
# build on a machine without a GPU.
#
# Sets KVFRAME_CUDA_KERNELS (ON/OFF) for kv_diff/CMakeLists.txt.
set(KVFRAME_CUDA "AUTO" CACHE STRING "Build kv_diff's CUDA kernels: AUTO (if nvcc is found), ON, OFF")
set_property(CACHE KVFRAME_CUDA PROPERTY STRINGS AUTO ON OFF)

set(KVFRAME_CUDA_KERNELS OFF)
if(NOT KVFRAME_CUDA STREQUAL "OFF")
  # CUDA installs put nvcc in /usr/local/cuda/bin, often not in PATH.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    find_program(KVFRAME_NVCC nvcc)
    if(NOT KVFRAME_NVCC)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
  endif()
  # nvcc compiles host code with the same g++ as the rest of the project, so
  # both sides of the launcher share one ABI.
  if(NOT CMAKE_CUDA_HOST_COMPILER AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # 80: A100, 90: H100/H200. Override with -DCMAKE_CUDA_ARCHITECTURES=...
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(KVFRAME_CUDA_KERNELS ON)
    message(STATUS "kvframe: CUDA kernels on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(KVFRAME_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KVFRAME_CUDA=ON but no CUDA compiler was found: put nvcc in PATH, "
                        "set -DCMAKE_CUDA_COMPILER=/path/to/nvcc, or use -DKVFRAME_CUDA=AUTO")
  else()
    message(STATUS "kvframe: no CUDA compiler; kv_diff places blocks through libtorch only")
  endif()
endif()
