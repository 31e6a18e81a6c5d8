#!/usr/bin/env bash
# FLCC_WISDOM_FILE: a first process plans (MEASURE) and writes its decision to the file; a
# second process finds it there (WISDOM_ONLY succeeds, nothing timed, same method); a corrupt
# file is ignored (MEASURE still plans). Paths that are not wisdom files (a FIFO, a directory, a
# file of other data, a huge file) are neither waited on nor replaced, and no temporary file is
# left anywhere. Wisdom exported by a fresh process imports back, there and in another process.
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
# The file was not wisdom: left as it was.
[ "$(cat "$FLCC_WISDOM_FILE")" = "not wisdom" ]

# Each plans promptly (a blocked read would hit the timeout) and leaves the path as it was.
mkfifo "$dir/fifo"
FLCC_WISDOM_FILE=$dir/fifo timeout 120 "$child" "[.child]" | grep -q method=
[ -p "$dir/fifo" ]
mkdir "$dir/sub"
FLCC_WISDOM_FILE=$dir/sub timeout 120 "$child" "[.child]" | grep -q method=
[ -d "$dir/sub" ] && [ -z "$(ls -A "$dir/sub")" ]
printf 'precious data\n' > "$dir/notes.txt"
FLCC_WISDOM_FILE=$dir/notes.txt timeout 120 "$child" "[.child]" | grep -q method=
[ "$(cat "$dir/notes.txt")" = "precious data" ]
truncate -s 8G "$dir/huge"
FLCC_WISDOM_FILE=$dir/huge timeout 120 "$child" "[.child]" | grep -q method=
[ "$(stat -c %s "$dir/huge")" = 8589934592 ]
[ -z "$(tr -d '\0' < <(head -c 4096 "$dir/huge"))" ]
echo "hazards: no wait, nothing replaced"

# Wisdom exported in a fresh process imports back (the same process, then another).
unset FLCC_WISDOM_FILE
FLCC_TEST_WISDOM_PATH=$dir/fresh "$child" "[.fresh]" | grep -q "fresh export OK"
FLCC_TEST_WISDOM_PATH=$dir/fresh FLCC_TEST_IMPORT=1 "$child" "[.fresh]" | grep -q "fresh import OK"
echo "fresh export imports back"

# Nothing but what the test made: no temporary files.
left=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
echo "left: $left"
[ "$left" = "fifo fresh huge notes.txt sub wisdom " ]
echo "wisdom file test OK"
