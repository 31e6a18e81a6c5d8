#!/usr/bin/env bash
# The GPU benchmarks, on a machine with an NVIDIA GPU, CUDA (nvcc, NPP) and a python3 that has
# CuPy, PyTorch, SciPy and matplotlib (no network needed):
#
#   bench/run_gpu.sh            # GPU targets, then experiments (a) and (b) on the device
#   bench/run_gpu.sh --quick    # small sizes: checks the plumbing in a minute or two
#   bench/run_gpu.sh --only g   # some of: g (GPU targets), a, b
#
# It builds FLCC with CUDA (build-gpu/; Debian packages in .debs/ are unpacked first when the
# machine lacks FFTW or CLI11, see ../shared/device/README.md), builds bench/gpu/npp_bench.cpp
# with nvcc against NPP, and runs bench/experiments/g_gpu_targets.py and the (a)/(b) sweeps with
# --platform device. JSON lines go to $OUT/<machine tag>/ when $OUT is set (the device tool's
# folder that comes back), else to bench/results/<machine tag>/. Plots are made from them on any
# machine: python3 bench/experiments/a_template_sweep.py --platform device --plot-only ...
# A failed step is reported and the next one still runs; the exit status is then 1.
#
# Environment: CUDA_ARCH (default 90 = H100/H200), FLCC_BENCH_TAG (results folder name),
# PYTHON (default python3), NPP_LIBS (default "-lnppist -lnppc").
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=()
only="g,a,b"
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=(--quick) ;;
        --only) only="$2"; shift ;;
        -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
py=${PYTHON:-python3}
arch=${CUDA_ARCH:-90}
failed=0
say() { echo "== $(date +%H:%M:%S) $*" >&2; }
fail() { echo "== FAILED: $*" >&2; failed=1; }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
say "GPU: ${gpu:-none found}; nvcc: $(nvcc --version 2>/dev/null | tail -1)"
tag=${FLCC_BENCH_TAG:-$(echo "${gpu:-gpu}" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/-*$//')}
if [ -n "${OUT:-}" ]; then results="$OUT/$tag"; else results="$root/bench/results/$tag"; fi
mkdir -p "$results"
export FLCC_BENCH_TAG="$tag"
log="$results/run_gpu.log"
exec > >(tee -a "$log") 2>&1
say "results in $results"

# --- dependencies carried as Debian packages (FFTW, Catch2, CLI11) ----------------------------
if compgen -G "$root/.debs/*.deb" >/dev/null; then
    say "unpacking .debs/"
    for f in "$root"/.debs/*.deb; do dpkg -x "$f" / || fail "dpkg -x $f"; done
    ldconfig || true
fi

# --- FLCC with CUDA ---------------------------------------------------------------------------
build="$root/build-gpu"
cfg=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFLCC_WITH_CUDA=ON
     -DCMAKE_CUDA_ARCHITECTURES="$arch" -DFLCC_BUILD_TESTS=OFF -DFLCC_BUILD_EXAMPLES=OFF)
mkdir -p "$build"
blog="$build/run_gpu.build.log"
say "building FLCC in $build"
if { cmake "${cfg[@]}" -DFLCC_WITH_FFTW=ON >"$blog" 2>&1 \
       || { say "no FFTW: configuring without it"; cmake "${cfg[@]}" -DFLCC_WITH_FFTW=OFF >>"$blog" 2>&1; }; } \
   && cmake --build "$build" -j"$(nproc)" --target flcc-bench >>"$blog" 2>&1; then
    export FLCC_BENCH="$build/bench/flcc-bench"
    say "flcc-bench: $("$FLCC_BENCH" --list | grep -c '^device\.') device solvers of $("$FLCC_BENCH" --list | wc -l)"
else
    tail -30 "$blog"
    fail "FLCC build (log: $blog); the peers still run"
    unset FLCC_BENCH
fi

# --- NPP peer ----------------------------------------------------------------------------------
npp="$build/npp_bench"
say "building npp_bench"
if nvcc -O2 -std=c++17 -arch=sm_"$arch" "$root/bench/gpu/npp_bench.cpp" -o "$npp" \
        ${NPP_LIBS:--lnppist -lnppc}; then
    export FLCC_NPP_BENCH="$npp"
else
    fail "npp_bench build"
fi

# --- measurements ------------------------------------------------------------------------------
img=$(mktemp -d)   # plots: made from the JSON later, on any machine
args=("${quick[@]}" --results "$results" --img "$img" ${FLCC_BENCH:+--flcc-bench "$FLCC_BENCH"})
export PYTHONUNBUFFERED=1
for x in ${only//,/ }; do
    case "$x" in
        g) say "GPU targets"; "$py" "$root/bench/experiments/g_gpu_targets.py" "${args[@]}" || fail "GPU targets" ;;
        a) say "(a) on the device"; "$py" "$root/bench/experiments/a_template_sweep.py" --platform device "${args[@]}" || fail "(a) on the device" ;;
        b) say "(b) on the device"; "$py" "$root/bench/experiments/b_size_sweep.py" --platform device "${args[@]}" || fail "(b) on the device" ;;
        *) fail "unknown experiment '$x' (g a b)" ;;
    esac
done
rm -rf "$img"

say "report"
"$py" "$root/bench/report.py" --results "$results" | tail -25 || fail "report"
[ "$failed" = 0 ] && say "done" || say "done, with failures (see above)"
exit "$failed"
