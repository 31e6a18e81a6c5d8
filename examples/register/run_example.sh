#!/usr/bin/env bash
# flcc-register end to end: writes synthetic EBSD-like and PIV-like sets with known sub-pixel
# offsets, registers them, and reports the error of the offsets against the truth.
#
#   examples/register/run_example.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR is the CMake build folder (default: build); WORK_DIR receives the sets and the
# offsets (default: a new temporary folder, removed at the end). Fails when an RMS error exceeds
# its bound (EBSD-like: 0.03 px; PIV-like pairs: 0.05 px).
set -euo pipefail
build=${1:-build}
tools=$build/tools/register
if [ ! -x "$tools/flcc-register" ] || [ ! -x "$tools/flcc-register-synth" ]; then
    echo "run_example: build flcc-register and flcc-register-synth in $build first" >&2
    exit 1
fi
if [ $# -ge 2 ]; then
    work=$2
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

echo "== EBSD-like: 20 frames of 384 x 384, 9 subregions of 128 x 128, each frame against the reference"
"$tools/flcc-register-synth" make --kind ebsd --frames 20 --size 384 --roi-size 128 --roi-step 128 \
    --max-displacement 4 --feature-size 4 --out "$work/ebsd"
# A 96 x 96 template from the centre of each reference subregion, searched for in the frame's
# subregion (+-16 px), refined by the 5 x 5 least-squares quadratic.
"$tools/flcc-register" ebsd "$work/ebsd/reference.tif" "@$work/ebsd/frames.txt" \
    --roi-size 128 --template-size 96 --refine quadratic -o "$work/ebsd/offsets.csv"
head -n 4 "$work/ebsd/offsets.csv"
"$tools/flcc-register-synth" compare "$work/ebsd/truth.csv" "$work/ebsd/offsets.csv" --max-rms 0.03

echo "== PIV-like: 10 pairs of 384 x 384 particle images, 9 windows of 128 x 128, one stacked TIFF"
"$tools/flcc-register-synth" make --kind piv --frames 20 --size 384 --roi-size 128 --roi-step 128 \
    --max-displacement 4 --feature-size 3 --stack --out "$work/piv"
"$tools/flcc-register" pairs "$work/piv/frames.tif" --roi-size 128 --template-size 96 --refine gaussian \
    --format jsonl -o "$work/piv/offsets.jsonl"
head -n 2 "$work/piv/offsets.jsonl"
"$tools/flcc-register" pairs "$work/piv/frames.tif" --roi-size 128 --template-size 96 --refine gaussian \
    --quiet -o "$work/piv/offsets.csv"
"$tools/flcc-register-synth" compare "$work/piv/truth.csv" "$work/piv/offsets.csv" --max-rms 0.05
