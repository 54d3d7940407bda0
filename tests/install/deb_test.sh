#!/usr/bin/env bash
# `cpack -G DEB` on this build: the package holds the server, the tools, the
# client library with its headers, CMake package and kvframe.pc, and depends
# on the Debian packages of the libraries they link.
#
#   deb_test.sh BUILD_DIR WORK
#
# Exit 0 pass, 1 fail. WORK is emptied first and removed on success.
set -euo pipefail
build=$1 work=$2
rm -rf "$work"
mkdir -p "$work"

if ! (cd "$build" && cpack -G DEB -B "$work") >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  echo "cpack -G DEB failed: build every target first (cmake --build $build)"
  exit 1
fi
deb=$(find "$work" -maxdepth 1 -name 'kvframe_*.deb' -print -quit)
[[ -n $deb ]] || { cat "$work/cpack.log"; echo "no kvframe_*.deb in $work"; exit 1; }
echo "$deb:"
dpkg-deb --info "$deb" | sed -n '/Package:/p;/Version:/p;/Depends:/p;/Maintainer:/p'
files=$(dpkg-deb --contents "$deb" | awk '{ print $6 }')
failed=0
for want in ./usr/bin/kvframe-serve ./usr/bin/kvframe-blocks ./usr/include/kvframe/client/kvframe_client.h \
            ./usr/include/kvframe/client/kvframe_client.hpp ./usr/lib/libkvframe_client.so \
            ./usr/lib/cmake/kvframe/kvframeConfig.cmake ./usr/lib/cmake/kvframe/kvframeConfigVersion.cmake \
            ./usr/lib/pkgconfig/kvframe.pc; do
  grep -qx -- "$want" <<<"$files" || { echo "missing from the package: $want"; failed=1; }
done
depends=$(dpkg-deb --field "$deb" Depends)
for want in libzmq5 libstdc++6; do
  grep -q "$want" <<<"$depends" || { echo "Depends lacks $want: $depends"; failed=1; }
done
for want in Maintainer Description; do
  [[ -n $(dpkg-deb --field "$deb" "$want") ]] || { echo "no $want"; failed=1; }
done
((failed)) && exit 1
rm -rf "$work"
echo "ok: $(basename "$deb") holds the server, the client and its package files"
