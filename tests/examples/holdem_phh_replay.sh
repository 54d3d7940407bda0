#!/usr/bin/env bash
# kvframe-holdem's hand histories replayed by an independent engine: 1,500
# hands at six seats with uneven stacks (the issue's command) written in PHH,
# then played action by action in PokerKit (examples/holdem/phh/check_phh.py),
# which checks each action against its own rules and computes its own pots.
# Every hand must replay; finishing stacks must match except odd chips of
# split pots (PokerKit's convention differs from the cardroom one kvframe
# follows). Skipped (77) when PokerKit is not in the cache: scripts/test.sh
# fetches it with scripts/fetch-python-deps.sh.
# Usage: holdem_phh_replay.sh KVFRAME_HOLDEM WORKDIR
set -u
holdem=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
site=${KVFRAME_PYTHON_DEPS:-$HOME/.cache/kvframe/python}/site
if ! PYTHONPATH=$site /usr/bin/python3 -c "import pokerkit" 2>/dev/null; then
  echo "SKIP: PokerKit is not in $site (run scripts/fetch-python-deps.sh)"
  exit 77
fi
"$holdem" --bots tag,station,random --seats 6 --stacks 200,1000,50,3000,700,1000 --hands 1500 \
  --hand-history "$work/m.phhs" --commentary off >"$work/holdem.txt" 2>&1 ||
  { echo "FAIL: kvframe-holdem"; tail "$work/holdem.txt"; exit 1; }
PYTHONPATH=$site /usr/bin/python3 "$here/../../examples/holdem/phh/check_phh.py" "$work/m.phhs" | tee "$work/check.txt"
status=${PIPESTATUS[0]}
grep -q "^1500 hands replayed in PokerKit" "$work/check.txt" || { echo "FAIL: not every hand was read"; exit 1; }
[ "$status" -eq 0 ] || { echo "FAIL: PokerKit disagreed (exit $status)"; exit 1; }
echo "ok: every hand replayed in PokerKit"
