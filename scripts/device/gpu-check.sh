#!/usr/bin/env bash
# One call on a GPU host (docs/gpu.md): build against the host's
# torch 2.x libtorch with our Debian dependencies carried as .debs, run the
# gpu-labelled tests, then the GPU benchmarks on random-weight Llama-3-8B-shaped
# models (the default model does not travel: a call carries at most 64 MiB).
#
# Here, first:   scripts/device/fetch-debs.sh .device-debs
#                mkdir -p .device && scripts/device/gguf-metadata-only.py MODEL.gguf .device/tokenizer.gguf
# There:         bash scripts/device/gpu-check.sh   (the repo with .device-debs and .device)
# Logs land in $GPU_LOGS (default /tmp/gpu-logs; pack them into $OUT after). Every step
# has its own time limit and the script goes on past a failed one, so one call
# reports as much as it can.
set -uo pipefail
# shellcheck source=scripts/device/gpu-build.sh
source "$(dirname "$0")/gpu-build.sh"   # step, gpu_build, $out
targets=(kv_diff_gpu_tests runtime_engine_gpu_test runtime_model_gpu_test bench_block_attention bench_game_frames bench_npc)
gpu_build "${targets[@]}"

# The ceilings the floors are computed from: device-to-device copy bandwidth
# (bytes read + written) and the bf16 matrix rate, on random data.
TAIL=4 step ceilings 60 python3 - <<'PY'
import torch
x = torch.randn(1 << 30, device="cuda", dtype=torch.bfloat16); y = torch.empty_like(x)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
def t(f, n=20):
    f(); torch.cuda.synchronize(); s, e = torch.cuda.Event(True), torch.cuda.Event(True); ms = []
    for _ in range(n):
        s.record(); f(); e.record(); e.synchronize(); ms.append(s.elapsed_time(e))
    return sorted(ms)[n // 2]
ms = t(lambda: y.copy_(x)); print(f"copy bandwidth {2 * x.numel() * 2 / ms / 1e6:.0f} GB/s (median of 20, 2 GiB)")
ms = t(lambda: a @ b); print(f"bf16 matmul {2 * 8192**3 / ms / 1e9:.0f} TFLOP/s (8192^3)")
PY

TAIL=40 step ctest-gpu 120 ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 100

b=build-gpu/bench; tok=.device/tokenizer.gguf; shape=(--model $tok --shape llama3-8b --device cuda --dtype bf16)
# The game case first (the must-shows): frames sent with their queries, then
# applied ahead of them (--warm, as kvframe-serve does while idle), then
# without CUDA graphs and also with the slack layout (masked attention, the
# explicit path) for the side-by-side ratios; then Table 3 and the NPCs.
TAIL=40 step game32k 150 $b/bench_game_frames "${shape[@]}" --tokens 32768 --frames 30 --change 0.01 \
  --full-every 10 --prefix-every 10 --plot "$out/bench_game_frames_gpu.png"
TAIL=12 step game32k-warm 90 $b/bench_game_frames "${shape[@]}" --tokens 32768 --frames 20 --change 0.01 \
  --full-every 20 --prefix-every 20 --warm
TAIL=12 step game32k-eager 90 $b/bench_game_frames "${shape[@]}" --tokens 32768 --frames 20 --change 0.01 \
  --full-every 20 --prefix-every 20 --no-cuda-graphs
TAIL=12 step game32k-slack-eager 90 $b/bench_game_frames "${shape[@]}" --tokens 32768 --frames 20 --change 0.01 \
  --full-every 20 --prefix-every 20 --no-cuda-graphs --layout slack
step table3 150 $b/bench_block_attention "${shape[@]}" \
  --lengths 512,1024,2048,4096,8192,16384,32768 --reps 3 --plot "$out/bench_block_attention_gpu.png"
step npc 90 $b/bench_npc "${shape[@]}" --npcs 1,8,32 --plot-dir "$out"
exit 0
