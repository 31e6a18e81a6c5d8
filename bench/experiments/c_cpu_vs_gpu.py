#!/usr/bin/env python3
"""Experiment (c): CPU against GPU, from the results of (a) and (b) on both platforms.

Needs the CPU run's a_template_sweep.jsonl / b_size_sweep.jsonl (this machine's results folder,
or --results) and a GPU run's a_template_sweep_device.jsonl / b_size_sweep_device.jsonl
(bench/run_gpu.sh; looked for in every folder under bench/results/, or --gpu-results). Without
GPU results it says so and exits 0 (nothing to compare is not a failure).

For every problem measured on both: FLCC host time / FLCC device time (the planner's pick on
each), and the best CPU peer / FLCC device. Each ratio takes its two times from one run per
platform; the CPU and GPU machines differ, and the figure and JSON name both.

  python3 bench/experiments/c_cpu_vs_gpu.py [--gpu-results DIR]

Writes <results>/c_cpu_vs_gpu.jsonl and docs/img/c_cpu_vs_gpu.png.
"""
import glob
import json
import os
import sys

import harness as H

NAME = "c_cpu_vs_gpu"
SOURCES = ("a_template_sweep", "b_size_sweep")


def find_gpu_results(explicit):
    if explicit:
        return [explicit]
    dirs = sorted({os.path.dirname(p) for p in
                   glob.glob(os.path.join(H.BENCH, "results", "*", "*_device.jsonl"))})
    return dirs


def main():
    p = H.arg_parser(__doc__.split("\n")[0])
    p.add_argument("--gpu-results", help="folder with a GPU run's *_device.jsonl")
    args = p.parse_args()
    args.platform = "host"
    path, img, _ = H.setup(args, NAME)
    cpu_dir = os.path.dirname(path)
    gpu_dirs = find_gpu_results(args.gpu_results)
    gpu = [r for d in gpu_dirs for s in SOURCES for r in H.load(os.path.join(d, s + "_device.jsonl"))]
    cpu = [r for s in SOURCES for r in H.load(os.path.join(cpu_dir, s + ".jsonl"))]
    if not gpu or not cpu:
        if os.path.exists(path):   # ratios from older runs must not outlive them
            os.remove(path)
    if not gpu:
        H.log(f"{NAME}: no GPU results (*_device.jsonl under bench/results/*/ or --gpu-results); "
              "skipped. Run bench/run_gpu.sh on a GPU machine first.")
        return 0
    if not cpu:
        H.log(f"{NAME}: no CPU results of (a)/(b) in {cpu_dir}; skipped. Run experiments a and b.")
        return 0
    host, dev = H.by_problem(cpu), H.by_problem(gpu)
    out = []
    for key in sorted(set(host) & set(dev)):
        h, d = host[key].get("FLCC planner"), dev[key].get("FLCC planner")
        if not h or not d:
            continue
        peers = [(lab, r) for lab, r in host[key].items() if not lab.startswith("FLCC")]
        best_lab, best = min(peers, key=lambda kv: H.median(kv[1])) if peers else (None, None)
        op, dim, image, templ, region, type_, frames = key
        out.append({"bench": "flcc.cpu_vs_gpu", "op": op, "dim": dim, "image": list(image),
                    "template": list(templ), "region": region, "type": type_, "frames": frames,
                    "host_seconds": H.median(h), "host_method": h["method"],
                    "device_seconds": H.median(d), "device_method": d["method"],
                    "host_over_device": H.median(h) / H.median(d),
                    "best_cpu_peer": best_lab,
                    "best_cpu_peer_over_device": H.median(best) / H.median(d) if best else None,
                    "host_machine": h.get("machine"), "device_machine": d.get("machine")})
    with open(path, "w") as f:
        for r in out:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    H.log(f"{NAME}: {len(out)} problems measured on both platforms")
    if not out:
        return 0
    plt = H.pyplot()
    fig, ax = plt.subplots(figsize=(max(8, 0.3 * len(out)), 5))
    labels = [f"{'LCC' if r['op'] == 'lcorr' else 'conv'} {r['region']} "
              f"{'x'.join(map(str, r['image']))}*{r['template'][0]} {r['type']}" for r in out]
    xs = range(len(out))
    ax.bar([x - 0.2 for x in xs], [r["host_over_device"] for r in out], 0.4, label="FLCC CPU / FLCC GPU")
    ax.bar([x + 0.2 for x in xs], [r["best_cpu_peer_over_device"] or 0 for r in out], 0.4,
           label="best CPU peer / FLCC GPU")
    ax.set_xticks(list(xs), labels, rotation=90, fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("time ratio (× faster on the GPU)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    ax.set_title(f"(c) CPU against GPU\nCPU: {H.machine_caption(cpu)}\nGPU: {H.machine_caption(gpu)}",
                 fontsize=9)
    fig.tight_layout()
    H.save(fig, img, f"{NAME}.png")
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
