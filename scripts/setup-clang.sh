#!/usr/bin/env bash
# Installs what the sanitizer and fuzzing scripts need on a Debian/Ubuntu machine, only what is
# missing: Clang, its sanitizer and libFuzzer runtimes, llvm-symbolizer (readable stacks) and
# Valgrind, besides what scripts/setup.sh installs. Uses sudo when not root.
set -euo pipefail
"$(dirname "$0")/setup.sh"
need=()
for pkg in clang libclang-rt-dev llvm valgrind; do
  dpkg -s "$pkg" > /dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-clang: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" > /dev/null
fi
for tool in clang clang++ llvm-symbolizer valgrind; do
  command -v "$tool" > /dev/null || { echo "setup-clang: $tool not found after installing" >&2; exit 1; }
done
