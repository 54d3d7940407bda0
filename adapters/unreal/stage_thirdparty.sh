#!/usr/bin/env bash
# Stages the native kvframe client into the Unreal plugin, where Kvframe.Build.cs
# links it from: Kvframe/Source/ThirdParty/kvframe/{include,lib/<platform>}/.
# The files come from `cmake --install BUILD_DIR --component client` (the same
# library and header a game's own build gets from find_package(kvframe) or
# pkg-config: docs/install.md), installed into a temporary prefix; the staged
# copies are git-ignored.
#
#   adapters/unreal/stage_thirdparty.sh [BUILD_DIR [DEST]]
#
# BUILD_DIR: default build. DEST: default Kvframe/Source/ThirdParty/kvframe
# beside this script (another folder: a test, or a plugin copied elsewhere).
# Linux: the library under both its link name and its SONAME (what the game
# binary asks for at run time), as plain files: UE stages files, not links.
# Windows: build the library with MSVC and copy kvframe_client.dll and .lib to
# Kvframe/Source/ThirdParty/kvframe/lib/Win64/ by hand (this script does the header).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
dest=${2:-$here/Kvframe/Source/ThirdParty/kvframe}
if [[ ! -f $build/cmake_install.cmake ]]; then
  echo "$build is not a configured CMake build folder: cmake -S $root -B $build -G Ninja" \
       "&& cmake --build $build --target kvframe_client" >&2
  exit 1
fi

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
if ! cmake --install "$build" --component client --prefix "$prefix" >"$prefix.log" 2>&1; then
  cat "$prefix.log" >&2; rm -f "$prefix.log"
  echo "cmake --install $build --component client failed: build the native client first" \
       "(cmake --build $build --target kvframe_client)" >&2
  exit 1
fi
rm -f "$prefix.log"

# The plugin's sources include "kvframe_client.h" from include/ itself.
mkdir -p "$dest/include"
cp "$prefix/include/kvframe/client/kvframe_client.h" "$dest/include/"
echo "staged $dest/include/kvframe_client.h"

lib=$(find "$prefix" -name libkvframe_client.so -print -quit)  # lib/ or lib/<multiarch>/
[[ -n $lib ]] || { echo "cmake --install put no libkvframe_client.so under $prefix" >&2; exit 1; }
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
