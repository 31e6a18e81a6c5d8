#!/usr/bin/env bash
# The whole GPU check, for the lent GPU machine (see ../shared/device/README.md), in one run:
#   1. unpack the Debian packages carried in .debs/ (FFTW3, Catch2, CLI11), when present;
#   2. build (sm_90 + PTX) and run the whole test suite;
#   3. compute-sanitizer memcheck, racecheck, initcheck and synccheck on a subset of the GPU
#      tests (fails when compute-sanitizer is missing);
#   4. a GPU-only build (FLCC_WITH_HOST=OFF) and its tests;
#   5. the GPU benchmark (bench/run_gpu.sh when present, else a few flcc-bench runs);
#   6. the Python package: built by pip without network (wheels carried in .whl/ go to
#      /tmp/site first), its tests with CuPy and PyTorch CUDA arrays, and its overhead
#      benchmark (python_overhead.jsonl).
# Logs go to $OUT (or out/gpu-check); a summary table is printed last. Exit status 0 only
# when every step passed. FLCC_CMAKE_ARGS passes extra CMake options to every build;
# FLCC_GPU_STEPS picks steps (default "build tests sanitizer gpu-only bench python").
# FLCC_GPU_DEADLINE=SECONDS ends the whole check by then (a machine lent for a limited call):
# each step runs under the time left, and one that is stopped or never starts reads "CUT" in
# the table, so the summary still comes back.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out/gpu-check}
mkdir -p "$out"
jobs=$(nproc)
declare -a steps results
deadline=${FLCC_GPU_DEADLINE:-0}
export root out jobs

step() {   # step NAME LOGFILE COMMAND... (a command or a function exported with export -f)
    local name=$1 log=$2
    shift 2
    local t0=$SECONDS limit=()
    if [ "$deadline" -gt 0 ]; then
        # 20 s stay for the summary; a step with under 10 s left is not started.
        local left=$((deadline - SECONDS - 20))
        if [ "$left" -lt 10 ]; then
            steps+=("$name"); results+=("CUT (not started: deadline)")
            return 1
        fi
        limit=(timeout --kill-after=5 "$left" bash -c '"$@"' step)   # bash: functions too
    fi
    "${limit[@]}" "$@" > "$out/$log" 2>&1
    local rc=$?
    steps+=("$name")
    if [ "$rc" -eq 0 ]; then
        results+=("ok ($((SECONDS - t0)) s)")
        return 0
    fi
    if [ "${#limit[@]}" -gt 0 ] && { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
        results+=("CUT ($((SECONDS - t0)) s, deadline; see $log)")
    else
        results+=("FAILED ($((SECONDS - t0)) s, see $log)")
    fi
    tail -40 "$out/$log"
    return 1
}

cd "$root"
if [ -d .debs ]; then
    for f in .debs/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt" 2>&1

ok=0
want() { [[ " ${FLCC_GPU_STEPS:-build tests sanitizer gpu-only bench python} " == *" $1 "* ]]; }
configure() {   # configure BUILD-DIR [CMAKE ARGS...]; FLCC_CMAKE_ARGS adds more
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DFLCC_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        ${FLCC_CMAKE_ARGS:-} "${@:2}" &&
        cmake --build "$1" -j "$jobs"
}
export -f configure
want build && { step "build" build.log configure build-gpu || ok=1; }
want tests && { step "tests" ctest.log bash -c "cd build-gpu && ctest --output-on-failure -j 4" || ok=1; }

sanitize() {   # sanitize TOOL: the subset under one compute-sanitizer tool
    command -v compute-sanitizer > /dev/null || { echo "compute-sanitizer not found"; return 1; }
    local tool=$1 extra rc=0
    {
        echo "== $tool"
        extra=""
        [ "$tool" = memcheck ] && extra="--leak-check full"
        compute-sanitizer --tool "$tool" $extra --error-exitcode 1 \
            build-gpu/tests/test_device_api "[stream]" || rc=1
        compute-sanitizer --tool "$tool" $extra --error-exitcode 1 \
            build-gpu/tests/test_device_all_solvers "GPU and CPU agree" || rc=1
        compute-sanitizer --tool "$tool" $extra --error-exitcode 1 \
            build-gpu/tests/test_device_fourier3d "[sanitize]" || rc=1
        compute-sanitizer --tool "$tool" $extra --error-exitcode 1 \
            build-gpu/tests/test_device_batch "GPU batches: flat maps*" || rc=1
        # Device templates changing per exec and between queued frames, for the solvers that
        # prepare them inside each frame (all GPU solvers together exceed minutes per tool).
        for solver in device.fourier2.box device.fourier3.slabs; do
            FLCC_TEST_SOLVERS=$solver compute-sanitizer --tool "$tool" $extra --error-exitcode 1 \
                build-gpu/tests/test_device_api "[template]" || rc=1
        done
    }
    # The out-of-memory cases under memcheck: their cudaMalloc failures are provoked on purpose,
    # so API errors are not reported there; memory errors and leaks are.
    if [ "$tool" = memcheck ]; then
        echo "== memcheck [memory]"
        compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 1 \
            build-gpu/tests/test_device_api "[memory]" || rc=1
    fi
    return $rc
}
export -f sanitize
if want sanitizer; then
    for tool in memcheck racecheck initcheck synccheck; do
        step "compute-sanitizer $tool" "sanitizer_$tool.log" sanitize "$tool" || ok=1
    done
fi
want gpu-only && { step "GPU-only build + tests" gpu_only.log bash -c \
    "configure build-gpu-only -DFLCC_WITH_HOST=OFF && cd build-gpu-only && ctest --output-on-failure -j 4" || ok=1; }
if ! want bench; then
    :
elif [ -x bench/run_gpu.sh ]; then
    step "benchmark" bench.log env OUT="$out" FLCC_BUILD=build-gpu bench/run_gpu.sh || ok=1
else
    bench() {
        local b=build-gpu/bench/flcc-bench
        for k in 4 8 16 32; do
            $b --op lcorr --image 2000x2000 --template $k --region full --platform device --rigor estimate --repeats 20 &&
            $b --op conv --image 2000x2000 --template $k --region full --platform device --rigor estimate --repeats 20 || return 1
        done
    }
    export -f bench
    step "benchmark" bench.log bench || ok=1
fi

python_check() {
    local py=${PYTHON:-python3}
    if [ -d .whl ]; then
        "$py" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || return 1
        export PYTHONPATH=/tmp/site
    fi
    "$py" -m pip install -q --no-build-isolation --no-deps --no-index . \
        -C build-dir=build-python-gpu -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 || return 1
    "$py" -m pytest -q -ra python/tests || return 1
    "$py" bench/python/overhead.py --gpu | tee "$out/python_overhead.jsonl"
}
export -f python_check
want python && { step "Python package" python.log python_check || ok=1; }

echo
echo "GPU check on $(head -2 "$out/gpu.txt" | tail -1)"
for i in "${!steps[@]}"; do printf '  %-26s %s\n' "${steps[$i]}" "${results[$i]}"; done
[ -f "$out/ctest.log" ] && grep -E "^(test cases|All tests|[0-9]+% tests)" "$out/ctest.log" | tail -3
exit $ok
