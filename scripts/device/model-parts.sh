#!/usr/bin/env bash
# The default model (94 MiB) is larger than what one call to a lent GPU host
# carries (64 MiB, .device-debs included), but a warm host keeps the ignored
# files of earlier calls: send the model in parts over several calls, then
# join them there and check the SHA-256 fetch-model.sh checked here.
#
#   scripts/device/model-parts.sh split .device/model [MiB]   # here: parts of MiB (default 40) + model.sha256
#   # call 1 carries .device/model/part-00 (and .device-debs), call 2 part-01, ...
#   scripts/device/model-parts.sh join .device/model /tmp/model.gguf   # there, once every part is in
#
# Exit status: 0 done; 1 usage; 2 a part is missing or the joined file's hash is wrong.
set -euo pipefail
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
[ $# -ge 2 ] || usage
case "$1" in
  split)
    dir=$2; mib=${3:-40}
    model=${KVFRAME_MODEL:-${KVFRAME_MODELS:-$HOME/.cache/kvframe/models}/SmolLM2-135M-Instruct.Q4_1.gguf}
    [ -f "$model" ] || { echo "no model at $model: run scripts/fetch-model.sh" >&2; exit 2; }
    mkdir -p "$dir"; rm -f "$dir"/part-* "$dir"/model.sha256
    split -b "${mib}M" -d "$model" "$dir/part-"
    sha256sum "$model" | cut -d' ' -f1 > "$dir/model.sha256"
    ls "$dir"/part-* | wc -l | xargs -I{} echo "[model-parts] {} parts of at most $mib MiB in $dir" >&2 ;;
  join)
    dir=$2; out=${3:?join needs the output path}
    [ -s "$dir/model.sha256" ] || { echo "no $dir/model.sha256: carry it with the first part" >&2; exit 2; }
    cat "$dir"/part-* > "$out"
    if [ "$(sha256sum "$out" | cut -d' ' -f1)" != "$(cat "$dir/model.sha256")" ]; then
      echo "[model-parts] $out: SHA-256 differs — a part is missing or short; ls $dir" >&2; exit 2
    fi
    echo "[model-parts] $out joined and checked" >&2 ;;
  *) usage ;;
esac
