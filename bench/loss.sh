#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Recovery time under loss (issue 26): bench/loss.c through the fault
# harness, xdpwake and TCP in one run, then bench/loss_report.py.
#
#   bench/loss.sh [--quick] [--out DIR] [--only SUBSTR] [--seed N]
#
#   --quick      40 messages per direction (the full run: 300), 4 burst
#                rounds (full: 10): the whole matrix in a few minutes (before
#                the issue 26 fixes: ~5 min, 3 of them in the two 30 % rows;
#                the full run then takes well over half an hour)
#   --out DIR    where loss.json, loss.md and loss.png/svg go
#                (default bench/results)
#   --only S     only the rows whose name contains S ("10%", "burst", "tcp")
#   OUTPUT=dir   build directory (default ./.output)
#   PYTHON=path  a python3 with matplotlib (default /usr/bin/python3)
#
# It takes /tmp/xdpwake-net.lock for the run (unless XDPWAKE_NET_LOCK_HELD
# is set by a caller that holds it): its namespaces share the machine with
# the tests'.  Exit: 0 ok, 1 a row failed or bytes were wrong, 2 usage.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
OUTPUT=${OUTPUT:-$(dirname "$HERE")/.output}
out="$HERE/results" args=()

while [ $# -gt 0 ]; do
	case $1 in
	--quick) args+=(--quick) ;;
	--out) out=$2; shift ;;
	--only|--seed) args+=("$1" "$2"); shift ;;
	*) echo "usage: $0 [--quick] [--out DIR] [--only SUBSTR] [--seed N]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out"
bin="$OUTPUT/bench/loss"
[ -x "$bin" ] || { echo "loss.sh: $bin missing (make bench-loss)" >&2; exit 1; }
rc=0
if [ -n "${XDPWAKE_NET_LOCK_HELD:-}" ]; then
	"$bin" "${args[@]}" > "$out/loss.json" || rc=$?
else
	flock /tmp/xdpwake-net.lock "$bin" "${args[@]}" > "$out/loss.json" || rc=$?
fi
[ "$rc" -eq 77 ] && { echo "loss.sh: skipped (needs root, veth, tc)"; exit 0; }
"${PYTHON:-/usr/bin/python3}" "$HERE/loss_report.py" "$out/loss.json" --out "$out"
exit $((rc != 0))
