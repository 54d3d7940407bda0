#!/usr/bin/env bash
# Sets up a fresh machine (Debian packages, the default model), builds kvframe,
# and runs the main job as far as it is built today:
#   1. kvframe-stream: a generated ~160 KiB MOBA frame stream partitioned into
#      blocks and diffed frame by frame;
#   2. kvframe-generate: the default model (SmolLM2-135M-Instruct) answering as
#      an NPC, with prefill and decode speed; then the same NPC deciding what
#      to do as JSON valid against examples/npc/blacksmith_action.schema.json;
#   3. bench_game_frames: 20 frames of a 4K-token MOBA match (its static shop
#      catalog dropped to get that small) answered by the
#      block-attention engine in full, prefix and block modes side by side
#      (writes bench_game_frames.png);
#   4. kvframe-holdem: 30 hands of Texas Hold'em, the LLM bot (each decision a
#      frame and an npc_action over the bridge, in-process over inproc://) and
#      the LLM commentator against the rule bots, with the latency report and a
#      replay page (build/holdem_replay.html).
# Usage: scripts/demo.sh [kvframe-stream options, e.g. --frames 200 --frame-kb 1024]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
model=$(bash scripts/fetch-model.sh)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON  # unity: CMakeLists.txt
cmake --build build
build/tools/kvframe-stream "$@"
echo
build/tools/kvframe-generate --model "$model" --chat --max-tokens 64 \
  --system "You are Maren, the blacksmith of a village in a fantasy RPG. Answer in character, in two sentences." \
  --prompt "The wolves took three sheep last night and the player asks what the village should do. What do you tell them?"
echo
build/tools/kvframe-generate --model "$model" --chat --max-tokens 64 \
  --schema examples/npc/blacksmith_action.schema.json \
  --system "You are Maren, the blacksmith of a village in a fantasy RPG. Answer with your next action as JSON." \
  --prompt "The wolves took three sheep last night. What do you do about it?"
echo
build/bench/bench_game_frames --model "$model" --frames 20 --tokens 4096 --drop shop
echo
build/tools/kvframe-holdem --model "$model" --bots llm,tag,station,random --hands 30 --seed 1 \
  --replay-html build/holdem_replay.html
