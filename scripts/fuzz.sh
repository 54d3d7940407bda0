#!/usr/bin/env bash
# Fuzzes one target (tests/fuzz) for a while and reports what was found.
#
#   scripts/fuzz.sh [SECONDS] [TARGET]   default 600 s, json_blocker
#                                        TARGET: json_blocker, gguf, lora, model, server or schema
#   FUZZ_MAX_LEN=N scripts/fuzz.sh       longest input tried, default 4096 bytes
#                                        (server: 12288, room for an oversize message)
#
# Builds build-fuzz/ with clang++, libFuzzer, ASan and UBSan (separate from
# build/), without libtorch — lora and model (adapter and model files, read
# into libtorch tensors) in build-fuzz-torch/ with it. Per target, a work corpus is kept
# between runs and starts from the target's seeds:
#   json_blocker  tests/fuzz/corpus/       build-fuzz/fuzz-corpus/       build-fuzz/fuzz-artifacts/
#   gguf          tests/fuzz/gguf_corpus/  build-fuzz/fuzz-corpus-gguf/  build-fuzz/fuzz-artifacts-gguf/
#   server        tests/fuzz/server_corpus/ build-fuzz/fuzz-corpus-server/ build-fuzz/fuzz-artifacts-server/
#   schema        tests/fuzz/schema_corpus/ build-fuzz/fuzz-corpus-schema/ build-fuzz/fuzz-artifacts-schema/
#   lora          tests/fuzz/lora_corpus/  build-fuzz-torch/fuzz-corpus-lora/ build-fuzz-torch/fuzz-artifacts-lora/
#   model         tests/fuzz/model_corpus/ build-fuzz-torch/fuzz-corpus-model/ build-fuzz-torch/fuzz-artifacts-model/
# Crash inputs land in the artifacts folder. Exits non-zero if the fuzzer
# found a crash, a violated invariant, a leak or a hang.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
target=${2:-json_blocker}
default_max_len=4096
build=$root/build-fuzz
torch=OFF
case "$target" in
  json_blocker|gguf|schema) ;;
  server)
    default_max_len=12288 ;;
  lora)
    torch=ON
    build=$root/build-fuzz-torch
    default_max_len=20000 ;;
  model)
    torch=ON
    build=$root/build-fuzz-torch
    default_max_len=131072 ;;  # the seeds are tiny models of ~114 KB
  *)
    echo "usage: $0 [SECONDS] [json_blocker|gguf|lora|model|server|schema]" >&2
    exit 2 ;;
esac
# Each target's folders and log are named after it (the table above);
# json_blocker, the first target, keeps the names without a suffix.
seeds=$root/tests/fuzz/${target}_corpus
suffix=-$target
if [ "$target" = json_blocker ]; then
  seeds=$root/tests/fuzz/corpus
  suffix=
fi
work_corpus=$build/fuzz-corpus$suffix
artifacts=$build/fuzz-artifacts$suffix
log=$build/fuzz$suffix.log
max_len=${FUZZ_MAX_LEN:-$default_max_len}
binary=$build/tests/fuzz/fuzz_$target
dict_args=()  # a target without a dictionary runs without one
[ -f "$root/tests/fuzz/fuzz_$target.dict" ] && dict_args=(-dict="$root/tests/fuzz/fuzz_$target.dict")

# RelWithDebInfo at -O1 without NDEBUG: readable stacks, assert()s kept.
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DKVFRAME_FUZZ=ON -DKVFRAME_SANITIZE=ON -DKVFRAME_BUILD_BENCH=OFF -DKVFRAME_TORCH=$torch >/dev/null
cmake --build "$build" --target "fuzz_$target"
mkdir -p "$work_corpus" "$artifacts"
artifacts_before=$(ls "$artifacts" | wc -l)

echo "[fuzz] $target: ${seconds}s, inputs up to ${max_len} bytes; log: $log"
# UBSan only prints by default; halting turns undefined behaviour into a crash
# libFuzzer saves. New inputs go to the first corpus directory only.
status=0
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$binary" "$work_corpus" "$seeds" \
  "${dict_args[@]}" \
  -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || status=$?

grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs)|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
  "$log" | sed 's/^/[fuzz] /' || true
echo "[fuzz] work corpus: $(ls "$work_corpus" | wc -l) inputs in $work_corpus"
if [ "$status" -ne 0 ] || [ "$(ls "$artifacts" | wc -l)" -ne "$artifacts_before" ]; then
  echo "[fuzz] FAILED (fuzzer exit status $status); what it reported:"
  grep -E 'fuzz invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' \
    "$log" | head -20 | sed 's/^/[fuzz]   /' || true
  echo "[fuzz] inputs that failed (reproduce: build-fuzz/tests/fuzz/fuzz_$target FILE):"
  ls -t "$artifacts" | head -10 | sed "s|^|[fuzz]   $artifacts/|"
  exit 1
fi
echo "[fuzz] no crash, violated invariant, leak or hang found"
