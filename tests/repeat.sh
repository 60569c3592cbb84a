#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Run the whole suite (tests/run.sh) N times in a row and report each run's
# failures and the totals: a flaky test shows up here, not in CI.
#   tests/repeat.sh [N]     N runs (default 10)
#   LOAD=1                  keep every core busy meanwhile: one busy loop per
#                           online CPU at normal priority, started before the
#                           first run and stopped (by PID) after the last
#   TESTS="a b"             only these tests (as tests/run.sh)
# Each run's output is kept in $OUTPUT/repeat/run-<i>.log.  Exit 0 only when
# every run passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUTPUT=${OUTPUT:-$here/../.output}
export OUTPUT
n=${1:-${N:-10}}
load=${LOAD:-0}
case $n in '' | *[!0-9]* | 0)
	echo "usage: $0 [N]   (N >= 1 runs; LOAD=1 for a CPU hog per core)" >&2
	exit 2 ;;
esac
logdir=$OUTPUT/repeat
mkdir -p "$logdir"

hogs=()
stop_hogs() {
	[ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM
if [ "$load" = 1 ]; then
	cpus=$(nproc)
	for ((c = 0; c < cpus; c++)); do
		sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	echo "load: ${#hogs[@]} busy loops (one per CPU), PIDs ${hogs[*]}"
fi

declare -A per_test=()
clean=0
for ((i = 1; i <= n; i++)); do
	log=$logdir/run-$i.log
	start=$(date +%s)
	"$here/run.sh" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	summary=$(grep -E '^[0-9]+ passed, ' "$log" | tail -1)
	failed=$(sed -n 's/^FAIL \([^ ]*\).*/\1/p' "$log" | tr '\n' ' ')
	if [ $rc -eq 0 ]; then
		clean=$((clean + 1))
		printf 'run %d/%d: %s (%ds)\n' "$i" "$n" "${summary:-no summary}" "$secs"
	else
		printf 'run %d/%d: %s (%ds), failed: %s (log %s)\n' "$i" "$n" \
			"${summary:-no summary (exit $rc)}" "$secs" "${failed:-?}" "$log"
		for t in $failed; do per_test[$t]=$((${per_test[$t]:-0} + 1)); done
	fi
done
stop_hogs
echo "----"
printf '%d runs%s: %d passed every test, %d had failures\n' "$n" \
	"$([ "$load" = 1 ] && echo ' under load')" "$clean" $((n - clean))
for t in "${!per_test[@]}"; do
	printf '  %s failed in %d of %d runs\n' "$t" "${per_test[$t]}" "$n"
done
[ $clean -eq "$n" ]
