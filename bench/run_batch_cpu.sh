#!/usr/bin/env bash
# The batch workloads (flcc-batch-bench) and their peers (bench/peers/batch_peers.py) in one
# run, alternating FLCC and the peers for `rounds` rounds, into
# bench/results/<machine tag>/batch.jsonl (docs/performance.md, "Batches").
#
#   bench/run_batch_cpu.sh [rounds]      # default 2 rounds; about 3 minutes on a 2-core machine
#
# Environment: FLCC_BATCH_BENCH (default build/bench/flcc-batch-bench), PEERS_PYTHON (a Python
# with numpy, opencv-python-headless and scikit-image; default build-bench/venv/bin/python).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-2}
bench=${FLCC_BATCH_BENCH:-$root/build/bench/flcc-batch-bench}
py=${PEERS_PYTHON:-$root/build-bench/venv/bin/python}
tag=$(cd "$root/bench/peers" && "$py" -c "import common; print(common.machine_tag())")
out="$root/bench/results/$tag/batch.jsonl"
mkdir -p "$(dirname "$out")"
: > "$out"
for ((r = 0; r < rounds; ++r)); do
  for p in ebsd-search ebsd-full piv; do
    for refine in parabolic quadratic upsampled; do
      "$bench" --problem "$p" --refine "$refine" --frames 8 --repeats 5 >> "$out"
    done
  done
  (cd "$root/bench/peers" && "$py" batch_peers.py --frames 4 --repeats 5) >> "$out"
done
echo "run_batch_cpu: wrote $out"
