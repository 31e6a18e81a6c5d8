"""flcc.dask across GPUs: a stream of frames made and matched on the workers' GPUs, one Dask
worker per GPU (dask-cuda's LocalCUDACluster; where dask-cuda is missing, a SpecCluster of
Nannies each started with CUDA_VISIBLE_DEVICES set to its GPU, which is what LocalCUDACluster
does), timed with 1, 2, ... GPUs in the same run.

    python bench/python/dask_scaling.py [--frames 2048] [--size 2048] [--template 32]
                                        [--per-task 32] [--repeats 3]

Each task makes `per-task` frames with CuPy on its GPU and runs flcc.match_template on the
stack (one plan execution for the stack), keeping each frame's best score, so that only a few
bytes per frame return to the client. Prints one JSON line per GPU count: the median over
repeats of the frames per second, and the scaling against one GPU.
"""

import argparse
import json
import statistics
import time

import numpy as np


def match_block(block, template, size):
    import cupy as cp

    import flcc
    frames = cp.random.default_rng(int(block[0, 0, 0])).random((block.shape[0], size, size),
                                                              dtype=cp.float32)
    t = cp.asarray(template)
    plan = flcc._plan.cached_plan("lcorr", (size, size), tuple(template.shape), region="valid",
                                  platform="device", device=0, device_resident=True,
                                  type="stream", rigor="estimate")
    scores = plan(frames, t)
    plan.synchronize()
    return cp.asnumpy(scores.reshape(block.shape[0], -1).max(axis=1))[:, None, None]


def make_cluster(n_gpus):
    """One worker per GPU on GPUs 0..n-1; returns (cluster, its kind)."""
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        from distributed import Nanny, Scheduler, SpecCluster
        workers = {i: {"cls": Nanny, "options": {"nthreads": 1,
                                                 "env": {"CUDA_VISIBLE_DEVICES": str(i)}}}
                   for i in range(n_gpus)}
        return SpecCluster(workers=workers, scheduler={
            "cls": Scheduler, "options": {"dashboard_address": None}}), "SpecCluster"
    return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(str(i) for i in range(n_gpus)),
                            threads_per_worker=1, dashboard_address=None), "LocalCUDACluster"


def run(n_gpus, a, template):
    import dask.array as da
    from distributed import Client

    cluster, kind = make_cluster(n_gpus)
    with Client(cluster) as client:
        seeds = da.arange(a.frames, chunks=a.per_task, dtype=np.float32)[:, None, None]
        best = seeds.map_blocks(match_block, template, a.size, dtype=np.float32)
        best.compute()   # warm: each worker plans once, CuPy's kernels load
        rates = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            values = best.compute()
            rates.append(a.frames / (time.perf_counter() - t0))
        assert values.shape == (a.frames, 1, 1) and np.all(np.abs(values) <= 1)
    cluster.close()
    return statistics.median(rates), rates, kind


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=2048)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--template", type=int, default=32)
    ap.add_argument("--per-task", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpus", type=int, default=0, help="most GPUs to use (0: all)")
    a = ap.parse_args()
    import cupy as cp
    n = cp.cuda.runtime.getDeviceCount() if a.gpus == 0 else a.gpus
    template = np.random.default_rng(1).random((a.template, a.template), dtype=np.float32)
    base = None
    for k in range(1, n + 1):
        rate, rates, kind = run(k, a, template)
        base = base or rate
        print(json.dumps({"gpus": k, "frames_per_s": round(rate, 1), "scaling": round(rate / base, 3),
                          "rates": [round(r, 1) for r in rates], "cluster": kind, "frames": a.frames,
                          "size": a.size, "template": a.template, "per_task": a.per_task,
                          "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}),
              flush=True)


if __name__ == "__main__":
    main()
