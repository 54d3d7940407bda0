#!/usr/bin/env bash
# Makes the MOBA adapter for the default model
# (models/SmolLM2-135M-Instruct.moba-lora.gguf), as it was made: stages 1-2
# are the MOBA-weighted round of docs/finetune.md without its Hold'em
# records, stages 3-4 teach it both block orders.
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
#   3. Both block orders: sessions whose rules read blocks in document order
#      and sessions whose rules put the blocks that changed last
#      ("order": "volatile_last", kvframe's other order) each see a prompt
#      of their own, and an adapter learns the order it trained in. 24
#      frames of ~8K tokens under volatile_last rules (seeds 31-33, every
#      5th of 40 frames at the check's change rate), each match a file of its
#      own so that training reads its frames as one session's, and 8 of 1's
#      ~8K-token frames in document order. Their targets are 2's adapter's
#      own full-mode answers: the causal pass then has nothing new to learn
#      and the consistency term moves block mode alone (with the base
#      model's answers as targets full mode moved to them and block mode
#      parted from it: docs/finetune.md). fp32 (faster than bf16 on CPUs
#      without AMX) on one thread per process, two at a time. Held out: 4
#      frames of seed 37.
#   4. From 2's adapter, 10 steps of 4 over 3's records, consistency 2,
#      lr 3e-4, fp32.
#   5. New frames: 24 more ~8K-token volatile_last frames (seeds 38-40, as
#      3's) and 3's 8 document-order frames, their targets 4's adapter's
#      own full-mode answers; from 4's adapter, 10 steps of 4 over them,
#      as 4 (seed 7). Ten more steps over 3's records instead spread
#      block's answers without keeping their top token (docs/finetune.md).
#   6. The adapter and the training logs into models/ (stage 2's, and 4's
#      and 5's in one file, each line with its "stage").
# About 5 hours on a 2-core CPU from nothing (stages 1-2 2 hours, 3 half
# an hour, 4 three quarters, 5 an hour and a quarter). Every step is
# skipped when its output exists and training resumes from its last
# checkpoint, so after a stop run it again.
#
#   scripts/train-moba-adapter.sh            # work in build/train-moba
#   KVFRAME_TRAIN_DIR=DIR scripts/train-moba-adapter.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/training.sh
training_dirs build/train-moba data

# moba_frames OUT SEED POPULATION EVERY [FRAMES CHANGE-RATE RULES]: appends
# every EVERY-th of FRAMES frames (default 60, change rate 0.02, the MOBA
# example's rules).
moba_frames() {
  local rules=()
  [ -n "${7:-}" ] && rules=(--rules "$7")
  "$tools/kvframe-stream" --frames "${5:-60}" --seed "$2" --population "$3" --change-rate "${6:-0.02}" \
    "${rules[@]}" --dataset "$1" --dataset-every "$4" >/dev/null
}

# distill IN OUT [ADAPTER [OPTION...]]: IN's records with full-mode answers,
# the base model's unless ADAPTER.
distill() {
  "$tools/kvframe-finetune" distill --lora "${3:-none}" --data "$1" --out "$2" --max-tokens 32 "${@:4}"
}

if [ ! -s "$work/data/heldout.jsonl" ]; then
  echo "[train-moba] MOBA frames and the base model's full-mode answers" >&2
  rm -f "$work/data/"*.jsonl
  populations=(0.01 0.02 0.03 0.05 0.015 0.04)
  for i in 0 1 2 3 4 5; do moba_frames "$work/data/frames.jsonl" $((11 + i)) "${populations[$i]}" 6; done
  populations=(0.08 0.085 0.09 0.095)
  for i in 0 1 2 3; do moba_frames "$work/data/frames.jsonl" $((21 + i)) "${populations[$i]}" 10; done
  moba_frames "$work/data/heldout_frames.jsonl" 25 0.09 8
  distill "$work/data/frames.jsonl" "$work/data/train.jsonl"
  distill "$work/data/heldout_frames.jsonl" "$work/data/heldout.jsonl"
fi

general_text_args

echo "[train-moba] training (resumes from $work/run when it has a checkpoint)" >&2
"$tools/kvframe-finetune" train --resume --init models/SmolLM2-135M-Instruct.block-lora.gguf \
  --train "$work/data/train.jsonl" --train "$work/data/train.jsonl" --train "$work/data/train.jsonl" \
  --heldout "$work/data/heldout.jsonl" --heldout-limit 8 "${general_args[@]}" \
  --out "$work/run" --scope query --rank 8 --alpha 16 \
  --steps 40 --batch 4 --lr 5e-4 --warmup 4 --schedule cosine --causal-fraction 1 --consistency 1 \
  --eval-every 20 --checkpoint-every 5 --seed 3

# volatile_last_matches DIR FIRST: the ~8K-token frames of three matches
# under volatile_last rules (seeds FIRST to FIRST+2, every 5th of 40 frames
# at the check's change rate), each match a file of its own in DIR.
volatile_last_matches() {
  local populations=(0.08 0.085 0.09) i
  for i in 0 1 2; do
    moba_frames "$1/s$(($2 + i)).frames.jsonl" $(($2 + i)) "${populations[$i]}" 5 40 0.01 "$work/data/volatile_last.rules.json"
  done
}

vl=$work/data/volatile_last
mkdir -p "$vl"
if [ ! -s "$vl/heldout_s37.frames.jsonl" ]; then
  echo "[train-moba] volatile_last frames" >&2
  rm -f "$vl/"*.frames.jsonl
  # kvframe-stream copies the rules beside its records as rules.json.
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["order"] = "volatile_last"; print(json.dumps(r))' \
    examples/moba/moba.rules.json >"$work/data/volatile_last.rules.json"
  volatile_last_matches "$vl" 31
  moba_frames "$vl/heldout_s37.frames.jsonl" 37 0.09 10 40 0.01 "$work/data/volatile_last.rules.json"
fi
# Every third of 1's ~8K-token frames (seeds 21-24), in document order.
sed -n '61~3p' "$work/data/frames.jsonl" >"$work/data/document_8k.frames.jsonl"

# self_distill ADAPTER NAME.frames.jsonl...: each as NAME.self.jsonl with
# ADAPTER's full-mode answers, two files at a time.
self_distill() {
  local adapter=$1 in out pid pids=()
  shift
  for in in "$@"; do
    out=${in%.frames.jsonl}.self.jsonl
    [ -s "$out" ] && continue
    OMP_NUM_THREADS=1 distill "$in" "$out.part" "$adapter" --dtype fp32 --threads 1 && mv "$out.part" "$out" &
    pids+=($!)
    if [ ${#pids[@]} -eq 2 ]; then
      for pid in "${pids[@]}"; do wait "$pid"; done
      pids=()
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}
echo "[train-moba] both orders' targets: the adapter's own full-mode answers" >&2
self_distill "$work/run/adapter.gguf" "$vl/s31.frames.jsonl" "$vl/s32.frames.jsonl" "$vl/s33.frames.jsonl" "$vl/heldout_s37.frames.jsonl" \
  "$work/data/document_8k.frames.jsonl"

# both_orders_round OUT INIT SEED TRAIN...: 10 steps of 4 from INIT over
# the TRAIN files' records, consistency 2, lr 3e-4, fp32; resumes from
# OUT's checkpoint.
both_orders_round() {
  local out=$1 init=$2 seed=$3 file train=()
  shift 3
  for file in "$@"; do train+=(--train "$file"); done
  echo "[train-moba] $out (resumes from its checkpoint)" >&2
  "$tools/kvframe-finetune" train --resume --init "$init" --dtype fp32 "${train[@]}" \
    --heldout "$vl/heldout_s37.self.jsonl" "${general_args[@]}" \
    --out "$out" --scope query --rank 8 --alpha 16 \
    --steps 10 --batch 4 --lr 3e-4 --warmup 2 --schedule cosine --causal-fraction 1 --consistency 2 \
    --eval-every 0 --checkpoint-every 2 --seed "$seed"
}
both_orders_round "$work/run2" "$work/run/adapter.gguf" 5 \
  "$vl/s31.self.jsonl" "$vl/s32.self.jsonl" "$vl/s33.self.jsonl" "$work/data/document_8k.self.jsonl"

vl2=$work/data/volatile_last2
doc2=$work/data/document2
mkdir -p "$vl2" "$doc2"
if [ ! -s "$vl2/s40.frames.jsonl" ]; then
  echo "[train-moba] new volatile_last frames" >&2
  rm -f "$vl2/"*.frames.jsonl
  volatile_last_matches "$vl2" 38
fi
# The same document-order frames beside their rules, for targets of their own.
cp "$work/data/document_8k.frames.jsonl" "$work/data/rules.json" "$doc2/"
echo "[train-moba] the new frames' targets: 4's adapter's own full-mode answers" >&2
self_distill "$work/run2/adapter.gguf" "$vl2/s38.frames.jsonl" "$vl2/s39.frames.jsonl" "$vl2/s40.frames.jsonl" \
  "$doc2/document_8k.frames.jsonl"

both_orders_round "$work/run3" "$work/run2/adapter.gguf" 7 \
  "$vl2/s38.self.jsonl" "$vl2/s39.self.jsonl" "$vl2/s40.self.jsonl" "$doc2/document_8k.self.jsonl"

mkdir -p models
cp "$work/run3/adapter.gguf" models/SmolLM2-135M-Instruct.moba-lora.gguf
cp "$work/run/train_log.jsonl" models/SmolLM2-135M-Instruct.moba-lora.train_log.jsonl
joined_logs 4="$work/run2/train_log.jsonl" 5="$work/run3/train_log.jsonl" \
  >models/SmolLM2-135M-Instruct.moba-lora.both_orders_log.jsonl
echo "[train-moba] wrote models/SmolLM2-135M-Instruct.moba-lora.gguf" >&2
