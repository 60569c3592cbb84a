#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make bench-mpi-bulk (issue 25): bulk data with a standard external MPI
# benchmark suite, the Intel MPI Benchmarks (IMB-MPI1: PingPong, Sendrecv,
# Uniband, Allreduce, Alltoall; 8 B to 4 MiB), on the two namespace hosts of
# tests/mpi/hosts.sh joined by a veth pair, at MTU 1500 and 9000, over
#   xdpwake   pml cm, mtl ofi, provider xdpwake
#   tcp-btl   pml ob1, btl self,tcp
#   tcp-mtu   the same with the veths' TSO and GSO off: a veth hands the TCP
#             stack's 64 KiB segments across whole, so the TCP BTL never
#             pays a per-packet cost per MTU there, as it does on a wire
#             (where a NIC's TSO cuts them in hardware and the receiver
#             handles each packet); this one cuts them in software
# in the same run (each run does both in turn at one MTU), and at each MTU
# the raw AF_XDP floor for MTU-sized frames on the same veth:
#   afxdp-raw bench/afxdp_raw --mode stream, frames of the MTU (minus its
#             16 B header), batches of 32 acknowledged: busy-spin, a copy
#             into the frame and one out of it per frame, no library (one
#             UMEM frame each: measured where the MTU's frame fits one)
# IMB is built outside the tree: IMB_DIR (a checkout of
# github.com/intel/mpi-benchmarks; cloned into BUILD when unset) built in
# BUILD (default /tmp/xwbulk-imb).  IMB's defaults (its -O0 build, its
# iteration policy), plus -time 1.5 bounding each size.
# Writes RESULTS_DIR/bulk.csv, bulk.md and the bandwidth plot bulk.png
# (bench/mpi/bulk_report.py).
#   bench/mpi/bulk.sh [--out DIR] [--runs N]   MTUS="1500 9000" ONLY="xdpwake tcp-btl tcp-mtu"
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
CFG[xdpwake]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0"
# XW_BULK_LOG=1: the provider at FI_LOG_LEVEL=info, its frame size and its
# endpoints' counters at close into bulk-xdpwake-MTU.log (costs small
# messages: 8 B PingPong 280 us against 93 us without, one loaded run)
[ "${XW_BULK_LOG:-0}" = 1 ] && CFG[xdpwake]+=" -x FI_LOG_LEVEL=info -x FI_LOG_PROV=xdpwake"
CFG[tcp-btl]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0"
CFG[tcp-mtu]=${CFG[tcp-btl]}
RAW=$OUTPUT/bench/afxdp_raw
BUILD=${BUILD:-/tmp/xwbulk-imb}
BENCHES=(PingPong Sendrecv Uniband Allreduce Alltoall)

if [ ! -x "$BUILD/IMB-MPI1" ]; then
	if [ -z "${IMB_DIR:-}" ]; then
		IMB_DIR=$BUILD/src
		[ -d "$IMB_DIR" ] ||
			git clone -q --depth 1 https://github.com/intel/mpi-benchmarks "$IMB_DIR" ||
			skip "cannot get the Intel MPI Benchmarks (set IMB_DIR to a checkout)"
	fi
	mkdir -p "$BUILD"
	# its C++ sources include mpi.h: without Open MPI's C++ bindings,
	# whose casts its -Werror refuses
	make -C "$IMB_DIR" CC=mpicc CXX=mpicxx CPPFLAGS=-DOMPI_SKIP_MPICXX=1 IMB-MPI1 \
		>"$TMP/imb-build.log" 2>&1 || { tail -20 "$TMP/imb-build.log"; exit 1; }
	cp "$IMB_DIR/IMB-MPI1" "$BUILD/"
fi
[ -x "$RAW" ] || make -C "$XW_SRC" -s OUTPUT="$OUTPUT" "$RAW" >"$TMP/raw-build.log" 2>&1 ||
	echo "afxdp-raw: cannot build $RAW; not run" >&2
printf '%s\n' 8 4096 65536 262144 1048576 4194304 >"$TMP/sizes"

csv=$out/bulk.csv
echo "transport,mtu,run,bench,size,t_us,mb_per_s" >"$csv"

# segments on|off: the veths' TSO and GSO (tcp-mtu runs with them off)
segments() {
	local h
	for h in "${HOSTS[@]}"; do
		ip netns exec "$h" ethtool -K xwd0 tso "$1" gso "$1" >/dev/null 2>&1 || return 1
	done
}

# imb T: IMB-MPI1 over transport T on the two hosts, rows into $csv
imb() {
	local t=$1 rc=0
	if [ "$t" = tcp-mtu ]; then
		segments off || { echo "tcp-mtu: ethtool -K xwd0 tso off gso off failed" >&2; return 1; }
	fi
	# shellcheck disable=SC2086 # CFG entries are option lists
	timeout --kill-after=10 900 mpirun "${LAUNCH[@]}" --host "$hl" -np 2 ${CFG[$t]} \
		"$BUILD/IMB-MPI1" -msglen "$TMP/sizes" -time 1.5 -mem 1 "${BENCHES[@]}" \
		>"$TMP/$t.out" 2>"$TMP/$t.err" || rc=1
	[ "$t" = tcp-mtu ] && segments on
	[ "$rc" -eq 0 ] || return 1
	/usr/bin/python3 - "$TMP/$t.out" "$t,$mtu,$run" <<'PY' >>"$csv"
import re, sys
bench = None
for line in open(sys.argv[1]):
    m = re.match(r"# Benchmarking (\S+)", line)
    if m:
        bench = m.group(1)
        continue
    f = line.split()
    if not bench or len(f) < 3 or not f[0].isdigit() or not f[1].isdigit():
        continue
    size = int(f[0])
    # PingPong: bytes reps t mbps; Sendrecv: bytes reps tmin tmax tavg mbps;
    # Uniband: bytes reps mbps msg/s; collectives: bytes reps tmin tmax tavg
    if bench == "PingPong":
        t, bw = float(f[2]), float(f[3])
    elif bench == "Sendrecv":
        t, bw = float(f[4]), float(f[5])
    elif bench == "Uniband":
        t, bw = 0.0, float(f[2])
    else:
        t, bw = float(f[4]), 0.0
    print("%s,%s,%d,%.2f,%.1f" % (sys.argv[2], bench, size, t, bw))
PY
}

# raw: afxdp_raw stream of MTU-sized frames, rows into $csv
raw() {
	local size=$((mtu - 16)) srv rc
	[ -x "$RAW" ] || return 0
	[ $((mtu + 14)) -le 3840 ] || return 0 # one UMEM frame (4096 less the 256 B headroom)
	"$XW_SRC/tests/mpi/ns_agent.sh" "${HOSTS[0]}" "exec $RAW --server xwd0 --idle-timeout 60" \
		>"$TMP/raw.srv" 2>&1 &
	srv=$!
	timeout --kill-after=10 120 "$XW_SRC/tests/mpi/ns_agent.sh" "${HOSTS[1]}" \
		"exec $RAW --client xwd0 --mode stream --sizes $size --duration 5 -j" \
		>"$TMP/raw.out" 2>"$TMP/raw.err"
	rc=$?
	kill -INT "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	[ "$rc" -eq 0 ] || return 1
	/usr/bin/python3 - "$TMP/raw.out" "afxdp-raw,$mtu,$run" <<'PY' >>"$csv"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s,stream,%d,0,%.1f" % (sys.argv[2], r["size"], r["msg_rate"] * r["size"] / 1e6))
PY
}

for mtu in ${MTUS:-1500 9000}; do
	MTU=$mtu hosts 2 veth || exit 1
	hl=$(IFS=,; echo "${HOSTS[*]}")
	for run in $(seq 1 "$runs"); do
		for t in ${ONLY:-xdpwake tcp-btl tcp-mtu afxdp-raw}; do
			case $t in
			afxdp-raw) raw ;;
			*) imb "$t" ;;
			esac || {
				echo "$t MTU $mtu run $run: failed" >&2
				tail -n 5 "$TMP/$t".{err,out} "$TMP"/raw.{err,srv} 2>/dev/null >&2
				continue
			}
			[ "$t" = xdpwake ] && [ "${XW_BULK_LOG:-0}" = 1 ] && grep -h "payload bytes per frame\|closed:" "$TMP/$t.err" |
				sed 's/.*<info> //' | sort -u >"$out/bulk-xdpwake-$mtu.log"
			echo "$t MTU $mtu run $run: ok" >&2
		done
	done
done

# the bandwidth plot where matplotlib is there (make bench-mpi-bulk installs it)
plot=()
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && plot=(--plot "$out/bulk.png")
/usr/bin/python3 "$here/bulk_report.py" "$csv" "${plot[@]}" >"$out/bulk.md"
cat "$out/bulk.md"
