#!/usr/bin/env bash
# The GPU batch workloads (issue 28) against their CuPy peers, on the GPU machine, FLCC and CuPy
# alternating per round: device-resident frames (FLCC --memory device, CuPy the same), the stream
# of page-locked host frames (--memory pinned) and the pinned host-to-device bandwidth (its
# bound). Needs a CUDA build of flcc-batch-bench ($FLCC_BUILD, default build-gpu) and a python3
# with CuPy. JSON lines go to $OUT/<gpu tag>/batch_gpu.jsonl ($OUT set: the device tool's
# folder), else bench/results/<gpu tag>/.
#
#   bench/run_batch_gpu.sh [ROUNDS]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-2}
build=${FLCC_BUILD:-$root/build-gpu}
py=${PYTHON:-python3}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
tag=$(echo "${gpu:-gpu}" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/-*$//')
if [ -n "${OUT:-}" ]; then results="$OUT/$tag"; else results="$root/bench/results/$tag"; fi
mkdir -p "$results"
out="$results/batch_gpu.jsonl"
: > "$out"
bench="$build/bench/flcc-batch-bench"
failed=0
run() { "$@" >> "$out" || { echo "FAILED: $*" >&2; failed=1; }; }

run "$py" "$root/bench/gpu/gpu_peers.py" --bandwidth
for round in $(seq "$rounds"); do
    for problem in ebsd-full ebsd-search piv-full piv-same piv; do
        # The plan's own choice of engine, device-resident and streamed; then each engine forced.
        for memory in device pinned; do
            run "$bench" --problem "$problem" --platform device --memory "$memory" --frames 64 --repeats 7
        done
        # The EBSD forms' 128 x 128 pairs exceed the per-block transforms' 64 x 64 box, and a 128 x
        # 128 FULL pair one block's shared memory: those engines do not apply there.
        engines="device.batch.fourier device.batch.direct device.batch.blockfft"
        [ "$problem" = ebsd-search ] && engines="device.batch.fourier device.batch.direct"
        [ "$problem" = ebsd-full ] && engines=device.batch.fourier
        for engine in $engines; do
            run "$bench" --problem "$problem" --platform device --memory device --method "$engine" --frames 64 --repeats 7
        done
        case "$problem" in
            ebsd-full|piv-full|piv-same)
                # The issue's loop (circular), the same loop in FLCC's linear box, and that box's
                # cuFFT transforms alone (bench/gpu/batch_cupy.py).
                for form in circular linear transforms; do
                    run "$py" "$root/bench/gpu/batch_cupy.py" --problem "$problem" --form "$form"
                done ;;
        esac
    done
    # The stream with more frames per exec: an exec's first upload overlaps no compute, which
    # 512 frames amortise (the EBSD forms only: 512 of their frames are 830 MB of page-locked
    # memory).
    for problem in ebsd-search ebsd-full; do
        for memory in device pinned; do
            run "$bench" --problem "$problem" --platform device --memory "$memory" --frames 512 --repeats 5
        done
    done
    # The fits beside parabolic, device-resident.
    for refine in quadratic gaussian; do
        run "$bench" --problem ebsd-full --platform device --memory device --refine "$refine" --frames 64 --repeats 7
    done
done
echo "results: $out"
exit $failed
