#!/usr/bin/env bash
# adapters/unreal/stage_thirdparty.sh stages what `cmake --install --component
# client` installs: the header as in include/, the library this build made,
# under its link name and its soname, as plain files.
#
#   unreal_stage_test.sh REPO BUILD_DIR CLIENT_LIB WORK
set -euo pipefail
repo=$1 build=$2 client_lib=$3 work=$4
rm -rf "$work"
"$repo/adapters/unreal/stage_thirdparty.sh" "$build" "$work"
linux=$work/lib/Linux/x86_64-unknown-linux-gnu
soname=$(objdump -p "$client_lib" | awk '$1 == "SONAME" { print $2 }')
cmp "$repo/include/kvframe/client/kvframe_client.h" "$work/include/kvframe_client.h"
for name in libkvframe_client.so "$soname"; do
  [[ -f $linux/$name && ! -L $linux/$name ]] || { echo "not a plain file: $linux/$name"; exit 1; }
  cmp "$client_lib" "$linux/$name"
done
rm -rf "$work"
echo "ok: the header and libkvframe_client.so ($soname) staged from cmake --install"
