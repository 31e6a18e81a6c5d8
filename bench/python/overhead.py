"""The Python package's call overhead: a reused flcc.Plan called per frame from Python against
the same executions made in a C++ loop (flcc._flcc.bench_execute), same process, same buffers.

    python bench/python/overhead.py [--repeats 15] [--calls 2000] [--gpu]

Prints one JSON line per case: the medians over rounds of seconds per call, C++ and Python,
and their difference (the overhead). --gpu adds CuPy and PyTorch CUDA arrays on a GPU plan
(device-resident, the caller's stream) and PyTorch CPU tensors where torch is installed.
"""

import argparse
import json
import platform
import statistics
import time

import numpy as np

import flcc
from flcc import _flcc


def python_rounds(plan, image, templ, out, calls, rounds):
    seconds = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            plan(image, templ, out=out)
        plan.synchronize()
        seconds.append((time.perf_counter() - t0) / calls)
    return seconds


def case(name, plan, image, templ, out, calls, rounds):
    plan(image, templ, out=out)   # warm: template prepared, stream bound
    plan.synchronize()
    c, py = [], []
    for _ in range(3):            # alternate, so drift hits both sides alike
        c += _flcc.bench_execute(plan._plan, image, templ, out, 1, calls, rounds)
        py += python_rounds(plan, image, templ, out, calls, rounds)
    c_med, py_med = statistics.median(c), statistics.median(py)
    print(json.dumps({"case": name, "method": plan.method, "c_us": round(c_med * 1e6, 3),
                      "python_us": round(py_med * 1e6, 3),
                      "overhead_us": round((py_med - c_med) * 1e6, 3),
                      "rounds": len(c), "calls": calls, "machine": platform.node()}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5, help="rounds per alternation (3 alternations)")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--gpu", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    problems = [("lcorr", (32, 32), (4, 4), "valid"), ("conv", (64, 64), (3, 3), "same")]
    for op, ishape, tshape, region in problems:
        image = rng.random(ishape, dtype=np.float32)
        templ = rng.random(tshape, dtype=np.float32)
        plan = flcc.Plan(op, ishape, tshape, region=region, platform="host", rigor="measure")
        out = np.empty(plan.output_shape, np.float32)
        case(f"numpy {op} {ishape}/{tshape} {region}", plan, image, templ, out, a.calls, a.repeats)
        try:
            import torch
        except ImportError:
            continue
        ti, tt = torch.from_numpy(image), torch.from_numpy(templ)
        case(f"torch-cpu {op} {ishape}/{tshape} {region}", plan, ti, tt,
             torch.from_numpy(out), a.calls, a.repeats)
    if not a.gpu:
        return
    import cupy as cp
    import torch
    for op, ishape, tshape, region in [("lcorr", (128, 128), (16, 16), "same"),
                                       ("conv", (64, 64), (3, 3), "same")]:
        image = cp.asarray(rng.random(ishape, dtype=np.float32))
        templ = cp.asarray(rng.random(tshape, dtype=np.float32))
        plan = flcc.Plan(op, ishape, tshape, region=region, platform="device",
                         device_resident=True, device=0, type="stream", rigor="measure")
        out = cp.empty(plan.output_shape, cp.float32)
        case(f"cupy {op} {ishape}/{tshape} {region}", plan, image, templ, out, a.calls, a.repeats)
        ti, tt = torch.as_tensor(image, device="cuda"), torch.as_tensor(templ, device="cuda")
        case(f"torch-cuda {op} {ishape}/{tshape} {region}", plan, ti, tt,
             torch.as_tensor(out, device="cuda"), a.calls, a.repeats)


if __name__ == "__main__":
    main()
