# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Shared by the libfabric provider tests (sourced): two namespaces joined by
# a veth pair, unique names, removed on exit; helpers to wait, bounded, for
# a TCP listener inside a namespace.
# Needs: OUTPUT, XW_SRC.  Sets: NS_A NS_B IF_A IF_B IP_A IP_B PROVDIR.

skip() { echo "SKIP $*"; exit 77; }

fi_common_checks() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, XDP)"
	command -v ip >/dev/null || skip "iproute2 missing"
	PROVDIR=$OUTPUT/fabric
	[ -f "$PROVDIR/libxdpwake-fi.so" ] || skip "provider not built (libfabric-dev missing?)"
	export FI_PROVIDER_PATH=$PROVDIR
	. "$XW_SRC/tests/fabric/san_preload.sh"
	san_preload "$PROVDIR/libxdpwake-fi.so"
}

# fi_pair TAG: namespaces xwfi-TAG-a-$$ / -b-$$, veth fa$$ / fb$$ with
# fixed MACs and IPv4 addresses (the out-of-band TCP of the tools).
fi_pair() {
	NS_A=xwfi-$1-a-$$
	NS_B=xwfi-$1-b-$$
	IF_A=fa$$
	IF_B=fb$$
	IP_A=10.211.0.1
	IP_B=10.211.0.2
	trap fi_cleanup EXIT
	trap 'exit 1' INT TERM
	ip netns add "$NS_A" && ip netns add "$NS_B" || skip "cannot create namespaces"
	ip link add "$IF_A" netns "$NS_A" type veth peer name "$IF_B" netns "$NS_B" ||
		skip "cannot create veth"
	ip -n "$NS_A" link set "$IF_A" address 02:00:00:00:fa:01
	ip -n "$NS_B" link set "$IF_B" address 02:00:00:00:fb:01
	ip -n "$NS_A" addr add "$IP_A/24" dev "$IF_A"
	ip -n "$NS_B" addr add "$IP_B/24" dev "$IF_B"
	for ns in "$NS_A" "$NS_B"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_A" link set "$IF_A" up
	ip -n "$NS_B" link set "$IF_B" up
}

# fi_ns1 TAG MAC_A MAC_B: one namespace xwfi-TAG-$$ (NS_A) holding both
# ends xwa / xwb of a veth pair, with these MACs, removed on exit.
fi_ns1() {
	NS_A=xwfi-$1-$$
	NS_B=
	trap fi_cleanup EXIT
	trap 'exit 1' INT TERM
	ip netns add "$NS_A" || skip "cannot create namespaces"
	ip -n "$NS_A" link add xwa type veth peer name xwb || skip "cannot create veth"
	ip -n "$NS_A" link set xwa address "$2"
	ip -n "$NS_A" link set xwb address "$3"
	ip -n "$NS_A" link set lo up
	ip -n "$NS_A" link set xwa up
	ip -n "$NS_A" link set xwb up
}

FI_PIDS=()
fi_cleanup() {
	for p in "${FI_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${FI_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	# the local path's inboxes and id claims of processes killed there
	# (fi_unit --peer-death; a closed endpoint removes its own)
	for ns in "$NS_A" "$NS_B"; do
		[ -n "$ns" ] && ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) &&
			rm -f /dev/shm/xdpwake-"$ino"-*
	done
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	[ -n "${FI_TMP:-}" ] && rm -rf "$FI_TMP"
	return 0
}

# wait_listen NS PORT PID: until a TCP socket listens on PORT in NS (at most
# 30 s; fails early when PID died).
wait_listen() {
	local i
	for i in $(seq 1 3000); do
		ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}
