#!/usr/bin/env bash
# A CUDA-enabled libflcc.so on a machine without CUDA's libraries: libflcc.so itself needs no
# CUDA library (readelf), and with its CUDA backend module unloadable (the library copied to a
# folder without the module, as when libcufft is missing and dlopen fails) it loads, plans on
# the host and reports FLCC_NO_DEVICE for DEVICE plans (no_cuda_module.c).
# Usage: no_cuda_module.sh LIBFLCC_SO PROGRAM
set -euo pipefail
lib=$1 program=$2
needed=$(readelf -d "$lib" | grep NEEDED || true)
if grep -Eq 'libcuda|libcufft|libcudart' <<< "$needed"; then
  echo "no_cuda_module: $lib needs a CUDA library:" >&2
  echo "$needed" >&2
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -L "$lib" "$dir/$(basename "$(readlink -f "$lib")")"
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
ln -sf "$(basename "$(readlink -f "$lib")")" "$dir/$soname"
LD_LIBRARY_PATH="$dir" "$program"
