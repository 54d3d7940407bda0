#!/usr/bin/env bash
# kvframe-generate as a process: its exit codes and output, on a tiny model the
# test writes.
# Usage: generate_cli.sh KVFRAME_GENERATE WRITE_TINY_MODEL WORKDIR
set -u
generate=$1 write_tiny=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/expect.sh"

tiny_model "$write_tiny"
head -c 2000 "$tiny" >"$work/truncated.gguf"

expect 0 "--help" -- "$generate" --help
expect_in out.txt "Exit status"
expect 1 "no prompt" -- "$generate" --model "$tiny"
expect 1 "unknown option" -- "$generate" --no-such-option
expect 2 "missing model file" -- "$generate" --model "$work/missing.gguf" --prompt hi
expect 2 "truncated model file" -- "$generate" --model "$work/truncated.gguf" --prompt hi
expect_in err.txt "next:"
expect 2 "--chat on a model without a chat template" -- "$generate" --model "$tiny" --prompt hi --chat
expect_in err.txt "tokenizer.chat_template"
expect 0 "tiny model, greedy" -- "$generate" --model "$tiny" --prompt "hello" --max-tokens 5
expect_in err.txt "prefill 5 tokens"
expect 0 "tiny model, sampled" -- "$generate" --model "$tiny" --prompt "hello" --max-tokens 5 --temperature 0.8 --top-k 40 --top-p 0.9 --seed 3
cp "$work/out.txt" "$work/sampled_1.txt"
expect 0 "tiny model, same seed again" -- "$generate" --model "$tiny" --prompt "hello" --max-tokens 5 --temperature 0.8 --top-k 40 --top-p 0.9 --seed 3
cmp -s "$work/out.txt" "$work/sampled_1.txt" || { echo "FAIL: the same seed gave different text"; failures=$((failures + 1)); }
expect 0 "tiny model, prompt file" -- bash -c "printf 'abc' > '$work/p.txt' && '$generate' --model '$tiny' --prompt-file '$work/p.txt' --max-tokens 2"
printf '{"type":"object","properties":{"hp":{"type":"integer","minimum":0,"maximum":99}},"required":["hp"]}' >"$work/hp.json"
expect 0 "tiny model, --schema" -- "$generate" --model "$tiny" --prompt "hp?" --schema "$work/hp.json" --max-tokens 16 --temperature 1 --seed 5
expect_in err.txt "stop: complete"
python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); assert 0 <= v["hp"] <= 99 and list(v) == ["hp"]' "$work/out.txt" ||
  { echo "FAIL: --schema output is not the schema's JSON: $(cat "$work/out.txt")"; failures=$((failures + 1)); }
printf '{"type":"string","pattern":"a(?=b)"}' >"$work/pattern.json"  # lookahead: outside the pattern subset
expect 2 "--schema with a pattern feature we do not enforce" -- "$generate" --model "$tiny" --prompt hi --schema "$work/pattern.json"
expect_in err.txt "schema_unsupported"
expect 2 "--schema longer than --max-tokens" -- "$generate" --model "$tiny" --prompt hi --schema "$work/hp.json" --max-tokens 3
expect_in err.txt "unsatisfiable"
expect 0 "tiny model, --stop" -- "$generate" --model "$tiny" --prompt "hello" --max-tokens 8 --stop "zzzz"
# A phi3 file's short LongRoPE factors hold 128 tokens here (a quarter of its
# context_length): a prompt (5 tokens) and --max-tokens past them is refused
# before any work, and runs once the model is loaded for that context.
"$write_tiny" "$work/phi3.gguf" phi3 || { echo "FAIL: write_tiny_model phi3"; exit 1; }
expect 0 "phi3, prompt and --max-tokens at its short factors' context" -- "$generate" --model "$work/phi3.gguf" --prompt hello --max-tokens 123
expect 2 "phi3, prompt and --max-tokens past its short factors' context" -- "$generate" --model "$work/phi3.gguf" --prompt hello --max-tokens 124
expect_in err.txt "phi3.rope.scaling.original_context_length"
expect_in err.txt "--model-context 129"
expect 0 "phi3 loaded for that context" -- "$generate" --model "$work/phi3.gguf" --prompt hello --max-tokens 124 --model-context 129
if "$generate" --model "$tiny" --prompt hi --device cuda --max-tokens 1 >/dev/null 2>&1; then
  echo "ok: --device cuda ran (CUDA build with a GPU)"
else
  expect 3 "--device cuda without CUDA" -- "$generate" --model "$tiny" --prompt hi --device cuda
fi

finish "kvframe-generate behaves as documented"
