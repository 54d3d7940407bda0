#!/usr/bin/env bash
# Fetches the Python packages of kvframe's Python example (examples/python/:
# PokerKit 0.7.7, pure Python, no dependencies, Python >= 3.11) from PyPI into
# a cache, each wheel pinned by its SHA-256 (pip --require-hashes), and
# installs them there with pip install --target.
#
#   scripts/fetch-python-deps.sh      prints the folder to put on PYTHONPATH (last line)
#   KVFRAME_PYTHON_DEPS=DIR           cache folder (default ~/.cache/kvframe/python)
#   PYTHON=/path/to/python3           the interpreter whose pip is used (default /usr/bin/python3)
#
# Skips the download when the installed packages are already there and the
# cached wheels still match their hashes. The example finds the cache by
# itself (same variable, same default).
# Exit status: 0 ok, 1 download or install failed, 2 checksum mismatch.
set -euo pipefail

REQUIREMENTS='pokerkit==0.7.7 --hash=sha256:4e946cc5c48558a9a4583f3a00f13960bd5b719144643104642031552c59ec76'
WHEELS='pokerkit-0.7.7-py3-none-any.whl 4e946cc5c48558a9a4583f3a00f13960bd5b719144643104642031552c59ec76'

deps=${KVFRAME_PYTHON_DEPS:-$HOME/.cache/kvframe/python}
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
wheels=$deps/wheels
site=$deps/site
mkdir -p "$wheels"

wheels_ok() {
  local name sha
  while read -r name sha; do
    [ -f "$wheels/$name" ] && echo "$sha  $wheels/$name" | sha256sum --check --status || return 1
  done <<<"$WHEELS"
}
installed_ok() {
  local name
  while read -r name _; do
    local dist=${name%-py3-none-any.whl}
    [ -f "$site/$dist.dist-info/RECORD" ] || return 1
  done <<<"$WHEELS"
}

if wheels_ok && installed_ok; then
  echo "[fetch-python-deps] pokerkit 0.7.7 already in $site (SHA-256 ok)" >&2
  echo "$site"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s\n' "$REQUIREMENTS" >"$work/requirements.txt"
if ! wheels_ok; then
  echo "[fetch-python-deps] downloading pokerkit==0.7.7 from PyPI (hash-pinned)" >&2
  if ! "$python" -m pip download --disable-pip-version-check --no-deps --only-binary :all: --require-hashes \
      -r "$work/requirements.txt" --dest "$work/download" 2>&1 | tee "$work/pip.log" >&2; then
    if grep -q "DO NOT MATCH THE HASHES" "$work/pip.log"; then
      echo "[fetch-python-deps] error: the wheel from PyPI does not match its pinned SHA-256" >&2; exit 2
    fi
    echo "[fetch-python-deps] error: pip download failed; check network access to PyPI" >&2; exit 1
  fi
  while read -r name _; do mv "$work/download/$name" "$wheels/$name"; done <<<"$WHEELS"
  wheels_ok || { echo "[fetch-python-deps] error: SHA-256 of the downloaded wheels is not the pinned one" >&2; exit 2; }
fi

echo "[fetch-python-deps] installing into $site" >&2
files=()
while read -r name _; do files+=("$wheels/$name"); done <<<"$WHEELS"
"$python" -m pip install --disable-pip-version-check --no-index --no-deps --no-compile --quiet \
  --target "$work/site" "${files[@]}" >&2 || {
  echo "[fetch-python-deps] error: pip install --target failed" >&2; exit 1; }
rm -rf "$site"
mv "$work/site" "$site"
echo "[fetch-python-deps] saved $site" >&2
echo "$site"
