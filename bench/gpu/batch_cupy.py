#!/usr/bin/env python3
"""The CuPy peer of the GPU batch workloads (issue 28): what a user writes in a dozen lines of
CuPy instead of a batch plan. Per frame, device-resident: the subregions cut from the frame by
index arrays, converted to float32, batched rfft2, multiplied by the conjugate spectra of the
reference subregions (prepared once), batched irfft2 (circular cross-correlation, no
normalisation) and the argmax of every map. One JSON line per problem ("bench": "cupy.batch"),
seconds per frame, the median of --repeats runs of --frames frames each (CUDA events).

  batch_cupy.py --problem ebsd-full   # 900 x 900 uint16, 49 subregions of 128 x 128
  batch_cupy.py --problem piv-full    # 2048 x 2048 uint8 pairs, 4096 windows of 32 x 32
  batch_cupy.py --problem piv-same    # the same loop (its circular map covers SAME's shifts)

The subregions are flcc-batch-bench's (bench/flcc_batch_bench.cpp): the same frames' sizes, grids
and element types.
"""
import argparse
import json
import sys

import numpy as np


def origins(problem):
    if problem == "ebsd-full":
        step = (900 - 2 * 50 - 128) // 6
        return (900, 900), np.uint16, 128, [(50 + i * step, 50 + j * step) for i in range(7) for j in range(7)]
    if problem in ("piv-full", "piv-same"):
        return (2048, 2048), np.uint8, 32, [(y, x) for y in range(0, 2048, 32) for x in range(0, 2048, 32)]
    raise SystemExit(f"batch_cupy.py: unknown problem {problem}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="ebsd-full")
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        print("batch_cupy.py: CuPy is not installed", file=sys.stderr)
        sys.exit(3)
    frame, dtype, n, at = origins(args.problem)
    rng = np.random.default_rng(1)
    top = 4000 if dtype == np.uint16 else 255
    frames = cp.asarray(rng.integers(0, top, size=(args.frames + 1, *frame)).astype(dtype))
    oy = cp.asarray([a[0] for a in at])[:, None, None] + cp.arange(n)[None, :, None]
    ox = cp.asarray([a[1] for a in at])[:, None, None] + cp.arange(n)[None, None, :]

    def cut(f):
        return f[oy, ox].astype(cp.float32)

    # The reference (EBSD: frame 0 for every frame; PIV: each pair's first frame, frame f).
    ref = cp.conj(cp.fft.rfft2(cut(frames[0])))
    per_frame = args.problem.startswith("piv")

    def one(f):
        spectra = ref if not per_frame else cp.conj(cp.fft.rfft2(cut(frames[f])))
        maps = cp.fft.irfft2(cp.fft.rfft2(cut(frames[f + 1])) * spectra, s=(n, n))
        return cp.argmax(maps.reshape(len(at), -1), axis=1)

    for f in range(min(4, args.frames)):   # warm-up: cuFFT plans, kernels
        one(f)
    cp.cuda.Device().synchronize()
    times = []
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(args.repeats):
        start.record()
        for f in range(args.frames):
            one(f)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3 / args.frames)
    times.sort()
    median = times[len(times) // 2]
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(json.dumps({
        "bench": "cupy.batch", "problem": args.problem, "subregions": len(at), "size": n,
        "frames": args.frames, "seconds": {"median": median, "min": times[0], "max": times[-1]},
        "repeats": args.repeats, "frames_per_second": 1 / median,
        "machine": {"gpu": name}, "versions": {"cupy": cp.__version__},
    }))


if __name__ == "__main__":
    main()
