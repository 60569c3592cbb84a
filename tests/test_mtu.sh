#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Interface MTUs: every MTU works or fails when the endpoint opens, with an
# error naming the MTU and what to do.  A veth pair in an anonymous network
# namespace (bpffs pin root of its own), `xdpwake pingpong` between its
# ends with messages of several frames, data checked by the tool:
#   1500   frames in one UMEM frame;
#   3500   the largest MTUs whose frames fit one UMEM frame (3826) and the
#   3827   first that does not (multi-buffer AF_XDP from there on);
#   9000   jumbo frames: native XDP with fragment support (no generic-mode
#          fallback), frames of three UMEM frames each way;
#   65000  more than an AF_XDP socket takes (16 UMEM frames): the server
#          fails at once, exit 1, naming the MTU and the largest that works.
# Exit: 0 pass, 1 failure, 77 skip.
set -u

X=${OUTPUT:-$(cd "$(dirname "$0")/.." && pwd)/.output}/xdpwake
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN)"
[ -x "$X" ] || { echo "FAIL: $X not built (run make)"; exit 1; }
# again in fresh network and mount namespaces (gone with the process)
if [ -z "${XW_MTU_TEST_INNER:-}" ]; then
	unshare --net --mount true 2>/dev/null || skip "no network namespaces (unshare failed)"
	XW_MTU_TEST_INNER=1 exec unshare --net --mount -- "$BASH" "$0" "$@"
fi

ROOT=/sys/fs/bpf/xwtest-$$
TMP=$(mktemp -d /tmp/xwmtu.XXXXXX) || exit 1
SRV=
cleanup() {
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$ROOT" "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || skip "cannot mount bpffs"
ip link set lo up || skip "ip link set lo up failed (iproute2 missing?)"
ip link add xwa type veth peer name xwb || skip "cannot create a veth pair"
P=(--pin-root "$ROOT")
failures=0

fail() {
	failures=$((failures + 1))
	echo "FAIL $*"
}

# mtu M: both ends at MTU M, the program detached
mtu() {
	"$X" detach xwa "${P[@]}" >/dev/null 2>&1
	"$X" detach xwb "${P[@]}" >/dev/null 2>&1
	ip link set xwa down && ip link set xwb down &&
		ip link set xwa mtu "$1" && ip link set xwb mtu "$1" &&
		ip link set xwa up && ip link set xwb up
}

# pingpong M: a ping-pong at MTU M (messages of 1 to 16 frames and more)
pingpong() {
	local m=$1 rc
	mtu "$m" || { fail "MTU $m: cannot set it on the veth pair"; return; }
	rm -f "$TMP/addr"
	"$X" -v pingpong --server --once --accept-timeout 20 xwa \
		--addr-file "$TMP/addr" "${P[@]}" >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SRV=$!
	"$X" -v -j pingpong --client --peer-file "$TMP/addr" --connect-timeout 20 xwb \
		--sizes 0,1K,4K,9K,64K,256K --iters 50 "${P[@]}" \
		>"$TMP/cli.out" 2>"$TMP/cli.err"
	rc=$?
	wait "$SRV"
	SRV=
	if [ "$rc" -ne 0 ] || grep -qi "generic" "$TMP/srv.err" "$TMP/cli.err"; then
		fail "MTU $m: ping-pong in native mode (exit $rc)"
		sed 's/^/     client: /' "$TMP/cli.err" | tail -10
		sed 's/^/     server: /' "$TMP/srv.err" | tail -10
		return
	fi
	echo "ok   MTU $m: ping-pong 0 B - 256 KiB in native XDP mode"
}

for m in 1500 3500 3827 9000; do pingpong "$m"; done

# An MTU the socket cannot carry: refused when the endpoint opens.
if mtu 65000; then
	timeout 30 "$X" pingpong --server --once --accept-timeout 5 xwa "${P[@]}" \
		>"$TMP/big.out" 2>"$TMP/big.err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "MTU 65000" "$TMP/big.err" &&
	    grep -q "set the MTU to at most" "$TMP/big.err"; then
		echo "ok   MTU 65000: refused when the endpoint opens: $(grep -m1 'MTU 65000' "$TMP/big.err")"
	else
		fail "MTU 65000: not refused with a clear error (exit $rc)"
		sed 's/^/     /' "$TMP/big.err" | tail -10
	fi
else
	echo "ok   MTU 65000: the veth takes no such MTU here (not checked)"
fi

[ "$failures" -eq 0 ] || exit 1
