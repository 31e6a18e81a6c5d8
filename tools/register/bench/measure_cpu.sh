#!/usr/bin/env bash
# Throughput of flcc-register against the input's bound and the Python baseline, issue 31's
# figures: the synthetic EBSD-like set (default 1,000 frames of 900 x 900 uint16, 49 subregions of
# 128 x 128, a 96 x 96 template searched for in each, 5 x 5 quadratic), page cache warm, in
# alternating rounds so that a noisy machine affects all three alike.
#
#   tools/register/bench/measure_cpu.sh BUILD_DIR DATA_DIR [ROUNDS] [FRAMES] > results.jsonl
#
# DATA_DIR receives the set (made once, kept). Per round and run, one JSON line:
#   run       decode-only (flcc-register --decode-only: reading and decoding alone),
#             flcc-register (the whole registration) or python (python_baseline.py)
#   seconds   wall time of the whole process (start-up, planning and file inspection included)
#   fps       frames / seconds
#   pipeline_fps  the rate flcc-register reports for its pipeline alone (after planning)
#   rms       RMS offset error against the truth, pixels (not for decode-only)
# The Python baseline needs numpy, opencv-python-headless and tifffile: PYTHON names the
# interpreter (default: python3; "none" leaves the baseline out). REGISTER_ARGS adds options to
# the flcc-register runs (on a GPU machine: REGISTER_ARGS="--platform device").
set -euo pipefail
build=$1
data=$2
rounds=${3:-3}
frames=${4:-1000}
tools=$build/tools/register
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
read -r -a extra <<< "${REGISTER_ARGS:-}"
grid=(--roi-size 128 --roi-step 128 --roi-margin 2)

if [ ! -f "$data/truth.csv" ]; then
    echo "measure_cpu: writing the set to $data" >&2
    "$tools/flcc-register-synth" make --kind ebsd --frames "$frames" --size 900 "${grid[@]}" \
        --max-displacement 4 --feature-size 4 --out "$data"
fi
# Warm the page cache.
cat "$data"/reference.tif "$data"/frames/*.tif > /dev/null

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
json() {   # run round seconds pipeline_fps rms
    awk -v run="$1" -v round="$2" -v s="$3" -v p="$4" -v rms="$5" -v n="$frames" \
        'BEGIN { printf "{\"run\":\"%s\",\"round\":%d,\"frames\":%d,\"seconds\":%.3f,\"fps\":%.2f,\"pipeline_fps\":%s,\"rms\":%s}\n", run, round, n, s, n / s, p, rms }'
}
pipeline_rate() { sed -n 's/.* in [0-9.]* s, \([0-9.]*\) frames\/s.*/\1/p' "$1" | tail -n 1; }
rms_of() { "$tools/flcc-register-synth" compare "$data/truth.csv" "$1" | sed -n 's/.*RMS error \([0-9.]*\) px.*/\1/p'; }

for round in $(seq 1 "$rounds"); do
    t0=$(now)
    "$tools/flcc-register" ebsd "$data/reference.tif" "@$data/frames.txt" "${grid[@]}" --template-size 96 \
        --decode-only 2> "$data/decode.err"
    t1=$(now)
    json decode-only "$round" "$(elapsed "$t0" "$t1")" "$(pipeline_rate "$data/decode.err")" null

    t0=$(now)
    "$tools/flcc-register" ebsd "$data/reference.tif" "@$data/frames.txt" "${grid[@]}" --template-size 96 \
        --refine quadratic "${extra[@]}" -o "$data/flcc.csv" 2> "$data/flcc.err"
    t1=$(now)
    json flcc-register "$round" "$(elapsed "$t0" "$t1")" "$(pipeline_rate "$data/flcc.err")" "$(rms_of "$data/flcc.csv")"

    [ "$python" = none ] && continue
    t0=$(now)
    "$python" "$here/python_baseline.py" "$data/reference.tif" "$data/frames.txt" "${grid[@]}" --template-size 96 \
        -o "$data/python.csv"
    t1=$(now)
    json python "$round" "$(elapsed "$t0" "$t1")" null "$(rms_of "$data/python.csv")"
done
