# shellcheck shell=bash
# Sourced by the GPU-host scripts (gpu-check.sh, gpu-serving.sh): their step
# runner and the build against the host's torch 2.x with our Debian
# dependencies carried as .debs (docs/gpu.md). Sets $out, the logs' folder
# ($GPU_LOGS, default /tmp/gpu-logs), and $jobs ($JOBS, default every core).
#
#   step NAME LIMIT CMD...   runs CMD under `timeout LIMIT`, its output in $out/NAME.log; prints its
#                            status, time and the log's last $TAIL lines (default 25); returns CMD's status
#   gpu_build TARGET...      the card, torch, configure build-gpu, build TARGETs (each a step); returns
#                            the build's status
out=${GPU_LOGS:-/tmp/gpu-logs}; mkdir -p "$out"
jobs=${JOBS:-$(nproc)}
step() { local name=$1 limit=$2; shift 2; echo "=== $name (limit ${limit}s)"; local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1; local rc=$?
  echo "=== $name: rc $rc, $((SECONDS - t0)) s"; tail -n "${TAIL:-25}" "$out/$name.log"; return $rc; }

gpu_build() {
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
  eval "$(bash .device-debs/unpack-debs.sh .device-debs /opt/kvdeps)"
  local torch_dir
  torch_dir=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  step configure 120 cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVFRAME_LIBTORCH="$torch_dir" \
    -DKVFRAME_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DTORCH_CUDA_ARCH_LIST=9.0 -DKVFRAME_FUZZ=OFF \
    `# cppzmq finds libzmq through pkg-config, whose libzmq.pc wants -dev packages of its private deps` \
    -DZeroMQ_INCLUDE_DIR=/opt/kvdeps/usr/include -DZeroMQ_LIBRARY=/opt/kvdeps/usr/lib/x86_64-linux-gnu/libzmq.so
  grep -E "kvframe:|CUDA" "$out/configure.log" | head -8
  step build "${BUILD_LIMIT:-330}" cmake --build build-gpu -j "$jobs" --target "$@" -- -k 0
}
