#!/usr/bin/env python3
"""Experiment (a): time per frame against template size, FLCC (every solver and the planner's
pick) and the CPU peers, SINGLE and STREAM of 10 frames.

  2D: 2000x2000 image, square templates 2..32      3D: 100^3 volume, cubic templates 2..8
  problems: LCC valid  (peers: OpenCV matchTemplate, skimage match_template)
            convolution same  (peers: cv2.filter2D, scipy fftconvolve, scipy correlate)
            convolution full  (peers: scipy fftconvolve, scipy correlate)

LCC valid SINGLE covers every template size with the planner's pick and OpenCV (DESIGN.md
section 5 asks for every template 2..32); every FLCC solver and the slower peers (skimage,
SciPy) run at the CORE sizes; convolution same and full take five sizes, STREAM (LCC valid and
convolution same) three, with every solver at one size only. Together this keeps
the whole CPU run (bench/run_cpu.sh) under 20 minutes on a 2-core machine.

  python3 bench/experiments/a_template_sweep.py            # full run (about 6 min on 2 cores)
  python3 bench/experiments/a_template_sweep.py --quick    # seconds; checks peers against FLCC
  python3 bench/experiments/a_template_sweep.py --plot-only

Writes <results>/a_template_sweep.jsonl and docs/img/a_template_sweep_{2d,3d}.png.
"""
import harness as H

NAME = "a_template_sweep"

CORE_2D = [2, 3, 4, 6, 8, 12, 16, 24, 32]   # every solver and every peer
CORE_3D = list(range(2, 9))   # 3D is quick: everything at every size
FAST_PEERS = {"lcorr": "opencv.matchTemplate", "conv": "opencv.filter2D"}


def dense(op, region, sizes, core):
    """SINGLE at every size: all solvers and peers at the core sizes, the planner's pick and
    the fast peer (OpenCV) at the others. Entries: (op, region, templates, type, every
    solver, peers)."""
    rest = [t for t in sizes if t not in core]
    out = [(op, region, [t for t in sizes if t in core], "single", True, "all")]
    if rest:
        out.append((op, region, rest, "single", False, FAST_PEERS[op]))
    return out


def stream(op, region, sizes, every_at):
    """STREAM of 10 frames: the planner's pick and the peers at every size, every solver at
    `every_at` only."""
    return [(op, region, [every_at], "stream", True, "all"),
            (op, region, [t for t in sizes if t != every_at], "stream", False, "all")]


# per dimension: image, then the measurements (see dense and stream)
FULL = {
    2: ("2000x2000", dense("lcorr", "valid", range(2, 33), CORE_2D)
        + [("conv", "same", [2, 4, 8, 16, 32], "single", True, "all"),
           ("conv", "full", [4, 16, 32], "single", True, "all")]
        + stream("lcorr", "valid", [4, 16, 32], 16) + stream("conv", "same", [4, 16, 32], 16)),
    3: ("100x100x100", dense("lcorr", "valid", range(2, 9), CORE_3D)
        + dense("conv", "same", range(2, 9), CORE_3D)
        + [("conv", "full", [2, 4, 8], "single", True, "all")]
        + stream("lcorr", "valid", [4, 8], 8) + stream("conv", "same", [4, 8], 8)),
}
QUICK = {   # every code path once, on small sizes
    2: ("96x96", dense("lcorr", "valid", [3, 8], [8]) + dense("conv", "same", [3, 8], [3, 8])
        + [("conv", "full", [8], "single", True, "all")] + stream("lcorr", "valid", [8], 8)
        + stream("conv", "same", [8], 8)),
    3: ("20x20x20", dense("lcorr", "valid", [3], [3]) + dense("conv", "same", [3], [3])
        + stream("lcorr", "valid", [3], 3)),
}


def measure(args, path, name):
    fb = H.find_flcc_bench(args.flcc_bench, required=args.platform == "host")
    rec = H.Recorder(path, name)
    cfg = H.sweep_config(args)
    for dim, (image, todo) in (QUICK if args.quick else FULL).items():
        for op, region, templates, type_, every, peers in todo:
            H.run_problem(rec, fb, op, region, [image], templates, type_, cfg, every, peers)
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
