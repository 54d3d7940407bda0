#!/usr/bin/env bash
# Makes the Hold'em adapter for the default model
# (models/SmolLM2-135M-Instruct.holdem-lora.gguf), as it was made:
#   1. Decisions of 40 rule-bot matches (seeds 1101-1140, 40 hands, 2 hands
#      of history: the decision does not depend on older hands, and short
#      frames train three times faster) and 2 held-out ones (2101-2102), on
#      the gamecore with the seat's own read, which the question repeats
#      (where a query-scope adapter reads it alike in both modes); the
#      tight-aggressive bot's action is the target.
#   2. The action classes resampled to 250 records each within each
#      situation (preflop or postflop, facing a bet or checked to:
#      scripts/balance_actions.py --by situation), commentary records up to 5%.
#   3. A query-scope adapter trained from kvframe's block-tuned one
#      (models/SmolLM2-135M-Instruct.block-lora.gguf, which already makes
#      block mode answer as full does), half the samples
#      under both masks so full mode learns the target too, and on those the
#      consistency term (KL(full || block) on the answer) so block follows
#      full; KL to the base model on general text. 80 steps of 8 at a
#      learning rate of 1e-3.
#   4. The adapter into models/.
# About 1.5 hours on a 2-core CPU. Every step is skipped when its output exists and
# training resumes from its last checkpoint, so after a stop run it again.
#
#   scripts/train-holdem-adapter.sh            # work in build/train-holdem
#   KVFRAME_TRAIN_DIR=DIR scripts/train-holdem-adapter.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/training.sh
training_dirs build/train-holdem data
holdem_datasets "$work/data/decisions.jsonl" "$work/data/heldout.jsonl" 2 1101-1140 2101-2102

if [ ! -s "$work/data/balanced.jsonl" ]; then
  python3 scripts/balance_actions.py --data "$work/data/decisions.jsonl" --by situation --per-class 250 --seed 11 \
    --out "$work/data/balanced.jsonl"
fi

general_text_args

echo "[train-holdem] training (resumes from $work/run when it has a checkpoint)" >&2
"$tools/kvframe-finetune" train --resume --init models/SmolLM2-135M-Instruct.block-lora.gguf \
  --train "$work/data/balanced.jsonl" \
  --heldout "$work/data/heldout.jsonl" --heldout-limit 16 "${general_args[@]}" \
  --out "$work/run" --scope query --rank 8 --alpha 16 \
  --steps 80 --batch 8 --lr 1e-3 --warmup 6 --schedule cosine --causal-fraction 0.5 --consistency 1 \
  --eval-every 40 --checkpoint-every 5 --seed 5

mkdir -p models
cp "$work/run/adapter.gguf" models/SmolLM2-135M-Instruct.holdem-lora.gguf
echo "[train-holdem] wrote models/SmolLM2-135M-Instruct.holdem-lora.gguf" >&2
