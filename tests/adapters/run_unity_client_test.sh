#!/usr/bin/env bash
# Starts kvframe-serve on a tiny random-weight model and a port the OS picks,
# runs the Unity package's C# client test against it under mono, and stops the
# server on every exit path.
#
#   run_unity_client_test.sh WRITE_TINY_MODEL SERVE CLIENT_LIB_DIR TEST_EXE CLIENT_DLL
#
# SERVE: the kvframe-serve binary ($KVFRAME_SERVE wins; empty when this build
# has none). Exit 0 pass, 1 fail, 77 skipped (no server).
set -euo pipefail
write_tiny_model=$1 serve=${KVFRAME_SERVE:-$2} client_lib_dir=$3 test_exe=$4 client_dll=$5

if [[ -z $serve || ! -f $serve || ! -x $serve ]]; then
  echo "SKIP: no kvframe-serve (set KVFRAME_SERVE or build with KVFRAME_TORCH=ON)"
  exit 77
fi

work=$(mktemp -d)
server_pid=
stop_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$work"
}
trap stop_server EXIT

# Each phase says when it starts, so a run cut short by ctest's timeout shows
# where it stood; each wait has its own bound below ctest's.
say() { echo "[$(date +%T)] $*"; }

say "writing a tiny model"
"$write_tiny_model" "$work/tiny.gguf"
say "starting $serve"
# One thread: a tiny model needs no more, and tests run side by side.
# --pdeathsig: if ctest kills this script (a timeout), the server goes too.
setpriv --pdeathsig KILL -- "$serve" --model "$work/tiny.gguf" --bind tcp://127.0.0.1:0 --log-level info --threads 1 2>"$work/serve.log" &
server_pid=$!

# The server logs its bound endpoint (logfmt: endpoint=tcp://127.0.0.1:PORT,
# maybe quoted) once listening; port 0 would be the bind address, not the port.
endpoint=
deadline=$((SECONDS + 120))
while [[ -z $endpoint ]]; do
  endpoint=$(grep -m 1 -oE 'endpoint="?tcp://[^ "]+:[1-9][0-9]*' "$work/serve.log" | sed -E 's/^endpoint="?//' || true)
  [[ -n $endpoint ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "kvframe-serve exited before listening:"; cat "$work/serve.log"; exit 1
  fi
  if ((SECONDS > deadline)); then
    say "kvframe-serve did not log its endpoint within 120 s:"; cat "$work/serve.log"; exit 1
  fi
  sleep 0.2
done
say "kvframe-serve $server_pid listening on $endpoint"

status=0
LD_LIBRARY_PATH="$client_lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MONO_PATH=$(dirname "$client_dll") \
  timeout 150 mono --debug "$test_exe" "$endpoint" || status=$?
if [[ $status -ne 0 ]]; then
  say "the C# test failed (exit $status; 124: it ran past 150 s)"
  echo "--- kvframe-serve log ---"; cat "$work/serve.log"
fi
exit "$status"
