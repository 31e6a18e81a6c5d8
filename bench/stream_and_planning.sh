#!/usr/bin/env bash
# The CPU measurements of the Fourier/planner issue that are not sweeps:
#   1. STREAM against SINGLE per frame, same solver forced, runs alternated (5 rounds) so that
#      the machine's drift hits both alike; the gain is the median over rounds;
#   2. MEASURE planning time of LCC 2000²/16² (valid), three fresh processes without wisdom;
#   3. a wisdom hit: the same plan made again with FLCC_WISDOM_FILE naming the file the first
#      process wrote, and with that file imported first (flcc-bench --wisdom);
#   4. peak resident memory of LCC 16384², 32×32 (full) and of LCC 512³, 8³ (full).
# Needs build-bench/bench/flcc-bench (bench/run_cpu.sh builds it) and /usr/bin/time.
#
#   bench/stream_and_planning.sh        # about 2 minutes on 2 cores
#
# Writes bench/results/<machine tag>/f_stream_planning.jsonl and prints a summary.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fb=${FLCC_BENCH:-$root/build-bench/bench/flcc-bench}
py=${PYTHON:-$root/build-bench/venv/bin/python}
[ -x "$py" ] || py=python3
tag=${FLCC_BENCH_TAG:-$("$py" -c "import sys; sys.path.insert(0, '$root/bench/peers'); import common; print(common.machine_tag())")}
out="$root/bench/results/$tag/f_stream_planning.jsonl"
mkdir -p "$(dirname "$out")"
: > "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
note() { sed "s/}\$/,\"measure\":\"$1\"}/" >> "$out"; }

# 1. STREAM against SINGLE
problems=(
    "--op lcorr --image 2000x2000 --template 16 --region valid --method host.direct2.k16"
    "--op lcorr --image 2000x2000 --template 32 --region valid --method host.fourier2.t256"
    "--op conv --image 2000x2000 --template 32 --region full --method host.fourier2.t256"
    "--op lcorr --image 100x100x100 --template 8 --region valid --method host.direct3.k8"
    "--op lcorr --image 100x100x100 --template 8 --region valid --method host.fourier3.t64"
)
for round in 1 2 3 4 5; do
    for p in "${problems[@]}"; do
        # shellcheck disable=SC2086
        "$fb" $p --type single --repeats 7 --warmup 1 | note "stream_gain"
        # shellcheck disable=SC2086
        "$fb" $p --type stream --frames 10 --repeats 3 --warmup 1 | note "stream_gain"
    done
done

# 2. MEASURE planning time, no wisdom
for i in 1 2 3; do
    env -u FLCC_WISDOM_FILE "$fb" --op lcorr --image 2000x2000 --template 16 --region valid \
        --rigor measure --repeats 1 | note "plan_measure"
done

# 3. a wisdom hit
wisdom="$tmp/wisdom.txt"
FLCC_WISDOM_FILE="$wisdom" "$fb" --op lcorr --image 2000x2000 --template 16 --region valid \
    --rigor measure --repeats 1 | note "wisdom_first"
for i in 1 2 3; do
    FLCC_WISDOM_FILE="$wisdom" "$fb" --op lcorr --image 2000x2000 --template 16 --region valid \
        --rigor measure --repeats 1 | note "wisdom_hit"
done
# ... and the same file imported by the program first (flcc_wisdom_import_file, FFTW's model):
# the import pays FFTW's set-up and its wisdom text, the plan then only finds its decision.
# Ten processes: the median and the largest are what the target is judged on.
for i in $(seq 10); do
    env -u FLCC_WISDOM_FILE "$fb" --wisdom "$wisdom" --op lcorr --image 2000x2000 --template 16 \
        --region valid --rigor measure --repeats 1 | note "wisdom_imported"
done

# 4. peak resident memory of large problems
for p in "--image 16384x16384 --template 32" "--image 512x512x512 --template 8"; do
    # shellcheck disable=SC2086
    /usr/bin/time -v "$fb" --op lcorr $p --region full --repeats 1 --warmup 0 \
        > "$tmp/line" 2> "$tmp/time"
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
    sed "s/}\$/,\"peak_rss_kb\":$kb}/" "$tmp/line" | note "large"
done

"$py" - "$out" <<'EOF'
import json, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def key(r):
    return (r["op"], r["region"], "x".join(map(str, r["image"])), "x".join(map(str, r["template"])), r["method"])
print("STREAM against SINGLE (ms per frame, median over 5 alternated rounds):")
print("| problem | solver | SINGLE | STREAM of 10 | gain |")
print("|---|---|---|---|---|")
by = {}
for r in recs:
    if r["measure"] == "stream_gain":
        by.setdefault(key(r), {}).setdefault(r["type"], []).append(r["seconds"]["median"] * 1e3)
for k, v in by.items():
    s, t = statistics.median(v["single"]), statistics.median(v["stream"])
    gains = [(a - b) / a for a, b in zip(v["single"], v["stream"])]
    print(f"| {k[0]} {k[1]} {k[2]}, {k[3]} | {k[4]} | {s:.3g} | {t:.3g} | "
          f"{100 * statistics.median(gains):+.0f}% (rounds {100 * min(gains):+.0f}..{100 * max(gains):+.0f}%) |")
for m, what in (("plan_measure", "MEASURE planning, LCC 2000²/16² valid"),
                ("wisdom_first", "first plan with FLCC_WISDOM_FILE (measures, records)"),
                ("wisdom_hit", "plan found in wisdom"),
                ("wisdom_imported", "plan found in wisdom imported first")):
    v = [r for r in recs if r["measure"] == m]
    t = [r["plan_seconds"] * 1e3 for r in v]
    spread = f" (median {statistics.median(t):.3g}, largest {max(t):.3g} ms)" if len(t) > 3 else ""
    print(f"{what}: " + ", ".join(f"{r['plan_seconds'] * 1e3:.3g} ms ({r['method']})" for r in v) + spread)
v = [r for r in recs if r["measure"] == "wisdom_imported"]
print("... its import (flcc_wisdom_import_file): " +
      ", ".join(f"{r['wisdom_import_seconds'] * 1e3:.3g} ms" for r in v))
for r in recs:
    if r["measure"] == "large":
        print(f"LCC {'x'.join(map(str, r['image']))}, {'x'.join(map(str, r['template']))} full: "
              f"{r['method']}, {r['seconds']['median']:.3g} s, peak RSS {r['peak_rss_kb'] * 1024 / 1e9:.2f} GB")
EOF
