#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make bench-mpi: Open MPI ping-pong (0 B - 4 MiB: round trip, bandwidth, CPU
# per message of both ranks) and MPI_Allreduce latency, with ranks on
# namespace hosts (set-up (a) of tests/test_mpi.sh: two hosts on a veth
# pair; Allreduce also with four hosts on a bridge), over
#   xdpwake      pml cm, mtl ofi, provider xdpwake
#   tcp-btl      pml ob1, btl self,tcp
#   tcp-rxm      pml cm, mtl ofi, provider tcp;ofi_rxm
#   udp-rxd      pml cm, mtl ofi, provider udp;ofi_rxd (if it runs)
# all in one run.  Writes RESULTS_DIR/mpi.csv, mpi.md and the plot mpi.svg/png
# (bench/mpi/report.py).
#   bench/mpi/run.sh [--out DIR] [--runs N]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
declare -A CFG
CFG[xdpwake]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0"
CFG[tcp-btl]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0"
CFG[tcp-rxm]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm --mca btl self -x FI_TCP_IFACE=xwd0"
CFG[udp-rxd]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include udp;ofi_rxd --mca btl self -x FI_UDP_IFACE=xwd0"
ORDER=(xdpwake tcp-btl tcp-rxm udp-rxd)

csv=$out/mpi.csv
echo "transport,hosts,run,kind,size,rtt_us,mb_per_s,cpu_us_per_msg" > "$csv"
for nh in 2 4; do
	if [ "$nh" -eq 2 ]; then hosts 2 veth; else hosts 4 bridge; fi
	hl=$(IFS=,; echo "${HOSTS[*]}")
	for run in $(seq 1 "$runs"); do
		for t in ${ONLY:-"${ORDER[@]}"}; do
			# shellcheck disable=SC2086 # CFG entries are option lists
			if timeout --kill-after=10 300 mpirun "${LAUNCH[@]}" --host "$hl" -np "$nh" \
				${CFG[$t]} "$BIN" $([ "$nh" -gt 2 ] && echo --allreduce-only) \
				> "$TMP/$t.out" 2> "$TMP/$t.err"; then
				grep -E '^(pingpong|allreduce),' "$TMP/$t.out" |
					sed "s/^/$t,$nh,$run,/" >> "$csv"
				echo "$t $nh hosts run $run: ok" >&2
			else
				echo "$t $nh hosts run $run: failed (see below)" >&2
				tail -3 "$TMP/$t.err" >&2
			fi
		done
	done
done

/usr/bin/python3 "$here/report.py" "$csv" "$out" > "$out/mpi.md"
cat "$out/mpi.md"
