#!/usr/bin/env bash
# One call on a lent GPU host: the training cost of the default model's
# adapter recipe (scripts/train-default-adapter.sh, stage 1 settings) on CUDA.
# The model does not travel (94 MiB > a call's 64 MiB): random-model-gguf.py
# makes F16 weights of its shape from its metadata, which is enough for time
# per step and useless for anything else.
#
# Here, first (besides gpu-check.sh's .device-debs and .device/tokenizer.gguf):
#   a random 480 of the Hold'em training records in .device/train-sample.jsonl,
#   the stage's --general texts as .device/general-*.txt
# There: bash scripts/device/gpu-train-timing.sh   (the repo with .device-debs and .device)
set -uo pipefail
out=${OUT:-/tmp/gpu-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
eval "$(bash .device-debs/unpack-debs.sh .device-debs /opt/kvdeps)"
torch_dir=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVFRAME_LIBTORCH="$torch_dir" -DKVFRAME_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTORCH_CUDA_ARCH_LIST=9.0 \
  -DZeroMQ_INCLUDE_DIR=/opt/kvdeps/usr/include -DZeroMQ_LIBRARY=/opt/kvdeps/usr/lib/x86_64-linux-gnu/libzmq.so \
  >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" --target kvframe-finetune >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
python3 scripts/device/random-model-gguf.py .device/tokenizer.gguf /tmp/random-135m.gguf
general=(); for f in .device/general-*.txt; do general+=(--general "$f"); done
timeout 150 build-gpu/tools/kvframe-finetune train --model /tmp/random-135m.gguf --device cuda --dtype bf16 \
  --train .device/train-sample.jsonl "${general[@]}" --out /tmp/train-timing --scope query --rank 8 --alpha 16 \
  --steps 10 --batch 8 --lr 1e-3 --warmup 2 --causal-fraction 0.25 --eval-every 0 --checkpoint-every 100 --seed 1 \
  2>&1 | tee "$out/train.log"
cp /tmp/train-timing/train_log.jsonl "$out/" 2>/dev/null
python3 - "$out/train_log.jsonl" <<'PY'
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "seconds" in r][2:]  # steps 1-2: CUDA warm-up
s, n, t = sum(r["seconds"] for r in rows), sum(r["samples"] for r in rows), sum(r["tokens"] for r in rows)
print(f"steps {rows[0]['step']}..{rows[-1]['step']}: {n} samples, {t} tokens, {s:.1f} s -> "
      f"{t / s:.0f} tok/s, {1000 * s / n:.1f} s per 1,000 samples")
PY
