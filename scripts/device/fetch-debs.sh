#!/usr/bin/env bash
# On a machine that reaches Debian's archive: download the Debian packages a
# GPU build needs beside the GPU host's own CUDA and torch (which has no
# network) into DIR, with unpack-debs.sh beside them, ready to carry there.
#   scripts/device/fetch-debs.sh [DIR]        (default .device-debs; keep it out of git)
set -euo pipefail
dir=${1:-.device-debs}
mkdir -p "$dir"
packages=(
  libsimdjson-dev libsimdjson14 libxxhash-dev libxxhash0 nlohmann-json3-dev libcli11-dev
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libzmq3-dev libzmq5 cppzmq-dev libsodium23 libpgm-5.3-0 libnorm1
  libflatbuffers-dev libflatbuffers2 flatbuffers-compiler
  libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
)
(cd "$dir" && apt-get download "${packages[@]}")
cp "$(dirname "$0")/unpack-debs.sh" "$dir/"
echo "$(ls "$dir"/*.deb | wc -l) packages in $dir ($(du -sh "$dir" | cut -f1))"
