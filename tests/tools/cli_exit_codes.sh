#!/usr/bin/env bash
# The CLIs' exit codes, which scripts rely on, checked on real processes.
# Usage: cli_exit_codes.sh KVFRAME_STREAM KVFRAME_BLOCKS WORKDIR
set -u
stream=$1 blocks=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/expect.sh"

expect 0 "stream: --help" -- "$stream" --help
expect 0 "blocks: --help" -- "$blocks" --help
expect 0 "stream: 5 frames, whole" -- "$stream" --frames 5 --write "$work/frames" --dataset "$work/data.jsonl"
# A training record's frame reads as the stream sent it: its keys in the same order.
python3 -c 'import json,sys
record = json.loads(open(sys.argv[1]).readline())
assert json.dumps(record["frame"]) == json.dumps(json.load(open(sys.argv[2])))' "$work/data.jsonl" "$work/frames/frame_0000.json" ||
  { echo "FAIL: --dataset keeps the frame's key order"; failures=$((failures + 1)); }
expect 0 "stream: 5 frames, json-patch, --json" -- "$stream" --frames 5 --delta json-patch --json
expect 0 "stream: 5 frames, merge" -- "$stream" --frames 5 --delta merge
expect 1 "stream: unknown option" -- "$stream" --no-such-option
expect 2 "stream: missing rules file" -- "$stream" --frames 2 --rules "$work/nope.json"

f0=$work/frames/frame_0000.json f1=$work/frames/frame_0001.json
expect 0 "blocks: list" -- "$blocks" "$f0"
expect 0 "blocks: list --json" -- "$blocks" "$f0" --json
expect 0 "blocks: texts" -- "$blocks" "$f0" --text
[ "$(wc -l < "$work/out.txt")" -eq "$("$blocks" "$f0" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["blocks"]))')" ] ||
  { echo "FAIL: --text printed one line per block"; failures=$((failures + 1)); }
expect 0 "blocks: texts in --json" -- "$blocks" "$f0" --json --text
python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["blocks"]; assert all(x["text"].startswith(x["id"].split(".{")[0]) for x in b)' "$work/out.txt" ||
  { echo "FAIL: each block's text starts with its path"; failures=$((failures + 1)); }
expect 1 "blocks: --text with --prev" -- "$blocks" "$f1" --prev "$f0" --text
expect 0 "blocks: a frame against itself" -- "$blocks" "$f0" --prev "$f0"
expect 4 "blocks: consecutive frames differ" -- "$blocks" "$f1" --prev "$f0"
printf '{"a": ' >"$work/truncated.json"
expect 2 "blocks: truncated frame" -- "$blocks" "$work/truncated.json"
expect 2 "blocks: missing file" -- "$blocks" "$work/missing.json"
expect 1 "blocks: no frame given" -- "$blocks"
expect 0 "blocks: frame on stdin" -- bash -c "\"$blocks\" - < \"$f0\""

finish "all exit codes as documented"
