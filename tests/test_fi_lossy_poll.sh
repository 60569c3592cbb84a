#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The empty fi_cq_read's fast path (fabric/cq.c, cq_empty_fast) still runs
# the protocol's timers: Debian's fi_pingpong (8 B, data checked) between
# two namespace hosts whose link crosses the fault harness's impairing
# middle (tests/lib/fault.h through tests/mpi/fault_hosts.c, 5% of the
# xdpwake frames dropped each way), busy-polling (FI_XDPWAKE_WAIT=spin):
# only the application's fi_cq_read calls run a retransmission, and in a
# ping-pong a lost frame is the only one in flight (only a timer sends it
# again).  The watchdog is slow (FI_XDPWAKE_WATCHDOG_USECS=100000), not
# off: after its last reply the server stops reading its CQ (fi_pingpong
# exchanges its counts over TCP then), so a last reply lost is sent again
# only because the client's retransmissions, left unread, wake the
# server's watchdog (with none, both waited for the 120 s timeout: 1 run
# in 3 of the lead's under the sanitizers, 1 in 6 of main's provider,
# which has no fast path).  A side that waits for a timer
# has no frame for its watchdog; a read that missed frames would wait
# 100 ms for each and 2000 round trips would outlast the timeout.
# Asserts that both ends finished every round trip, that the middle really
# dropped frames both ways, that the endpoints retransmitted on their
# timers (their statistics at close, FI_LOG_LEVEL=info) and that the CQs'
# reads did take the fast path (fast_empty, logged at the CQ's close).
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}

skip() { echo "SKIP $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, XDP)"
command -v fi_pingpong >/dev/null || skip "fi_pingpong missing (libfabric-bin)"
PROVDIR=$OUTPUT/fabric
[ -f "$PROVDIR/libxdpwake-fi.so" ] || skip "provider not built (libfabric-dev missing?)"
# a provider built with sanitizers: their runtimes preloaded into fi_pingpong
. "$XW_SRC/tests/fabric/san_preload.sh"
san_preload "$PROVDIR/libxdpwake-fi.so"
T=$$
TMP=$(mktemp -d /tmp/xwlossy.XXXXXX)
. "$here/mpi/hosts.sh"
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
port=$((47300 + $$ % 1000))
iters=2000

fault_hosts 50 0 0 || exit 1
FIENV=(env FI_PROVIDER_PATH="$PROVDIR" FI_XDPWAKE_IFACE=xwd0 FI_XDPWAKE_WAIT=spin
	FI_XDPWAKE_WATCHDOG_USECS=100000 FI_LOG_LEVEL=info FI_LOG_PROV=xdpwake)
ip netns exec "${HOSTS[0]}" "${FIENV[@]}" timeout 120 \
	fi_pingpong -p xdpwake -e rdm -S 8 -c -I "$iters" -B "$port" >"$TMP/srv" 2>&1 &
spid=$!
for _ in $(seq 1 200); do
	ip netns exec "${HOSTS[0]}" ss -ltn | grep -q ":$port " && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
ip netns exec "${HOSTS[1]}" "${FIENV[@]}" timeout 120 \
	fi_pingpong -p xdpwake -e rdm -S 8 -c -I "$iters" -P "$port" 10.212.0.11 >"$TMP/cli" 2>&1
rc=$?
wait "$spid"
rc=$((rc | $?))
if [ "$rc" -eq 0 ] && grep -q '^8 ' "$TMP/cli"; then
	echo "ok:   fi_pingpong 8 B x $iters through 5% loss, busy-polling, a 100 ms watchdog"
	grep -E '^(bytes|8 )' "$TMP/cli" | sed 's/^/    /'
else
	echo "FAIL: fi_pingpong through 5% loss (exit $rc)"
	sed 's/^/    srv| /' "$TMP/srv" | grep -v 'closed:' | tail -15
	sed 's/^/    cli| /' "$TMP/cli" | grep -v 'closed:' | tail -15
	fail=1
fi

# field NAME LINE: the value of NAME=N or "NAME N" in LINE
field() { sed -nE "s/.*[ ]$1[= ]([0-9]+).*/\1/p" <<<"$2"; }
counters=$(fault_counters) || { echo "FAIL: no counters from the fault harness"; exit 1; }
for dir in a2b b2a; do
	d=$(field dropped "$(grep "^counters $dir " <<<"$counters")")
	if [ "${d:-0}" -gt 0 ]; then
		echo "ok:   $dir: the middle dropped $d frames"
	else
		echo "FAIL: $dir: the middle dropped ${d:-?} frames"; fail=1
	fi
done
for side in srv cli; do
	l=$(grep -a 'endpoint .* closed:' "$TMP/$side" | tail -1)
	r=$(field retransmits "$l") rto=$(field rto_timeouts "$l") tp=$(field tail_probes "$l")
	to=$(field conn_timeouts "$l")
	if [ "${r:-0}" -gt 0 ] && [ $((${rto:-0} + ${tp:-0})) -gt 0 ] && [ "${to:-1}" -eq 0 ]; then
		echo "ok:   $side: $r frames retransmitted (rto_timeouts $rto, tail_probes $tp), none given up"
	else
		echo "FAIL: $side: retransmits ${r:-?} rto_timeouts ${rto:-?} tail_probes ${tp:-?} conn_timeouts ${to:-?}"
		fail=1
	fi
	fast=0
	while IFS= read -r l; do
		f=$(field fast_empty "$l")
		fast=$((fast + ${f:-0}))
	done < <(grep -a 'cq closed:' "$TMP/$side")
	if [ "$fast" -gt 0 ]; then
		echo "ok:   $side: $fast empty reads on the fast path"
	else
		echo "FAIL: $side: no empty read on the fast path"
		grep -a 'cq closed:' "$TMP/$side" | sed 's/^/    | /'
		fail=1
	fi
done
exit $fail
