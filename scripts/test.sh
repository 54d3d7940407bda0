#!/usr/bin/env bash
# Sets up a fresh machine (Debian packages, the default model, Gemma 3 270M),
# builds kvframe,
# and runs every test.
# Usage: scripts/test.sh [extra ctest args, e.g. -L unit]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/fetch-model.sh >/dev/null  # the default model, for tests labelled `model`
bash scripts/fetch-model.sh gemma3-270m >/dev/null  # Gemma 3 270M against llama.cpp (label `model`)
bash scripts/fetch-python-deps.sh >/dev/null  # PokerKit: the Python example's game and the PHH replay check
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON  # unity: CMakeLists.txt
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
