"""Shared helpers for the experiment scripts (a_ .. e_, g_) and report.py: where things are, running
flcc-bench / flcc-planner-map / the peer scripts, reading and writing JSON lines, plotting.

Every experiment writes its measurements to <results>/<experiment>.jsonl (default results folder:
bench/results/<machine tag>/, see bench/peers/common.py:machine_tag) and its plots to <img>
(default docs/img/). A failed measurement stops the experiment with a non-zero exit: the quick
mode exists so that CI notices broken benchmark code.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(BENCH, "peers"))
import common as peers_common  # noqa: E402  (machine_tag, cpu_model)

CPU_PEERS = os.path.join(BENCH, "peers", "cpu_peers.py")
GPU_PEERS = os.path.join(BENCH, "gpu", "gpu_peers.py")


# ---------------------------------------------------------------- command line

def arg_parser(description, quick_help="one or two small sizes, seconds (for CI)"):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--results", help="results folder (default bench/results/<machine tag>)")
    p.add_argument("--img", help="plot folder (default docs/img)")
    p.add_argument("--flcc-bench", help="flcc-bench binary (default: $FLCC_BENCH or a build tree)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads, 0 = all")
    p.add_argument("--plot-only", action="store_true", help="re-plot the existing results")
    p.add_argument("--platform", choices=["host", "device"], default="host",
                   help="device: FLCC's GPU solvers against the GPU peers (bench/run_gpu.sh)")
    return p


def setup(args, name):
    """Resolves folders; returns (jsonl path, img folder, name). Device runs are named
    <name>_device (results and plots), so a GPU run never overwrites a CPU run's files."""
    results = args.results or os.path.join(BENCH, "results", peers_common.machine_tag())
    if getattr(args, "platform", "host") == "device":
        name += "_device"
    img = args.img or os.path.join(REPO, "docs", "img")
    os.makedirs(results, exist_ok=True)
    os.makedirs(img, exist_ok=True)
    return os.path.join(results, name + ".jsonl"), img, name


def finish(rec):
    """Exit status of an experiment: non-zero when a soft failure was counted."""
    if rec is not None and rec.failures:
        log(f"{rec.failures} measurement(s) FAILED (see above)")
        sys.exit(1)


def log(msg):
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


# ---------------------------------------------------------------- binaries

def _first_existing(paths):
    for p in paths:
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def find_flcc_bench(explicit=None, required=True):
    """flcc-bench: --flcc-bench, $FLCC_BENCH, or build-bench/ or build/ of this checkout.
    Not found: exit, or None when not required (GPU runs go on with the peers alone)."""
    p = explicit or os.environ.get("FLCC_BENCH") or _first_existing(
        [os.path.join(REPO, d, "bench", "flcc-bench") for d in ("build-bench", "build")])
    if not p or not os.path.isfile(p):
        if not required:
            return None
        sys.exit("flcc-bench not found: build it (bench/run_cpu.sh does) or pass --flcc-bench")
    return p


_HELP = {}


def supports(binary, option):
    """Whether `binary --help` mentions `option` (flcc-bench options added over time)."""
    if binary not in _HELP:
        _HELP[binary] = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    return option in _HELP[binary]


def find_libflcc(flcc_bench):
    """libflcc.so of the build tree that holds flcc-bench (build/bench/flcc-bench -> build/)."""
    build = os.path.dirname(os.path.dirname(os.path.abspath(flcc_bench)))
    for name in ("libflcc.so", "libflcc.dylib"):
        p = os.path.join(build, name)
        if os.path.isfile(p):
            return p
    return None


def find_planner_map(flcc_bench):
    """flcc-planner-map: $FLCC_PLANNER_MAP, or next to flcc-bench (when bench/CMakeLists.txt
    builds it), or compiled here from bench/planner_map.cpp against the build tree's libflcc."""
    p = os.environ.get("FLCC_PLANNER_MAP") or _first_existing(
        [os.path.join(os.path.dirname(flcc_bench), "flcc-planner-map")])
    if p:
        return p
    lib = find_libflcc(flcc_bench)
    if not lib:
        sys.exit("flcc-planner-map not built and no libflcc.so beside flcc-bench to build it with")
    build = os.path.dirname(lib)
    out = os.path.join(build, "flcc-planner-map")
    src = os.path.join(BENCH, "planner_map.cpp")
    if os.path.isfile(out) and os.path.getmtime(out) >= max(os.path.getmtime(src), os.path.getmtime(lib)):
        return out
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    cmd = [cxx, "-O2", "-std=c++17", src, "-I", os.path.join(REPO, "include"), "-L", build,
           "-lflcc", f"-Wl,-rpath,{build}", "-o", out]
    log("building " + " ".join(cmd))
    subprocess.run(cmd, check=True)
    return out


# ---------------------------------------------------------------- running measurements

class Recorder:
    """Runs measurement commands and appends their JSON lines to one results file (started
    afresh unless append=True), tagging each with the experiment's name."""

    def __init__(self, path, experiment, append=False):
        self.path, self.experiment = path, experiment
        self.failures = 0
        if not append:
            open(path, "w").close()

    def run(self, cmd, soft=False, tags=None):
        """Runs cmd and records its JSON lines (with the fields of `tags` added). A failure
        (non-zero exit, no output) stops the experiment, unless soft: then it is counted
        (self.failures) and reported, and the experiment goes on (GPU runs: FLCC's device
        solvers may not exist yet)."""
        log(" ".join(os.path.relpath(c, REPO) if c.startswith(REPO) else c for c in cmd))
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.stderr:
            sys.stderr.write(proc.stderr)
        if proc.returncode != 0 or not proc.stdout.strip():
            why = f"exit {proc.returncode}" if proc.returncode else "no measurement"
            if soft:
                self.failures += 1
                log(f"FAILED ({why}), going on: {' '.join(cmd)}")
                return []
            sys.exit(f"FAILED ({why}): {' '.join(cmd)}")
        recs = []
        for line in proc.stdout.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                sys.exit(f"FAILED: not a JSON line from {cmd[0]}: {line[:200]}")
            rec["experiment"] = self.experiment
            rec.update(tags or {})
            recs.append(rec)
        with open(self.path, "a") as f:
            for r in recs:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
        return recs


def flcc_cmd(flcc_bench, op, images, templates, region, type_="single", frames=1, method="all",
             repeats=5, warmup=1, threads=0, platform="host"):
    return [flcc_bench, "--op", op, "--image", ",".join(images), "--template",
            ",".join(str(t) for t in templates), "--region", region, "--type", type_,
            "--frames", str(frames), "--method", method, "--repeats", str(repeats),
            "--warmup", str(warmup), "--threads", str(threads), "--platform", platform]


def peers_cmd(op, images, templates, region, type_="single", frames=1, repeats=5, warmup=1,
              threads=0, peers="all", check=None):
    cmd = [sys.executable, CPU_PEERS, "--op", op, "--image", ",".join(images), "--template",
           ",".join(str(t) for t in templates), "--region", region, "--type", type_, "--frames",
           str(frames), "--repeats", str(repeats), "--warmup", str(warmup), "--threads",
           str(threads), "--peers", peers]
    if check:
        cmd += ["--check", check]
    return cmd


def size_str(n, dim):
    return "x".join([str(n)] * dim)


# ---------------------------------------------------------------- reading results

def load(path):
    recs = []
    if os.path.isfile(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    recs.append(json.loads(line))
    return recs


def problem_key(r):
    """What makes two measurements comparable (FLCC vs a peer)."""
    return (r["op"], r["dim"], tuple(r["image"]), tuple(r["template"]), r["region"], r["type"],
            r["frames"])


def label(r):
    """A short series name: 'FLCC planner', 'FLCC host.direct2.k16', or the peer's name; FLCC
    timed on device-resident buffers (flcc-bench --memory device) is a series of its own,
    ' (device-resident)' appended, and ' (device-resident, events)' when timed by CUDA events
    (--timing events) as the GPU peers are. A peer timed on the host clock (npp_bench --timing
    wall) gets ' (wall)'."""
    if r["bench"] == "flcc":
        lab = "FLCC planner" if r.get("requested") == "auto" else "FLCC " + r["method"]
        if r.get("timing") == "events":
            return lab + " (device-resident, events)"
        return lab + (" (device-resident)" if device_resident(r) else "")
    return r["bench"] + (" (wall)" if r.get("timing") == "wall" else "")


def device_resident(r):
    """flcc-bench says "memory": "device"; the GPU peers say "data": "device-resident"."""
    return r.get("memory") == "device" or r.get("data") == "device-resident"


def median(r):
    return r["seconds"]["median"]


def by_problem(recs):
    """{problem key: {label: record}} (a later record of the same label wins)."""
    out = {}
    for r in recs:
        if "seconds" in r:
            out.setdefault(problem_key(r), {})[label(r)] = r
    return out


def thread_series(recs):
    """{label: {threads asked for: median seconds over the records (rounds)}} for (d)."""
    import statistics
    acc = {}
    for r in recs:
        # the count asked for (OpenCV reports its own pool size, which may differ)
        asked = r["threads"] if r["bench"] == "flcc" else r.get("threads_requested", r["threads"])
        acc.setdefault(label(r), {}).setdefault(asked, []).append(median(r))
    return {lab: {t: statistics.median(v) for t, v in pts.items()} for lab, pts in acc.items()}


def flcc_best(series):
    """The fastest forced FLCC solver of one problem: (label, record) or (None, None)."""
    forced = [(k, v) for k, v in series.items() if k.startswith("FLCC ")
              and not k.startswith("FLCC planner") and "(device-resident" not in k]
    if not forced:
        return None, None
    return min(forced, key=lambda kv: median(kv[1]))


# ---------------------------------------------------------------- plots

def pyplot():
    import matplotlib
    matplotlib.use("Agg")   # no display on CI or the GPU machine
    import matplotlib.pyplot as plt
    return plt


PEER_STYLE = {   # fixed colours so every plot reads the same
    "FLCC planner": dict(color="black", lw=2.2, marker="o", zorder=5),
    "FLCC best solver": dict(color="black", lw=1, ls="--", marker=".", zorder=4),
    "opencv.matchTemplate": dict(color="tab:blue", marker="s"),
    "skimage.match_template": dict(color="tab:orange", marker="^"),
    "opencv.filter2D": dict(color="tab:green", marker="s"),
    "scipy.fftconvolve": dict(color="tab:red", marker="v"),
    "scipy.correlate": dict(color="tab:purple", marker="D"),
    "npp.CrossCorrFull_NormLevel_32f": dict(color="tab:cyan", marker="s"),
    "npp.CrossCorrValid_NormLevel_32f": dict(color="tab:cyan", marker="s"),
    "cupy.fftconvolve": dict(color="tab:red", marker="v"),
    "cupy.ndimage.correlate": dict(color="tab:olive", marker="^"),
    "torch.conv": dict(color="tab:brown", marker="D"),
}


def machine_caption(recs):
    for r in recs:
        m = r.get("machine")
        if m:
            extra = f", GPU {m['gpu']}" if m.get("gpu") else ""
            return f"{m.get('cpu', '?')}, {m.get('hardware_threads', '?')} hardware threads{extra}"
    return ""


def plot_series(ax, xs_by_label, title, xlabel, logy=True):
    """xs_by_label: {label: [(x, seconds), ...]}; FLCC solvers other than the planner's pick
    and the best are drawn thin and grey so the comparison with the peers stays readable."""
    if not any(xs_by_label.values()):
        ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(title, fontsize=10)
        return
    for lab, pts in sorted(xs_by_label.items()):
        pts = sorted(pts)
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] * 1e3 for p in pts]
        style = PEER_STYLE.get(lab)
        if style is None and lab.startswith("FLCC "):
            ax.plot(xs, ys, color="0.75", lw=0.7, zorder=1)
            continue
        ax.plot(xs, ys, label=lab, **(style or {}))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ms per frame (median)")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def series_over(recs, select, xof):
    """Groups records passing select(r) into {label: [(x, seconds)]}, adding 'FLCC best solver'
    (per problem, the fastest forced FLCC solver)."""
    out = {}
    for key, series in by_problem([r for r in recs if select(r)]).items():
        for lab, r in series.items():
            out.setdefault(lab, []).append((xof(r), median(r)))
        lab, best = flcc_best(series)
        if best:
            out.setdefault("FLCC best solver", []).append((xof(best), median(best)))
    return out


def save(fig, img, name):
    path = os.path.join(img, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    log(f"wrote {os.path.relpath(path, REPO) if path.startswith(REPO) else path}")
    return path


def plot_sweep(recs, dim, xaxis, img, name, title):
    """The standard sweep figure: one column per (op, region) measured; rows: SINGLE times,
    STREAM times, and the speedup of FLCC's planner pick over each peer (SINGLE and STREAM,
    each ratio from one run). xaxis: 'template' or 'image' (first extent on the x axis)."""
    recs = [r for r in recs if r.get("dim") == dim and "seconds" in r]
    if not recs:
        log(f"{name}: nothing to plot")
        return None
    plt = pyplot()
    problems = sorted({(r["op"], r["region"]) for r in recs},
                      key=lambda p: (p[0] != "lcorr", ["valid", "same", "full"].index(p[1])))
    fig, axes = plt.subplots(3, len(problems), figsize=(5.2 * len(problems), 12), squeeze=False)
    xof = (lambda r: r[xaxis][0])
    xlabel = ("template" if xaxis == "template" else "image") + (" side" if dim == 2 else " edge")
    for col, (op, region) in enumerate(problems):
        what = f"{'LCC' if op == 'lcorr' else 'convolution'} {dim}D, {region}"
        for row, type_ in enumerate(("single", "stream")):
            sel = (lambda r, t=type_: (r["op"], r["region"], r["type"]) == (op, region, t))
            sub = [r for r in recs if sel(r)]
            frames = max((r["frames"] for r in sub), default=1)
            plot_series(axes[row][col], series_over(recs, sel, xof),
                        f"{what}: {type_.upper()}" + (f" of {frames} frames" if type_ == "stream" else ""),
                        xlabel)
        ax = axes[2][col]
        for type_, ls in (("single", "-"), ("stream", ":")):
            sel = [r for r in recs if (r["op"], r["region"], r["type"]) == (op, region, type_)]
            ratios = {}
            for key, series in by_problem(sel).items():
                f = series.get("FLCC planner")
                if not f:
                    continue
                for lab, r in series.items():
                    if not lab.startswith("FLCC"):
                        ratios.setdefault(lab, []).append((xof(r), median(r) / median(f)))
            for lab, pts in sorted(ratios.items()):
                pts.sort()
                st = dict(PEER_STYLE.get(lab, {}))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=ls,
                        label=f"vs {lab} ({type_})", **st)
        ax.axhline(1, color="k", lw=0.8)
        if op == "lcorr":   # DESIGN.md section 5: >= 3x OpenCV at every template, >= 5x at 16x16
            for y in (3, 5):
                ax.axhline(y, color="tab:blue", lw=0.6, ls="--")
        ax.set_yscale("log")
        ax.set_title(f"{what}: speedup of FLCC's pick (peer time / FLCC time)", fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("speedup ×")
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.suptitle(f"{title}\n{machine_caption(recs)}", fontsize=11)
    fig.tight_layout()
    path = save(fig, img, name)
    plt.close(fig)
    return path


def sweep_config(args):
    """Repeats and frames of the sweeps (a) and (b); --quick: the fewest that run every path,
    and every peer's output checked against FLCC's (cpu_peers.py --check)."""
    q = args.quick
    if args.platform == "device":   # fast: more repeats; the GPU peers are checked by run_gpu.sh
        return dict(repeats=2 if q else 10, stream_repeats=2 if q else 5, peer_stream_repeats=5,
                    frames=3 if q else 10, threads=args.threads, check=None, platform="device")
    check = find_libflcc(find_flcc_bench(args.flcc_bench)) if q else None
    if q and not check:
        log("warning: no libflcc.so beside flcc-bench; peers' outputs are not checked")
    # Every-solver runs (--method all) take 3 repeats: they outline the families, while the
    # planner's pick and the peers, which the ratios compare, take 5.
    return dict(repeats=2 if q else 5, stream_repeats=1 if q else 2, peer_stream_repeats=1,
                all_repeats=2 if q else 3, all_stream_repeats=1, frames=3 if q else 10,
                threads=args.threads, check=check, platform="host")


def run_problem(rec, flcc_bench, op, region, images, templates, type_, cfg, every_solver=True,
                peers="all"):
    """Measures one (op, region) over images x templates, SINGLE or STREAM: every FLCC solver
    (--method all; every_solver=False: skipped), the planner's pick (--method auto) and the
    peers that do it (peers: 'all' or a comma-separated list of CPU peer names).
    cfg: repeats, stream_repeats, frames, threads, check (libflcc for cpu_peers --check or
    None), platform ('host': CPU peers; 'device': GPU peers and NPP, FLCC failures soft).
    CPU peers' STREAM is a loop over frames (they have no stream API): one pass after a
    one-frame warm-up, since a peer has no state that a stream could reuse."""
    if not images or not templates:
        return
    stream = type_ == "stream"
    frames = cfg["frames"] if stream else 1
    reps = cfg["stream_repeats"] if stream else cfg["repeats"]
    device = cfg.get("platform") == "device"
    for method in (("all", "auto") if every_solver else ("auto",)) if flcc_bench else ():
        n = reps if method == "auto" else cfg.get("all_stream_repeats" if stream else "all_repeats", reps)
        rec.run(flcc_cmd(flcc_bench, op, images, templates, region, type_, frames, method, n,
                         1, cfg["threads"], "device" if device else "host"), soft=device)
    if not flcc_bench:
        rec.failures += 1
        log("no flcc-bench: FLCC not measured")
    if not device:
        rec.run(peers_cmd(op, images, templates, region, type_, frames,
                          cfg["peer_stream_repeats"] if stream else reps, 1, cfg["threads"],
                          peers=peers, check=cfg.get("check")))
        return
    if flcc_bench and supports(flcc_bench, "--memory"):
        # also the planner's pick on GPU buffers: like for like with the device-resident peers
        rec.run(flcc_cmd(flcc_bench, op, images, templates, region, type_, frames, "auto", reps,
                         1, cfg["threads"], "device") + ["--memory", "device"], soft=True)
    tlist = ",".join(str(t) for t in templates)
    if op == "conv":
        rec.run([sys.executable, GPU_PEERS, "--op", op, "--image", ",".join(images), "--template",
                 tlist, "--region", region, "--type", type_, "--frames", str(frames),
                 "--repeats", str(max(reps, 10)), "--warmup", "3"], soft=True)
    npp = os.environ.get("FLCC_NPP_BENCH")
    if op == "lcorr" and npp and not stream and all(len(i.split("x")) == 2 for i in images):
        rec.run([npp, "--image", ",".join(images), "--template", tlist, "--region", region,
                 "--repeats", str(max(reps, 10)), "--warmup", "3"], soft=True)
