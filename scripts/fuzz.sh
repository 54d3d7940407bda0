#!/usr/bin/env bash
# Fuzzes json_blocker (tests/fuzz) for a while and reports what was found.
#
#   scripts/fuzz.sh [SECONDS]        default 600
#   FUZZ_MAX_LEN=N scripts/fuzz.sh   longest input tried, default 4096 bytes
#
# Builds build-fuzz/ with clang++, libFuzzer, ASan and UBSan (separate from
# build/). The work corpus build-fuzz/fuzz-corpus/ is kept between runs and
# starts from the seeds in tests/fuzz/corpus/; crash inputs land in
# build-fuzz/fuzz-artifacts/. Exits non-zero if the fuzzer found a crash,
# a violated invariant, a leak or a hang.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
max_len=${FUZZ_MAX_LEN:-4096}
build=$root/build-fuzz
work_corpus=$build/fuzz-corpus
artifacts=$build/fuzz-artifacts
log=$build/fuzz.log

# RelWithDebInfo at -O1 without NDEBUG: readable stacks, assert()s kept.
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DKVFRAME_FUZZ=ON -DKVFRAME_SANITIZE=ON -DKVFRAME_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target fuzz_json_blocker
mkdir -p "$work_corpus" "$artifacts"
artifacts_before=$(ls "$artifacts" | wc -l)

echo "[fuzz] ${seconds}s, inputs up to ${max_len} bytes; log: $log"
# UBSan only prints by default; halting turns undefined behaviour into a crash
# libFuzzer saves. New inputs go to the first corpus directory only.
status=0
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$build/tests/fuzz/fuzz_json_blocker" "$work_corpus" "$root/tests/fuzz/corpus" \
  -dict="$root/tests/fuzz/fuzz_json_blocker.dict" \
  -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || status=$?

grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs)|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
  "$log" | sed 's/^/[fuzz] /' || true
echo "[fuzz] work corpus: $(ls "$work_corpus" | wc -l) inputs in $work_corpus"
if [ "$status" -ne 0 ] || [ "$(ls "$artifacts" | wc -l)" -ne "$artifacts_before" ]; then
  echo "[fuzz] FAILED (fuzzer exit status $status); what it reported:"
  grep -E 'fuzz invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' \
    "$log" | head -20 | sed 's/^/[fuzz]   /' || true
  echo "[fuzz] inputs that failed (reproduce: build-fuzz/tests/fuzz/fuzz_json_blocker FILE):"
  ls -t "$artifacts" | head -10 | sed "s|^|[fuzz]   $artifacts/|"
  exit 1
fi
echo "[fuzz] no crash, violated invariant, leak or hang found"
