# Sourced by test drivers (bash) that need a real kvframe-serve on a tiny
# random-weight model, on a port the OS picks:
#
#   source tests/support/tiny_server.sh
#   trap 'stop_tiny_server; rm -rf "$work"' EXIT    # every exit path stops it
#   start_tiny_server SERVE WRITE_TINY_MODEL WORK   # sets $endpoint and $server_pid
#   ... "$client" "$endpoint" ...
#
# WORK: a folder for the model and the server's log (serve.log). A server that
# exits or does not listen within 120 s fails the test, its log printed.

# Each phase says when it starts, so a run cut short by ctest's timeout shows
# where it stood; each wait has its own bound below ctest's.
say() { echo "[$(date +%T)] $*"; }

server_pid=
endpoint=
tiny_server_work=

stop_tiny_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  fi
  server_pid=
}

start_tiny_server() {
  local serve=$1 write_tiny_model=$2
  tiny_server_work=$3
  say "writing a tiny model"
  "$write_tiny_model" "$tiny_server_work/tiny.gguf"
  say "starting $serve"
  # One thread: a tiny model needs no more, and tests run side by side.
  # --pdeathsig: if ctest kills the driver (a timeout), the server goes too.
  setpriv --pdeathsig KILL -- "$serve" --model "$tiny_server_work/tiny.gguf" --bind tcp://127.0.0.1:0 \
    --log-level info --threads 1 2>"$tiny_server_work/serve.log" &
  server_pid=$!

  # The server logs its bound endpoint (logfmt: endpoint=tcp://127.0.0.1:PORT,
  # maybe quoted) once listening; port 0 would be the bind address, not the port.
  local deadline=$((SECONDS + 120))
  endpoint=
  while [[ -z $endpoint ]]; do
    endpoint=$(grep -m 1 -oE 'endpoint="?tcp://[^ "]+:[1-9][0-9]*' "$tiny_server_work/serve.log" |
      sed -E 's/^endpoint="?//' || true)
    [[ -n $endpoint ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      say "kvframe-serve exited before listening:"; cat "$tiny_server_work/serve.log"; exit 1
    fi
    if ((SECONDS > deadline)); then
      say "kvframe-serve did not log its endpoint within 120 s:"; cat "$tiny_server_work/serve.log"; exit 1
    fi
    sleep 0.2
  done
  say "kvframe-serve $server_pid listening on $endpoint"
}

# The server's log, for a failure's report.
print_tiny_server_log() { echo "--- kvframe-serve log ---"; cat "$tiny_server_work/serve.log"; }
