#!/usr/bin/env python3
"""Times FLCC's GPU peers on device-resident data; one JSON line per measurement in flcc-bench's
schema (plus "bench", "versions"), like bench/peers/cpu_peers.py.

  gpu_peers.py --op conv --image 2000x2000 --template 4,8,16,32 --region same
  gpu_peers.py --op conv --image 256x256x256 --template 8 --region full
  gpu_peers.py --bandwidth               # pinned host<->device bandwidth, each way
  gpu_peers.py --list                    # the peers and what they do (no GPU needed)

Peers (--peers, default: every one that applies to the problem):
  cupy.fftconvolve        conv, 2D/3D, full/same/valid   cupyx.scipy.signal.fftconvolve
  cupy.ndimage.correlate  conv, 2D/3D, same              cupyx.scipy.ndimage.correlate with the
                                                         flipped template, mode='constant' (its
                                                         window is scipy's 'same')
  torch.conv              conv, 2D/3D, full/valid, and   torch.nn.functional.conv2d / conv3d with the
                          same for odd templates         flipped template (cuDNN, benchmark mode,
                                                         TF32 off so results stay float32-exact)

LCC on the GPU is measured against NPP by bench/gpu/npp_bench.cpp (C++), not here.

Timing: inputs are flcc-bench's (bench/peers/common.py:make_inputs), copied to the device once;
each repeat is bracketed by CUDA events on the peer's stream, after --warmup untimed calls
(which also absorb cuFFT plan creation and cuDNN autotuning). SINGLE uploads a new template before
each repeat, outside the timed region; STREAM loops over --frames device-resident frames.

--bandwidth times cudaMemcpyAsync of --bandwidth-mib MiB between pinned host memory and the device,
each way alone and both ways at once, and prints records with "bench": "cuda.memcpy.h2d" /
"cuda.memcpy.d2h" / "cuda.memcpy.bidir" and "gbps" (10^9 bytes per second, both directions
summed for bidir): report.py computes the PCIe bound of DESIGN.md section 5 from these.

--check compares each peer's output (first frame) with scipy.signal.fftconvolve on the host:
it proves the peers compute the region FLCC computes. Without CuPy, PyTorch or a GPU this script
stops with a message saying which is missing (exit status 3).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "peers"))
import common  # noqa: E402

import numpy as np  # noqa: E402

PEERS = {
    # name: (applies(op, dim, region, template shape), description)
    "cupy.fftconvolve": (lambda op, dim, reg, t: op == "conv",
                         "cupyx.scipy.signal.fftconvolve"),
    "cupy.ndimage.correlate": (lambda op, dim, reg, t: op == "conv" and reg == "same",
                               "cupyx.scipy.ndimage.correlate(flipped, mode=constant)"),
    "torch.conv": (lambda op, dim, reg, t: op == "conv" and (reg != "same" or all(x % 2 for x in t)),
                   "torch.nn.functional.conv{dim}d(flipped, cudnn.benchmark, no TF32)"),
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", choices=["conv", "lcorr"], default="conv")
    p.add_argument("--image", default="2000x2000")
    p.add_argument("--template", default="8")
    p.add_argument("--region", choices=["full", "same", "valid"], default="same")
    p.add_argument("--type", choices=["single", "stream"], default="single")
    p.add_argument("--frames", type=int, default=1)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="ignored (recorded for the schema)")
    p.add_argument("--peers", default="all")
    p.add_argument("--check", action="store_true", help="compare outputs with scipy on the host")
    p.add_argument("--bandwidth", action="store_true", help="measure pinned PCIe bandwidth instead")
    p.add_argument("--bandwidth-mib", type=int, default=1024)
    p.add_argument("--list", action="store_true", help="list the peers and exit")
    a = p.parse_args(argv)
    if a.repeats < 1 or a.frames < 1 or a.warmup < 0:
        p.error("repeats and frames must be >= 1, warmup >= 0")
    if a.type == "single":
        a.frames = 1
    return a


def need_gpu():
    """Imports CuPy and PyTorch and checks for a device; exits 3 with a clear message if not."""
    missing = []
    try:
        import cupy  # noqa: F401
        import cupyx.scipy.ndimage  # noqa: F401
        import cupyx.scipy.signal  # noqa: F401
    except Exception as e:   # ImportError, or CUDA libraries missing at import
        missing.append(f"CuPy ({e.__class__.__name__}: {e})")
    try:
        import torch  # noqa: F401
    except Exception as e:
        missing.append(f"PyTorch ({e.__class__.__name__}: {e})")
    if missing:
        common.die("GPU peers need CuPy and PyTorch with CUDA; missing: " + "; ".join(missing), 3)
    import cupy
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        common.die(f"no usable CUDA device ({e})", 3)
    if n < 1:
        common.die("no CUDA device", 3)
    import torch
    if not torch.cuda.is_available():
        common.die("PyTorch sees no CUDA device", 3)


class Events:
    """CUDA-event timer on one CuPy stream (PyTorch work is put on the same stream)."""

    def __init__(self, cp, stream):
        self.cp, self.stream = cp, stream
        self.e0, self.e1 = cp.cuda.Event(), cp.cuda.Event()

    def clock_pair(self):
        # time_single/time_stream take a clock and a sync; with events the 'clock' records an
        # event, and the elapsed time is read after the end event is synchronised.
        state = {"n": 0}

        def clock():
            e = self.e0 if state["n"] % 2 == 0 else self.e1
            e.record(self.stream)
            state["n"] += 1
            if e is self.e1:
                e.synchronize()
                return self.cp.cuda.get_elapsed_time(self.e0, self.e1) * 1e-3
            return 0.0
        return clock


def make_peer(name, cp, torch, d_imgs, region, tshape):
    """Returns run(frame, device_template) -> device output."""
    dim = len(tshape)
    flip = tuple(slice(None, None, -1) for _ in tshape)
    if name == "cupy.fftconvolve":
        import cupyx.scipy.signal as cs
        return lambda f, t: cs.fftconvolve(d_imgs[f], t, mode=region)
    if name == "cupy.ndimage.correlate":
        import cupyx.scipy.ndimage as cn
        # With origin 0, correlating with the flipped template gives scipy.signal.convolve's
        # 'same' window for odd and even sizes alike (checked against scipy.ndimage, whose
        # conventions cupyx copies; --check verifies it on the GPU).
        return lambda f, t: cn.correlate(d_imgs[f], t[flip], mode="constant", cval=0.0)
    if name == "torch.conv":
        import torch.nn.functional as F
        conv = F.conv2d if dim == 2 else F.conv3d
        timgs = torch.as_tensor(d_imgs, device="cuda")   # zero-copy through __cuda_array_interface__
        pad = [t - 1 for t in tshape] if region == "full" else ([t // 2 for t in tshape] if region == "same" else 0)

        def run(f, t):
            w = torch.as_tensor(t, device="cuda").flip(list(range(dim)))[None, None]
            return conv(timgs[f][None, None], w, padding=pad)[0, 0]
        return run
    raise KeyError(name)


def bandwidth(a, cp, machine, versions):
    n = a.bandwidth_mib << 20
    host = cp.cuda.alloc_pinned_memory(n)
    dev = cp.cuda.alloc(n)
    np.frombuffer(host, np.uint8, n)[:] = 1   # touch the pages
    stream = cp.cuda.Stream(non_blocking=True)
    ev = Events(cp, stream)
    rt = cp.cuda.runtime
    for name, kind, dst, src in (("cuda.memcpy.h2d", rt.memcpyHostToDevice, dev.ptr, host.ptr),
                                 ("cuda.memcpy.d2h", rt.memcpyDeviceToHost, host.ptr, dev.ptr)):
        def copy(_):
            rt.memcpyAsync(dst, src, n, kind, stream.ptr)
        samples = common.time_single(copy, np.zeros(1, np.float32), a.repeats, a.warmup,
                                     clock=ev.clock_pair())
        rec = common.record(name, "memcpy", [n], [1], "n/a", "single", 1, "device",
                            f"cudaMemcpyAsync pinned, {a.bandwidth_mib} MiB", 0, samples, machine,
                            versions, bytes=n, gbps=n / sorted(samples)[len(samples) // 2] / 1e9)
        rec["dim"] = 0
        common.emit(rec)
    # Both ways at once (two streams, two buffers): a stream of frames moves frames in and
    # results out concurrently, and the copy engines are full duplex, so the stream's bound is
    # (bytes in + bytes out) / this rate, or a one-way bound, whichever is larger.
    host2 = cp.cuda.alloc_pinned_memory(n)
    dev2 = cp.cuda.alloc(n)
    s2 = cp.cuda.Stream(non_blocking=True)
    mid = cp.cuda.Event()

    def both(_):
        s2.wait_event(ev.e0)                      # start together, after the start event
        rt.memcpyAsync(dev.ptr, host.ptr, n, rt.memcpyHostToDevice, stream.ptr)
        rt.memcpyAsync(host2.ptr, dev2.ptr, n, rt.memcpyDeviceToHost, s2.ptr)
        mid.record(s2)
        stream.wait_event(mid)                    # the end event waits for both
    samples = common.time_single(both, np.zeros(1, np.float32), a.repeats, a.warmup,
                                 clock=ev.clock_pair())
    rec = common.record("cuda.memcpy.bidir", "memcpy", [n], [1], "n/a", "single", 1, "device",
                        f"cudaMemcpyAsync pinned, {a.bandwidth_mib} MiB each way at once", 0,
                        samples, machine, versions, bytes=2 * n,
                        gbps=2 * n / sorted(samples)[len(samples) // 2] / 1e9)
    rec["dim"] = 0
    common.emit(rec)


def main():
    a = parse_args(sys.argv[1:])
    if a.list:
        for name, (_, desc) in PEERS.items():
            print(f"{name:24s} {desc}")
        return 0
    need_gpu()
    import cupy as cp
    import torch
    torch.backends.cudnn.benchmark = True        # cuDNN picks its fastest algorithm per shape
    torch.backends.cudnn.allow_tf32 = False      # float32 arithmetic, as FLCC's
    torch.backends.cuda.matmul.allow_tf32 = False
    import cupyx
    machine = common.machine_info(gpu=cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    versions = common.module_versions("numpy", "cupy", "torch")
    versions["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
    versions["cudnn"] = torch.backends.cudnn.version()
    if a.bandwidth:
        bandwidth(a, cp, machine, versions)
        return 0

    names = list(PEERS) if a.peers == "all" else [s for s in a.peers.split(",") if s]
    for n in names:
        if n not in PEERS:
            common.die(f"unknown peer '{n}' (known: {', '.join(PEERS)})")
    stream = cp.cuda.Stream(non_blocking=True)
    ev = Events(cp, stream)
    failures = 0
    with stream, torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr)):
        for image in common.parse_list(a.image):
            for t in common.parse_list(a.template):
                tshape = common.template_shape(image, t)
                todo = [n for n in names if PEERS[n][0](a.op, len(image), a.region, tshape)]
                if not todo:
                    continue
                imgs, tpl = common.make_inputs(image, tshape, a.frames)
                d_imgs = cp.asarray(imgs)
                for name in todo:
                    run = make_peer(name, cp, torch, d_imgs, a.region, tshape)
                    extra = {"data": "device-resident"}
                    if a.check:
                        import scipy.signal
                        ref = scipy.signal.fftconvolve(imgs[0].astype(np.float64), tpl, mode=a.region)
                        got = cp.asnumpy(cp.asarray(run(0, cp.asarray(tpl))))
                        err, ok = common.compare(a.op, got, ref)
                        extra["check"] = {"max_abs_diff_vs_scipy": err, "ok": ok}
                        if not ok:
                            failures += 1
                            sys.stderr.write(f"gpu_peers: CHECK FAILED: {name} {image} {tshape} "
                                             f"{a.region}: shapes {got.shape} {ref.shape}, "
                                             f"max |diff| {err:g}\n")
                    if a.type == "single":
                        # a new template per repeat, uploaded before the clock starts
                        samples = common.time_single(lambda dt: run(0, dt), tpl, a.repeats, a.warmup,
                                                     clock=ev.clock_pair(), upload=cp.asarray)
                    else:
                        d_tpl = cp.asarray(tpl)
                        samples = common.time_stream(lambda f: run(f, d_tpl), a.frames, a.repeats,
                                                     a.warmup, clock=ev.clock_pair())
                    desc = PEERS[name][1].format(dim=len(image))
                    common.emit(common.record(name, a.op, image, tshape, a.region, a.type, a.frames,
                                              "device", desc, 0, samples, machine, versions, **extra))
                del d_imgs
                cp.get_default_memory_pool().free_all_blocks()
                torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
