#!/usr/bin/env python3
"""Experiment (d): CPU thread scaling, 1 .. all hardware threads, SINGLE frames.

  problems: LCC valid 2000x2000 with 16x16 (FLCC's pick, OpenCV matchTemplate, skimage),
            convolution same 2000x2000 with 8x8 (FLCC's pick, cv2.filter2D, scipy fftconvolve),
            LCC valid 100^3 with 8^3 (FLCC's pick, skimage)
  thread counts: every count up to 8, then powers of two, and the machine's count.

Three rounds over all thread counts (medians over rounds), so that load from other processes
falls on every count alike. FLCC is planned afresh for each thread count (flcc-bench --threads N); OpenCV gets
cv2.setNumThreads(N); scipy.fft gets N workers (skimage's FFT too). SciPy's direct paths and
skimage's running sums stay single-threaded: their flat curves are theirs, not the harness's.

  python3 bench/experiments/d_threads.py [--quick] [--plot-only]

Writes <results>/d_threads.jsonl and docs/img/d_threads.png.
"""
import os

import harness as H

NAME = "d_threads"

FULL = [("lcorr", "valid", "2000x2000", 16, "opencv.matchTemplate,skimage.match_template"),
        ("conv", "same", "2000x2000", 8, "opencv.filter2D,scipy.fftconvolve"),
        ("lcorr", "valid", "100x100x100", 8, "skimage.match_template")]
QUICK = [("lcorr", "valid", "128x128", 8, "opencv.matchTemplate,skimage.match_template"),
         ("lcorr", "valid", "20x20x20", 4, "skimage.match_template")]


def thread_counts(n):
    counts = {c for c in range(1, min(n, 8) + 1)}
    c = 16
    while c < n:
        counts.add(c)
        c *= 2
    counts.add(n)
    return sorted(counts)


def measure(args, path):
    fb = H.find_flcc_bench(args.flcc_bench)
    rec = H.Recorder(path, NAME)
    n = os.cpu_count() or 1
    counts = [1, n] if args.quick else thread_counts(n)
    reps = 2 if args.quick else 3
    # Rounds over all thread counts, not one count after another: load from other processes
    # then falls on every count alike (the plot takes the median over rounds).
    rounds = 1 if args.quick else 3
    for _ in range(rounds):
        for op, region, image, templ, peers in (QUICK if args.quick else FULL):
            for t in counts:
                rec.run(H.flcc_cmd(fb, op, [image], [templ], region, method="auto", repeats=reps,
                                   threads=t))
                rec.run(H.peers_cmd(op, [image], [templ], region, repeats=reps, threads=t,
                                    peers=peers))


def plot(path, img):
    recs = [r for r in H.load(path) if "seconds" in r]
    if not recs:
        H.log(f"{NAME}: nothing to plot")
        return
    plt = H.pyplot()
    problems = []
    for r in recs:
        p = (r["op"], r["region"], tuple(r["image"]), tuple(r["template"]))
        if p not in problems:
            problems.append(p)
    fig, axes = plt.subplots(2, len(problems), figsize=(5 * len(problems), 8), squeeze=False)
    for col, (op, region, image, templ) in enumerate(problems):
        sub = [r for r in recs if (r["op"], r["region"], tuple(r["image"]), tuple(r["template"]))
               == (op, region, image, templ)]
        series = H.thread_series(sub)
        what = (f"{'LCC' if op == 'lcorr' else 'convolution'} {region}, "
                f"{'x'.join(map(str, image))} * {'x'.join(map(str, templ))}")
        for lab, pts in sorted(series.items()):
            xs = sorted(pts)
            st = H.PEER_STYLE.get(lab, {})
            axes[0][col].plot(xs, [pts[x] * 1e3 for x in xs], label=lab, **st)
            base = pts.get(1)
            if base:
                axes[1][col].plot(xs, [base / pts[x] for x in xs], label=lab, **st)
        xs = sorted({x for pts in series.values() for x in pts})
        axes[1][col].plot(xs, xs, color="0.6", ls=":", label="linear")
        for ax in axes[:, col]:
            ax.set_xticks(xs)
        axes[0][col].set(title=what, xlabel="threads", ylabel="ms per frame (median)", yscale="log")
        axes[1][col].set(title="speedup over 1 thread", xlabel="threads", ylabel="×")
        for ax in axes[:, col]:
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle(f"(d) CPU thread scaling\n{H.machine_caption(recs)}", fontsize=11)
    fig.tight_layout()
    H.save(fig, img, f"{NAME}.png")
    plt.close(fig)


def main():
    args = H.arg_parser(__doc__.split("\n")[0]).parse_args()
    if args.platform != "host":
        H.log(f"{NAME} measures the CPU only; --platform {args.platform} ignored")
        args.platform = "host"
    path, img, _ = H.setup(args, NAME)
    if not args.plot_only:
        measure(args, path)
    plot(path, img)


if __name__ == "__main__":
    main()
