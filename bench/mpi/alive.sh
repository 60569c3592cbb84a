#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Issue 23's "alive while computing" at full length, the default give-up
# time (60 s), Open MPI over xdpwake and over its TCP BTL on the same two
# namespace hosts (tests/mpi/hosts.sh, veth), the project's
# tests/mpi/xw_mpi_alive.c:
#   base   every rank computes with nothing pending (the compute rate alone)
#   late   the last rank computes COMPUTE s before a barrier, then rank 0
#          before an allreduce the others wait in
#   post   ranks compute COMPUTE s between MPI_Isend/MPI_Irecv and
#          MPI_Waitall, both ways, 1 KiB and 1 MiB
#   stop   a ping-pong loop with rank 1 stopped (SIGSTOP) for STOP s
# and, per transport, whether the job passed, how long the waiting ranks
# waited, and the computing rank's rate next to `base` (its slowdown by what
# runs for it meanwhile: the XDP program's answers to liveness probes, the
# kernel's TCP acks).  Writes RESULTS_DIR/alive.md.
#   bench/mpi/alive.sh [--out DIR] [--runs N]    COMPUTE=60 STOP=30 ONLY="xdpwake tcp-btl"
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
ALIVE=$OUTPUT/bench/xw_mpi_alive
mpicc -O2 -Wall -o "$ALIVE" "$XW_SRC/tests/mpi/xw_mpi_alive.c" || exit 1
COMPUTE=${COMPUTE:-60}
STOP=${STOP:-30}
CFG[xdpwake]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0 -x FI_LOG_LEVEL=info -x FI_LOG_PROV=xdpwake"
CFG[tcp-btl]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0"
md=$out/alive.md

hosts 2 veth || exit 1
{
	echo "Two namespace hosts (veth), one rank each, default give-up time (60 s),"
	echo "computing $COMPUTE s, stopped $STOP s; $(date -u +%F) on $(uname -r)."
	echo
	echo "| transport | run | part | result | detail |"
	echo "|---|---|---|---|---|"
} > "$md"
for run in $(seq 1 "$runs"); do
	for t in ${ONLY:-xdpwake tcp-btl}; do
		log=$TMP/$t-$run.log
		# shellcheck disable=SC2086
		timeout --kill-after=10 $((6 * COMPUTE + 120)) mpirun "${LAUNCH[@]}" \
			--host "${HOSTS[0]}:1,${HOSTS[1]}:1" -np 2 ${CFG[$t]} \
			"$ALIVE" base 10 late "$COMPUTE" post "$COMPUTE" > "$log" 2>&1
		rc=$?
		res=$([ "$rc" -eq 0 ] && grep -q 'all parts passed' "$log" && echo pass || echo "FAIL ($rc)")
		base=$(sed -n 's/.*nothing pending: \([0-9.]*\) M.*/\1/p' "$log")
		grep '^ok:   \(late\|post\)' "$log" | sed 's/^ok:   //' | while read -r line; do
			r=$(sed -n 's/.*(\(rank 0: \)\{0,1\}\([0-9.]*\) M iterations.*/\2/p' <<<"$line")
			slow=
			[ -n "$r" ] && [ -n "$base" ] && slow=$(python3 -c "print('; compute rate %.3fx of base' % ($r / $base))")
			echo "| $t | $run | ${line%%:*} | $res | ${line#*: }$slow |" >> "$md"
		done
		[ "$t" = xdpwake ] && echo "| $t | $run | liveness | | $(sed -n 's/.*closed: .*live_probes \([0-9]*\) live_replies \([0-9]*\).*/probes \1, answered \2/p' "$log" | paste -sd';') |" >> "$md"
		echo "$t run $run: $res (base ${base:-?} M it/s)"
		# stop: a ping-pong loop, rank 1 stopped STOP s
		pidf=$TMP/pid-$t-$run
		rm -f "$pidf"
		# shellcheck disable=SC2086
		timeout --kill-after=10 $((STOP + 120)) mpirun "${LAUNCH[@]}" \
			--host "${HOSTS[0]}:1,${HOSTS[1]}:1" -np 2 ${CFG[$t]} -x XW_ALIVE_PIDFILE="$pidf" \
			"$ALIVE" loop $((STOP + 15)) > "$log.stop" 2>&1 &
		mp=$!
		for _ in $(seq 1 300); do [ -s "$pidf" ] && break; sleep 0.1; done
		sleep 5
		pid=$(cat "$pidf" 2>/dev/null) && kill -STOP "$pid" && sleep "$STOP" && kill -CONT "$pid"
		wait "$mp"
		rc=$?
		res=$([ "$rc" -eq 0 ] && grep -q 'all parts passed' "$log.stop" && echo pass || echo "FAIL ($rc)")
		echo "| $t | $run | stop | $res | rank 1 stopped $STOP s: $(sed -n 's/^ok:   loop: //p' "$log.stop") |" >> "$md"
		echo "$t run $run stop: $res"
	done
done
cat "$md"
