#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Several processes per host on one interface, each on its own queue.
# Two namespace hosts on the steered bridge of tests/mpi/hosts.sh (QUEUES=4:
# 4-queue veths, bpf/steer.bpf.c on the bridge ports standing in for a NIC's
# n-tuple rules "UDP port 49152+q -> RX queue q"), four processes per host
# (tests/multiq_peer: XW_QUEUE_ANY, UDP encapsulation).  Every process
# exchanges messages of every size class with every other process, every
# byte checked: with the other host's over the wire, with its own host's
# through the shared-memory path (issue 16, userspace/lib/local.c).
#   1. all-to-all: each host's processes took queues 0-3 with ports
#      49152+q; no frame reached a wrong queue (drop_queue) or endpoint (the
#      frames the XDP program redirected to each endpoint are exactly those
#      it took in from the wire, and a host's endpoints got exactly what the
#      other host's sent on the wire, less the liveness PROBEs its XDP
#      program answered with XDP_TX, plus the answers to its own PROBEs, less
#      the frames the data path's devices counted as dropped on the way,
#      which retransmission repairs); every process also took frames from
#      its own host's processes through the local path, none lost or bad;
#      no frame dropped or rejected; the bridge steered to all four queues.
#   2. one process per host killed (SIGKILL) mid-transfer: the exchanges of
#      the others complete with every byte right, still no frame on a wrong
#      queue.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
MQ_TMP=xwmq
. "$here/lib/multiq.sh"
command -v ethtool >/dev/null || skip "needs ethtool (the veths' XDP error counters)"

QUEUES=4 hosts 2 bridge || exit 1
ids1=(1 2 3 4) ids2=(11 12 13 14)
ALL=1,2,3,4,11,12,13,14

# ---- 1. all-to-all --------------------------------------------------------
ROUNDS=${XW_MQ_ROUNDS:-4}
lost0=("" "$(wire_drops 2 1)" "$(wire_drops 1 2)")
launch a2a - "$ROUNDS"
finish 120
# frames lost on the way to host h (from the other one)
lost=("" $(($(wire_drops 2 1) - lost0[1])) $(($(wire_drops 1 2) - lost0[2])))
want_ok=$((ROUNDS * 7 * 4))
for h in 1 2; do
	if [ $h = 1 ]; then mine=("${ids1[@]}") other=("${ids2[@]}"); else mine=("${ids2[@]}") other=("${ids1[@]}"); fi
	queues= redir=0 tx=0 loc=0 ans=0 ans_o=0 probes_o=0
	for id in "${mine[@]}"; do
		if ! grep -q '^RESULT' "$D/out.$id"; then bad "process $id gave no result"; show "$id"; continue; fi
		q=$(field "$id" queue) port=$(field "$id" port)
		queues="$queues $q"
		[ "$port" = $((49152 + q)) ] || bad "process $id on queue $q has port $port, want $((49152 + q))"
		[ "$(field "$id" ok)" = "$want_ok" ] && [ "$(field "$id" bad)" = 0 ] ||
			{ bad "process $id: $(field "$id" ok) of $want_ok messages right, $(field "$id" bad) bad"; show "$id"; }
		for k in drop_queue drop_other iface_drops rx_bad local_lost local_rx_bad; do
			[ "$(field "$id" $k)" = 0 ] || bad "process $id: $k = $(field "$id" $k)"
		done
		wire_rx=$(($(field "$id" rx) - $(field "$id" local_rx)))
		[ "$(field "$id" redirected)" = "$wire_rx" ] ||
			bad "process $id: the XDP program redirected $(field "$id" redirected) frames to its endpoint, it took in $wire_rx from the wire"
		[ "$(field "$id" local_rx)" -gt 0 ] && [ "$(field "$id" local_tx)" -gt 0 ] ||
			bad "process $id: nothing through the local path (local_tx $(field "$id" local_tx), local_rx $(field "$id" local_rx))"
		redir=$((redir + $(field "$id" redirected)))
		loc=$((loc + $(field "$id" local_rx)))
		ans=$((ans + $(field "$id" answered)))
	done
	for id in "${other[@]}"; do
		tx=$((tx + $(field "$id" tx) - $(field "$id" local_tx)))
		ans_o=$((ans_o + $(field "$id" answered)))
		probes_o=$((probes_o + $(field "$id" probes)))
	done
	want=$((tx - ans + ans_o - lost[h]))
	[ "$(tr ' ' '\n' <<<"$queues" | sort -n | xargs)" = "0 1 2 3" ] ||
		bad "host $h: processes on queues$queues, want 0 1 2 3 (XW_QUEUE_ANY)"
	[ "$ans" -le "$probes_o" ] ||
		bad "host $h: its XDP program answered $ans PROBEs, the other host's sent $probes_o"
	[ "$redir" = "$want" ] ||
		bad "host $h: its endpoints were redirected $redir frames, want $want: the other host's sent $tx on the wire, $ans of them PROBEs answered here (XDP_TX), $ans_o answers to this host's PROBEs came back, ${lost[h]} frames the devices on the way dropped"
	echo "    host $h: queues$queues, $redir frames redirected = $tx sent on the wire by the other host - $ans PROBEs answered here ($probes_o sent) + $ans_o answers from there - ${lost[h]} dropped on the way; $loc frames through the local path"
done
counts=$(steer_counts)
echo "    steered by the bridge ports: $(xargs <<<"$counts")"
for q in 0 1 2 3; do grep -q "^q$q [1-9]" <<<"$counts" || bad "nothing steered to queue $q"; done
grep -q '^other' <<<"$counts" && bad "frames to ports beyond the queues: $counts"
[ $fail = 0 ] && echo "ok:   all-to-all, 4 processes per host on queues 0-3, $ROUNDS rounds x 7 peers (4 on the other host, 3 on its own) x 4 sizes (100 B .. 300 kB), every byte checked; drop_queue 0, per-endpoint redirected = received from the wire, the rest through the local path"

# ---- 2. one process per host killed mid-transfer --------------------------
f1=$fail
V1=4 V2=13
launch kill "$V1,$V2" "${XW_MQ_KILL_ROUNDS:-12}"
for i in $(seq 1 600); do
	[ -f "$D/started.$V1" ] && [ -f "$D/started.$V2" ] && break
	sleep 0.05
done
if [ -f "$D/started.$V1" ] && [ -f "$D/started.$V2" ]; then
	early=$(ls "$D"/done.* 2>/dev/null | wc -l)
	kill -9 "$(cat "$D/pid.$V1")" "$(cat "$D/pid.$V2")"
	[ "$early" = 0 ] || bad "$early processes had finished before the kill: not mid-transfer (raise XW_MQ_KILL_ROUNDS)"
else
	bad "the victims did not start within 30 s"; show $V1 $V2
fi
finish 120
for id in "${ids1[@]}" "${ids2[@]}"; do
	[ "$id" = $V1 ] || [ "$id" = $V2 ] && continue
	if ! grep -q '^RESULT' "$D/out.$id"; then bad "process $id gave no result"; show "$id"; continue; fi
	want=$((${XW_MQ_KILL_ROUNDS:-12} * 5 * 4))
	[ "$(field "$id" ok)" = "$want" ] && [ "$(field "$id" bad)" = 0 ] ||
		{ bad "process $id: $(field "$id" ok) of $want messages right, $(field "$id" bad) bad"; show "$id"; }
	for k in drop_queue rx_bad local_rx_bad; do
		[ "$(field "$id" $k)" = 0 ] || bad "process $id: $k = $(field "$id" $k)"
	done
done
grep -q '^RESULT' "$D/out.$V1" "$D/out.$V2" && bad "a victim finished: it was not killed"
[ $fail = "$f1" ] && echo "ok:   processes $V1 and $V2 killed mid-transfer: the other 6 completed ${XW_MQ_KILL_ROUNDS:-12} rounds with 5 peers each (local and remote) with every byte right (exchanges with the killed ones: $(cat "$D"/out.* | sed -n 's/.*victim_ok=\([0-9]*\) victim_err=\([0-9]*\).*/\1 \2/p' | awk '{o+=$1; e+=$2} END {print o " done, " e " failed"}'))"
exit $fail
