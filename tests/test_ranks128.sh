#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# 64 ranks on each of two namespace hosts (issue 28): 128 processes, each
# with its own endpoint on its own queue of a 64-queue veth (XW_QUEUE_ANY,
# UDP encapsulation, the steered bridge of tests/mpi/hosts.sh standing in
# for a NIC's n-tuple rules), every one sending a small message (100 B) to
# every other and receiving one from each: 16,256 messages, every byte
# checked, 63 peers of each through the shared-memory path and 64 over the
# wire.  The ranks sleep in their waits (XW_MQ_WAIT=block), so 128 of them
# share two cores.  Checked per process: all 127 messages right, none bad,
# no frame on a wrong queue (drop_queue), nothing lost or corrupt on the
# local path; per host: the 64 processes took queues 0-63.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
N=${XW_RANKS_PER_HOST:-64}
MQ_TMP=xwr128
. "$here/lib/multiq.sh"

QUEUES=$N hosts 2 bridge || exit 1
ids1=() ids2=()
for i in $(seq 1 "$N"); do ids1+=("$i") ids2+=($((500 + i))); done
ALL=$(IFS=,; echo "${ids1[*]},${ids2[*]}")
t0=$(date +%s.%N)
# Host 2's ids (501-564) are beyond the endpoint count a 64-queue host's
# program takes by default (128): the process that attaches it asks for all.
export XW_MQ_SIZES=100 XW_MQ_WAIT=block XW_MQ_GIVE_UP_MS=60000 XDPWAKE_MAX_ENDPOINTS=1024
launch run - 1
finish 240
secs=$(echo "$(date +%s.%N) - $t0" | bc)

nbad=0
for h in 1 2; do
	if [ $h = 1 ]; then mine=("${ids1[@]}"); else mine=("${ids2[@]}"); fi
	queues=() loc=0 okall=0 omax=0
	for id in "${mine[@]}"; do
		if ! grep -q '^RESULT' "$D/out.$id"; then
			bad "process $id gave no result"
			show "$id"
			nbad=$((nbad + 1))
			[ $nbad -gt 5 ] && break 2
			continue
		fi
		queues+=("$(field "$id" queue)")
		ok=$(field "$id" ok)
		okall=$((okall + ok))
		[ "$ok" = $((2 * N - 1)) ] && [ "$(field "$id" bad)" = 0 ] ||
			bad "process $id: $ok of $((2 * N - 1)) messages right, $(field "$id" bad) bad"
		for k in drop_queue rx_bad local_lost local_rx_bad; do
			[ "$(field "$id" $k)" = 0 ] || bad "process $id: $k = $(field "$id" $k)"
		done
		[ "$(field "$id" local_rx)" -gt 0 ] || bad "process $id: nothing through the local path"
		loc=$((loc + $(field "$id" local_rx)))
		o=$(field "$id" open_ms)
		[ "$o" -gt "$omax" ] && omax=$o
	done
	[ "$(printf '%s\n' "${queues[@]}" | sort -n | xargs)" = "$(seq 0 $((N - 1)) | xargs)" ] ||
		bad "host $h: the processes' queues are not 0-$((N - 1)): ${queues[*]}"
	echo "    host $h: $N processes on queues 0-$((N - 1)), $okall messages received and checked, $loc frames through the local path; the slowest endpoint open took $omax ms"
done
[ $fail = 0 ] && echo "ok:   $((2 * N)) ranks, $N per host, each to and from every other (100 B, every byte checked) in ${secs%.*} s"

exit $fail
