"""Peers of flcc-batch-bench on the subregion-registration workloads (same frames, subregion
grid and sizes; one JSON line per peer and problem, seconds per frame):

  opencv.loop   ebsd-search: per subregion cv2.matchTemplate(TM_CCOEFF_NORMED) of the centre
                64 x 64 of the reference subregion in the frame's 128 x 128 subregion,
                cv2.minMaxLoc and the 3-point parabolic fit per axis (the OpenCV user's loop);
                piv: the same with 32 x 32 windows in 64 x 64
  skimage.loop  ebsd-full: per subregion skimage.registration.phase_cross_correlation of the
                reference subregion and the frame's, upsample_factor 10

  python3 batch_peers.py [--threads N] [--frames F] [--repeats R]
"""
import argparse
import time

import numpy as np

import common

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=0)
ap.add_argument("--frames", type=int, default=4)
ap.add_argument("--repeats", type=int, default=5)
args = ap.parse_args()

try:
    import cv2
    import skimage
    from skimage.registration import phase_cross_correlation
except ImportError as e:
    common.die(f"missing peer library ({e}); install numpy opencv-python-headless scikit-image")
threads = args.threads or (common.os.cpu_count() or 1)
cv2.setNumThreads(threads)


def grid(frame, size, margin, count):
    step = (frame - 2 * margin - size) // (count - 1)
    return [(margin + i * step, margin + j * step) for i in range(count) for j in range(count)]


def parabolic(m, py, px):
    def vertex(a, b, c):
        d = a - 2 * b + c
        return 0.5 * (a - c) / d if d < 0 else 0.0
    dy = vertex(m[py - 1, px], m[py, px], m[py + 1, px]) if 0 < py < m.shape[0] - 1 else 0.0
    dx = vertex(m[py, px - 1], m[py, px], m[py, px + 1]) if 0 < px < m.shape[1] - 1 else 0.0
    return py + dy, px + dx


def search_loop(frame, ref, origins, size, t):
    off = (size - t) // 2
    out = []
    for y, x in origins:
        sub = frame[y:y + size, x:x + size].astype(np.float32)
        tpl = ref[y + off:y + off + t, x + off:x + off + t].astype(np.float32)
        m = cv2.matchTemplate(sub, tpl, cv2.TM_CCOEFF_NORMED)
        _, _, _, (px, py) = cv2.minMaxLoc(m)
        out.append(parabolic(m, py, px))
    return out


def full_loop(frame, ref, origins, size):
    return [phase_cross_correlation(ref[y:y + size, x:x + size].astype(np.float32),
                                    frame[y:y + size, x:x + size].astype(np.float32),
                                    upsample_factor=10)[0] for y, x in origins]


def measure(run, frames):
    run(frames[0])
    samples = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        for f in frames:
            run(f)
        samples.append((time.perf_counter() - t) / len(frames))
    return samples


rng = np.random.default_rng(1)
problems = [
    ("ebsd-search", "opencv.loop", np.uint16, 900, 128, 64, grid(900, 128, 50, 7)),
    ("ebsd-full", "skimage.loop", np.uint16, 900, 128, 128, grid(900, 128, 50, 7)),
    ("piv", "opencv.loop", np.uint8, 1024, 64, 32,
     [(y, x) for y in range(16, 1024 - 16 - 64 + 1, 32) for x in range(16, 1024 - 16 - 64 + 1, 32)]),
]
for name, peer, dtype, side, size, t, origins in problems:
    top = 255 if dtype == np.uint8 else 4000
    ref = (rng.random((side, side)) * top).astype(dtype)
    frames = [(rng.random((side, side)) * top).astype(dtype) for _ in range(args.frames)]
    if peer == "opencv.loop":
        run = lambda f: search_loop(f, ref, origins, size, t)   # noqa: E731
        versions = common.module_versions("numpy", "cv2")
    else:
        run = lambda f: full_loop(f, ref, origins, size)   # noqa: E731
        versions = common.module_versions("numpy", "skimage")
    s = sorted(measure(run, frames))
    common.emit({"bench": peer, "problem": name, "op": "lcorr" if peer == "opencv.loop" else "pcc",
                 "dim": 2, "frame": [side, side], "subregions": len(origins),
                 "image": [size, size], "template": [t, t], "threads": threads,
                 "seconds": {"median": s[len(s) // 2], "min": s[0], "max": s[-1]},
                 "repeats": args.repeats, "frames_per_second": 1 / s[len(s) // 2],
                 "machine": common.machine_info(), "versions": versions})
