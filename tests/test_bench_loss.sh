#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# bench/loss.c --smoke: the loss benchmark's program through the fault
# harness at 5 % random loss both ways (xdpwake and TCP, both directions at
# once) and with a burst of 50 frames; it checks every byte at the
# receivers and exits non-zero when a message is wrong, missing or a row did
# not finish.  No time is judged (the benchmark measures, bench/loss.sh).
# Exit: 0 pass, 1 failure, 77 skip.
set -u

SRC=${XW_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
OUTPUT=${OUTPUT:-$SRC/.output}
B=$OUTPUT/bench/loss

[ -x "$B" ] || { echo "FAIL: $B not built (make tests)"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$B" --smoke > "$out"
rc=$?
[ "$rc" -eq 77 ] && exit 77
if [ "$rc" -ne 0 ]; then
	echo "FAIL: loss --smoke exited $rc"
	exit 1
fi
rows=$(grep -o '"completed":true,"errors":0' "$out" | wc -l)
if [ "$rows" -ne 6 ]; then
	echo "FAIL: $rows of 6 rows complete with every byte right"
	exit 1
fi
echo "ok: 6 rows (xdpwake and TCP at 5 % loss, bursts), every byte checked"
