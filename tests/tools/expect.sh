# Shared by the CLI tests: run a command, compare its exit status, count failures.
# Source it after setting $work (a scratch folder); then
#   expect CODE DESCRIPTION -- COMMAND...   stdout -> $work/out.txt, stderr -> $work/err.txt
#   expect_in out.txt|err.txt TEXT          the last command printed TEXT
#   finish MESSAGE                          exit 1 if anything failed, else print MESSAGE
#   tiny_model WRITE_TINY_MODEL [ARGS...]   a tiny model written to $work/tiny.gguf, its path
#                                           in $tiny (exit 1 if the writer fails)
failures=0
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$work/err.txt"; failures=$((failures + 1))
  else
    echo "ok: $what (exit $got)"
  fi
}
expect_in() {
  grep -qF -- "$2" "$work/$1" || { echo "FAIL: '$2' not in $1"; cat "$work/$1"; failures=$((failures + 1)); }
}
finish() {
  [ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
  echo "$1"
}
tiny_model() {
  local writer=$1
  shift
  tiny=$work/tiny.gguf
  "$writer" "$tiny" "$@" || { echo "FAIL: write_tiny_model"; exit 1; }
}
