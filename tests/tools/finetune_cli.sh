#!/usr/bin/env bash
# kvframe-finetune as a process, on a tiny model the test writes: train's
# exit codes, a run cut short by --stop-after then resumed keeps the schedule
# of an uninterrupted run, and the adapter eval's --lora auto picks.
# Usage: finetune_cli.sh KVFRAME_FINETUNE WRITE_TINY_MODEL WORKDIR
set -u
finetune=$1 write_tiny=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/expect.sh"

tiny_model "$write_tiny"
for i in 1 2 3 4; do
  printf '{"frame":{"hp":%d,"team":"red"},"instruction":"hp?","target":"%d"}\n' "$i" "$i"
done >"$work/data.jsonl"
train=("$finetune" train --model "$tiny" --dtype fp32 --train "$work/data.jsonl" --steps 6 --batch 1 --warmup 1
       --checkpoint-every 1 --eval-every 0)

expect 0 "--help" -- "$finetune" train --help
expect_in out.txt "--stop-after"
expect 1 "a negative --stop-after" -- "${train[@]}" --out "$work/bad" --stop-after -1
expect 0 "whole run, 4 of 6 steps" -- "${train[@]}" --out "$work/whole" --stop-after 4
expect 0 "cut after 2 steps" -- "${train[@]}" --out "$work/cut" --stop-after 2
[ -s "$work/cut/adapter.gguf" ] || { echo "FAIL: no adapter after --stop-after"; failures=$((failures + 1)); }
expect 0 "resumed to step 4" -- "${train[@]}" --out "$work/cut" --stop-after 4 --resume
expect_in err.txt "resumed at step 2"
lrs() { python3 -c 'import json,sys; print([round(r["lr"], 12) for r in map(json.loads, open(sys.argv[1])) if "lr" in r])' "$1"; }
whole=$(lrs "$work/whole/train_log.jsonl") cut=$(lrs "$work/cut/train_log.jsonl")
[ "$whole" = "$cut" ] && [ "$(python3 -c "print(len($whole))")" = 4 ] ||
  { echo "FAIL: learning rates by step: whole run $whole, cut and resumed $cut"; failures=$((failures + 1)); }

# eval --lora auto with the default model takes the shipped adapter of the
# game the data's ids name (--game overrides): the tiny model under the
# default model's file name, whose shapes then refuse that adapter (exit 2).
as_default=$work/as_default/SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$work/as_default" && cp "$tiny" "$as_default"
printf '{"id":"holdem-s1-hand_0001-p1-2","frame":{"pot":15},"instruction":"act","target":"fold"}\n' >"$work/holdem.jsonl"
eval=("$finetune" eval --model "$as_default" --dtype fp32 --data "$work/holdem.jsonl" --modes block)
expect 2 "eval of Hold'em records, --lora auto" -- "${eval[@]}"
expect_in err.txt "SmolLM2-135M-Instruct.holdem-lora.gguf"
expect 2 "the same, --game moba" -- "${eval[@]}" --game moba
expect_in err.txt "SmolLM2-135M-Instruct.moba-lora.gguf"
finish "kvframe-finetune: exit codes, --stop-after and eval's adapter pass"
