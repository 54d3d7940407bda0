#!/usr/bin/env bash
# kvframe-holdem as a process: exit codes, replays with a fixed seed, the LLM
# bot on a tiny model in-process (inproc://, two modes side by side) and over
# a real kvframe-serve (ipc://), and the replay page it writes; and
# kvframe-holdem-client, the same program without the in-process server.
# Usage: holdem_cli.sh KVFRAME_HOLDEM WRITE_TINY_MODEL KVFRAME_SERVE WORKDIR KVFRAME_HOLDEM_CLIENT
set -u
holdem=$1 write_tiny=$2 serve=$3 work=$4 client=$5
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/../tools/expect.sh"

tiny_model "$write_tiny" llama 4096

# Two replay pages of one match: the same hands, and the same answers to the same decisions.
same_match() {
  python3 - "$@" <<'PY' || failures=$((failures + 1))
import json, re, sys
def record(path):
    page = open(path).read()
    r = json.loads(re.search(r'<script id="record" type="application/json">(.*?)</script>', page, re.S).group(1))
    return r["hands"], [(d["hand"], d["seat"], d["action"], d["samples"]["block"]["answer"]) for d in r["decisions"]]
assert record(sys.argv[1]) == record(sys.argv[2]), "FAIL: not one match: " + sys.argv[3]
print("ok: " + sys.argv[3])
PY
}

expect 0 "--help" -- "$holdem" --help
expect_in out.txt "Exit codes"
expect 1 "unknown bot" -- "$holdem" --bots tag,shark
expect 1 "one seat" -- "$holdem" --bots tag --seats 1
expect 2 "missing model" -- "$holdem" --bots llm,tag --model "$work/missing.gguf"
expect_in err.txt "fetch-model.sh"

# Rule bots need no model; a fixed seed replays byte for byte.
expect 0 "rule bots, 200 hands" -- "$holdem" --bots tag,station,random,random --hands 200 --seed 3 --json
cp "$work/out.txt" "$work/rules_1.json"
expect 0 "rule bots, same seed" -- "$holdem" --bots tag,station,random,random --hands 200 --seed 3 --json
cmp -s "$work/out.txt" "$work/rules_1.json" || { echo "FAIL: the same seed played a different match"; failures=$((failures + 1)); }
expect 0 "rule bots, --seats repeats --bots" -- "$holdem" --bots tag,random --seats 9 --hands 20 --commentary off
expect_in out.txt "p9"

# Stacks per seat, blinds and a hand history in PHH (holdem_phh_replay.sh
# replays one in PokerKit).
expect 1 "--stacks of the wrong count" -- "$holdem" --bots tag,random --stacks 100,200,300 --hands 1
expect_in err.txt "one per seat"
expect 1 "--stacks not positive" -- "$holdem" --bots tag,random --stacks 100,0 --hands 1
expect 1 "--blinds malformed" -- "$holdem" --bots tag,random --blinds 10/5 --hands 1
expect_in err.txt "SB/BB"
expect 0 "stacks, blinds, hand history" -- "$holdem" --bots tag,station,random --stacks 200,1000,50 --blinds 2/4 \
  --hands 20 --hand-history "$work/m.phhs" --commentary off
python3 - "$work/m.phhs" <<'PY' || failures=$((failures + 1))
import re, sys
text = open(sys.argv[1]).read()
hands = re.findall(r"^\[(\d+)\]$", text, re.M)
assert hands == [str(n) for n in range(1, 21)], hands
assert text.count('blinds_or_straddles = [2, 4, 0]') == 20
assert sorted(map(int, re.search(r"starting_stacks = \[(.*)\]", text).group(1).split(", "))) == [50, 200, 1000]
assert len(re.findall(r'_deck = "([2-9TJQKA][cdhs]){52}"', text)) == 20
print("ok: 20 hands in PHH")
PY
expect 1 "--hand-history in a missing folder" -- "$holdem" --bots tag,random --hands 1 --hand-history "$work/no/such/m.phhs"
expect_in err.txt "cannot write the hand history"

# The LLM bot and the commentator on the tiny model, in this process: block
# plays, full answers the same decisions.
llm_args=(--model "$tiny" --bots llm,tag --hands 4 --seed 5 --mode block,full --history 2 --context 4096 --threads 1)
expect 0 "LLM bot in-process, block and full" -- "$holdem" "${llm_args[@]}" --json --replay-html "$work/match.html"
cp "$work/out.txt" "$work/llm_1.json"
python3 - "$work/llm_1.json" "$work/match.html" <<'PY' || failures=$((failures + 1))
import json, re, sys
report = json.load(open(sys.argv[1]))
llm = report["llm"][0]
assert llm["invalid"] == 0, llm
assert llm["decisions"] > 0, llm
modes = {m["mode"]: m for m in llm["modes"]}
assert set(modes) == {"block", "full"}, modes
assert modes["block"]["tokens_encoded"] < modes["full"]["tokens_encoded"], modes
# Every decision as each mode answered it, with its action kinds' probabilities.
assert len(llm["records"]) == llm["decisions"], llm["records"]
for decision in llm["records"]:
    assert [a["mode"] for a in decision["modes"]] == ["block", "full"], decision
    for a in (a for a in decision["modes"] if "p" in a):  # none when no likely token named the action
        assert abs(sum(a["p"].values()) - 1) < 1e-4 and 0 < a["covered"] <= 1 + 1e-6, decision
        assert a["action"] == "invalid" or a["action"] in a["p"], decision
assert any("p" in a for d in llm["records"] for a in d["modes"]), llm["records"]
page = open(sys.argv[2]).read()
assert "http://" not in page and "https://" not in page, "the replay page must be self-contained"
record = json.loads(re.search(r'<script id="record" type="application/json">(.*?)</script>', page, re.S).group(1))
assert len(record["hands"]) == 4 and record["modes"] == ["block", "full"]
assert all(set(d["samples"]) == {"block", "full"} for d in record["decisions"])
print("ok: report and replay record")
PY
cp "$work/match.html" "$work/match_1.html"
# The page of a real match draws (tests/examples/replay has the thorough page test).
if command -v chromium >/dev/null; then
  chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/chromium" --virtual-time-budget=2000 \
    --dump-dom "file://$work/match.html#hand=2&step=3" >"$work/dom.html" 2>/dev/null
  grep -q 'data-drawn="1"' "$work/dom.html" && grep -q 'data-hand="2"' "$work/dom.html" && ! grep -q 'data-error=' "$work/dom.html" ||
    { echo "FAIL: the real match's replay page did not draw hand 2"; failures=$((failures + 1)); }
fi
expect 0 "LLM bot in-process, same seed" -- "$holdem" "${llm_args[@]}" --json --replay-html "$work/match.html"
same_match "$work/match_1.html" "$work/match.html" "the LLM match replays identically"

# A phi3 file whose short LongRoPE factors hold 1,024 tokens (a quarter of
# its 4,096): the in-process model is loaded for --context, as llama.cpp for
# its -c, so sessions of 2,048 tokens rotate with the long factors and play.
"$write_tiny" "$work/phi3.gguf" phi3 4096 || { echo "FAIL: write_tiny_model phi3"; failures=$((failures + 1)); }
expect 0 "phi3 past its short factors' context, in-process" -- "$holdem" --model "$work/phi3.gguf" --bots llm,tag \
  --hands 1 --seed 5 --mode block --history 2 --context 2048 --commentary off --threads 1

# Over the bridge to a kvframe-serve process.
"$serve" --model "$tiny" --bind "ipc://$work/serve.sock" --threads 1 --log-level info 2>"$work/serve.log" &
serve_pid=$!
for _ in $(seq 100); do grep -q listening "$work/serve.log" && break; sleep 0.1; done
remote_args=(--server "ipc://$work/serve.sock" --bots llm,random --hands 2 --history 2 --context 4096 --json)
expect 0 "LLM bot over --server" -- "$holdem" "${remote_args[@]}" --replay-html "$work/remote.html"
expect_in out.txt "invalid"
# The client build plays the same match against the same server (greedy answers, a fixed seed).
expect 0 "kvframe-holdem-client over --server" -- "$client" "${remote_args[@]}" --replay-html "$work/remote_client.html"
same_match "$work/remote.html" "$work/remote_client.html" "kvframe-holdem-client plays kvframe-holdem's match"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null
expect 2 "kvframe-holdem-client without --server" -- "$client" --bots llm,random --hands 1
expect_in err.txt "--server"
expect 0 "kvframe-holdem-client, rule bots alone" -- "$client" --bots tag,random --hands 5 --commentary off
expect 2 "--server with nobody there" -- "$holdem" --server "ipc://$work/nobody.sock" --bots llm,random --hands 1
expect_in err.txt "kvframe-serve"
finish "kvframe-holdem CLI: all passed"
