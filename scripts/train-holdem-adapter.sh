#!/usr/bin/env bash
# Makes the Hold'em adapter for the default model
# (models/SmolLM2-135M-Instruct.holdem-lora.gguf), as it was made:
#   1. Decisions of 40 rule-bot matches (seeds 1101-1140, 40 hands, 2 hands
#      of history: the decision does not depend on older hands, and short
#      frames train three times faster) and 2 held-out ones (2101-2102), on
#      the gamecore with the seat's own read, which the question repeats
#      (where a query-scope adapter reads it alike in both modes); the
#      tight-aggressive bot's action is the target.
#   2. The action classes resampled within each situation (preflop or
#      postflop, facing a bet or checked to: scripts/balance_actions.py
#      --by situation), commentary records up to 5%: 250 a cell for stage 1,
#      500 (another draw) for stages 2 and 3.
#   3. Stage 1 (round 3 of docs/finetune.md): a query-scope adapter
#      trained from kvframe's block-tuned one
#      (models/SmolLM2-135M-Instruct.block-lora.gguf, which already makes
#      block mode answer as full does), half the samples under both masks so
#      full mode learns the target too, and on those the consistency term
#      (KL(full || block) on the answer) so block follows full; KL to the
#      base model on general text. 80 steps of 8 at a learning rate of 1e-3.
#   4. Stage 2 (round 4): from stage 1, 240 steps of 8 over the larger draw
#      at 5e-4, the consistency term weighted 2.
#   5. Stage 3 (round 5): 30 steps of 8 at 2e-4 with the general-text term
#      weighted 4, two windows a step and two more licences: stage 2 had
#      moved plain prose (the perplexity check) further than the bar allows.
#   6. The adapter into models/.
# About 2.5 hours on a 2-core CPU. Every step is skipped when its output
# exists and training resumes from its last checkpoint, so after a stop run
# it again.
#
#   scripts/train-holdem-adapter.sh            # work in build/train-holdem
#   KVFRAME_TRAIN_DIR=DIR scripts/train-holdem-adapter.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/training.sh
training_dirs build/train-holdem data
holdem_datasets "$work/data/decisions.jsonl" "$work/data/heldout.jsonl" 2 1101-1140 2101-2102

# balanced_draw PER-CELL SEED OUT
balanced_draw() {
  [ -s "$3" ] || python3 scripts/balance_actions.py --data "$work/data/decisions.jsonl" --by situation \
    --per-class "$1" --seed "$2" --out "$3"
}
balanced_draw 250 11 "$work/data/balanced.jsonl"
balanced_draw 500 12 "$work/data/balanced2.jsonl"

general_text_args

# holdem_round OUT INIT DATA OPTION...: one round of training, resumable.
holdem_round() {
  local out=$1 init=$2 data=$3
  shift 3
  [ -s "$out/adapter.gguf" ] && return 0
  echo "[train-holdem] $out (resumes from its checkpoint)" >&2
  "$tools/kvframe-finetune" train --resume --init "$init" --train "$data" \
    --heldout "$work/data/heldout.jsonl" --heldout-limit 16 "${general_args[@]}" \
    --out "$out" --scope query --rank 8 --alpha 16 --batch 8 --schedule cosine --causal-fraction 0.5 \
    --eval-every 0 --checkpoint-every 5 "$@"
}
holdem_round "$work/run1" models/SmolLM2-135M-Instruct.block-lora.gguf "$work/data/balanced.jsonl" \
  --steps 80 --lr 1e-3 --warmup 6 --consistency 1 --seed 5
holdem_round "$work/run2" "$work/run1/adapter.gguf" "$work/data/balanced2.jsonl" \
  --steps 240 --lr 5e-4 --warmup 6 --consistency 2 --seed 6
general_text_args Artistic MPL-1.1
holdem_round "$work/run3" "$work/run2/adapter.gguf" "$work/data/balanced2.jsonl" \
  --steps 30 --lr 2e-4 --warmup 2 --consistency 2 --general-weight 4 --general-per-step 2 --seed 8

mkdir -p models
cp "$work/run3/adapter.gguf" models/SmolLM2-135M-Instruct.holdem-lora.gguf
echo "[train-holdem] wrote models/SmolLM2-135M-Instruct.holdem-lora.gguf" >&2
