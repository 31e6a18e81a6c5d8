#!/usr/bin/env python3
"""Times FLCC's CPU peers on flcc-bench's inputs and output regions; one JSON line per measurement.

  cpu_peers.py --op lcorr --image 2000x2000 --template 4,16 --region valid
  cpu_peers.py --op conv --image 2000x2000 --template 32 --region full --type stream --frames 10
  cpu_peers.py --op lcorr --image 64x64 --template 5 --region valid --check build/libflcc.so

Peers (--peers, default: every one that applies to the problem):
  opencv.matchTemplate    lcorr, 2D, valid                 cv2.matchTemplate(TM_CCOEFF_NORMED)
  skimage.match_template  lcorr, 2D/3D, valid (same = pad_input=True, zero padding)
  opencv.filter2D         conv, 2D, same                   flipped kernel, BORDER_CONSTANT
  scipy.fftconvolve       conv, 2D/3D, full/same/valid     scipy.signal.fftconvolve
  scipy.correlate         conv, 2D/3D, full/same/valid     scipy.signal.correlate(method='auto')
                                                           with the flipped template

Threads: --threads N (0 = all hardware threads) sets OpenCV's pool (cv2.setNumThreads; the JSON
records cv2.getNumThreads()) and scipy.fft's workers (used by fftconvolve, correlate's FFT path
and skimage's match_template). SciPy's direct correlation and skimage's running sums are
single-threaded whatever N is: the JSON records N as what the peer was allowed, not what it used.

SINGLE times one frame per call with a new template each repeat (as flcc-bench); STREAM loops
over --frames frames with one template (the peers have no stream API). Medians over --repeats
after --warmup untimed calls. --check LIB compares each peer's output with FLCC's (through
libflcc) and fails if they differ beyond round-off: it proves the regions are the same.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", choices=["conv", "lcorr"], default="lcorr")
    p.add_argument("--image", default="256x256", help="image sizes, HxW or HxWxD, comma separated")
    p.add_argument("--template", default="8", help="template sizes (N = square/cube), comma separated")
    p.add_argument("--region", choices=["full", "same", "valid"], default="valid")
    p.add_argument("--type", choices=["single", "stream"], default="single")
    p.add_argument("--frames", type=int, default=1, help="frames per stream (STREAM)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="0 = all hardware threads")
    p.add_argument("--peers", default="all", help="comma separated peer names, or all")
    p.add_argument("--check", metavar="LIBFLCC", help="compare outputs with FLCC through this library")
    a = p.parse_args(argv)
    if a.repeats < 1 or a.frames < 1 or a.warmup < 0 or a.threads < 0:
        p.error("repeats and frames must be >= 1, warmup and threads >= 0")
    if a.type == "single":
        a.frames = 1
    return a


# Thread counts must be fixed before numpy/OpenCV start their pools.
ARGS = parse_args(sys.argv[1:])
THREADS = ARGS.threads or (os.cpu_count() or 1)
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

try:
    import cv2
    import scipy
    import scipy.fft
    import scipy.signal
    import skimage
    import skimage.feature
except ImportError as e:   # fail loudly: a missing peer must not silently shrink a benchmark
    common.die(f"missing peer library ({e}); install numpy scipy opencv-python-headless scikit-image")

cv2.setNumThreads(THREADS)


# ---------------------------------------------------------------- the peers
# Each peer: (applies(op, dim, region), make(image_frames, region, templ_shape) -> run(frame, tpl)).
# run returns the output array (used by --check); timing ignores it.

def _match_template_cv(imgs, region, tshape):
    out = np.empty(common.output_shape(imgs.shape[1:], tshape, "valid"), np.float32)

    def run(f, tpl):
        return cv2.matchTemplate(imgs[f], tpl, cv2.TM_CCOEFF_NORMED, result=out)
    return run, "cv2.matchTemplate(TM_CCOEFF_NORMED)"


def _match_template_sk(imgs, region, tshape):
    pad = region == "same"

    def run(f, tpl):
        return skimage.feature.match_template(imgs[f], tpl, pad_input=pad, mode="constant",
                                              constant_values=0)
    return run, f"skimage.feature.match_template(pad_input={pad})"


def _filter2d(imgs, region, tshape):
    out = np.empty(imgs.shape[1:], np.float32)

    def run(f, tpl):
        # filter2D correlates: flip the kernel to convolve (the flip is part of the user's cost).
        # The default anchor, floor(T/2), then equals scipy's 'same' offset floor((T-1)/2).
        k = np.ascontiguousarray(tpl[::-1, ::-1])
        return cv2.filter2D(imgs[f], cv2.CV_32F, k, dst=out, borderType=cv2.BORDER_CONSTANT)
    return run, "cv2.filter2D(flipped, BORDER_CONSTANT)"


def _fftconvolve(imgs, region, tshape):
    def run(f, tpl):
        return scipy.signal.fftconvolve(imgs[f], tpl, mode=region)
    return run, "scipy.signal.fftconvolve"


def _correlate(imgs, region, tshape):
    flip = tuple(slice(None, None, -1) for _ in tshape)
    probe = np.zeros(tshape, np.float32)
    chosen = scipy.signal.choose_conv_method(imgs[0], probe, mode=region)

    def run(f, tpl):
        # correlate with the flipped template = the convolution FLCC computes
        return scipy.signal.correlate(imgs[f], np.ascontiguousarray(tpl[flip]), mode=region,
                                      method="auto")
    return run, f"scipy.signal.correlate(method=auto->{chosen})"


PEERS = {
    "opencv.matchTemplate": (lambda op, dim, reg: op == "lcorr" and dim == 2 and reg == "valid",
                             _match_template_cv),
    "skimage.match_template": (lambda op, dim, reg: op == "lcorr" and reg in ("valid", "same"),
                               _match_template_sk),
    "opencv.filter2D": (lambda op, dim, reg: op == "conv" and dim == 2 and reg == "same", _filter2d),
    "scipy.fftconvolve": (lambda op, dim, reg: op == "conv", _fftconvolve),
    "scipy.correlate": (lambda op, dim, reg: op == "conv", _correlate),
}

PEER_THREADS = {   # what each peer reports as its thread count
    "opencv.matchTemplate": lambda: cv2.getNumThreads(),
    "opencv.filter2D": lambda: cv2.getNumThreads(),
}


def main():
    a = ARGS
    names = list(PEERS) if a.peers == "all" else [s for s in a.peers.split(",") if s]
    for n in names:
        if n not in PEERS:
            common.die(f"unknown peer '{n}' (known: {', '.join(PEERS)})")
    flcc = common.Flcc(a.check) if a.check else None
    machine = common.machine_info()
    versions = common.module_versions("numpy", "scipy", "cv2", "skimage")
    versions["opencv_num_threads"] = cv2.getNumThreads()
    failures = 0

    with scipy.fft.set_workers(THREADS):
        for image in common.parse_list(a.image):
            for t in common.parse_list(a.template):
                tshape = common.template_shape(image, t)
                if a.region == "valid" and any(x > y for x, y in zip(tshape, image)):
                    common.die(f"template {tshape} larger than image {image} in valid region")
                todo = [n for n in names if PEERS[n][0](a.op, len(image), a.region)]
                if a.peers != "all":
                    for n in set(names) - set(todo):
                        sys.stderr.write(f"cpu_peers: {n} does not do {a.op} {len(image)}D "
                                         f"{a.region}; skipped\n")
                if not todo:
                    continue
                imgs, tpl = common.make_inputs(image, tshape, a.frames)
                ref = flcc.run(a.op, imgs[0], tpl, a.region) if flcc else None
                for name in todo:
                    run, method = PEERS[name][1](imgs, a.region, tshape)
                    extra = {}
                    if flcc is not None:
                        got = np.asarray(run(0, tpl))
                        err, ok = common.compare(a.op, got, ref)
                        extra["check"] = {"max_abs_diff_vs_flcc": err, "ok": ok}
                        if not ok:
                            failures += 1
                            sys.stderr.write(f"cpu_peers: CHECK FAILED: {name} {a.op} {image} "
                                             f"{tshape} {a.region}: shape {got.shape} vs "
                                             f"{ref.shape}, max |diff| {err:g}\n")
                    if a.type == "single":
                        samples = common.time_single(lambda tp: run(0, tp), tpl, a.repeats, a.warmup)
                    else:
                        samples = common.time_stream(lambda f: run(f, tpl), a.frames, a.repeats,
                                                     a.warmup)
                    threads = PEER_THREADS.get(name, lambda: THREADS)()
                    extra["threads_requested"] = THREADS
                    common.emit(common.record(name, a.op, image, tshape, a.region, a.type, a.frames,
                                              "host", method, threads, samples, machine, versions,
                                              **extra))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
