#!/usr/bin/env bash
# Stages the native kvframe client into the Unreal plugin, where Kvframe.Build.cs
# links it from: Kvframe/Source/ThirdParty/kvframe/{include,lib/<platform>}/.
# The header is copied from include/kvframe/client/ (one source of truth; the
# staged copy is git-ignored).
#
#   adapters/unreal/stage_thirdparty.sh [BUILD_DIR]   # default: build
#
# Linux: copies libkvframe_client.so from BUILD_DIR/adapters/native/ under both
# its link name and its SONAME (what the game binary asks for at run time).
# Windows: build the library with MSVC and copy kvframe_client.dll and .lib to
# Kvframe/Source/ThirdParty/kvframe/lib/Win64/ by hand (this script does the header).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
dest=$here/Kvframe/Source/ThirdParty/kvframe

mkdir -p "$dest/include"
cp "$root/include/kvframe/client/kvframe_client.h" "$dest/include/"
echo "staged $dest/include/kvframe_client.h"

lib=$build/adapters/native/libkvframe_client.so
if [[ ! -e $lib ]]; then
  echo "no $lib: build the native client first (cmake --build $build --target kvframe_client)" >&2
  exit 1
fi
linux=$dest/lib/Linux/x86_64-unknown-linux-gnu
mkdir -p "$linux"
rm -f "$linux"/libkvframe_client.so*
real=$(readlink -f "$lib")
soname=$(objdump -p "$real" | awk '$1 == "SONAME" { print $2 }')
cp "$real" "$linux/libkvframe_client.so"
if [[ -n $soname && $soname != libkvframe_client.so ]]; then cp "$real" "$linux/$soname"; fi
echo "staged $(ls "$linux" | tr "\n" " ")in $linux"
# What the game's machine must provide besides: the library's own dependencies.
echo "it needs at run time:"; objdump -p "$real" | awk '$1 == "NEEDED" { print "  " $2 }'
