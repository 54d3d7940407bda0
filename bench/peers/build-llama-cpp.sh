#!/usr/bin/env bash
# Builds the llama.cpp peer (llama-bench, llama-server, libllama) for bench/peers/,
# the reference fixtures made against llama.cpp, and llama-quantize for
# scripts/random-model-gguf.py.
#
# llama.cpp comes from the llama-cpp-python source distribution on PyPI,
# which vendors it at a fixed commit: pinned by version and sha256, fetched
# once with `pip download --no-binary` and cached outside the build tree
# (never by kvframe's build or tests).
# Built in its best configuration for this CPU: Release, GGML_NATIVE (every
# vector extension the CPU has; AMX aside, below), OpenMP threads.
#
#   bench/peers/build-llama-cpp.sh            prints the bin directory
#   KVFRAME_PEERS=/some/cache bench/peers/build-llama-cpp.sh
set -euo pipefail

VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
CACHE="${KVFRAME_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/kvframe/peers}"
SRC="$CACHE/llama_cpp_python-$VERSION"
# On a CPU with AMX, ggml's AMX path (this version's) dies with SIGILL at its
# first tileloadd in a VM that grants AMX to the process (libtorch's oneDNN
# uses it there; measured 2026-12-06, docs/measured.md): llama.cpp's best
# configuration that runs is then every AVX-512 extension the CPU has, AMX
# off, built in a folder of its own.
NATIVE=(-DGGML_NATIVE=ON)
BUILD="$SRC/vendor/llama.cpp/build"
if grep -qw amx_tile /proc/cpuinfo; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  has() { [[ " $flags " == *" $1 "* ]] && echo ON || echo OFF; }
  NATIVE=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
          -DGGML_AVX512="$(has avx512f)" -DGGML_AVX512_VBMI="$(has avx512vbmi)"
          -DGGML_AVX512_VNNI="$(has avx512_vnni)" -DGGML_AVX512_BF16="$(has avx512_bf16)"
          -DGGML_AVX_VNNI="$(has avx_vnni)" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
  BUILD="$SRC/vendor/llama.cpp/build-no-amx"
fi

log() { echo "build-llama-cpp: $*" >&2; }

if [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

mkdir -p "$CACHE"
if [[ -x "$BUILD/bin/llama-bench" && -x "$BUILD/bin/llama-server" && -x "$BUILD/bin/llama-quantize" &&
      -f "$BUILD/bin/libllama.so" ]]; then
  echo "$BUILD/bin"
  exit 0
fi

tarball="$CACHE/llama_cpp_python-$VERSION.tar.gz"
if [[ ! -f "$tarball" ]] || ! echo "$SHA256  $tarball" | sha256sum -c --status; then
  log "fetching the llama-cpp-python $VERSION source distribution (vendors llama.cpp) with pip"
  python3 -m pip download --no-binary :all: --no-deps --disable-pip-version-check \
    --dest "$CACHE" "llama-cpp-python==$VERSION" >&2 || { log "pip download failed: check access to PyPI, or place the file at $tarball"; exit 3; }
  echo "$SHA256  $tarball" | sha256sum -c --status || { log "sha256 mismatch for $tarball"; rm -f "$tarball"; exit 3; }
fi
if [[ ! -d "$SRC/vendor/llama.cpp" ]]; then
  log "unpacking"
  tar -xzf "$tarball" -C "$CACHE"
fi

log "configuring and building llama-bench, llama-server, llama-quantize and libllama ($(nproc) cores; several minutes)"
cmake -S "$SRC/vendor/llama.cpp" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${NATIVE[@]}" \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >&2
cmake --build "$BUILD" --target llama-bench llama-server llama-quantize llama -j "$(nproc)" >&2
echo "$BUILD/bin"
