#!/usr/bin/env bash
# Makes the MOBA adapter for the default model
# (models/SmolLM2-135M-Instruct.moba-lora.gguf), as it was made: the settings
# are the MOBA-weighted round's of docs/finetune.md, which met the MOBA goal,
# without its Hold'em records.
#   1. MOBA frames: 60 of ~4.5-6K tokens (kvframe-stream seeds 11-16, every
#      6th of 60 frames, as the block-tuned adapter's data) and 24 of ~8K
#      tokens (seeds 21-24, every 10th of 60 frames), the length the MOBA
#      check measures at; their targets the base model's own full-mode
#      answers (kvframe-finetune distill). Held out: 8 frames of seed 25.
#      The check (bench_game_frames) runs generator seed 1: no training
#      frame comes from it.
#   2. A query-scope adapter trained from kvframe's block-tuned one
#      (models/SmolLM2-135M-Instruct.block-lora.gguf), every record three
#      times, 40 steps of 4, every sample under both masks with the
#      consistency term (block mode's answer distribution pulled to full
#      mode's), lr 5e-4, KL to the base model on general text. With an
#      adapter of its own MOBA need not share one with Hold'em, whose live
#      decisions both MOBA-weighted rounds of the shared adapter broke
#      (docs/finetune.md).
#   3. The adapter into models/.
# About 2 hours on a 2-core CPU (38 min for the targets, 89 for training
# with its held-out checks). Every step is skipped when its output exists
# and training resumes from its last checkpoint, so after a stop run it again.
#
#   scripts/train-moba-adapter.sh            # work in build/train-moba
#   KVFRAME_TRAIN_DIR=DIR scripts/train-moba-adapter.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/training.sh
training_dirs build/train-moba data

# moba_frames OUT SEED POPULATION EVERY: appends every EVERY-th of 60 frames.
moba_frames() {
  "$tools/kvframe-stream" --frames 60 --seed "$2" --population "$3" --change-rate 0.02 \
    --dataset "$1" --dataset-every "$4" >/dev/null
}

if [ ! -s "$work/data/heldout.jsonl" ]; then
  echo "[train-moba] MOBA frames and the base model's full-mode answers" >&2
  rm -f "$work/data/"*.jsonl
  populations=(0.01 0.02 0.03 0.05 0.015 0.04)
  for i in 0 1 2 3 4 5; do moba_frames "$work/data/frames.jsonl" $((11 + i)) "${populations[$i]}" 6; done
  populations=(0.08 0.085 0.09 0.095)
  for i in 0 1 2 3; do moba_frames "$work/data/frames.jsonl" $((21 + i)) "${populations[$i]}" 10; done
  moba_frames "$work/data/heldout_frames.jsonl" 25 0.09 8
  "$tools/kvframe-finetune" distill --lora none --data "$work/data/frames.jsonl" \
    --out "$work/data/train.jsonl" --max-tokens 32
  "$tools/kvframe-finetune" distill --lora none --data "$work/data/heldout_frames.jsonl" \
    --out "$work/data/heldout.jsonl" --max-tokens 32
fi

general_text_args

echo "[train-moba] training (resumes from $work/run when it has a checkpoint)" >&2
"$tools/kvframe-finetune" train --resume --init models/SmolLM2-135M-Instruct.block-lora.gguf \
  --train "$work/data/train.jsonl" --train "$work/data/train.jsonl" --train "$work/data/train.jsonl" \
  --heldout "$work/data/heldout.jsonl" --heldout-limit 8 "${general_args[@]}" \
  --out "$work/run" --scope query --rank 8 --alpha 16 \
  --steps 40 --batch 4 --lr 5e-4 --warmup 4 --schedule cosine --causal-fraction 1 --consistency 1 \
  --eval-every 20 --checkpoint-every 5 --seed 3

mkdir -p models
cp "$work/run/adapter.gguf" models/SmolLM2-135M-Instruct.moba-lora.gguf
echo "[train-moba] wrote models/SmolLM2-135M-Instruct.moba-lora.gguf" >&2
