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
# and, on the same two hosts and data interface, interleaved with them in
# every run, the round trips MPI over xdpwake is measured against:
#   xdpwake-tool `xdpwake pingpong` (0, 8, 64, 512, 4096 B) as the provider
#                runs under Open MPI: policy marker (the provider leaves the
#                interface's, whose default is marker), wait spin (Open MPI's
#                progress loop reads the CQ without ever blocking, and each
#                read is one progress pass: spin is that loop; spin-block
#                would arm the endpoint and sleep after its spin time),
#                Ethernet encapsulation, queue 0, endpoint 1; 10000 measured
#                round trips per size (as MPI's 5 batches of 2000)
#   afxdp-raw    bench/afxdp_raw, raw AF_XDP busy-spin, one frame each way
#                (0 - 512 B: 4096 B does not fit one 1500 B frame): the floor
# Both run through the MPI launch agent (tests/mpi/ns_agent.sh: the same
# namespace, hostname and bpffs as a rank there) and unpinned, as the ranks
# run with --bind-to none: the scheduler places the two processes on the
# two cores as it places the two ranks.  Their round trip is 2 x the p50 of
# the tool's one-way latency (half of each round trip); MPI's is the mean of
# a batch (median of 5), so the tools' mean is kept too (kind
# pingpong-mean).  Their CPU per message is both processes' user+system
# time (afxdp-raw: none, it measures the whole machine only).
# --runs N repetitions (default 3), each running every transport in turn.
# Writes RESULTS_DIR/mpi.csv, mpi.md and the plot mpi.svg/png
# (bench/mpi/report.py), whose "Targets" are issue 15's: 8 B MPI over
# xdpwake within 1.3x of xdpwake-tool, at most 0.5x of the best kernel-socket
# MPI transport.
#   bench/mpi/run.sh [--out DIR] [--runs N]     ONLY="t1 t2": those transports
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
declare -A CFG
CFG[xdpwake]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0"
CFG[tcp-btl]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include xwd0"
CFG[tcp-rxm]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm --mca btl self -x FI_TCP_IFACE=xwd0"
CFG[udp-rxd]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include udp;ofi_rxd --mca btl self -x FI_UDP_IFACE=xwd0"
ORDER=(xdpwake xdpwake-tool afxdp-raw tcp-btl tcp-rxm udp-rxd)

AGENT=$XW_SRC/tests/mpi/ns_agent.sh
XW=$OUTPUT/xdpwake
RAW=$OUTPUT/bench/afxdp_raw
TOOL_SIZES=0,8,64,512,4096
RAW_SIZES=0,8,64,512
[ -x "$RAW" ] || make -C "$XW_SRC" -s OUTPUT="$OUTPUT" "$RAW" > "$TMP/raw-build.log" 2>&1 ||
	echo "afxdp-raw: cannot build $RAW (see $TMP/raw-build.log); not run" >&2

# stop PID: its process ended (10 s), or SIGINT (the tools' clean exit,
# which detaches their XDP program), then SIGKILL
stop() {
	local i
	for ((i = 0; i < 100; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -INT "$1" 2>/dev/null
	for ((i = 0; i < 30; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# pair T SERVER CLIENT: a ping-pong tool's server on host 1 and client on
# host 2, each through the launch agent (exec: the agent's process is the
# tool's); the client's JSON becomes T's rows (kind pingpong: 2 x p50 of
# the one-way latency; pingpong-mean: 2 x its mean).
pair() {
	local t=$1 srv rc
	"$AGENT" "${HOSTS[0]}" "exec $2" > "$TMP/$t.srv" 2>&1 &
	srv=$!
	timeout --kill-after=10 120 "$AGENT" "${HOSTS[1]}" "exec $3" > "$TMP/$t.out" 2> "$TMP/$t.err"
	rc=$?
	stop "$srv"
	[ "$rc" -eq 0 ] || return 1
	/usr/bin/python3 - "$TMP/$t.out" "$t,2,$run" <<'PY' >> "$csv"
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["results"]:
    lat, size = r["latency_us"], r["size"]
    cpu = r.get("proc_cpu_us_per_msg"), r.get("server_proc_cpu_us_per_msg")
    cpu = "%.2f" % (cpu[0] + cpu[1]) if None not in cpu else ""
    bw = r["msg_rate"] * size / 1e6
    for kind, v in (("pingpong", lat["p50"]), ("pingpong-mean", lat["mean"])):
        print("%s,%s,%d,%.2f,%.1f,%s" % (sys.argv[2], kind, size, 2 * v, bw, cpu))
PY
}

# one T N: transport T with N hosts, run $run
one() {
	local t=$1 nh=$2 addr=$TMP/tool-addr
	case $t in
	xdpwake-tool)
		[ "$nh" -eq 2 ] || return 0
		rm -f "$addr"
		pair "$t" "$XW -j pingpong xwd0 --server --once --accept-timeout 60 --addr-file $addr" \
			"$XW -j pingpong xwd0 --client --peer-file $addr --connect-timeout 20 \
			--policy marker --wait spin --sizes $TOOL_SIZES --iters 10000 --warmup 1000"
		;;
	afxdp-raw)
		[ "$nh" -eq 2 ] && [ -x "$RAW" ] || return 0
		pair "$t" "$RAW --server xwd0 --idle-timeout 60" \
			"$RAW --client xwd0 --connect-timeout 20 --sizes $RAW_SIZES --iters 10000 --warmup 1000 -j"
		;;
	*)
		# shellcheck disable=SC2046,SC2086 # CFG entries are option lists
		timeout --kill-after=10 300 mpirun "${LAUNCH[@]}" --host "$hl" -np "$nh" \
			${CFG[$t]} "$BIN" $([ "$nh" -gt 2 ] && echo --allreduce-only) \
			> "$TMP/$t.out" 2> "$TMP/$t.err" || return 1
		grep -E '^(pingpong|allreduce),' "$TMP/$t.out" | sed "s/^/$t,$nh,$run,/" >> "$csv"
		;;
	esac
	echo "$t $nh hosts run $run: ok" >&2
}

csv=$out/mpi.csv
echo "transport,hosts,run,kind,size,rtt_us,mb_per_s,cpu_us_per_msg" > "$csv"
for nh in 2 4; do
	if [ "$nh" -eq 2 ]; then hosts 2 veth; else hosts 4 bridge; fi
	hl=$(IFS=,; echo "${HOSTS[*]}")
	for run in $(seq 1 "$runs"); do
		for t in ${ONLY:-"${ORDER[@]}"}; do
			if ! one "$t" "$nh"; then
				echo "$t $nh hosts run $run: failed (see below)" >&2
				tail -n 3 "$TMP/$t".{err,out,srv} 2>/dev/null >&2
			fi
		done
	done
done

/usr/bin/python3 "$here/report.py" "$csv" "$out" > "$out/mpi.md"
cat "$out/mpi.md"
