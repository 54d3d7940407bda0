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
#   6. Stage 4 (round 6): from stage 3, 90 steps of 8 at 3e-4 (the
#      general-text term as in stage 3) over decisions of 40 other matches
#      (seeds 1201-1240) whose frames keep 2, 5, 10, 20 or 30 hands of
#      history, so the bot holds at the simulator's longer frames; their
#      question offers the raise sizes (raise_sizes.h) the schema admits.
#      Stages 1-3 ran before the question offered sizes, on data this
#      script now draws with them.
#   7. Stage 5 (round 7): DAgger. Stage 4's bot plays 12 matches in block
#      mode (seeds 1301-1312, 2 to 30 hands of history; two at a time, one
#      thread each), every decision recorded with the tight-aggressive
#      bot's action as target; all of its seat's decisions, 300 of the other
#      seats' and 800 of stage 4's draw make the mix (scripts/onpolicy_mix.py
#      --seed 17). From stage 4, 100 steps of 8 at 3e-4, the consistency
#      term weighted 4.
#   8. Stage 6 (round 8): DAgger again, its own decisions drawn by class.
#      Stage 5's bot plays 4 matches (seeds 1313-1316, as stage 5's first
#      four); its seat's decisions from stages 5 and 6 are drawn 80 times
#      for each situation and target class (onpolicy_mix.py --own-per-cell,
#      as balance_actions.py draws), with 300 of the other seats' and 600 of
#      stage 4's draw (--seed 19). From stage 5, 50 steps of 8 at 3e-4,
#      consistency weighted 4, seed 11.
#   9. Stage 7 (round 9): DAgger again, checks weighted. Stage 6's bot
#      plays 16 matches (seeds 1317-1332, in fp32: faster than bf16 on CPUs
#      without AMX); its seat's decisions drawn 80 times for each situation
#      and target class and checks twice that (onpolicy_mix.py
#      --class-weight check=2: stage 6's bot raised on a third of the
#      states where its target checks), with 300 of the other seats' and
#      600 of stage 4's draw (--seed 21). From stage 6, 50 steps of 8 at
#      3e-4, consistency weighted 4, fp32, seed 12.
#  10. The adapter and its rounds' training logs (one file, each line
#      with its round as "stage") into models/.
# About 6 hours on a 2-core CPU. Every step is skipped when its output
# exists and training resumes from its last checkpoint, so after a stop run
# it again.
#
#   scripts/train-holdem-adapter.sh            # work in build/train-holdem
#   KVFRAME_TRAIN_DIR=DIR scripts/train-holdem-adapter.sh
#   # the same recipe for another model, from its block-tuned adapter
#   # (models/<model>.block-lora.gguf, which train-default-adapter.sh writes
#   # with the same KVFRAME_TRAIN_MODEL); writes models/<model>.holdem-lora.gguf
#   KVFRAME_TRAIN_MODEL=gemma3-270m KVFRAME_TRAIN_DIR=build/train-holdem-gemma3 \
#     scripts/train-holdem-adapter.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/training.sh
training_dirs build/train-holdem data
start="models/$model_stem.block-lora.gguf"
if [ ! -s "$start" ]; then
  echo "train-holdem: no $start; make it first: KVFRAME_TRAIN_MODEL=${KVFRAME_TRAIN_MODEL:-}" \
    "scripts/train-default-adapter.sh" >&2
  exit 2
fi
holdem_datasets "$work/data/decisions.jsonl" "$work/data/heldout.jsonl" 2 1101-1140 2101-2102

# balanced_draw DATA PER-CELL SEED OUT
balanced_draw() {
  [ -s "$4" ] || python3 scripts/balance_actions.py --data "$1" --by situation --per-class "$2" --seed "$3" --out "$4"
}
balanced_draw "$work/data/decisions.jsonl" 250 11 "$work/data/balanced.jsonl"
balanced_draw "$work/data/decisions.jsonl" 500 12 "$work/data/balanced2.jsonl"
# Stage 4's decisions: other seeds, frames keeping 2 to 30 hands of history.
if [ ! -s "$work/data/mixed.jsonl" ]; then
  rm -f "$work/data/mixed.part.jsonl"
  holdem_decisions "$work/data/mixed.part.jsonl" 2,10,2,30,5,20 $(seq 1201 1240)
  mv "$work/data/mixed.part.jsonl" "$work/data/mixed.jsonl"
fi
balanced_draw "$work/data/mixed.jsonl" 250 13 "$work/data/balanced_mixed.jsonl"

general_text_args

# holdem_round OUT INIT DATA OPTION...: one round of training, resumable.
holdem_round() {
  local out=$1 init=$2 data=$3
  shift 3
  [ -s "$out/adapter.gguf" ] && return 0
  echo "[train-holdem] $out (resumes from its checkpoint)" >&2
  "$tools/kvframe-finetune" train --resume "${model_args[@]}" --init "$init" --train "$data" \
    --heldout "$work/data/heldout.jsonl" --heldout-limit 16 "${general_args[@]}" \
    --out "$out" --scope query --rank 8 --alpha 16 --batch 8 --schedule cosine --causal-fraction 0.5 \
    --eval-every 0 --checkpoint-every 5 "$@"
}
holdem_round "$work/run1" "$start" "$work/data/balanced.jsonl" \
  --steps 80 --lr 1e-3 --warmup 6 --consistency 1 --seed 5
holdem_round "$work/run2" "$work/run1/adapter.gguf" "$work/data/balanced2.jsonl" \
  --steps 240 --lr 5e-4 --warmup 6 --consistency 2 --seed 6
general_text_args Artistic MPL-1.1
holdem_round "$work/run3" "$work/run2/adapter.gguf" "$work/data/balanced2.jsonl" \
  --steps 30 --lr 2e-4 --warmup 2 --consistency 2 --general-weight 4 --general-per-step 2 --seed 8

holdem_round "$work/run4" "$work/run3/adapter.gguf" "$work/data/balanced_mixed.jsonl" \
  --steps 90 --lr 3e-4 --warmup 4 --consistency 2 --general-weight 4 --general-per-step 2 --seed 9

# onpolicy_decisions DIR ADAPTER FIRST COUNT [OPTION...]: the bot with
# ADAPTER plays COUNT (even) matches in block mode (seeds FIRST to
# FIRST+COUNT-1, 2 to 30 hands of history; odd and even seeds in two
# players, one thread each (OMP_NUM_THREADS=1 too: two processes share the
# cores), OPTIONs passed to kvframe-holdem), into
# DIR/decisions.jsonl in that order, with its rules.json beside.
onpolicy_decisions() {
  local dir=$1 first=$3 last=$(($3 + $4 - 1)) odd even
  mkdir -p "$dir"
  [ -s "$dir/decisions.jsonl" ] && return 0
  rm -f "$dir/part"[12].jsonl
  holdem_players=(--bots llm,tag,station,random --mode block --commentary off "${model_args[@]}" --lora "$2" --threads 1
                  "${@:5}")
  OMP_NUM_THREADS=1 holdem_decisions "$dir/part1.jsonl" 2,10,2,20,5,2 $(seq "$first" 2 $((last - 1))) &
  odd=$!
  OMP_NUM_THREADS=1 holdem_decisions "$dir/part2.jsonl" 5,2,30,2,10,5 $(seq $((first + 1)) 2 "$last") &
  even=$!
  wait "$odd"
  wait "$even"
  cat "$dir/part1.jsonl" "$dir/part2.jsonl" >"$dir/decisions.jsonl"
}

# Stage 5: stage 4's bot at the table.
onpolicy_decisions "$work/onpolicy" "$work/run4/adapter.gguf" 1301 12
[ -s "$work/onpolicy/mix.jsonl" ] || python3 scripts/onpolicy_mix.py --onpolicy "$work/onpolicy/decisions.jsonl" \
  --original "$work/data/balanced_mixed.jsonl" --others 300 --original-count 800 --seed 17 --out "$work/onpolicy/mix.jsonl"
holdem_round "$work/run5" "$work/run4/adapter.gguf" "$work/onpolicy/mix.jsonl" \
  --steps 100 --lr 3e-4 --warmup 4 --consistency 4 --general-weight 4 --general-per-step 2 --seed 10

# Stage 6: stage 5's bot at the table; its own decisions and stage 5's drawn
# per situation and target class.
onpolicy_decisions "$work/onpolicy2" "$work/run5/adapter.gguf" 1313 4
[ -s "$work/onpolicy2/mix.jsonl" ] || python3 scripts/onpolicy_mix.py --onpolicy "$work/onpolicy/decisions.jsonl" \
  --onpolicy "$work/onpolicy2/decisions.jsonl" --own-per-cell 80 --others 300 \
  --original "$work/data/balanced_mixed.jsonl" --original-count 600 --seed 19 --out "$work/onpolicy2/mix.jsonl"
holdem_round "$work/run6" "$work/run5/adapter.gguf" "$work/onpolicy2/mix.jsonl" \
  --steps 50 --lr 3e-4 --warmup 4 --consistency 4 --general-weight 4 --general-per-step 2 --seed 11

# Stage 7: stage 6's bot at the table; checks drawn twice as often.
onpolicy_decisions "$work/onpolicy3" "$work/run6/adapter.gguf" 1317 16 --dtype fp32
[ -s "$work/onpolicy3/mix.jsonl" ] || python3 scripts/onpolicy_mix.py --onpolicy "$work/onpolicy3/decisions.jsonl" \
  --own-per-cell 80 --class-weight check=2 --others 300 \
  --original "$work/data/balanced_mixed.jsonl" --original-count 600 --seed 21 --out "$work/onpolicy3/mix.jsonl"
holdem_round "$work/run7" "$work/run6/adapter.gguf" "$work/onpolicy3/mix.jsonl" \
  --steps 50 --lr 3e-4 --warmup 4 --consistency 4 --general-weight 4 --general-per-step 2 --dtype fp32 --seed 12

mkdir -p models
cp "$work/run7/adapter.gguf" "models/$model_stem.holdem-lora.gguf"
logs=()
for round in 1 2 3 4 5 6 7; do logs+=("$round=$work/run$round/train_log.jsonl"); done
joined_logs "${logs[@]}" >"models/$model_stem.holdem-lora.train_log.jsonl"
echo "[train-holdem] wrote models/$model_stem.holdem-lora.gguf" >&2
