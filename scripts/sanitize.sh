#!/usr/bin/env bash
# The sanitizer tier (CI runs it after `make test`). Each step fails the script on the first
# report:
#   1. Clang build (build-clang/): its host solvers' outputs are compared bit for bit with the
#      GCC build's (build/, or FLCC_GCC_BUILD) by flcc_digest, for every kernel set this CPU
#      runs; skipped, saying so, when that build has no flcc_digest.
#   2. Valgrind memcheck over a subset (test_api, test_wisdom, the fuzz corpus replays): no
#      error, and no lost block (definitely, indirectly or possibly). Still-reachable memory is
#      allowed: FFTW's planner state lives until the process ends (the library never calls
#      fftwf_cleanup: FFTW's state is process-wide and the host program's own FFTW plans share
#      it); the replay programs, FFTW's only users in their processes, do call it.
#   3. The CPU test suite built with Clang under AddressSanitizer and UndefinedBehaviorSanitizer
#      (-fno-sanitize-recover=all), leak checking on (build-asan/), all but the largest
#      problems' case of test_host_fourier.
#   4. The threaded tests (test_threads and the plan and exec corpus replays) under
#      ThreadSanitizer (build-tsan/).
# Installs what it needs (scripts/setup-clang.sh). Builds use JOBS jobs (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo "== sanitize: $* (at $(($(date +%s) - start)) s)"; }
scripts/setup-clang.sh
jobs=${JOBS:-$(nproc)}
unset FLCC_WISDOM_FILE
export CC=clang CXX=clang++
common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLCC_WITH_CUDA=OFF -DFLCC_BUILD_BENCH=OFF)
# Four UBSan checks are left out of the kernel units: on their unrolled code they dominate the
# build's time (pointer-overflow and object-size most), and they add nothing there: every
# access is a vector load or store at an offset within a buffer, which AddressSanitizer checks,
# and unaligned by design (memcpy or loadu). Their debug information is line tables, all a
# sanitizer's report needs.
kernel_extra="-fno-sanitize=pointer-overflow,alignment,null,object-size -gline-tables-only"

# --- 1. Clang build, compared with GCC's --------------------------------------------------------
step "Clang build"
# DWARF 4: Valgrind 3.19 cannot read Clang 14's default DWARF 5.
cmake -S . -B build-clang "${common[@]}" -DCMAKE_C_FLAGS=-gdwarf-4 -DCMAKE_CXX_FLAGS=-gdwarf-4 > /dev/null
cmake --build build-clang -j "$jobs" --target flcc_digest test_api test_wisdom \
  fuzz_plan_replay fuzz_exec_replay fuzz_wisdom_replay
gcc_build=${FLCC_GCC_BUILD:-build}
if [ -x "$gcc_build/tests/digest/flcc_digest" ]; then
  step "digests: Clang against GCC ($gcc_build)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # FFTW_MEASURE chooses FFTW's algorithms by timing: both builds use the same choices (wisdom
  # made by a first run, read by the compared runs). It is FFTW's alone, the same whichever
  # kernel set FLCC runs, so one first run serves the three.
  "$gcc_build/tests/digest/flcc_digest" "$tmp/wisdom" > /dev/null
  for isa in baseline avx2 avx512; do
    FLCC_HOST_ISA=$isa "$gcc_build/tests/digest/flcc_digest" "$tmp/wisdom" > "$tmp/gcc-$isa"
    FLCC_HOST_ISA=$isa build-clang/tests/digest/flcc_digest "$tmp/wisdom" > "$tmp/clang-$isa"
    if ! cmp -s "$tmp/gcc-$isa" "$tmp/clang-$isa"; then
      diff "$tmp/gcc-$isa" "$tmp/clang-$isa" | head -n 20
      echo "sanitize: Clang's results differ from GCC's ($isa)" >&2
      exit 1
    fi
    echo "$isa: $(tail -n 1 "$tmp/clang-$isa") (identical)"
  done
else
  step "digests skipped: no $gcc_build/tests/digest/flcc_digest (build with GCC first)"
fi

# --- 2. Valgrind memcheck ----------------------------------------------------------------------
step "Valgrind memcheck"
vg=(valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite,indirect,possible
    --errors-for-leak-kinds=definite,indirect,possible)
# test_api replaces operator new and delete with malloc and free (it counts allocations); the
# compiler inlines some of them, so Valgrind would pair its own operator new with a bare free.
"${vg[@]}" --show-mismatched-frees=no build-clang/tests/test_api > /dev/null
"${vg[@]}" build-clang/tests/test_wisdom > /dev/null
# The corpora: all of wisdom's; of plan's and exec's (slow under Valgrind: plans that time their
# candidates, executions) the seeds, the regression inputs and the inputs whose names begin with
# 0 (names are content hashes: a fixed sample of about 1/16).
for t in plan exec wisdom; do
  if [ "$t" = wisdom ]; then
    inputs=(tests/fuzz/corpus/$t)
  else
    inputs=(tests/fuzz/corpus/$t/seed-* tests/fuzz/corpus/$t/0*)
    compgen -G "tests/fuzz/corpus/$t/regress-*" > /dev/null && inputs+=(tests/fuzz/corpus/$t/regress-*)
  fi
  log=$(mktemp)
  if ! "${vg[@]}" "build-clang/tests/fuzz/fuzz_${t}_replay" "${inputs[@]}" > "$log" 2>&1; then
    tail -n 60 "$log"
    exit 1
  fi
  echo "fuzz_${t}_replay: $(grep '^replay: [0-9]' "$log")"
  rm -f "$log"
done

# --- 3. AddressSanitizer + UndefinedBehaviorSanitizer: the whole CPU suite ----------------------
step "ASan + UBSan build"
asan="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# C programs linked with the instrumented libflcc.so need UBSan's C++ runtime (the library's
# vptr checks), which needs libstdc++: linked as a shared library (so its place on the command
# line does not matter) and kept (--no-as-needed), also in CMake's compiler checks.
cxx_runtime="-fsanitize-link-c++-runtime -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state"
# Line tables instead of full debug information: the reports' stacks need no more, and the
# build takes a quarter less.
lines="-O2 -gline-tables-only -DNDEBUG"
# The tests' float64 reference is left uninstrumented (tests/CMakeLists.txt says why).
cmake -S . -B build-asan "${common[@]}" -DCMAKE_C_FLAGS="$asan" -DCMAKE_CXX_FLAGS="$asan" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$lines" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$lines" \
  -DCMAKE_EXE_LINKER_FLAGS="$cxx_runtime" \
  -DFLCC_KERNEL_EXTRA_FLAGS="$kernel_extra" -DFLCC_TEST_REFERENCE_FLAGS=-fno-sanitize=all > /dev/null
cmake --build build-asan -j "$jobs"
step "ASan + UBSan tests"
# Left out: the two tests that compile and link programs of their own against the library
# (install_and_consume, flcc13_compiles_as_c_and_cxx); those programs lack the sanitizer
# runtime the instrumented library needs. And test_host_fourier's [slow] case (700 x 900 and
# 60^3 problems against the float64 reference, a quarter of this step's time under ASan: the
# plain suite runs it, and its solvers' smaller boxes run here); its other cases run beside
# ctest.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan/tests/test_host_fourier "~[slow]" > build-asan/test_host_fourier.log 2>&1 &
fourier=$!
ctest --test-dir build-asan -j "$jobs" --output-on-failure \
  -E '^(install_and_consume|flcc13_compiles_as_c_and_cxx|test_host_fourier)$'
if ! wait "$fourier"; then
  cat build-asan/test_host_fourier.log
  exit 1
fi
echo "test_host_fourier ~[slow]: $(tail -2 build-asan/test_host_fourier.log | head -1)"
unset ASAN_OPTIONS UBSAN_OPTIONS

# --- 4. ThreadSanitizer: the threaded tests -----------------------------------------------------
# test_threads (16 threads planning, executing and destroying at once, when present) and the
# plan and exec corpus replays (every solver on 1 or 2 threads of its pool, MEASURE timing).
# test_api replaces operator new and delete, which TSan's runtime defines too: it cannot link.
step "TSan build"
tsan="-fsanitize=thread -fno-omit-frame-pointer"
cmake -S . -B build-tsan "${common[@]}" -DCMAKE_C_FLAGS="$tsan" -DCMAKE_CXX_FLAGS="$tsan" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$lines" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$lines" > /dev/null
threaded=(fuzz_replay_plan fuzz_replay_exec)
targets=(fuzz_plan_replay fuzz_exec_replay)
if [ -f tests/test_threads.cpp ]; then
  threaded+=(test_threads)
  targets+=(test_threads)
fi
cmake --build build-tsan -j "$jobs" --target "${targets[@]}"
step "TSan tests: ${threaded[*]}"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan -j "$jobs" --output-on-failure -R "^($(IFS='|'; echo "${threaded[*]}"))\$"

step "passed"
