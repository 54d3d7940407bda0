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

"$write_tiny_model" "$work/tiny.gguf"
"$serve" --model "$work/tiny.gguf" --bind tcp://127.0.0.1:0 --log-level info 2>"$work/serve.log" &
server_pid=$!

# The server logs its bound endpoint (logfmt: endpoint=tcp://127.0.0.1:PORT,
# maybe quoted) once listening; port 0 would be the bind address, not the port.
endpoint=
for _ in $(seq 600); do
  endpoint=$(sed -nE 's/.*endpoint="?(tcp:\/\/[^ "]+:[1-9][0-9]*).*/\1/p' "$work/serve.log" | head -n 1)
  [[ -n $endpoint ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "kvframe-serve exited before listening:"; cat "$work/serve.log"; exit 1
  fi
  sleep 0.1
done
if [[ -z $endpoint ]]; then
  echo "kvframe-serve did not log its endpoint within 60 s:"; cat "$work/serve.log"; exit 1
fi
echo "kvframe-serve $server_pid listening on $endpoint"

status=0
LD_LIBRARY_PATH="$client_lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MONO_PATH=$(dirname "$client_dll") \
  mono --debug "$test_exe" "$endpoint" || status=$?
if [[ $status -ne 0 ]]; then
  echo "--- kvframe-serve log ---"; cat "$work/serve.log"
fi
exit "$status"
