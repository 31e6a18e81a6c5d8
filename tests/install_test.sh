#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds examples/out_of_tree against it twice:
# with CMake's find_package(flcc CONFIG) and with pkg-config; runs both programs. The installed
# tools and a consumer linked with pkg-config's libdir as its run path start from the
# non-system prefix with no LD_LIBRARY_PATH.
# Usage: install_test.sh <build-dir> <source-dir>
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/include/flcc.h" && test -f "$work/prefix/include/flcc13.h"

cmake -S "$src/examples/out_of_tree" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/cmake" > "$work/build.log"
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64:${LD_LIBRARY_PATH:-}" "$work/cmake/consumer"

pcdir=$(dirname "$(find "$work/prefix" -name flcc.pc | head -1)")
cflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags flcc)
libs=$(PKG_CONFIG_PATH="$pcdir" pkg-config --libs flcc)
cc $cflags "$src/examples/out_of_tree/consumer.c" -o "$work/consumer_pc" $libs
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64:${LD_LIBRARY_PATH:-}" "$work/consumer_pc"

# No LD_LIBRARY_PATH: the tools by their relative run path, the consumer by the documented link.
libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir flcc)
cc $cflags "$src/examples/out_of_tree/consumer.c" -o "$work/consumer_rpath" $libs -Wl,-rpath,"$libdir"
env -u LD_LIBRARY_PATH "$work/consumer_rpath"
mkdir -p "$work/demo"
env -u LD_LIBRARY_PATH "$work/prefix/bin/flcc-demo" "$work/demo" > "$work/demo.log"
if [ -x "$work/prefix/bin/flcc-bench" ]; then
    env -u LD_LIBRARY_PATH "$work/prefix/bin/flcc-bench" --list | grep -qE "(host|device)\."
fi
echo "install test OK"
