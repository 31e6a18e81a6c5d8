"""Sub-pixel accuracy of flcc.register_subregions against known shifts, beside scikit-image's
phase_cross_correlation (upsample_factor 20) on the same subregions (issue 28's accuracy
targets; docs/performance.md, "Batches").

Pairs: band-limited noise (Gaussian spectrum, sigma 3 px in space) moved by a known shift within
+-8 px by the Fourier phase, counts 500-3500 with Poisson noise, uint16; 384 x 384 frames with 9
subregions of 128 x 128. FLCC: the search form (the centre 64 x 64 of each reference subregion
searched in the frame's subregion) with every refinement, and the full form (whole subregions,
zero-mean, FULL region). RMS error per component, in pixels. One JSON line per method.

  python batch_accuracy.py [--frames N] [--out FILE]

skimage runs with its default normalization ("phase") and with None; the shift it returns
registers the frame onto the reference, the negative of the content's motion.
"""
import argparse
import json
import sys

import numpy as np

import flcc
from skimage.registration import phase_cross_correlation

ap = argparse.ArgumentParser()
ap.add_argument("--frames", type=int, default=16)
ap.add_argument("--out")
args = ap.parse_args()

rng = np.random.default_rng(2026)
ORIGINS = np.array([[y, x] for y in (32, 128, 224) for x in (32, 128, 224)])
SIZE = 384


def pair(dy, dx):
    noise = rng.standard_normal((SIZE, SIZE))
    fy, fx = np.fft.fftfreq(SIZE)[:, None], np.fft.fftfreq(SIZE)[None, :]
    spec = np.fft.fft2(noise) * np.exp(-2 * (np.pi * 3.0) ** 2 * (fy ** 2 + fx ** 2))
    r0 = np.fft.ifft2(spec).real
    moved = np.fft.ifft2(spec * np.exp(-2j * np.pi * (fy * dy + fx * dx))).real
    lo, hi = r0.min(), r0.max()
    scale = lambda p: np.clip((p - lo) / (hi - lo) * 3000 + 500, 0, None)  # noqa: E731
    return rng.poisson(scale(r0)).astype(np.uint16), rng.poisson(scale(moved)).astype(np.uint16)


pairs = []
for _ in range(args.frames):
    dy, dx = rng.uniform(-8, 8, 2)
    ref, frame = pair(dy, dx)
    pairs.append((ref, frame, np.array([dy, dx])))

results = {}
for refine in ("quadratic", "upsampled", "parabolic", "gaussian"):
    for form, tsize in (("search", 64), ("full", None)):
        errs = []
        for ref, frame, truth in pairs:
            off, _ = flcc.register_subregions(frame, ref, ORIGINS, 128, template_size=tsize,
                                              refine=refine, threads=0)
            errs.append(off - truth)
        results[f"flcc {form} {refine}"] = np.sqrt(np.mean(np.square(errs), axis=(0, 1)))
for normalization in ("phase", None):
    errs = []
    for ref, frame, truth in pairs:
        for y, x in ORIGINS:
            shift = phase_cross_correlation(ref[y:y + 128, x:x + 128].astype(np.float32),
                                            frame[y:y + 128, x:x + 128].astype(np.float32),
                                            upsample_factor=20, normalization=normalization)[0]
            errs.append(-shift - truth)   # shift registers the frame onto the reference
    results[f"skimage phase_cross_correlation upsample 20 normalization {normalization}"] = \
        np.sqrt(np.mean(np.square(errs), axis=0))

out = open(args.out, "w") if args.out else sys.stdout
for name, rms in results.items():
    out.write(json.dumps({"bench": "batch.accuracy", "method": name, "subregions":
                          len(pairs) * len(ORIGINS), "rms_dy": float(rms[0]),
                          "rms_dx": float(rms[1])}) + "\n")
