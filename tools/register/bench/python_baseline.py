#!/usr/bin/env python3
"""The straightforward Python registration flcc-register is compared with (issue 31's CPU target):
tifffile to read, OpenCV's matchTemplate (TM_CCOEFF_NORMED) and minMaxLoc per subregion, a
3-point parabolic fit per axis, one process. It writes flcc-register's CSV (frame,roi,y,x,dy,dx,
peak,quality; quality left nan), for the same grid (centred inside the margin, row-major) and the
same search geometry (the template from the centre of each reference subregion, searched for in
the frame's subregion), so that flcc-register-synth compare reads either.

    python_baseline.py REFERENCE FRAME_LIST --roi-size 128 --template-size 96 [--roi-step N]
                       [--roi-margin N] -o offsets.csv
"""
import argparse
import os
import sys

import cv2
import numpy as np
import tifffile


def grid_axis(extent, size, step, margin):
    room = extent - 2 * margin - size
    if room < 0:
        return []
    count = room // step + 1
    first = margin + (room - (count - 1) * step) // 2
    return [first + i * step for i in range(count)]


def parabolic(m, y, x):
    def vertex(a, b, c):
        d = a - 2 * b + c
        return 0.5 * (a - c) / d if d < 0 else 0.0
    oy = vertex(m[y - 1, x], m[y, x], m[y + 1, x]) if 0 < y < m.shape[0] - 1 else np.nan
    ox = vertex(m[y, x - 1], m[y, x], m[y, x + 1]) if 0 < x < m.shape[1] - 1 else np.nan
    return y + oy, x + ox


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("reference")
    p.add_argument("frame_list", help="a text file of frame paths, relative to its folder")
    p.add_argument("--roi-size", type=int, default=128)
    p.add_argument("--roi-step", type=int, default=0)
    p.add_argument("--roi-margin", type=int, default=0)
    p.add_argument("--template-size", type=int, default=96)
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()
    size, templ = a.roi_size, a.template_size
    offset = (size - templ) // 2
    reference = tifffile.imread(a.reference).astype(np.float32)
    ys = grid_axis(reference.shape[0], size, a.roi_step or size, a.roi_margin)
    xs = grid_axis(reference.shape[1], size, a.roi_step or size, a.roi_margin)
    rois = [(y, x) for y in ys for x in xs]
    templates = [reference[y + offset:y + offset + templ, x + offset:x + offset + templ].copy() for y, x in rois]
    folder = os.path.dirname(a.frame_list)
    with open(a.frame_list) as f:
        paths = [os.path.join(folder, line.strip()) for line in f if line.strip() and not line.startswith("#")]
    centre = (size - 1) / 2
    with open(a.output, "w") as out:
        out.write("frame,roi,y,x,dy,dx,peak,quality\n")
        for frame, path in enumerate(paths):
            image = tifffile.imread(path).astype(np.float32)
            rows = []
            for roi, ((y, x), t) in enumerate(zip(rois, templates)):
                m = cv2.matchTemplate(image[y:y + size, x:x + size], t, cv2.TM_CCOEFF_NORMED)
                _, peak, _, (px, py) = cv2.minMaxLoc(m)
                fy, fx = parabolic(m, py, px)
                rows.append(f"{frame},{roi},{y + centre:.1f},{x + centre:.1f},{fy - offset:.4f},{fx - offset:.4f},"
                            f"{peak:.6f},nan\n")
            out.write("".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
