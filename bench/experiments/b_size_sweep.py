#!/usr/bin/env python3
"""Experiment (b): time per frame against image size, FLCC (every solver and the planner's pick)
and the CPU peers, SINGLE and STREAM of 10 frames.

  2D: 16x16 template, images 1000..4000 step 500   3D: 8^3 template, volumes 50..250 step 50
  problems: LCC valid, convolution same and full (peers as in experiment (a))

LCC valid and convolution same SINGLE cover every size with the planner's pick and the fastest
peer; every FLCC solver and every peer run at the CORE sizes. Convolution full takes the core
sizes and STREAM (LCC valid, convolution same) two, every solver at the smaller only: the
whole CPU run (bench/run_cpu.sh) must stay under 20 minutes on a 2-core machine. (a) measures
STREAM against template size at 2000² / 100³.

  python3 bench/experiments/b_size_sweep.py            # full run (about 4 min on 2 cores)
  python3 bench/experiments/b_size_sweep.py --quick    # seconds; checks peers against FLCC
  python3 bench/experiments/b_size_sweep.py --plot-only

Writes <results>/b_size_sweep.jsonl and docs/img/b_size_sweep_{2d,3d}.png.
"""
import harness as H

NAME = "b_size_sweep"
ALL = [("lcorr", "valid"), ("conv", "same"), ("conv", "full")]


def sizes(dim, ns):
    return [H.size_str(n, dim) for n in ns]


# The fastest peer of each problem, timed at every size; the others at the core sizes.
FAST_PEERS = {(2, "lcorr"): "opencv.matchTemplate", (2, "conv"): "opencv.filter2D",
              (3, "lcorr"): "skimage.match_template", (3, "conv"): "scipy.fftconvolve"}


def dense(dim, op, region, ns, core):
    """SINGLE at every size: all solvers and peers at the core sizes, the planner's pick and
    the fast peer at the others. Entries: (op, region, images, type, every solver, peers)."""
    out = [(op, region, sizes(dim, [n for n in ns if n in core]), "single", True, "all")]
    rest = [n for n in ns if n not in core]
    if rest:
        out.append((op, region, sizes(dim, rest), "single", False, FAST_PEERS[(dim, op)]))
    return out


def stream(dim, op, region, ns):
    """STREAM of 10 frames at the sizes ns: every solver at the first, the pick at the rest."""
    return [(op, region, sizes(dim, ns[:1]), "stream", True, "all"),
            (op, region, sizes(dim, ns[1:]), "stream", False, "all")]


CORE_2D, CORE_3D = [1000, 2500, 4000], [50, 250]
# per dimension: template, then the measurements (see dense and stream)
FULL = {
    2: (16, dense(2, "lcorr", "valid", range(1000, 4001, 500), CORE_2D)
        + dense(2, "conv", "same", range(1000, 4001, 500), CORE_2D)
        + [("conv", "full", sizes(2, [1000, 2500, 4000]), "single", True, "all")]
        + stream(2, "lcorr", "valid", [1000, 2500]) + stream(2, "conv", "same", [1000, 2500])),
    3: (8, dense(3, "lcorr", "valid", range(50, 251, 50), CORE_3D)
        + dense(3, "conv", "same", range(50, 251, 50), CORE_3D)
        + [("conv", "full", sizes(3, [50, 250]), "single", True, "all")]
        + stream(3, "lcorr", "valid", [50, 150]) + stream(3, "conv", "same", [50, 150])),
}
QUICK = {   # every code path once, on small sizes
    2: (8, dense(2, "lcorr", "valid", [64, 100], [64]) + dense(2, "conv", "same", [64, 100], [64, 100])
        + [("lcorr", "valid", sizes(2, [64]), "stream", True, "all")]),
    3: (4, dense(3, "lcorr", "valid", [16, 24], [16, 24])
        + [("conv", "full", sizes(3, [16]), "stream", True, "all")]),
}


def measure(args, path, name):
    fb = H.find_flcc_bench(args.flcc_bench, required=args.platform == "host")
    rec = H.Recorder(path, name)
    cfg = H.sweep_config(args)
    for dim, (templ, todo) in (QUICK if args.quick else FULL).items():
        for op, region, images, type_, every, peers in todo:
            H.run_problem(rec, fb, op, region, images, [templ], type_, cfg, every, peers)
    return rec


def plot(path, img, name):
    recs = H.load(path)
    for dim in (2, 3):
        t = "16x16" if dim == 2 else "8^3"
        H.plot_sweep(recs, dim, "image", img, f"{name}_{dim}d.png",
                     f"(b) time against image size, {dim}D (template {t} in the full run)")


def main():
    args = H.arg_parser(__doc__.split("\n")[0]).parse_args()
    path, img, name = H.setup(args, NAME)
    rec = None if args.plot_only else measure(args, path, name)
    plot(path, img, name)
    H.finish(rec)


if __name__ == "__main__":
    main()
