#!/usr/bin/env bash
# An FLCC 1.3 program (examples/flcc13_program.c, unchanged) compiles against the build's
# headers with every warning an error, as C99 and as C++, links against the build's shared
# library, and runs on the host and on the GPU (the program checks the 1.3 rules itself: exit 0,
# two numbers, the GPU's within 1e-5 of the host's); without a usable GPU the device run says so
# and is skipped.
# Usage: flcc13_compile_test.sh <c-compiler> <c++-compiler> <include-dir> <libflcc.so> <program.c>
set -euo pipefail
cc=$1
cxx=$2
include=$3
lib=$4
program=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
libdir=$(dirname "$lib")

"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$include" "$program" -o "$work/flcc13_c" \
    "$lib" -Wl,-rpath,"$libdir"
"$cxx" -x c++ -Wall -Wextra -Werror -I"$include" "$program" -x none -o "$work/flcc13_cxx" \
    "$lib" -Wl,-rpath,"$libdir"

for prog in flcc13_c flcc13_cxx; do
    status=0
    got=$("$work/$prog") || status=$?
    echo "$prog: exit $status, printed: $got"
    [ "$status" -eq 0 ]
    [[ "$got" =~ ^-?[0-9.]+e[-+][0-9]+\ -?[0-9.]+e[-+][0-9]+$ ]]
    status=0
    dev=$("$work/$prog" device) || status=$?
    if [ "$status" -eq 3 ]; then
        echo "$prog device: skipped, no usable GPU"
        continue
    fi
    echo "$prog device: exit $status, printed: $dev"
    [ "$status" -eq 0 ]
    # The GPU's sums agree with the host's to 1e-5 relative.
    awk -v a="$got" -v b="$dev" 'BEGIN { split(a, x, " "); split(b, y, " ");
        for (i = 1; i <= 2; ++i) { d = x[i] - y[i]; if (d < 0) d = -d;
            m = x[i] < 0 ? -x[i] : x[i]; if (d > 1e-5 * (m > 1 ? m : 1)) exit 1 } }'
done
echo "flcc13 compile test OK"
