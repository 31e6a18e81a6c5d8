#!/usr/bin/env bash
# An FLCC 1.3 program (examples/flcc13_program.c, unchanged) compiles against the build's
# headers with every warning an error, as C99 and as C++, links against the build's shared
# library, and runs on the host (the program checks the 1.3 rules itself: exit 0, two numbers).
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
done
echo "flcc13 compile test OK"
