#!/usr/bin/env bash
# Installs every Debian package kvframe needs to build, test and benchmark.
# Idempotent: re-running it only refreshes the package lists and installs what is missing.
# Later stages add their packages to PACKAGES below; nothing is ever downloaded at build time.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  # clang + libFuzzer runtime for the fuzz targets (tests/fuzz)
  clang libclang-rt-dev
  # json_blocker: parsing, hashing, patch application
  libsimdjson-dev libxxhash-dev nlohmann-json3-dev
  # runtime: libtorch (CPU build) with OpenBLAS; without it libtorch falls back to the reference
  # BLAS (measured here: torch::matmul ~6 GFLOP/s vs ~150 GFLOP/s with OpenBLAS). Its OpenMP
  # build, selected below: see there why.
  libtorch-dev libopenblas0-openmp
  # runtime tokenizer: Unicode-aware pre-tokenizer regexes (PCRE2 with JIT)
  libpcre2-dev
  # scripts/fetch-model.sh and tests/model reference scripts
  python3 python3-venv unzip
  # command-line tools
  libcli11-dev
  # bridge: ZeroMQ (with libsodium for CURVE) + cppzmq, flatbuffers library and flatc
  libzmq3-dev cppzmq-dev libflatbuffers-dev flatbuffers-compiler
  # Unity adapter: its pure C# layer is compiled and run against a live server with Debian's mono
  mono-mcs mono-runtime
  # schema-constrained decoding tests check every output with an independent validator
  python3-jsonschema
  # the Python client (adapters/python): its wire dependencies and its pytest suite
  python3-zmq python3-flatbuffers python3-pytest
  # scale-out tests: HAProxy in front of two workers; the Kubernetes manifests read back
  haproxy python3-yaml
  # the Hold'em replay page is tested in headless Chromium
  chromium fonts-liberation fonts-dejavu-core
  # tests and benchmarks (gnuplot draws the benchmarks' PNG plots)
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox
)

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive

echo "[setup] apt-get update"
$SUDO apt-get update -qq

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[setup] all ${#PACKAGES[@]} packages already installed"
else
  echo "[setup] installing ${#missing[@]} packages: ${missing[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# OpenBLAS on libgomp's threads, the ones libtorch's own loops run on, rather
# than a pool of its own beside them (the pthread build, Debian's preferred
# alternative when both are installed; its idle threads spin with sched_yield
# while libgomp's work). Measured on a 2-core AVX2 EPYC, fp32 (docs/runtime.md,
# "OpenBLAS's two builds"): a server alone on its cores answers 2.6-3.0x the
# decisions per second; the test suite, whose model tests run one thread each,
# takes the same time with either (489 vs 498 s).
multiarch=$(gcc -print-multiarch)
for lib in libopenblas.so.0 libblas.so.3 liblapack.so.3; do
  want=/usr/lib/$multiarch/openblas-openmp/$lib
  if [ "$(readlink -f "/etc/alternatives/$lib-$multiarch")" != "$(readlink -f "$want")" ]; then
    echo "[setup] $lib -> the OpenMP build of OpenBLAS"
    $SUDO update-alternatives --set "$lib-$multiarch" "$want" >/dev/null
  fi
done
echo "[setup] done"
