#!/usr/bin/env python3
"""Prints the benchmark results as markdown for docs/performance.md: per experiment, FLCC
against each peer with ratios, and DESIGN.md section 5's targets, each marked met / not met /
not measured with the measured ratio.

  python3 bench/report.py                          # every folder under bench/results/
  python3 bench/report.py --results bench/results/amd-epyc-2t [--results DIR ...]

Ratios are peer time / FLCC time (> 1: FLCC is faster), both medians from the same run (the same
results file). "FLCC" is the planner's pick (flcc-bench --method auto); "best solver" is the
fastest solver forced by name (--method all) in the same run.
"""
import argparse
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "experiments"))
import harness as H  # noqa: E402
import t_cpu_targets as T  # noqa: E402


def ms(s):
    return "–" if s is None else (f"{s * 1e3:.3g}" if s * 1e3 < 100 else f"{s * 1e3:.0f}")


def ratio(x):
    return "–" if x is None else f"{x:.2f}×"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def dims(v):
    return "x".join(map(str, v))


# ---------------------------------------------------------------- sweeps (a), (b)

def sweep_tables(recs, title, xaxis):
    """One table per (platform, dim, op, region, type): rows along the swept axis."""
    parts = []
    groups = {}
    recs = [r for r in recs if r.get("op") in ("conv", "lcorr")]   # not the bandwidth records
    for key, series in H.by_problem(recs).items():
        op, dim, image, templ, region, type_, frames = key
        platform = next(iter(series.values())).get("platform", "host")
        groups.setdefault((platform, dim, op, region, type_, frames), []).append((key, series))
    order = lambda g: (g[0], g[1], g[2] != "lcorr", ["valid", "same", "full"].index(g[3]),
                       g[4] != "single", g[5])
    for (platform, dim, op, region, type_, frames), items in sorted(groups.items(),
                                                                   key=lambda kv: order(kv[0])):
        peers = sorted({lab for _, s in items for lab in s if not lab.startswith("FLCC")})
        resident = any("FLCC planner (device-resident)" in s for _, s in items)
        events = any("FLCC planner (device-resident, events)" in s for _, s in items)
        header = ([xaxis, "FLCC ms (pick)", "best solver ms"]
                  + (["FLCC device-resident ms"] if resident else [])
                  + (["FLCC device-resident ms, CUDA events"] if events else [])
                  + [f"{p} ms (ratio)" for p in peers])
        rows = []
        for key, s in sorted(items, key=lambda kv: (kv[0][2], kv[0][3])):
            f = s.get("FLCC planner")
            blab, best = H.flcc_best(s)
            x = dims(key[3]) if xaxis == "template" else dims(key[2])
            row = [x, f"{ms(H.median(f))} ({f['method']})" if f else "–",
                   f"{ms(H.median(best))} ({blab[5:]})" if best else "–"]
            fr = s.get("FLCC planner (device-resident)")
            fe = s.get("FLCC planner (device-resident, events)")
            if resident:
                row.append(ms(H.median(fr)) if fr else "–")
            if events:
                row.append(ms(H.median(fe)) if fe else "–")
            for p in peers:
                r = s.get(p)
                like = next((s[lab] for lab in like_for_like(p) if lab in s), None)
                row.append(f"{ms(H.median(r))} ({ratio(H.median(r) / H.median(like))})"
                           if r and like else (ms(H.median(r)) if r else "–"))
            rows.append(row)
        what = f"{'LCC' if op == 'lcorr' else 'convolution'} {dim}D {region}, {type_.upper()}"
        if type_ == "stream":
            what += f" of {frames} frames"
        fixed = (f"image {dims(items[0][0][2])}" if xaxis == "template"
                 else f"template {dims(items[0][0][3])}")
        parts.append(f"#### {title}: {what}, {fixed}, {platform}\n\n{table(header, rows)}\n")
    return "\n".join(parts)


# ---------------------------------------------------------------- (c), (d), (e)

def cpu_gpu_table(recs):
    if not recs:
        return "No GPU results yet (run bench/run_gpu.sh on a GPU machine).\n"
    rows = [[f"{'LCC' if r['op'] == 'lcorr' else 'conv'} {r['dim']}D {r['region']} {r['type']}",
             dims(r["image"]), dims(r["template"]), ms(r["host_seconds"]), ms(r["device_seconds"]),
             ratio(r["host_over_device"]), r.get("best_cpu_peer") or "–",
             ratio(r.get("best_cpu_peer_over_device"))] for r in recs]
    return table(["problem", "image", "template", "FLCC CPU ms", "FLCC GPU ms", "CPU/GPU",
                  "best CPU peer", "peer/FLCC GPU"], rows) + "\n"


def threads_tables(recs):
    parts = []
    probs = {}
    for r in recs:
        if "seconds" in r:
            probs.setdefault((r["op"], r["region"], tuple(r["image"]), tuple(r["template"])), []).append(r)
    for (op, region, image, templ), rs in probs.items():
        series = H.thread_series(rs)
        counts = sorted({t for s in series.values() for t in s})
        rows = []
        for lab, pts in sorted(series.items()):
            base = pts.get(1)
            rows.append([lab] + [f"{ms(pts[t])}" + (f" ({base / pts[t]:.2f}×)" if base and t in pts else "")
                                 if t in pts else "–" for t in counts])
        parts.append(f"#### {'LCC' if op == 'lcorr' else 'convolution'} {region}, image {dims(image)}, "
                     f"template {dims(templ)}: ms, median over rounds (speedup over 1 thread)\n\n"
                     + table(["series"] + [f"{t} thr" for t in counts], rows) + "\n")
    return "\n".join(parts)


def planner_tables(recs):
    recs = [r for r in recs if r.get("bench") == "flcc.planner_map"]
    if not recs:
        return "No planner map.\n", None
    rows, worst = [], []
    total = ok_all = 0
    for op in ("lcorr", "conv"):
        for dim in (2, 3):
            sub = [r for r in recs if r["op"] == op and r["dim"] == dim]
            if not sub:
                continue
            ok = sum(1 for r in sub if 0 < r["regret"] <= 1.1)
            oke = sum(1 for r in sub if 0 < r["regret_estimate"] <= 1.1)
            big = [r for r in sub if min(c["seconds"]["median"] for c in r["candidates"]) >= 1e-3]
            okb = sum(1 for r in big if 0 < r["regret"] <= 1.1)
            total += len(sub)
            ok_all += ok
            rows.append([f"{'LCC' if op == 'lcorr' else 'conv'} {dim}D {sub[0]['region']}", len(sub),
                         f"{ok} ({100.0 * ok / len(sub):.0f}%)",
                         f"{okb}/{len(big)}" if big else "–",
                         f"{max(r['regret'] for r in sub):.2f}",
                         f"{oke} ({100.0 * oke / len(sub):.0f}%)",
                         f"{max(r['regret_estimate'] for r in sub):.2f}"])
            worst += sub
    worst = sorted(worst, key=lambda r: -r["regret"])[:8]
    wrows = [[f"{'LCC' if r['op'] == 'lcorr' else 'conv'} {r['dim']}D", dims(r["image"]),
              dims(r["template"]), r["pick"], r["best"], f"{r['regret']:.2f}",
              r["pick_estimate"], f"{r['regret_estimate']:.2f}"] for r in worst if r["regret"] > 1.0]
    text = table(["grid", "cells", "MEASURE pick within 10%", "… of cells >= 1 ms",
                  "worst regret", "ESTIMATE pick within 10%", "worst ESTIMATE regret"], rows) + "\n"
    if wrows:
        text += "\nLargest regrets (pick's time / fastest candidate's, both timed independently):\n\n"
        text += table(["grid", "image", "template", "pick", "fastest", "regret", "ESTIMATE pick",
                       "its regret"], wrows) + "\n"
    return text, (ok_all / total if total else None, ok_all, total)


# ---------------------------------------------------------------- targets

def find(recs, label, **kw):
    """The record of series `label` matching every field in kw (image/template as tuples)."""
    for key, series in H.by_problem(recs).items():
        op, dim, image, templ, region, type_, frames = key
        have = dict(op=op, dim=dim, image=image, template=templ, region=region, type=type_,
                    frames=frames)
        if all(have[k] == v for k, v in kw.items()) and label in series:
            return series[label]
    return None


def like_for_like(peer, flcc_label="FLCC planner"):
    """FLCC's series to compare with `peer`, best first. The GPU peers are device-resident and
    timed by CUDA events (a peer label ending in ' (wall)': on the host clock), so FLCC's
    device-resident series timed the same way comes first, then the other device-resident one,
    then FLCC on host buffers."""
    if peer.endswith(" (wall)"):
        order = [" (device-resident)", ""]
    else:
        order = [" (device-resident, events)", " (device-resident)", ""]
    return [flcc_label + o for o in order]


def peer_ratio(recs, peer, flcc_label="FLCC planner", peer_kw=None, **kw):
    f = next((r for r in (find(recs, lab, **kw) for lab in like_for_like(peer, flcc_label)) if r),
             None)
    p = find(recs, peer, **(peer_kw or kw))
    if not f or not p:
        return None, f, p
    return H.median(p) / H.median(f), f, p


def timing(f):
    """How an FLCC record was timed, in words."""
    if f.get("timing") == "events":
        return "both by CUDA events"
    return "FLCC on the host clock" if H.device_resident(f) else "FLCC incl. transfers"


def verdict(x, need, cmp=">="):
    if x is None:
        return "not measured"
    ok = x >= need if cmp == ">=" else x <= need
    return "**met**" if ok else "**not met**"


def rounds_cell(t_recs, op, dim, template, region, peer, need, sweep_ratio=None, method="auto"):
    """(measured, verdict) from the alternating rounds of t_cpu_targets (median ratio, judged)
    when they were run, else from the sweep's single ratio. Images: 2000² and 100³."""
    image = (2000, 2000) if dim == 2 else (100, 100, 100)
    rr = T.round_ratios(t_recs, op, dim, image, template, region, peer, method)
    if not rr:
        return ratio(sweep_ratio), verdict(sweep_ratio, need)
    vals = [rr[k] for k in sorted(rr)]
    med = statistics.median(vals)
    text = (f"{ratio(med)} (median of {len(vals)} alternating rounds: "
            + ", ".join(ratio(v) for v in vals) + ")")
    if sweep_ratio is not None:
        text += f"; {ratio(sweep_ratio)} in (a)"
    return text, verdict(med, need)


def targets(host, device, planner):
    rows = []
    a = [r for r in host if r.get("experiment") == "a_template_sweep"]
    rounds = [r for r in host if r.get("experiment") == "t_cpu_targets"]
    T2 = (2000, 2000)
    x, f, p = peer_ratio(a, "opencv.matchTemplate", op="lcorr", dim=2, image=T2, template=(16, 16),
                         region="valid", type="single")
    rows.append(["CPU LCC 2000², 16×16 ≥ 5× OpenCV matchTemplate (SINGLE)",
                 *rounds_cell(rounds, "lcorr", 2, 16, "valid", "opencv.matchTemplate", 5, x)])
    for op, dim, _, t, region, peer, need, method in T.FORCED:
        rows.append([f"CPU LCC 2000², {t}×{t} ≥ {need}× OpenCV matchTemplate, `{method}` forced",
                     *rounds_cell(rounds, op, dim, t, region, peer, need, method=method)])
    for n in (32, 48, 64):
        x, _, _ = peer_ratio(a, "opencv.matchTemplate", op="lcorr", dim=2, image=T2,
                             template=(n, n), region="valid", type="single")
        rows.append([f"CPU LCC 2000², {n}×{n} ≥ 3× OpenCV matchTemplate (SINGLE)",
                     *rounds_cell(rounds, "lcorr", 2, n, "valid", "opencv.matchTemplate", 3, x)])
    xs = {}
    for t in range(2, 33):
        xs[t], _, _ = peer_ratio(a, "opencv.matchTemplate", op="lcorr", dim=2, image=T2,
                                 template=(t, t), region="valid", type="single")
    have = {t: v for t, v in xs.items() if v is not None}
    if len(have) == 31:
        tmin = min(have, key=have.get)
        rows.append(["CPU LCC 2000², every template 2..32 ≥ 3× OpenCV (SINGLE)",
                     f"min {ratio(have[tmin])} at {tmin}×{tmin}", verdict(have[tmin], 3)])
    else:
        rows.append(["CPU LCC 2000², every template 2..32 ≥ 3× OpenCV (SINGLE)",
                     f"{len(have)}/31 templates measured", "not measured"])
    x, _, _ = peer_ratio(a, "skimage.match_template", op="lcorr", dim=3, image=(100, 100, 100),
                         template=(8, 8, 8), region="valid", type="single")
    rows.append(["CPU 3D LCC 100³, 8³ ≥ 5× skimage match_template (SINGLE)",
                 *rounds_cell(rounds, "lcorr", 3, 8, "valid", "skimage.match_template", 5, x)])
    for n in (4, 8):
        x, _, _ = peer_ratio(a, "opencv.filter2D", op="conv", dim=2, image=T2, template=(n, n),
                             region="same", type="single")
        rows.append([f"CPU convolution 2000², {n}×{n} same ≥ 1× cv2.filter2D (SINGLE)",
                     *rounds_cell(rounds, "conv", 2, n, "same", "opencv.filter2D", 1, x)])
    x, _, _ = peer_ratio(a, "scipy.fftconvolve", op="conv", dim=2, image=T2, template=(32, 32),
                         region="full", type="single")
    rows.append(["CPU convolution 2000², 32×32 full ≥ 2× scipy fftconvolve (SINGLE)",
                 *rounds_cell(rounds, "conv", 2, 32, "full", "scipy.fftconvolve", 2, x)])

    # GPU: FLCC's device timings come from flcc-bench with host buffers (transfers included)
    # unless a record is device-resident (--memory device); a ratio met that way is met a fortiori.
    note = lambda f: "" if not f or H.device_resident(f) else " (FLCC incl. transfers)"
    g = device
    for t, need in ((16, 5), (4, 3), (8, 3), (32, 3)):
        x, f, p = peer_ratio(g, "npp.CrossCorrFull_NormLevel_32f", op="lcorr", dim=2, image=T2,
                             template=(t, t), region="full", type="single")
        text = ratio(x) + note(f)
        if x is not None:
            text += f" ({ms(H.median(f))} vs {ms(H.median(p))} ms, {timing(f)})"
        xw, fw, pw = peer_ratio(g, "npp.CrossCorrFull_NormLevel_32f (wall)", op="lcorr", dim=2,
                                image=T2, template=(t, t), region="full", type="single")
        if xw is not None:
            text += f"; on the host clock, each call waited for: {ratio(xw)} ({ms(H.median(fw))} vs {ms(H.median(pw))} ms)"
        rows.append([f"GPU LCC 2000², {t}×{t} full ≥ {need}× NPP CrossCorrFull_NormLevel_32f",
                     text, verdict(x, need)])
    for t in (4, 8, 16, 32):
        cands = []
        for peer in ("cupy.fftconvolve", "cupy.ndimage.correlate"):
            x, f, p = peer_ratio(g, peer, op="conv", dim=2, image=T2, template=(t, t), region="same",
                                 type="single")
            if x is not None:
                cands.append((x, peer, f))
        if cands:
            x, peer, f = min(cands)   # against the best (fastest) peer = the smallest ratio
            rows.append([f"GPU convolution 2000², {t}×{t} same ≥ 2× best of CuPy fftconvolve / "
                         f"ndimage.correlate", f"{ratio(x)} vs {peer}{note(f)}", verdict(x, 2)])
        else:
            rows.append([f"GPU convolution 2000², {t}×{t} same ≥ 2× best of CuPy peers", "–",
                         "not measured"])
    # stream of 100 host frames vs the PCIe bound
    s = next((r for r in g if r.get("bench") == "flcc" and r.get("requested") == "auto"
              and r["type"] == "stream" and r["frames"] >= 100 and r["image"] == [2000, 2000]
              and not H.device_resident(r)), None)
    bw = {k: next((r for r in g if r.get("bench") == "cuda.memcpy." + k), None)
          for k in ("h2d", "d2h", "bidir")}
    if s and bw["h2d"] and bw["d2h"]:
        out_elems = 1
        for n, t in zip(s["image"], s["template"]):
            out_elems *= {"full": n + t - 1, "same": n, "valid": n - t + 1}[s["region"]]
        in_b, out_b = 4 * s["image"][0] * s["image"][1], 4 * out_elems
        # The copy engines are full duplex: frames in and results out move at once. The bound
        # is the largest of (in + out) / both-ways rate and each direction alone.
        bounds = [in_b / (bw["h2d"]["gbps"] * 1e9), out_b / (bw["d2h"]["gbps"] * 1e9)]
        if bw["bidir"]:
            bounds.append((in_b + out_b) / (bw["bidir"]["gbps"] * 1e9))
        bound = max(bounds)
        x = H.median(s) / bound
        rates = ", ".join(f"{k} {r['gbps']:.1f}" for k, r in bw.items() if r)
        rows.append([f"GPU stream of {s['frames']} host frames 2000², {s['op']} {dims(s['template'])} "
                     f"{s['region']}, within 1.25× of the PCIe bound",
                     f"{x:.2f}× the bound ({ms(H.median(s))} ms/frame, bound {ms(bound)} ms; "
                     f"{rates} GB/s)", verdict(x, 1.25, "<=")])
    else:
        rows.append(["GPU stream of 100 host frames 2000² within 1.25× of the PCIe bound", "–",
                     "not measured"])
    x, f, _ = peer_ratio(g, "cupy.fftconvolve", op="lcorr", dim=3, image=(256, 256, 256),
                         template=(8, 8, 8), region="full", type="single",
                         peer_kw=dict(op="conv", dim=3, image=(256, 256, 256), template=(8, 8, 8),
                                      region="full", type="single"))
    rows.append(["GPU 3D LCC 256³, 8³ full ≥ 3× cupyx fftconvolve (full)", ratio(x) + note(f),
                 verdict(x, 3)])
    # One row per results folder with a planner map: each map is one machine's (a report over
    # several folders would otherwise show the first folder's map as if it were the only one).
    for where, (frac, ok, total) in planner:
        rows.append([f"Planner pick within 10% of the fastest on ≥ 95% of the grid (CPU{where})",
                     f"{ok}/{total} cells ({100 * frac:.0f}%)", verdict(frac, 0.95)])
    if not planner:
        rows.append(["Planner pick within 10% of the fastest on ≥ 95% of the grid", "–", "not measured"])
    return table(["target (DESIGN.md section 5)", "measured", "verdict"], rows) + "\n"


# ---------------------------------------------------------------- main

def machines(recs):
    seen, out = set(), []
    for r in recs:
        m, v = r.get("machine"), r.get("versions")
        if m and (m.get("cpu"), m.get("gpu")) not in seen:
            seen.add((m.get("cpu"), m.get("gpu")))
            out.append(H.machine_caption([r]))
    vers = {}
    for r in recs:
        for k, val in (r.get("versions") or {}).items():
            vers.setdefault(k, val)
    return out, vers


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--results", action="append", help="results folder (repeatable); default: all")
    a = p.parse_args()
    dirs = a.results or sorted(d for d in glob.glob(os.path.join(HERE, "results", "*")) if os.path.isdir(d))
    if not dirs:
        sys.exit("report.py: no results (run bench/run_cpu.sh)")
    out = ["# FLCC benchmark report", ""]
    all_host, all_device, planner = [], [], []
    for d in dirs:
        files = {os.path.basename(f)[:-6]: H.load(f) for f in sorted(glob.glob(os.path.join(d, "*.jsonl")))}
        recs = [r for rs in files.values() for r in rs]
        if not recs:
            continue
        host = [r for r in recs if r.get("platform", "host") == "host"]
        device = [r for r in recs if r.get("platform") == "device"]
        all_host += host
        all_device += device
        caps, vers = machines(recs)
        out += [f"## Results in `{os.path.relpath(d, os.path.dirname(HERE))}`", ""]
        out += [f"Machine: {c}" for c in caps] + [""]
        if vers:
            out += ["Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(vers.items())), ""]
        for name, title, xaxis in (("a_template_sweep", "(a) template sweep", "template"),
                                   ("a_template_sweep_device", "(a) template sweep, GPU", "template"),
                                   ("b_size_sweep", "(b) size sweep", "image"),
                                   ("b_size_sweep_device", "(b) size sweep, GPU", "image"),
                                   ("g_gpu_targets", "GPU targets", "template")):
            if files.get(name):
                out += [f"### {title}", "", sweep_tables(files[name], title, xaxis)]
        if "c_cpu_vs_gpu" in files:
            out += ["### (c) CPU against GPU", "", cpu_gpu_table(files["c_cpu_vs_gpu"])]
        if files.get("d_threads"):
            out += ["### (d) thread scaling", "", threads_tables(files["d_threads"])]
        if files.get("e_planner_map"):
            text, pl = planner_tables(files["e_planner_map"])
            if pl and pl[0] is not None:
                planner.append((f", {os.path.basename(d)}" if len(dirs) > 1 else "", pl))
            out += ["### (e) planner's method selection", "", text]
    out += ["## DESIGN.md section 5 targets", "",
            "Each ratio is peer time / FLCC time from one run (> 1: FLCC faster); CPU rows with "
            "rounds pair FLCC and the peer seconds apart, in alternating rounds "
            "(bench/experiments/t_cpu_targets.py), and are judged on the median. The stream row is "
            "FLCC's time per frame / the PCIe bound per frame: the largest of (bytes in + bytes "
            "out) / the both-ways-at-once pinned bandwidth, bytes in / host→device bandwidth and "
            "bytes out / device→host bandwidth, all measured in the same GPU run. GPU rows marked "
            "'incl. transfers' compare FLCC timed on host buffers with device-resident peers.", "",
            targets(all_host, all_device, planner)]
    print("\n".join(out))


if __name__ == "__main__":
    main()
