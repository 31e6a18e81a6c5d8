#!/usr/bin/env python3
"""Experiment (b): time per frame against image size, FLCC (every solver and the planner's pick)
and the CPU peers, SINGLE and STREAM of 10 frames.

  2D: 16x16 template, images 1000..4000 step 500   3D: 8^3 template, volumes 50..250 step 50
  problems: LCC valid, convolution same and full (peers as in experiment (a))

LCC valid and convolution same cover every size; convolution full takes three sizes (smallest,
middle, largest) and the STREAM runs two (1000², 2500²; 50³, 150³): streams of 10 frames of the
largest sizes alone would take 5 minutes on a 2-core machine, and the whole CPU run must stay
under 20 minutes. (a) measures STREAM against template size at 2000² / 100³.

  python3 bench/experiments/b_size_sweep.py            # full run (about 5 min on 2 cores)
  python3 bench/experiments/b_size_sweep.py --quick    # seconds; checks peers against FLCC
  python3 bench/experiments/b_size_sweep.py --plot-only

Writes <results>/b_size_sweep.jsonl and docs/img/b_size_sweep_{2d,3d}.png.
"""
import harness as H

NAME = "b_size_sweep"
ALL = [("lcorr", "valid"), ("conv", "same"), ("conv", "full")]


def sizes(dim, ns):
    return [H.size_str(n, dim) for n in ns]


# per dimension: template, then (op, region, images, type) to measure
FULL = {
    2: (16, [("lcorr", "valid", sizes(2, range(1000, 4001, 500)), "single"),
             ("conv", "same", sizes(2, range(1000, 4001, 500)), "single"),
             ("conv", "full", sizes(2, [1000, 2500, 4000]), "single")]
        + [(op, reg, sizes(2, [1000, 2500]), "stream") for op, reg in ALL]),
    3: (8, [("lcorr", "valid", sizes(3, range(50, 251, 50)), "single"),
            ("conv", "same", sizes(3, range(50, 251, 50)), "single"),
            ("conv", "full", sizes(3, [50, 150, 250]), "single")]
        + [(op, reg, sizes(3, [50, 150]), "stream") for op, reg in ALL]),
}
QUICK = {   # every code path once, on small sizes
    2: (8, [("lcorr", "valid", sizes(2, [64, 100]), "single"),
            ("conv", "same", sizes(2, [64, 100]), "single"),
            ("lcorr", "valid", sizes(2, [64]), "stream")]),
    3: (4, [("lcorr", "valid", sizes(3, [16, 24]), "single"),
            ("conv", "full", sizes(3, [16]), "stream")]),
}


def measure(args, path, name):
    fb = H.find_flcc_bench(args.flcc_bench, required=args.platform == "host")
    rec = H.Recorder(path, name)
    cfg = H.sweep_config(args)
    for dim, (templ, todo) in (QUICK if args.quick else FULL).items():
        for op, region, images, type_ in todo:
            H.run_problem(rec, fb, op, region, images, [templ], type_, cfg)
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
