#!/usr/bin/env bash
# Sets up a fresh machine, builds kvframe, and runs the main job: a generated
# ~300 KB MOBA frame stream partitioned into blocks and diffed frame by frame.
# Usage: scripts/demo.sh [kvframe-stream options, e.g. --frames 200 --frame-kb 1024]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
exec build/tools/kvframe-stream "$@"
