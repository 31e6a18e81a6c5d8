#!/usr/bin/env python3
"""The CuPy peer of the GPU batch workloads (issue 28): what a user writes in a dozen lines of
CuPy instead of a batch plan, and the cuFFT transforms alone of FLCC's linear boxes. One JSON
line per problem and form ("bench": "cupy.batch"), seconds per frame, the median of --repeats
runs of --frames frames each (CUDA events), device-resident.

--form circular (the issue's peer): per frame, the subregions cut from the frame by index
arrays, converted to float32, batched rfft2, multiplied by the conjugate spectra of the
reference subregions (prepared once; PIV: each pair's first frame, every frame), batched irfft2
(circular cross-correlation of the subregions' own size, no normalisation) and the argmax of
every map.

--form linear: the same loop in the box of FLCC's linear correlation (geometry/fft_size.h's
correlation_box_size: 256 for 128 x 128 FULL, 64 for 32 x 32 FULL, 48 for 32 x 32 SAME), so no
lag of the region wraps around: the maps FLCC computes, without the normalisation.

--form transforms: only the transforms of the linear form, batched over all --frames frames in
one call each (no cut, product, search or Python per frame): the images' boxes forward (PIV: the
templates' boxes too, new every frame) and one inverse per pair. What any FLCC engine built on
cuFFT's transforms cannot go below on this GPU.

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
    """The frame's shape, its element type, the subregions' side, their origins and the side of
    FLCC's linear box for the problem's region."""
    if problem == "ebsd-full":
        step = (900 - 2 * 50 - 128) // 6
        return (900, 900), np.uint16, 128, [(50 + i * step, 50 + j * step) for i in range(7) for j in range(7)], 256
    if problem in ("piv-full", "piv-same"):
        box = 64 if problem == "piv-full" else 48
        return (2048, 2048), np.uint8, 32, [(y, x) for y in range(0, 2048, 32) for x in range(0, 2048, 32)], box
    raise SystemExit(f"batch_cupy.py: unknown problem {problem}")


def timed(cp, repeats, frames, body):
    """Seconds per frame of body() (which runs `frames` frames), the median, least and most of
    `repeats` runs after one warm-up run (cuFFT plans, kernels)."""
    body()
    cp.cuda.Device().synchronize()
    times = []
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(repeats):
        start.record()
        body()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3 / frames)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="ebsd-full")
    ap.add_argument("--form", default="circular", choices=["circular", "linear", "transforms"])
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        print("batch_cupy.py: CuPy is not installed", file=sys.stderr)
        sys.exit(3)
    frame, dtype, n, at, box = origins(args.problem)
    rng = np.random.default_rng(1)
    top = 4000 if dtype == np.uint16 else 255
    per_frame = args.problem.startswith("piv")   # PIV: the reference is each pair's first frame
    side = n if args.form == "circular" else box   # the transforms' box

    if args.form == "transforms":
        # The boxes of every frame (and PIV's templates), made once outside the timing; their
        # values do not change a transform's time.
        pairs = len(at)
        images = cp.random.random((args.frames * pairs, side, side), dtype=cp.float32) * top
        templates = cp.random.random((args.frames * pairs, side, side), dtype=cp.float32) * top if per_frame else None
        spectra = cp.fft.rfft2(images)

        def body():
            cp.fft.rfft2(images)
            if per_frame:
                cp.fft.rfft2(templates)
            cp.fft.irfft2(spectra, s=(side, side))

        median, least, most = timed(cp, args.repeats, args.frames, body)
    else:
        frames = cp.asarray(rng.integers(0, top, size=(args.frames + 1, *frame)).astype(dtype))
        oy = cp.asarray([a[0] for a in at])[:, None, None] + cp.arange(n)[None, :, None]
        ox = cp.asarray([a[1] for a in at])[:, None, None] + cp.arange(n)[None, None, :]

        def cut(f):
            return f[oy, ox].astype(cp.float32)

        ref = cp.conj(cp.fft.rfft2(cut(frames[0]), s=(side, side)))

        def one(f):
            spectra = ref if not per_frame else cp.conj(cp.fft.rfft2(cut(frames[f]), s=(side, side)))
            maps = cp.fft.irfft2(cp.fft.rfft2(cut(frames[f + 1]), s=(side, side)) * spectra, s=(side, side))
            return cp.argmax(maps.reshape(len(at), -1), axis=1)

        def body():
            for f in range(args.frames):
                one(f)

        median, least, most = timed(cp, args.repeats, args.frames, body)
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(json.dumps({
        "bench": "cupy.batch", "problem": args.problem, "form": args.form, "subregions": len(at), "size": n,
        "box": side,
        "frames": args.frames, "seconds": {"median": median, "min": least, "max": most},
        "repeats": args.repeats, "frames_per_second": 1 / median,
        "machine": {"gpu": name}, "versions": {"cupy": cp.__version__},
    }))


if __name__ == "__main__":
    main()
