# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Namespace "hosts" for Open MPI runs (sourced by tests/test_mpi.sh and
# bench/mpi.sh).  Needs T (a unique tag, e.g. $$) and TMP; provides
# hosts N veth|bridge, net_cleanup, cleanup, HOSTS.
HOSTS=()
LINKS=()
# Remove this run's namespaces (and what still runs in them: processes of
# this test's job only) and links.
net_cleanup() {
	local h l
	for h in "${HOSTS[@]}"; do ip netns pids "$h" 2>/dev/null | xargs -r kill -9 2>/dev/null; done
	for h in "${HOSTS[@]}"; do ip netns del "$h" 2>/dev/null; done
	for l in "${LINKS[@]}"; do ip link del "$l" 2>/dev/null; done
	HOSTS=() LINKS=()
	return 0
}
cleanup() {
	net_cleanup
	rm -rf "$TMP"
}

# hosts N DATA: namespaces xwh<i>-$T, management on bridge xbm$T
# (10.212.0.1/24 in the root namespace), data interface xwd0 in each: a
# veth pair between the two (DATA=veth) or ports of bridge xbd$T (bridge).
hosts() {
	local n=$1 data=$2 i h
	net_cleanup
	ip link add "xbm$T" type bridge || skip "cannot create a bridge"
	LINKS+=("xbm$T")
	ip addr add 10.212.0.1/24 dev "xbm$T"
	ip link set "xbm$T" up
	if [ "$data" = bridge ]; then
		ip link add "xbd$T" type bridge
		LINKS+=("xbd$T")
		ip link set "xbd$T" up
	fi
	for i in $(seq 1 "$n"); do
		h=xwh$i-$T
		ip netns add "$h" || skip "cannot create namespaces"
		HOSTS+=("$h")
		ip -n "$h" link set lo up
		ip link add "xm$i$T" type veth peer name xwm0 netns "$h"
		LINKS+=("xm$i$T")
		ip link set "xm$i$T" master "xbm$T" up
		ip -n "$h" addr add "10.212.0.$((10 + i))/24" dev xwm0
		ip -n "$h" link set xwm0 up
		if [ "$data" = bridge ]; then
			ip link add "xd$i$T" type veth peer name xwd0 netns "$h"
			LINKS+=("xd$i$T")
			ip link set "xd$i$T" master "xbd$T" up
		fi
	done
	if [ "$data" = veth ]; then
		ip link add xwd0 netns "${HOSTS[0]}" type veth peer name xwd0 netns "${HOSTS[1]}"
	fi
	for i in $(seq 1 "$n"); do
		h=${HOSTS[$((i - 1))]}
		ip -n "$h" link set xwd0 address "02:00:00:00:d0:0$i"
		# for the kernel-socket transports benchmarked against xdpwake
		ip -n "$h" addr add "10.213.0.$i/24" dev xwd0
		ip -n "$h" link set xwd0 up
	done
}

