#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Issue 23, goal 2 ("asleep while waiting"): Open MPI over xdpwake with the
# provider's idle sleep (the default, FI_XDPWAKE_IDLE_SLEEP_USECS=10000) and
# without it (=0: fi_cq_read spins, as before), next to the TCP BTL (as it
# is, and with mpi_yield_when_idle 1), on namespace hosts (tests/mpi/hosts.sh):
#   E1  a rank blocked 10 s in MPI_Recv, then in MPI_Barrier: its CPU share
#       (tests/mpi/xw_mpi_alive.c idle; 2 hosts, 1 rank each)
#   E2  8 B round trip on dedicated cores (mpi_pingpong; 2 hosts, 1 rank each)
#   E3  SHRIMP's multiprogramming experiment under MPI: 4 ranks per host on
#       this machine's 2 cores, 4 ping-pong pairs across the hosts at once,
#       each side computing THINK us after every round trip (mpi_pingpong
#       --pairs --think): total time per think time
#   E4  4 ranks per host, 1 MiB ping-pong between two of them (ranks 0 and 1
#       on different hosts, --map-by node), the other six waiting
# Writes RESULTS_DIR/idle.csv, idle.md and the plot idle.svg/png.
#   bench/mpi/idle.sh [--out DIR] [--runs N]      THINKS="0 30 100 300"
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
ALIVE=$OUTPUT/bench/xw_mpi_alive
mpicc -O2 -Wall -o "$ALIVE" "$XW_SRC/tests/mpi/xw_mpi_alive.c" || exit 1
XW="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0 -x FI_XDPWAKE_ENCAP=udp"
CFG[xdpwake]="$XW"
CFG[xdpwake-spin]="$XW -x FI_XDPWAKE_IDLE_SLEEP_USECS=0"
CFG[tcp-btl]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0"
CFG[tcp-btl-yield]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0 --mca mpi_yield_when_idle 1"
THINKS=${THINKS:-0 30 100 300}
csv=$out/idle.csv
echo "experiment,transport,run,x,value" > "$csv"

# one EXP TRANSPORT RUN X PARSE -- mpirun options: a row per value PARSE
# (a sed expression printing the number) finds in the output
one() {
	local e=$1 t=$2 run=$3 x=$4 parse=$5 v
	shift 6
	if mpi_run "$e-$t" "$e $t run $run x $x" "$t" "$@"; then
		v=$(sed -n "$parse" "$TMP/$e-$t.out" | head -1)
		echo "$e,$t,$run,$x,$v" >> "$csv"
		echo "$e $t run $run x $x: $v" >&2
	fi
}

QUEUES=4 hosts 2 bridge || exit 1
h1=${HOSTS[0]} h2=${HOSTS[1]}
for run in $(seq 1 "$runs"); do
	for t in xdpwake-spin xdpwake tcp-btl tcp-btl-yield; do
		one E1recv "$t" "$run" 10 's/.*in MPI_Recv: CPU \([0-9.]*\) %.*/\1/p' -- \
			--host "$h1:1,$h2:1" -np 2 "$ALIVE" idle 10
		sed -n 's/.*in MPI_Barrier: CPU \([0-9.]*\) %.*/\1/p' "$TMP/E1recv-$t.out" |
			sed "s/^/E1barrier,$t,$run,10,/" >> "$csv"
	done
	for t in xdpwake-spin xdpwake tcp-btl; do
		one E2 "$t" "$run" 8 's/^pingpong,8,\([0-9.]*\),.*/\1/p' -- \
			--host "$h1:1,$h2:1" -np 2 "$OUTPUT/bench/mpi_pingpong" --sizes 8
	done
	for th in $THINKS; do
		for t in xdpwake-spin xdpwake tcp-btl-yield; do
			one E3 "$t" "$run" "$th" 's/^think,8,[0-9]*,\([0-9.]*\)$/\1/p' -- \
				--host "$h1:4,$h2:4" -np 8 "$OUTPUT/bench/mpi_pingpong" --pairs \
				--sizes 8 --think "$th"
		done
	done
	for t in xdpwake-spin xdpwake tcp-btl tcp-btl-yield; do
		one E4 "$t" "$run" 1048576 's/^pingpong,1048576,[0-9.]*,\([0-9.]*\),.*/\1/p' -- \
			--host "$h1:4,$h2:4" -np 8 --map-by node "$OUTPUT/bench/mpi_pingpong" \
			--sizes 1048576
	done
done
/usr/bin/python3 "$here/idle_report.py" "$csv" "$out/idle" > "$out/idle.md"
cat "$out/idle.md"
