"""Plots bench/results/<gpu tag>/batch_gpu.jsonl (bench/run_batch_gpu.sh): frames per second of
FLCC's GPU batch plans (device-resident frames per engine, and page-locked host frames on the
plan's engine: the stream), of the CuPy loop (circular and in FLCC's linear box) and of cuFFT's
transforms alone of the linear boxes, per workload, medians over the rounds, with the
PCIe bound of the stream (frame bytes / pinned host-to-device bandwidth measured in the same run).

  python plot_batch_gpu.py RESULTS.jsonl OUT.png
"""
import collections
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = [json.loads(line) for line in open(sys.argv[1])]
h2d = statistics.median(r["gbps"] for r in rows if r["bench"] == "cuda.memcpy.h2d") * 1e9
times = collections.defaultdict(list)
frame_bytes = {}
for r in rows:
    if r["bench"] == "flcc.batch" and r.get("refine") == "parabolic":
        per_exec = "" if r["frames"] == 64 else f", {r['frames']} per exec"
        engine = r["method"].replace("device.batch.", "") + " engine, " if r["memory"] == "device" else ""
        times[(r["problem"], "FLCC, " + engine + r["memory"] + " frames" + per_exec)].append(r["seconds"]["median"])
        elem = 1 if r["problem"].startswith("piv") else 2
        frame_bytes[r["problem"]] = r["frame"][0] * r["frame"][1] * elem * (2 if r["problem"].startswith("piv") else 1)
    elif r["bench"] == "cupy.batch":
        label = {"circular": "CuPy loop (circular, no normalisation)",
                 "linear": "CuPy loop (FLCC's linear box, no normalisation)",
                 "transforms": "cuFFT transforms alone (FLCC's linear box)"}[r.get("form", "circular")]
        times[(r["problem"], label)].append(r["seconds"]["median"])
problems = ["ebsd-search", "ebsd-full", "piv", "piv-full", "piv-same"]
labels = {"ebsd-search": "EBSD search form\n49 x 128² / 64²", "ebsd-full": "EBSD seed form\n49 x 128² / 128²",
          "piv": "PIV\n900 x 64² / 32²", "piv-full": "PIV, FULL\n4096 x 32² / 32²",
          "piv-same": "PIV, SAME\n4096 x 32² / 32²"}
names = sorted({n for _, n in times}, key=lambda n: (not n.startswith("FLCC"), n))
fig, ax = plt.subplots(figsize=(12, 4.8))
width = 0.8 / (len(names) + 1)
for i, name in enumerate(names):
    fps = [1 / statistics.median(times[(p, name)]) if (p, name) in times else 0 for p in problems]
    ax.bar([k + i * width for k in range(len(problems))], fps, width, label=name)
bound = [h2d / frame_bytes[p] if p in frame_bytes else 0 for p in problems]
ax.bar([k + len(names) * width for k in range(len(problems))], bound, width, label="PCIe bound of the stream",
       color="lightgrey", hatch="//")
ax.set_xticks([k + 0.4 - width / 2 for k in range(len(problems))])
ax.set_xticklabels([labels[p] for p in problems])
ax.set_yscale("log")
ax.set_ylabel("frames per second (log)")
gpu = next(r["machine"].get("gpu") for r in rows if r["bench"] == "cupy.batch")
ax.set_title(f"{gpu}: LCC + peak + parabolic fit per subregion")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
