#!/usr/bin/env bash
# Installs what FLCC needs on a Debian/Ubuntu machine, only what is missing:
# compilers and CMake, FFTW3 (single precision, threads), Catch2 2, CLI11, libtiff, pkg-config, and
# python3-venv for the benchmark harness. Uses sudo when not root.
set -euo pipefail
need=()
for pkg in build-essential cmake pkg-config libfftw3-dev catch2 libcli11-dev libtiff-dev python3-venv; do
  dpkg -s "$pkg" > /dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" > /dev/null
fi
