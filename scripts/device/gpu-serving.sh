#!/usr/bin/env bash
# One call on a GPU host (docs/gpu.md, "Many matches on one card"): Hold'em
# matches against one kvframe-serve on CUDA with a Llama-3.1-8B-shaped
# random-weight model (timings real, answers noise, the schemas keep every
# action valid), unpaced and at about one decision a second a match, for
# N = 1, 4, 16, 64, 128 as memory and time allow: bench/bench_serving.py's
# table, its summaries (4 matches against 1; the largest N whose p99 is
# within 600 ms) and its plot.
#
# Here, first:   as for gpu-check.sh: .device-debs and .device/tokenizer.gguf
# There:         bash scripts/device/gpu-serving.sh   (the repo with .device-debs and .device)
# Here, on the CPU, every step but CUDA (an existing build, two layers of the metadata's own shape):
#   SERVING_BUILD=build SERVING_SHAPE= SERVING_LAYERS=2 SERVING_MATCHES=1,4 SERVING_SERVE_ARGS= \
#     bash scripts/device/gpu-serving.sh
#
# Settings (environment):
#   SERVING_BUILD       a build folder to use as it is (default: configure and build build-gpu, gpu-build.sh)
#   SERVING_SHAPE       random-model-gguf.py --shape (default llama3.1-8b; empty: the metadata's own)
#   SERVING_LAYERS      random-model-gguf.py --layers (default: all of the shape's)
#   SERVING_MATCHES     the N list (default 1,4,16,64,128)
#   SERVING_HANDS       hands per match (default 3)
#   SERVING_TOGETHER    kvframe-serve --max-sessions-together (default 128: every waiting session's
#                       final block and decoding steps in one pass)
#   SERVING_SERVE_ARGS  more kvframe-serve options (default: --device cuda --dtype bf16)
#   SERVING_LIMIT       seconds for the model's load and every run (default 300); one run (N
#                       matches at one pace) gets SERVING_RUN_LIMIT (default 120), then larger N are skipped
# Logs in $GPU_LOGS (default /tmp/gpu-logs); with $OUT set, the table, the rows (JSON), the plot,
# the GPU's memory over time and the logs (serving-logs.tgz) are copied there.
set -uo pipefail
# shellcheck source=scripts/device/gpu-build.sh
source "$(dirname "$0")/gpu-build.sh"   # step, gpu_build, $out

build=${SERVING_BUILD:-}
if [ -z "$build" ]; then
  gpu_build kvframe-serve kvframe-holdem-client || exit 1
  build="build-gpu"
fi
shape=${SERVING_SHAPE-llama3.1-8b}
model=/tmp/serving-model.gguf
layers=${SERVING_LAYERS:-}
step model 240 python3 scripts/device/random-model-gguf.py ${shape:+--shape "$shape"} ${layers:+--layers "$layers"} \
  .device/tokenizer.gguf "$model" || exit 1

read -r -a serve_args <<<"${SERVING_SERVE_ARGS---device cuda --dtype bf16}"
if command -v nvidia-smi >/dev/null; then  # the card's memory while the matches play (memory decides the largest N)
  nvidia-smi --query-gpu=timestamp,memory.used,memory.total,utilization.gpu --format=csv -l 2 >"$out/gpu-memory.csv" &
  smi=$!
fi
# --step-tokens 1024: kvframe-serve's default (the bench's is 0).
TAIL=30 step serving "${SERVING_LIMIT:-300}" python3 bench/bench_serving.py --build "$build" --model "$model" --lora none \
  --matches "${SERVING_MATCHES:-1,4,16,64,128}" --paces 0,auto --together "${SERVING_TOGETHER:-128}" --step-tokens 1024 \
  --hands "${SERVING_HANDS:-3}" --one-server --run-timeout "${SERVING_RUN_LIMIT:-120}" \
  --work "$out/serving" --json "$out/serving.json" --plot "" -- "${serve_args[@]}"
[ -n "${smi:-}" ] && kill "$smi"
# The table from the rows each run wrote, also when the time limit cut the runs short.
TAIL=40 step report 30 python3 bench/bench_serving.py --from-json "$out/serving.json" --plot "$out/bench_serving.png"
rm -f "$model"
if [ -n "${OUT:-}" ]; then
  cp "$out/report.log" "$OUT/serving-table.txt"
  cp "$out/serving.json" "$out"/bench_serving.png "$out"/gpu-memory.csv "$OUT/" 2>/dev/null
  tar czf "$OUT/serving-logs.tgz" -C "$out" --exclude='*.html' .
fi
exit 0
