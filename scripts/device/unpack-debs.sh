#!/usr/bin/env bash
# On the GPU host, from the repo root: unpack the .debs of DIR under PREFIX
# (never into /, whose libraries the host's CUDA and torch need as they are),
# point their pkg-config files at PREFIX, and print the exports to eval:
#   eval "$(bash DIR/unpack-debs.sh DIR /opt/kvdeps)"
# CMAKE_PREFIX_PATH also gets the libtorch of the host's python3 torch.
set -euo pipefail
dir=${1:-.device-debs}
prefix=${2:-/opt/kvdeps}
mkdir -p "$prefix"
for deb in "$dir"/*.deb; do dpkg -x "$deb" "$prefix"; done
find "$prefix" -name '*.pc' -exec sed -i "s#^prefix=/usr#prefix=$prefix/usr#" {} +
lib="$prefix/usr/lib/x86_64-linux-gnu"
torch=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
echo "export CMAKE_PREFIX_PATH=\"$prefix/usr;$lib/cmake;$prefix/usr/share/cmake${torch:+;$torch}\""
echo "export PKG_CONFIG_PATH=\"$lib/pkgconfig:$prefix/usr/share/pkgconfig\""
echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
echo "export PATH=\"$prefix/usr/bin:\$PATH\""
