#!/usr/bin/env bash
# Runs one fuzz target for a given time and keeps what it finds:
#
#   scripts/fuzz.sh TARGET SECONDS        TARGET: plan, exec or wisdom (tests/fuzz/fuzz_TARGET.*)
#
# Builds the libFuzzer program with Clang under AddressSanitizer and UndefinedBehaviorSanitizer
# (-fno-sanitize-recover=all: the first report stops the run) in build-fuzz/ (FLCC_FUZZ_BUILD
# names another folder), fuzzes for SECONDS starting from the corpus tests/fuzz/corpus/TARGET/
# (one job on one core: -jobs=1), then minimises corpus and new inputs together with -merge=1 into
# the corpus, so that it keeps only inputs that add coverage (and those named seed-* or
# regress-*). A failing input (crash, sanitizer report, failed check, leak, timeout) is saved
# under build-fuzz/findings/TARGET/ and the script fails. Installs Clang, its runtime libraries
# and llvm-symbolizer when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/fuzz.sh plan|exec|wisdom SECONDS"
target=${1:?$usage}
seconds=${2:?$usage}
case "$target" in plan | exec | wisdom) ;; *) echo "$usage" >&2; exit 2 ;; esac

scripts/setup-clang.sh
build=${FLCC_FUZZ_BUILD:-build-fuzz}
flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
# The kernels' straight-line code gains nothing from coverage feedback, nor from three UBSan
# checks whose instrumentation of it dominates the build's time (see scripts/sanitize.sh).
kernel_flags="-fno-sanitize=fuzzer-no-link,pointer-overflow,alignment,null"
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFLCC_WITH_CUDA=OFF \
  -DFLCC_FUZZ=ON -DFLCC_BUILD_BENCH=OFF -DFLCC_BUILD_EXAMPLES=OFF \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DFLCC_KERNEL_EXTRA_FLAGS="$kernel_flags" \
  > /dev/null
cmake --build "$build" -j 2 --target "fuzz_$target"

program=$(realpath "$build/tests/fuzz/fuzz_$target")
corpus=$(realpath "tests/fuzz/corpus/$target")
work=$(realpath -m "$build/work/$target")
findings=$(realpath -m "$build/findings/$target")
rm -rf "$work"
mkdir -p "$work/new" "$work/merged" "$findings" "$corpus"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
unset FLCC_WISDOM_FILE
# Input sizes: a planning call is a few dozen bytes; execution draws raw float bits from the
# input; wisdom text is lines.
case "$target" in plan) max_len=256 ;; exec) max_len=4096 ;; wisdom) max_len=8192 ;; esac

echo "fuzz: $target for $seconds s from $(ls "$corpus" | wc -l) corpus inputs"
status=0
(cd "$work" && "$program" -jobs=1 -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 \
  -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$findings/" "$work/new" "$corpus") \
  || status=$?
log="$work/fuzz-0.log"
grep -E '^stat::|^#[0-9]+ +DONE' "$log" || true
if [ "$status" -ne 0 ] || grep -qE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|CHECK\(' "$log"; then
  tail -n 60 "$log"
  echo "fuzz: $target FAILED; inputs in $findings/" >&2
  exit 1
fi

# Minimise: corpus and new inputs together, into an empty folder, then that is the corpus.
# Inputs named seed-* (written by hand) and regress-* (the inputs of fixed findings) stay
# whatever their coverage.
"$program" -merge=1 -timeout=60 -rss_limit_mb=4096 "$work/merged" "$corpus" "$work/new" \
  > "$work/merge.log" 2>&1 || { tail -n 30 "$work/merge.log"; exit 1; }
before=$(ls "$corpus" | wc -l)
find "$corpus" -maxdepth 1 -type f ! -name 'regress-*' ! -name 'seed-*' -delete
cp -n "$work/merged"/* "$corpus"/
echo "fuzz: $target corpus $before -> $(ls "$corpus" | wc -l) inputs," \
  "$(du -sk "$corpus" | cut -f1) KiB"
