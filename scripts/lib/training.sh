# What the adapter recipes (scripts/train-*-adapter.sh) share; sourced, not run.

# training_dirs DEFAULT [SUBDIR...]: sets work (KVFRAME_TRAIN_DIR, else
# DEFAULT) and tools, and makes work's SUBDIRs. Also the model the recipe
# tunes: KVFRAME_TRAIN_MODEL (a path, or a name scripts/fetch-model.sh
# fetches, e.g. gemma3-270m), else the default model; model_args passes it
# to the tools, model_stem names the adapters written into models/.
training_dirs() {
  work=${KVFRAME_TRAIN_DIR:-$1}
  tools=build/tools
  model_args=()
  model_stem=SmolLM2-135M-Instruct
  if [ -n "${KVFRAME_TRAIN_MODEL:-}" ]; then
    model_args=(--model "$KVFRAME_TRAIN_MODEL")
    model_stem=$(basename "${KVFRAME_TRAIN_MODEL%.gguf}")
  fi
  shift
  local sub
  for sub in "$@"; do mkdir -p "$work/$sub"; done
}

# Appends the Hold'em decisions of 40-hand matches to a kvframe-finetune
# dataset (the target: the tight-aggressive bot's action):
# holdem_decisions OUT HISTORIES SEED..., HISTORIES the hands of history a
# frame keeps, one number or a comma list taken in turn per seed. The
# players are rule bots, or what the array holdem_players says (an on-policy
# round: the LLM bot with its adapter and kvframe-holdem's options for it).
holdem_players=(--bots tag,tag,station,random)
holdem_decisions() {
  local out=$1 i=0 history
  local -a histories
  IFS=, read -r -a histories <<<"$2"
  shift 2
  for seed in "$@"; do
    history=${histories[$((i++ % ${#histories[@]}))]}
    build/tools/kvframe-holdem "${holdem_players[@]}" --hands 40 --seed "$seed" --history "$history" \
      --dataset "$out" >/dev/null
  done
}

# holdem_datasets TRAIN HELDOUT HISTORY FIRST-LAST FIRST-LAST: the decisions
# of the training seeds' and the held-out seeds' matches, unless both exist.
holdem_datasets() {
  [ -s "$2" ] && return 0
  echo "[train] Hold'em rule-bot decisions" >&2
  rm -f "$1" "$2"
  holdem_decisions "$1" "$3" $(seq "${4%-*}" "${4#*-}")
  holdem_decisions "$2" "$3" $(seq "${5%-*}" "${5#*-}")
}

# --general FILE for each text the adapter must leave as the base model has
# it: licences (prose) and code. The perplexity check (docs/finetune.md)
# reads other files. general_text_args [LICENCE...]: more licences of
# /usr/share/common-licenses after the usual three. Sets the array general_args.
general_text_args() {
  general_args=()
  local licence more=()
  for licence in "$@"; do more+=("/usr/share/common-licenses/$licence"); done
  for f in /usr/share/common-licenses/Apache-2.0 /usr/share/common-licenses/GFDL-1.3 \
           /usr/share/common-licenses/MPL-2.0 "${more[@]}" /usr/lib/python3.11/argparse.py /usr/lib/python3.11/difflib.py \
           docs/json_blocker.md json_blocker/partition.cpp; do
    [ -f "$f" ] && general_args+=(--general "$f")
  done
}

# joined_logs STAGE=TRAIN_LOG...: the training logs as one, each line with
# its stage first, on stdout.
joined_logs() {
  local pair
  for pair in "$@"; do
    python3 -c 'import json, sys
for line in open(sys.argv[1]): print(json.dumps({"stage": int(sys.argv[2]), **json.loads(line)}))' \
      "${pair#*=}" "${pair%%=*}"
  done
}
