#!/usr/bin/env bash
# kvframe-blocks --stream on generated streams (kvframe-grid-stream): the
# inputs it reads, the totals it prints, its exit codes; and the grid game's
# shipped rules holding re-encoded tokens under 30%.
# Usage: blocks_stream.sh KVFRAME_BLOCKS KVFRAME_GRID_STREAM GRID_RULES WORKDIR
set -u
blocks=$1 grid=$2 rules=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/expect.sh"
check() {  # check DESCRIPTION PYTHON_EXPRESSION_ON_j ($work/out.txt as JSON)
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$work/out.txt" ||
    { echo "FAIL: $1"; failures=$((failures + 1)); }
}

small="--seed 3 --size 8 --fleets 6 --frames 12"
expect 0 "grid: 12 small frames" -- "$grid" $small --out "$work/small.jsonl"
[ "$(wc -l < "$work/small.jsonl")" -eq 12 ] || { echo "FAIL: one line per frame"; failures=$((failures + 1)); }
"$grid" $small | cmp -s - "$work/small.jsonl" || { echo "FAIL: same seed, same bytes"; failures=$((failures + 1)); }
"$grid" --seed 4 --size 8 --fleets 6 --frames 12 | cmp -s - "$work/small.jsonl" &&
  { echo "FAIL: another seed, other bytes"; failures=$((failures + 1)); }
expect 1 "grid: size out of range" -- "$grid" --size 2
expect 2 "grid: unwritable output" -- "$grid" --frames 2 --out "$work/no/such/dir/x.jsonl"

expect 0 "stream: JSONL, table" -- "$blocks" --stream "$work/small.jsonl"
expect_in out.txt "tokens re-encoded"
expect_in out.txt "estimated from block text bytes"
expect_in out.txt "paths that change most"
expect 0 "stream: JSONL, --json" -- "$blocks" --stream "$work/small.jsonl" --json --top 3
check "a row per frame, totals over frames 1..11" 'len(j["frames"]) == 12 and j["total"]["frames"] == 11'
check "every block is new in frame 0" 'j["frames"][0]["blocks_share"] == 1.0'
check "at most --top paths, most bytes first" \
  '0 < len(j["top_paths"]) <= 3 and j["top_paths"][0]["bytes"] >= j["top_paths"][-1]["bytes"]'
cp "$work/out.txt" "$work/jsonl.json"

mkdir -p "$work/frames"
awk -v dir="$work/frames" '{ printf "%s\n", $0 > sprintf("%s/frame_%04d.json", dir, NR - 1) }' "$work/small.jsonl"
printf 'not a frame' >"$work/frames/notes.txt"
expect 0 "stream: a folder of frame files" -- "$blocks" --stream "$work/frames" --json
python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); sys.exit(a["total"] != b["total"])' \
  "$work/jsonl.json" "$work/out.txt" || { echo "FAIL: folder and JSONL give the same totals"; failures=$((failures + 1)); }
expect 0 "stream: JSONL on standard input" -- bash -c "\"$blocks\" --stream - < \"$work/small.jsonl\""

expect 0 "stream: the grid game with its rules" -- bash -c \
  "\"$grid\" --frames 100 | \"$blocks\" --stream - --rules \"$rules\" --json"
check "shipped rules keep re-encoded tokens under 30%" 'j["total"]["tokens_share"] <= 0.30'
expect 0 "stream: the grid game raw" -- bash -c "\"$grid\" --frames 100 | \"$blocks\" --stream - --json"
check "raw frames re-encode nearly everything" 'j["total"]["tokens_share"] > 0.9'

head -n 3 "$work/small.jsonl" >"$work/bad.jsonl"
printf '{"turn": \n' >>"$work/bad.jsonl"
expect 2 "stream: a truncated frame" -- "$blocks" --stream "$work/bad.jsonl"
expect_in err.txt "bad.jsonl:4"
: >"$work/empty.jsonl"
expect 2 "stream: no frames" -- "$blocks" --stream "$work/empty.jsonl"
expect 2 "stream: missing file" -- "$blocks" --stream "$work/missing.jsonl"
printf '{"quantize": [{"path": "grid", "levels": [10, 0]}]}' >"$work/bad_rules.json"
expect 2 "stream: bad rules" -- "$blocks" --stream "$work/small.jsonl" --rules "$work/bad_rules.json"
expect_in err.txt 'quantize[0] ("grid")'
expect 1 "stream: and a FRAME" -- "$blocks" "$work/frames/frame_0000.json" --stream "$work/small.jsonl"
expect 1 "stream: with --prev" -- "$blocks" --stream "$work/small.jsonl" --prev "$work/frames/frame_0000.json"
expect 1 "stream: --top 0" -- "$blocks" --stream "$work/small.jsonl" --top 0
expect 1 "--top without --stream" -- "$blocks" "$work/frames/frame_0000.json" --top 3

finish "kvframe-blocks --stream as documented"
