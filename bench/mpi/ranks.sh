#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make bench-mpi-ranks: Open MPI with several ranks per host (issues 16, 28).
#   local    two ranks on one namespace host: ping-pong (round trip,
#            bandwidth, CPU per message) and a stream of 8 messages in
#            flight (mpi_pingpong --stream) over xdpwake's local path - with
#            the provider's default wait (spin, then sleep) and busy-polling
#            (FI_XDPWAKE_WAIT=spin, as vader polls) - against Open MPI's own
#            shared-memory transport (pml ob1, btl vader) and kernel TCP
#            (btl tcp, over the host's own address)
#   offhost  1, 2 and 4 ranks per host on two namespace hosts (a bridge that
#            steers frames to queues as a NIC's ntuple rules do, 4 queues per
#            host): every rank of host 1 ping-pongs with its partner on host 2
#            at the same time (mpi_pingpong --pairs), xdpwake against btl tcp
# all in one run, --runs N repetitions (default 3), interleaved.  This
# machine has 2 cores: with 2 and 4 ranks per host the ranks share them
# (4 and 8 processes), so every transport runs with mpi_yield_when_idle.
# Every xdpwake run logs its endpoints' closing statistics (FI_LOG_LEVEL=info,
# subsystem ep_ctrl only): their retransmissions and duplicates go to
# ranks_rtx.csv.
# Writes RESULTS_DIR/ranks.csv, ranks_rtx.csv, ranks.md and the bandwidth
# plot ranks.png/.svg (bench/mpi/ranks_report.py).
#   bench/mpi/ranks.sh [--out DIR] [--runs N]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
declare -A CFG
CFG[xdpwake]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0 -x FI_XDPWAKE_ENCAP=udp -x FI_LOG_LEVEL=info -x FI_LOG_SUBSYS=ep_ctrl"
CFG[xdpwake-spin]="${CFG[xdpwake]} -x FI_XDPWAKE_WAIT=spin"
CFG[vader]="--mca pml ob1 --mca btl self,vader"
CFG[tcp-btl]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0"

csv=$out/ranks.csv
rtx=$out/ranks_rtx.csv
echo "transport,ranks_per_host,run,kind,size,rtt_us,mb_per_s,cpu_us_per_msg,rtt_max_us" > "$csv"
echo "transport,ranks_per_host,run,endpoints,tx_frames,retransmits,rx_dup_frames" > "$rtx"
# one [run] of transport $1 with the rest as mpirun options; rows tagged $KIND_TAG
one() {
	local t=$1 tag=$2 run=$3
	shift 3
	if mpi_run "$t" "$t $tag run $run" "$t" "$@"; then
		grep -E '^(pingpong|pairs|stream),' "$TMP/$t.out" |
			awk -F, -v OFS=, '{ if (NF < 6) $6 = ""; print }' |
			sed "s/^/$t,$tag,$run,/" >> "$csv"
		# the endpoints' closing statistics (xdpwake only), summed
		grep -o 'closed: .*' "$TMP/$t.err" | awk -v OFS=, -v p="$t,$tag,$run" '
			{ n++; for (i = 2; i < NF; i++) {
				if ($i == "tx_frames") tx += $(i + 1)
				if ($i == "retransmits") r += $(i + 1)
				if ($i == "rx_dup_frames") d += $(i + 1) } }
			END { if (n) print p, n, tx, r, d }' >> "$rtx"
		echo "$t $tag run $run: ok" >&2
	fi
}

QUEUES=4 hosts 2 bridge || exit 1
h1=${HOSTS[0]} h2=${HOSTS[1]}
for run in $(seq 1 "$runs"); do
	for t in xdpwake xdpwake-spin vader tcp-btl; do
		one "$t" local "$run" --host "$h1:2" -np 2 "$BIN" --stream \
			--sizes 0,8,64,512,4096,8192,16384,32768,65536,262144,1048576,4194304
	done
	for k in 1 2 4; do
		yield=()
		[ "$k" -gt 1 ] && yield=(--mca mpi_yield_when_idle 1)
		for t in xdpwake tcp-btl; do
			one "$t" "$k" "$run" --host "$h1:$k,$h2:$k" -np $((2 * k)) \
				${yield[@]+"${yield[@]}"} "$BIN" --pairs --sizes 8,4096,1048576
		done
	done
done

/usr/bin/python3 "$here/ranks_report.py" "$csv" "$rtx" "$out/ranks" > "$out/ranks.md"
cat "$out/ranks.md"
