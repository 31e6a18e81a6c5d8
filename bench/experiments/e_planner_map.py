#!/usr/bin/env python3
"""Experiment (e): the planner's method selection over a size grid, and its regret.

  2D: templates 2..32 x images 32..4096 (powers of two)   3D: templates 2..8 x images 8..256
  ops: LCC and convolution, full region (FLCC's default), SINGLE, all threads.
  Default grid: templates 2, 4, 8, 16, 32 x images 32..2048 (3D: 2, 4, 8 x 8..128), 100 cells,
  about 5 minutes on 2 cores, so that the whole CPU run stays under 20; --full-grid: every
  template size and the largest images too (580 cells, about 30 minutes).

For each cell, flcc-planner-map (bench/planner_map.cpp) records the planner's pick (MEASURE),
the cost model's pick (ESTIMATE), every candidate's time as the planner measured it, and every
candidate timed again independently (forced by name, in rounds of random order, each timed run right after an untimed run of the same candidate; median). Regret = the pick's
independent time / the fastest candidate's independent time. DESIGN.md section 5: the pick is
within 10% of the fastest (regret <= 1.1) on >= 95% of cells.

  python3 bench/experiments/e_planner_map.py [--quick | --full-grid] [--stream N] [--plot-only]

Writes <results>/e_planner_map.jsonl and docs/img/e_planner_map_{lcorr,conv}_{2d,3d}.png;
with --stream N (STREAM plans of N frames, timed per frame) e_planner_map_stream.jsonl and
e_planner_map_stream_*.png.
"""
import harness as H

NAME = "e_planner_map"

IMAGES_2D, IMAGES_3D = "32,64,128,256,512,1024,2048,4096", "8,16,32,64,128,256"
FULL = [(op, dim, imgs, tpls) for op in ("lcorr", "conv") for dim, imgs, tpls in
        ((2, "32,64,128,256,512,1024,2048", "2,4,8,16,32"), (3, "8,16,32,64,128", "2,4,8"))]
FULL_GRID = [(op, dim, imgs, tpls) for op in ("lcorr", "conv") for dim, imgs, tpls in
             ((2, IMAGES_2D, "2-32"), (3, IMAGES_3D, "2-8"))]
QUICK = [(op, dim, imgs, tpls) for op in ("lcorr", "conv") for dim, imgs, tpls in
         ((2, "32,64", "2,5"), (3, "8,12", "2,3"))]


def measure(args, path, name):
    fb = H.find_flcc_bench(args.flcc_bench)
    pm = H.find_planner_map(fb)
    rec = H.Recorder(path, name)
    stream = ["--type", "stream", "--frames", str(args.stream)] if args.stream else []
    for op, dim, imgs, tpls in (QUICK if args.quick else FULL_GRID if args.full_grid else FULL):
        rec.run([pm, "--op", op, "--region", "full", "--dim", str(dim), "--images", imgs,
                 "--templates", tpls, "--repeats", "2",   # more, up to 50, where runs are short
                 "--threads", str(args.threads)] + stream)


def short(name):
    """The solver's family, for the colour maps: host.direct2.k16 -> direct2.kN (a size-
    specialised kernel), host.direct2.generic -> direct2.generic; the platform is in the title.
    The exact names are in the JSON and in report.py's tables."""
    import re
    name = name.split(".", 1)[1] if name.count(".") >= 2 else name
    return re.sub(r"\.k\d+$", ".kN", name)


def plot(path, img, name):
    recs = [r for r in H.load(path) if r.get("bench") == "flcc.planner_map"]
    if not recs:
        H.log(f"{name}: nothing to plot")
        return
    plt = H.pyplot()
    import numpy as np
    from matplotlib.colors import BoundaryNorm, ListedColormap
    for op in ("lcorr", "conv"):
        for dim in (2, 3):
            sub = [r for r in recs if r["op"] == op and r["dim"] == dim]
            if not sub:
                continue
            images = sorted({r["image"][0] for r in sub})
            tpls = sorted({r["template"][0] for r in sub})
            picks = sorted({short(r[k]) for r in sub for k in ("pick", "best")})
            code = {p: i for i, p in enumerate(picks)}
            grid = {k: np.full((len(tpls), len(images)), np.nan) for k in ("pick", "best", "regret", "regret_estimate")}
            for r in sub:
                i, j = tpls.index(r["template"][0]), images.index(r["image"][0])
                grid["pick"][i, j] = code[short(r["pick"])]
                grid["best"][i, j] = code[short(r["best"])]
                grid["regret"][i, j] = r["regret"]
                grid["regret_estimate"][i, j] = r["regret_estimate"]
            base = plt.get_cmap("tab10" if len(picks) <= 10 else "nipy_spectral")
            cmap = ListedColormap([base(i if len(picks) <= 10 else i / max(len(picks) - 1, 1))
                                   for i in range(max(len(picks), 1))])
            norm = BoundaryNorm(np.arange(len(picks) + 1) - 0.5, cmap.N)
            fig, axes = plt.subplots(1, 4, figsize=(22, 0.28 * len(tpls) + 4))
            panels = (("pick", "planner's pick (MEASURE)"), ("best", "fastest, timed independently"),
                      ("regret", "regret of the pick (pick / fastest)"),
                      ("regret_estimate", "regret of the cost model's pick (ESTIMATE)"))
            for ax, (k, title) in zip(axes, panels):
                if k in ("pick", "best"):
                    im = ax.imshow(grid[k], cmap=cmap, norm=norm, aspect="auto", origin="lower")
                else:
                    im = ax.imshow(np.clip(grid[k], 1, 2), cmap="RdYlGn_r", vmin=1, vmax=2,
                                   aspect="auto", origin="lower")
                    for (i, j), v in np.ndenumerate(grid[k]):
                        if v == v and v > 1.1:
                            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=5)
                    fig.colorbar(im, ax=ax, fraction=0.046, label="regret (clipped to 2)")
                ax.set_xticks(range(len(images)), [str(x) for x in images], fontsize=7)
                ax.set_yticks(range(len(tpls)), [str(t) for t in tpls], fontsize=7)
                ax.set_xlabel("image side" if dim == 2 else "volume edge")
                ax.set_ylabel("template side" if dim == 2 else "template edge")
                ax.set_title(title, fontsize=10)
            handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(norm(code[p]))) for p in picks]
            axes[1].legend(handles, picks, fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            ok = sum(1 for r in sub if 0 < r["regret"] <= 1.1)
            fig.suptitle(f"(e) planner map, {'LCC' if op == 'lcorr' else 'convolution'} {dim}D full, "
                         f"{sub[0].get('type', 'single').upper()}, "
                         f"host: pick within 10% of the fastest on {ok}/{len(sub)} cells "
                         f"({100.0 * ok / len(sub):.0f}%)\n{H.machine_caption(sub)}", fontsize=11)
            fig.tight_layout()
            H.save(fig, img, f"{name}_{op}_{dim}d.png")
            plt.close(fig)


def main():
    parser = H.arg_parser(__doc__.split("\n")[0])
    parser.add_argument("--full-grid", action="store_true",
                        help="every template size (2..32, 3D 2..8) instead of the default grid")
    parser.add_argument("--stream", type=int, default=0, metavar="N",
                        help="STREAM plans of N frames (timed per frame) instead of SINGLE")
    args = parser.parse_args()
    name = NAME + ("_stream" if args.stream else "")
    if args.platform != "host":
        H.log(f"{NAME} measures the CPU only; --platform {args.platform} ignored")
        args.platform = "host"
    path, img, _ = H.setup(args, name)
    if not args.plot_only:
        measure(args, path, name)
    plot(path, img, name)


if __name__ == "__main__":
    main()
