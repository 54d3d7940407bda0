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
source "$(dirname "$0")/../support/tiny_server.sh"
trap 'stop_tiny_server; rm -rf "$work"' EXIT
start_tiny_server "$serve" "$write_tiny_model" "$work"

status=0
LD_LIBRARY_PATH="$client_lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MONO_PATH=$(dirname "$client_dll") \
  timeout 150 mono --debug "$test_exe" "$endpoint" || status=$?
if [[ $status -ne 0 ]]; then
  say "the C# test failed (exit $status; 124: it ran past 150 s)"
  print_tiny_server_log
fi
exit "$status"
