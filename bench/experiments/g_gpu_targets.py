#!/usr/bin/env python3
"""GPU targets (DESIGN.md section 5), on a GPU machine (bench/run_gpu.sh runs it):

  LCC 2000², templates 4, 8, 16, 32, full and valid: FLCC (--platform device, every solver and
      the planner's pick) against NPP nppiCrossCorr{Full,Valid}_NormLevel_32f (npp_bench)
  convolution 2000², templates 4, 8, 16, 32, same and full: FLCC against CuPy fftconvolve,
      CuPy ndimage.correlate and PyTorch conv2d (gpu_peers.py, outputs checked against scipy)
  stream of 100 host frames 2000²: FLCC LCC 16x16 full and convolution 8x8 same, against the
      PCIe bound from pinned host<->device bandwidth measured in the same run (gpu_peers.py
      --bandwidth)
  3D LCC 256³ with 8³, full and valid: FLCC against CuPy fftconvolve / PyTorch conv3d

Peers are device-resident and timed by CUDA events around each call on a stream (NPP also on
the host clock, each call followed by a cudaStreamSynchronize: npp_bench --timing wall). FLCC is
timed by flcc-bench on host buffers (page-locked, from flcc_malloc), so those times include
transfers; when flcc-bench offers --memory device, the planner's pick is also timed on GPU
buffers, on the host clock around each synchronous exec and, with --timing events, by CUDA
events around each exec on a stream bound to the plan, as the peers are (report.py compares
like with like: events with events, host clock with host clock).
FLCC failures (no device solver yet) are reported and counted, and the peers still run; the
exit status is then 1.

  python3 bench/experiments/g_gpu_targets.py [--quick] [--results DIR]

Writes <results>/g_gpu_targets.jsonl (no plot: report.py turns it into the targets table).
"""
import os
import sys

import harness as H

NAME = "g_gpu_targets"

FULL = dict(image="2000x2000", templates=[4, 8, 16, 32], frames=100, vol="256x256x256", vt=8,
            repeats=20, stream_repeats=9, bw_mib=1024)
QUICK = dict(image="256x256", templates=[4, 8], frames=4, vol="32x32x32", vt=4, repeats=3,
             stream_repeats=1, bw_mib=64)


def main():
    p = H.arg_parser(__doc__.split("\n")[0])
    p.add_argument("--npp-bench", default=os.environ.get("FLCC_NPP_BENCH"),
                   help="npp_bench binary (default $FLCC_NPP_BENCH)")
    args = p.parse_args()
    args.platform = "host"          # results file name: this experiment is GPU-only anyway
    path, _, _ = H.setup(args, NAME)
    c = QUICK if args.quick else FULL
    fb = H.find_flcc_bench(args.flcc_bench, required=False)
    rec = H.Recorder(path, NAME)
    tl = ",".join(map(str, c["templates"]))
    reps = str(c["repeats"])
    gpu_peers = [sys.executable, H.GPU_PEERS]

    # Device-resident FLCC timings: flcc-bench --memory device (GPU buffers, "memory": "device"
    # in the JSON), when this flcc-bench has it.
    resident = bool(fb) and H.supports(fb, "--memory")
    events = bool(fb) and H.supports(fb, "--timing")
    if fb and not resident:
        H.log("flcc-bench has no --memory option: FLCC's GPU times include host<->device transfers")

    def flcc(op, image, templ, region, type_="single", frames=1, repeats=c["repeats"]):
        if not fb:
            rec.failures += 1
            H.log("no flcc-bench: FLCC not measured")
            return
        templ = templ if isinstance(templ, list) else [templ]
        for method in ("auto", "all") if type_ == "single" else ("auto",):
            rec.run(H.flcc_cmd(fb, op, [image], templ, region, type_, frames, method, repeats, 1, 0,
                               "device"), soft=True)
        if resident and type_ == "single":
            for timing in (["--timing", "events"], []) if events else ([],):
                rec.run(H.flcc_cmd(fb, op, [image], templ, region, type_, frames, "auto", repeats, 1,
                                   0, "device") + ["--memory", "device"] + timing, soft=True)

    # bandwidth first: the stream target needs it, and it is the cheapest sanity check
    rec.run(gpu_peers + ["--bandwidth", "--bandwidth-mib", str(c["bw_mib"]), "--repeats", "10"],
            soft=True)
    # LCC 2D against NPP
    if args.npp_bench:
        rec.run([args.npp_bench, "--image", c["image"], "--template", tl, "--region", "full,valid",
                 "--repeats", reps, "--warmup", "5", "--check"], soft=True)
        rec.run([args.npp_bench, "--image", c["image"], "--template", tl, "--region", "full",
                 "--repeats", reps, "--warmup", "5", "--timing", "wall"], soft=True)
    else:
        rec.failures += 1
        H.log("no npp_bench (--npp-bench or $FLCC_NPP_BENCH): NPP not measured")
    for region in ("full", "valid"):
        flcc("lcorr", c["image"], c["templates"], region)
    # convolution 2D against CuPy / PyTorch
    for region in ("same", "full"):
        rec.run(gpu_peers + ["--op", "conv", "--image", c["image"], "--template", tl, "--region",
                             region, "--repeats", reps, "--warmup", "3", "--check"], soft=True)
        flcc("conv", c["image"], c["templates"], region)
    # streams of host frames
    flcc("lcorr", c["image"], 16 if not args.quick else 8, "full", "stream", c["frames"],
         c["stream_repeats"])
    flcc("conv", c["image"], 8, "same", "stream", c["frames"], c["stream_repeats"])
    # 3D
    for region in ("full", "valid"):
        rec.run(gpu_peers + ["--op", "conv", "--image", c["vol"], "--template", str(c["vt"]),
                             "--region", region, "--repeats", reps, "--warmup", "3"], soft=True)
        flcc("lcorr", c["vol"], c["vt"], region)
    H.finish(rec)


if __name__ == "__main__":
    main()
