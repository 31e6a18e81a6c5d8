#!/usr/bin/env python3
"""Experiment (a): time per frame against template size, FLCC (every solver and the planner's
pick) and the CPU peers, SINGLE and STREAM of 10 frames.

  2D: 2000x2000 image, square templates 2..32      3D: 100^3 volume, cubic templates 2..8
  problems: LCC valid  (peers: OpenCV matchTemplate, skimage match_template)
            convolution same  (peers: cv2.filter2D, scipy fftconvolve, scipy correlate)
            convolution full  (peers: scipy fftconvolve, scipy correlate)

LCC valid and convolution same cover every template size (DESIGN.md section 5 asks for every
template 2..32); convolution full and the STREAM runs take the sizes in STREAM_2D / STREAM_3D,
which keeps the whole CPU run under 20 minutes on a 2-core machine.

  python3 bench/experiments/a_template_sweep.py            # full run (about 5 min on 2 cores)
  python3 bench/experiments/a_template_sweep.py --quick    # seconds; checks peers against FLCC
  python3 bench/experiments/a_template_sweep.py --plot-only

Writes <results>/a_template_sweep.jsonl and docs/img/a_template_sweep_{2d,3d}.png.
"""
import harness as H

NAME = "a_template_sweep"

ALL = [("lcorr", "valid"), ("conv", "same"), ("conv", "full")]
# per dimension: image, then (op, region, templates, type) to measure
FULL = {
    2: ("2000x2000", [("lcorr", "valid", list(range(2, 33)), "single"),
                      ("conv", "same", list(range(2, 33)), "single"),
                      ("conv", "full", [2, 4, 8, 16, 32], "single")]
        + [(op, reg, [2, 4, 8, 16, 32], "stream") for op, reg in ALL]),
    3: ("100x100x100", [("lcorr", "valid", list(range(2, 9)), "single"),
                        ("conv", "same", list(range(2, 9)), "single"),
                        ("conv", "full", [2, 4, 8], "single")]
        + [(op, reg, [2, 4, 8], "stream") for op, reg in ALL]),
}
QUICK = {   # every code path once, on small sizes
    2: ("96x96", [("lcorr", "valid", [3, 8], "single"), ("conv", "same", [3, 8], "single"),
                  ("conv", "full", [8], "single"), ("lcorr", "valid", [8], "stream"),
                  ("conv", "same", [8], "stream")]),
    3: ("20x20x20", [("lcorr", "valid", [3], "single"), ("conv", "same", [3], "single"),
                     ("lcorr", "valid", [3], "stream")]),
}


def measure(args, path, name):
    fb = H.find_flcc_bench(args.flcc_bench, required=args.platform == "host")
    rec = H.Recorder(path, name)
    cfg = H.sweep_config(args)
    for dim, (image, todo) in (QUICK if args.quick else FULL).items():
        for op, region, templates, type_ in todo:
            H.run_problem(rec, fb, op, region, [image], templates, type_, cfg)
    return rec


def plot(path, img, name):
    recs = H.load(path)
    for dim in (2, 3):
        size = "2000x2000" if dim == 2 else "100^3"
        H.plot_sweep(recs, dim, "template", img, f"{name}_{dim}d.png",
                     f"(a) time against template size, {dim}D (image {size} in the full run)")


def main():
    args = H.arg_parser(__doc__.split("\n")[0]).parse_args()
    path, img, name = H.setup(args, NAME)
    rec = None if args.plot_only else measure(args, path, name)
    plot(path, img, name)
    H.finish(rec)


if __name__ == "__main__":
    main()
