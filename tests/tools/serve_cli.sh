#!/usr/bin/env bash
# kvframe-serve as a process: the exit codes of the convention
# (include/kvframe/common/exit_codes.h) that probes and scripts read.
# Usage: serve_cli.sh KVFRAME_SERVE WRITE_TINY_MODEL WORKDIR
set -u
serve=$1 write_tiny=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
source "$(dirname "$0")/expect.sh"

tiny_model "$write_tiny"

expect 0 "--help" -- "$serve" --help
expect_in out.txt "Exit status"
expect 1 "unknown option" -- "$serve" --no-such-option
expect 2 "missing model file" -- "$serve" --model "$work/missing.gguf" --bind "ipc://$work/a.sock"
expect 2 "missing --curve-secret file" -- "$serve" --model "$tiny" --curve-secret "$work/missing.key"
expect 3 "cannot bind" -- "$serve" --model "$tiny" --no-warm --bind "ipc://$work/no/such/dir/s.sock"
expect_in err.txt "cannot bind"
expect 4 "--ping with nobody there" -- "$serve" --ping "ipc://$work/nobody.sock" --ping-timeout-ms 300

finish "kvframe-serve: exit codes as documented"
