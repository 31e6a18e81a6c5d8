#!/usr/bin/env bash
# The CPU benchmarks in one command: makes a Python venv with the peers (PyPI), builds FLCC's
# flcc-bench if needed, runs the experiments (bench/experiments/*.py), regenerates the plots
# (docs/img/) and prints the report (bench/report.py) for docs/performance.md.
#
#   bench/run_cpu.sh                 # everything: under 20 minutes on a 2-core machine
#   bench/run_cpu.sh --quick         # seconds per experiment, small sizes, outputs checked
#                                    # against FLCC; what CI runs so the benchmark code cannot rot
#   bench/run_cpu.sh --only a,e      # some experiments (a b c d e t; t: the CPU targets in
#                                    # alternating rounds, bench/experiments/t_cpu_targets.py)
#   bench/run_cpu.sh --threads 4     # CPU threads for FLCC and the peers (default: all)
#   bench/run_cpu.sh --full-map      # the planner map (e) at every template size: 580 cells,
#                                    # about 40 minutes instead of 5 (default grid: 100 cells)
#   bench/run_cpu.sh --stream-map    # the planner map (e) with STREAM plans of 4 frames
#                                    # (e_planner_map_stream.jsonl), default or --full-map grid
#
# Full runs write bench/results/<machine tag>/<experiment>.jsonl, docs/img/*.png and
# bench/results/<machine tag>/report.md. Quick runs write under $FLCC_BENCH_BUILD/quick/ only,
# so they never overwrite real results. Any failure stops the script with a non-zero status.
#
# Environment: FLCC_BENCH_VENV (venv folder, default build-bench/venv; an existing venv with the
# packages is reused as is), FLCC_BENCH_BUILD (build folder, default build-bench), FLCC_BENCH
# (use this flcc-bench instead of building one), FLCC_BENCH_TAG (results folder name),
# PYTHON (the interpreter that makes the venv, default python3).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=0
only="a,b,d,e,t,c"
threads=0
full_map=0
stream_map=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --only) only="$2"; shift ;;
        --threads) threads="$2"; shift ;;
        --full-map) full_map=1 ;;
        --stream-map) stream_map=1 ;;
        -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run_cpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
say() { echo "== $(date +%H:%M:%S) $*" >&2; }
start=$(date +%s)

# --- Python peers ---------------------------------------------------------------------------
build=${FLCC_BENCH_BUILD:-$root/build-bench}
venv=${FLCC_BENCH_VENV:-$build/venv}
if [ ! -x "$venv/bin/python" ]; then
    say "creating venv $venv"
    "${PYTHON:-python3}" -m venv "$venv"
fi
py="$venv/bin/python"
if ! "$py" -c "import numpy, scipy, cv2, skimage, matplotlib" 2>/dev/null; then
    say "installing the peers into $venv (PyPI)"
    "$py" -m pip install --quiet --disable-pip-version-check \
        numpy scipy opencv-python-headless scikit-image matplotlib
fi
"$py" -c "import numpy, scipy, cv2, skimage, matplotlib; print('peers: numpy', numpy.__version__, \
'scipy', scipy.__version__, 'opencv', cv2.__version__, 'skimage', skimage.__version__)" >&2

# --- FLCC -----------------------------------------------------------------------------------
if [ -z "${FLCC_BENCH:-}" ]; then
    # CPU benchmarks: no CUDA (faster build); FFTW when the system has it (the CPU Fourier
    # solvers need it), else without, said loudly.
    cfg=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFLCC_WITH_CUDA=OFF
         -DFLCC_BUILD_TESTS=OFF -DFLCC_BUILD_EXAMPLES=OFF -DFLCC_BUILD_BENCH=ON)
    mkdir -p "$build"
    blog="$build/run_cpu.build.log"   # inside the (git-ignored) build folder
    if [ ! -f "$build/CMakeCache.txt" ]; then
        say "configuring $build"
        if ! cmake "${cfg[@]}" -DFLCC_WITH_FFTW=ON >"$blog" 2>&1; then
            say "WARNING: configuring with FFTW failed; building without the FFTW solvers"
            cmake "${cfg[@]}" -DFLCC_WITH_FFTW=OFF >>"$blog" 2>&1 \
                || { cat "$blog" >&2; exit 1; }
        fi
    fi
    say "building flcc-bench in $build"
    cmake --build "$build" -j"$(nproc)" --target flcc-bench >>"$blog" 2>&1 \
        || { tail -50 "$blog" >&2; exit 1; }
    # bench/planner_map.cpp: built by CMake once bench/CMakeLists.txt lists it, else the
    # planner-map experiment compiles it against this build's libflcc.so.
    if grep -q "flcc-planner-map" "$root/bench/CMakeLists.txt" 2>/dev/null; then
        cmake --build "$build" -j"$(nproc)" --target flcc-planner-map >>"$blog" 2>&1 \
            || { tail -50 "$blog" >&2; exit 1; }
    fi
    export FLCC_BENCH="$build/bench/flcc-bench"
fi
[ -x "$FLCC_BENCH" ] || { echo "run_cpu.sh: no flcc-bench at $FLCC_BENCH" >&2; exit 1; }
echo "flcc-bench: $FLCC_BENCH, $("$FLCC_BENCH" --list | wc -l) solvers" >&2

# --- experiments ----------------------------------------------------------------------------
common=(--threads "$threads" --flcc-bench "$FLCC_BENCH")
if [ "$quick" = 1 ]; then
    out="$build/quick"
    rm -rf "$out"
    common+=(--quick --results "$out/results" --img "$out/img")
    # the GPU peer script must at least parse and refuse cleanly without CUDA
    "$py" -m py_compile "$root/bench/gpu/gpu_peers.py"
    "$py" "$root/bench/gpu/gpu_peers.py" --list >/dev/null
    results="$out/results"
else
    results="$root/bench/results/${FLCC_BENCH_TAG:-$("$py" -c "import sys; sys.path.insert(0, '$root/bench/peers'); import common; print(common.machine_tag())")}"
    common+=(--results "$results")
fi
export FLCC_BENCH_TAG="$(basename "$results")"

declare -A script=([a]=a_template_sweep [b]=b_size_sweep [c]=c_cpu_vs_gpu [d]=d_threads [e]=e_planner_map
                   [t]=t_cpu_targets)
for x in ${only//,/ }; do
    [ -n "${script[$x]:-}" ] || { echo "run_cpu.sh: no experiment '$x' (a b c d e t)" >&2; exit 2; }
    say "experiment ($x) ${script[$x]}"
    extra=()
    [ "$x" = e ] && [ "$full_map" = 1 ] && extra+=(--full-grid)
    [ "$x" = e ] && [ "$stream_map" = 1 ] && extra+=(--stream 4)
    "$py" "$root/bench/experiments/${script[$x]}.py" "${common[@]}" "${extra[@]}"
done

say "report"
if [ "$quick" = 1 ]; then
    "$py" "$root/bench/report.py" --results "$results" >"$results/report.md"
    grep -c '|' "$results/report.md" >/dev/null   # the report has tables
else
    # This machine's folder gets its own report (a report over every folder mixes machines:
    # its planner row once counted another machine's cells); every folder's, GPU runs copied
    # into bench/results/ included, goes to the terminal.
    "$py" "$root/bench/report.py" --results "$results" >"$results/report.md"
    "$py" "$root/bench/report.py"
fi
say "done in $(( $(date +%s) - start )) s; results in $results"
