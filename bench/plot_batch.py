"""Plots bench/results/<tag>/batch.jsonl (bench/run_batch_cpu.sh): frames per second of FLCC's
batch plans by refinement and of the peers' loops, per workload, medians over the rounds.

  python plot_batch.py RESULTS.jsonl OUT.png
"""
import collections
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = [json.loads(line) for line in open(sys.argv[1])]
times = collections.defaultdict(list)
for r in rows:
    name = r["bench"] + (" " + r["refine"] if r["bench"] == "flcc.batch" else "")
    times[(r["problem"], name)].append(r["seconds"]["median"])
problems = ["ebsd-search", "ebsd-full", "piv"]
names = sorted({n for _, n in times}, key=lambda n: (not n.startswith("flcc"), n))
fig, ax = plt.subplots(figsize=(9, 4))
width = 0.8 / len(names)
for i, name in enumerate(names):
    fps = [1 / statistics.median(times[(p, name)]) if (p, name) in times else 0 for p in problems]
    ax.bar([k + i * width for k in range(len(problems))], fps, width, label=name)
ax.set_xticks([k + 0.4 - width / 2 for k in range(len(problems))])
ax.set_xticklabels(["EBSD search form\n49 x 128² / 64²", "EBSD seed form\n49 x 128² / 128²",
                    "PIV\n900 x 64² / 32²"])
ax.set_yscale("log")
ax.set_ylabel("frames per second (log)")
ax.set_title(rows[0]["machine"]["cpu"] + f", {rows[0]['machine']['hardware_threads']} threads")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
