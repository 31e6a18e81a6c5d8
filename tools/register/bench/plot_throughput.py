#!/usr/bin/env python3
"""Plots measure_cpu.sh's results: the median rate of each run against the input's bound.

    plot_throughput.py RESULTS.jsonl OUT.png [TITLE]

One bar per run: the input alone (flcc-register --decode-only: reading and decoding), the whole
registration by flcc-register, and the Python baseline where the results have it; each bar is labelled with its frames per
second and its share of the input's rate. Pipeline rates (after planning) where the tool reports
them, whole-process rates otherwise (the Python baseline), and the whole-process rate of
flcc-register as a second bar.
"""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    results, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "flcc-register throughput"
    runs = {}
    with open(results) as f:
        for line in f:
            r = json.loads(line)
            runs.setdefault(r["run"], []).append(r)
    def median(run, key):
        return statistics.median(r[key] for r in runs[run])
    bound = median("decode-only", "pipeline_fps")
    bars = [("input alone\n(--decode-only)", bound),
            ("flcc-register\n(pipeline)", median("flcc-register", "pipeline_fps")),
            ("flcc-register\n(whole process)", median("flcc-register", "fps"))]
    if "python" in runs:
        bars.append(("Python baseline\n(whole process)", median("python", "fps")))
    fig, ax = plt.subplots(figsize=(7, 4))
    names = [b[0] for b in bars]
    rates = [b[1] for b in bars]
    ax.bar(names, rates, color=["#999999", "#1f77b4", "#6baed6", "#ff7f0e"][:len(bars)])
    ax.axhline(bound, color="#555555", linestyle="--", linewidth=1)
    for i, rate in enumerate(rates):
        ax.text(i, rate, f"{rate:.0f} fps\n{rate / bound:.2f} of input", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("frames per second (median of rounds)")
    ax.set_ylim(0, max(rates) * 1.25)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
