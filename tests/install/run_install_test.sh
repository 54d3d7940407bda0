#!/usr/bin/env bash
# kvframe installed as a library, used the way a game's build uses it:
#   1. `cmake --install BUILD --prefix WORK/prefix` (everything), and
#      `--component client` alone into another prefix (no server in it);
#   2. consumer/ (a C and a C++ program) configured and built against the
#      prefix with find_package(kvframe), and hello.c again with
#      `pkg-config --cflags --libs kvframe`;
#   3. the installed kvframe-serve started on a tiny model, and the three
#      programs run against it (connect, open a session, send a frame, ask).
#
#   run_install_test.sh BUILD_DIR WRITE_TINY_MODEL WORK
#
# Exit 0 pass, 1 fail. WORK is emptied first and removed on success.
set -euo pipefail
build=$1 write_tiny_model=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../support/tiny_server.sh"

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
trap 'stop_tiny_server' EXIT

say "cmake --install $build --prefix $prefix"
if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
  cat "$work/install.log"
  say "cmake --install failed: build every target first (cmake --build $build)"
  exit 1
fi
# What a newcomer looks for, wherever GNUInstallDirs put the library folder.
config=$(find "$prefix" -path '*/cmake/kvframe/kvframeConfig.cmake' -print -quit)
pc=$(find "$prefix" -name kvframe.pc -print -quit)
for file in bin/kvframe-serve bin/kvframe-stream bin/kvframe-blocks \
            include/kvframe/client/kvframe_client.h include/kvframe/client/kvframe_client.hpp; do
  [[ -e $prefix/$file ]] || { say "not installed: $file"; exit 1; }
done
[[ -n $config && -n $pc ]] || { say "no kvframeConfig.cmake or kvframe.pc under $prefix"; exit 1; }
ls "$(dirname "$pc")"/../libkvframe_client.so* >/dev/null || { say "no libkvframe_client.so beside $pc"; exit 1; }

say "cmake --install --component client: the library, headers and package files, no programs"
cmake --install "$build" --prefix "$work/client-only" --component client >/dev/null
if [[ -e $work/client-only/bin ]]; then say "component client installed $(ls "$work/client-only/bin")"; exit 1; fi
[[ -n $(find "$work/client-only" -name kvframe.pc) ]] || { say "component client has no kvframe.pc"; exit 1; }

say "find_package(kvframe): configuring and building $here/consumer"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here/consumer" -B "$work/consumer" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
found=$(sed -n 's/^kvframe_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")
if [[ $found != "$(dirname "$config")" ]]; then
  say "find_package(kvframe) found $found, not the installed $(dirname "$config")"; exit 1
fi
cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }

say "pkg-config --cflags --libs kvframe: building hello.c"
export PKG_CONFIG_PATH=$(dirname "$pc")
version=$(pkg-config --modversion kvframe)
flags=$(pkg-config --cflags --libs kvframe)
say "kvframe.pc: version $version, $flags"
cc -std=c11 -Wall -Werror -o "$work/hello_pkg_config" "$here/consumer/hello.c" $flags
# pkg-config gives -L, not an rpath: the loader is told where the library is.
libdir=$(pkg-config --variable=libdir kvframe)

start_tiny_server "$prefix/bin/kvframe-serve" "$write_tiny_model" "$work"
failed=0
run() {
  say "$*"
  timeout 150 "$@" || { say "failed (exit $?; 124: it ran past 150 s)"; failed=1; }
}
run "$work/consumer/hello_c" "$endpoint"
run "$work/consumer/hello_cpp" "$endpoint"
LD_LIBRARY_PATH=$libdir run "$work/hello_pkg_config" "$endpoint"
if ((failed)); then print_tiny_server_log; exit 1; fi
stop_tiny_server
rm -rf "$work"
say "installed kvframe: find_package (C, C++) and pkg-config (C) programs talked to the installed server"
