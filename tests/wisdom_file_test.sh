#!/usr/bin/env bash
# FLCC_WISDOM_FILE: a first process plans (MEASURE) and writes its decision to the file; a
# second process finds it there (WISDOM_ONLY succeeds, nothing timed, same method); a corrupt
# file is ignored (MEASURE still plans).
set -euo pipefail
child=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export FLCC_WISDOM_FILE=$dir/wisdom
first=$("$child" "[.child]" | grep method=)
test -s "$FLCC_WISDOM_FILE"
second=$(FLCC_TEST_WISDOM_ONLY=1 "$child" "[.child]" | grep method=)
echo "first:  $first"
echo "second: $second"
[ "${first%% *}" = "${second%% *}" ]
[[ "$second" == *"candidates=1"* ]]
echo "not wisdom" > "$FLCC_WISDOM_FILE"
"$child" "[.child]" | grep -q method=
echo "wisdom file test OK"
