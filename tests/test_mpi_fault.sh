#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# An MPI job through the fault harness: the project's MPI program
# (tests/mpi/xw_mpi_test.c, every byte checked) with two ranks on two
# namespace hosts (set-up (a) of test_mpi.sh) whose data link crosses the
# fault harness's impairing middle (tests/lib/fault.h, held by
# tests/mpi/fault_hosts.c): 2% of the xdpwake frames dropped in each
# direction, and every 50th frame reordered behind the next 2.  Besides
# every part of the program passing, it asserts that the middle really
# dropped and reordered frames both ways (its counters), and that both
# ranks' endpoints retransmitted with no connection given up or reset (the
# endpoint statistics the provider logs at close with FI_LOG_LEVEL=info).
# XWF_SEED repeats a run's loss pattern (the seed is printed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}

. "$here/mpi/common.sh"

log=$TMP/fault.log
fault_hosts 20 50 2 || exit 1
mpirun_hosts "$log" -x FI_LOG_LEVEL=info -x FI_LOG_PROV=xdpwake
rc=$?
expect "2 ranks on 2 namespace hosts, 2% loss and reordering both ways" "$log" "$rc" 2
counters=$(fault_counters) || { echo "FAIL: no counters from the fault harness"; exit 1; }
sed 's/^/    /' <<<"$counters"

# field NAME LINE: the value of NAME=N or "NAME N" in LINE
field() { sed -nE "s/.*[ ]$1[= ]([0-9]+).*/\1/p" <<<"$2"; }
for dir in a2b b2a; do
	l=$(grep "^counters $dir " <<<"$counters")
	d=$(field dropped "$l") h=$(field held "$l")
	if [ "${d:-0}" -gt 0 ] && [ "${h:-0}" -gt 0 ]; then
		echo "ok:   $dir: the middle dropped $d frames and reordered $h"
	else
		echo "FAIL: $dir: the middle dropped ${d:-?} and reordered ${h:-?} frames"
		fail=1
	fi
done
stats=$(grep -a 'endpoint .* closed:' "$log")
if [ "$(grep -c . <<<"$stats")" -ne 2 ]; then
	echo "FAIL: expected the statistics of 2 endpoints in the log"
	sed 's/^/    | /' <<<"$stats"
	fail=1
fi
while IFS= read -r l; do
	[ -n "$l" ] || continue
	r=$(field retransmits "$l") to=$(field conn_timeouts "$l") rs=$(field peer_resets "$l")
	ep=$(sed -nE 's/.*endpoint ([^ ]+) closed.*/\1/p' <<<"$l")
	if [ "${r:-0}" -gt 0 ] && [ "${to:-1}" -eq 0 ] && [ "${rs:-1}" -eq 0 ]; then
		echo "ok:   endpoint $ep: $r frames retransmitted, no connection given up or reset"
	else
		echo "FAIL: endpoint $ep: retransmits ${r:-?} conn_timeouts ${to:-?} peer_resets ${rs:-?}"
		fail=1
	fi
done <<<"$stats"
exit $fail
