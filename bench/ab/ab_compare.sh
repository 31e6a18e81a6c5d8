#!/usr/bin/env bash
# A/B comparison of two builds of FLCC on this machine (a change that must not alter behaviour):
#   1. the cost models: bench/ab/estimates_dump.c, compiled against each build's libflcc.so,
#      lists every ESTIMATE candidate and estimate of a grid of problems (host, and device when
#      a GPU is usable); the two lists must be identical;
#   2. the headline benchmarks: flcc-bench of each build on a fixed set of problems (MEASURE
#      planning, the planner's pick), the builds alternating for ROUNDS rounds; prints each
#      build's median time and its pick per problem, and the ratio new/old.
# Usage: bench/ab/ab_compare.sh OLD_BUILD NEW_BUILD [ROUNDS]   (build folders with libflcc.so
# and bench/flcc-bench; the include folder is this checkout's). Writes ab_*.txt/jsonl to $OUT
# (default out/ab). Exit status 1 when the estimates differ.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) rounds=${3:-5}
out=${OUT:-$root/out/ab}
mkdir -p "$out"
gpu=0
command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1 && gpu=1

status=0
for b in old new; do
  dir=${!b}
  cc -O2 -o "$out/estimates_$b" "$root/bench/ab/estimates_dump.c" -I"$root/include" \
    -L"$dir" -lflcc -Wl,-rpath,"$dir"
done
platforms=(host)
[ "$gpu" = 1 ] && platforms+=(device)
for platform in "${platforms[@]}"; do
  for b in old new; do
    # A shared FFTW wisdom file: ESTIMATE plans make their executors, and FFTW_MEASURE choices
    # made by timing must not differ between the two runs.
    "$out/estimates_$b" "$platform" 2 "$out/fftw-wisdom-$platform" > "$out/ab_estimates_${platform}_$b.txt"
  done
  if cmp -s "$out/ab_estimates_${platform}_old.txt" "$out/ab_estimates_${platform}_new.txt"; then
    echo "estimates ($platform): identical, $(grep -c '^  ' "$out/ab_estimates_${platform}_new.txt") candidates of $(grep -vc '^  ' "$out/ab_estimates_${platform}_new.txt") problems"
  else
    echo "estimates ($platform): DIFFER"
    diff "$out/ab_estimates_${platform}_old.txt" "$out/ab_estimates_${platform}_new.txt" | head -20
    status=1
  fi
done

# The headline problems: "op image template region extra-options".
problems=(
  "lcorr 2000x2000 16 same --platform host"
  "lcorr 2000x2000 32 same --platform host"
  "conv 2000x2000 32 same --platform host"
  "lcorr 128x128x128 8 same --platform host"
  "lcorr 2000x2000 16 same --platform host --type stream --frames 4"
)
if [ "$gpu" = 1 ]; then
  problems+=(
    "lcorr 2000x2000 16 same --platform device --memory device --timing events"
    "lcorr 2000x2000 32 same --platform device --memory device --timing events"
    "conv 2000x2000 32 same --platform device --memory device --timing events"
    "lcorr 256x256x256 8 same --platform device --memory device --timing events"
    "conv 128x128x128 16 same --platform device --memory device --timing events"
    "lcorr 2000x2000 16 same --platform device --type stream --frames 8"
  )
fi
log="$out/ab_bench.jsonl"
: > "$log"
for ((r = 0; r < rounds; ++r)); do
  for prob in "${problems[@]}"; do
    read -r op image templ region extra <<< "$prob"
    for b in old new; do
      [ $((r % 2)) = 1 ] && { [ "$b" = old ] && b=new || b=old; }   # alternate who goes first
      dir=${!b}
      line=$("$dir/bench/flcc-bench" --op "$op" --image "$image" --template "$templ" \
        --region "$region" $extra --repeats 20 --warmup 3)
      echo "{\"build\":\"$b\",\"round\":$r,\"problem\":\"$prob\",\"result\":$line}" >> "$log"
    done
  done
done
python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
probs = list(dict.fromkeys(r["problem"] for r in rows))
print(f"{'problem':62s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}  picks old | new")
for p in probs:
    t = {b: [r["result"]["seconds"]["median"] for r in rows if r["problem"] == p and r["build"] == b]
         for b in ("old", "new")}
    m = {b: sorted({r["result"]["method"] for r in rows if r["problem"] == p and r["build"] == b})
         for b in ("old", "new")}
    o, n = statistics.median(t["old"]) * 1e3, statistics.median(t["new"]) * 1e3
    print(f"{p:62s} {o:9.4f} {n:9.4f} {n / o:8.3f}  {','.join(m['old'])} | {','.join(m['new'])}")
PY
exit $status
