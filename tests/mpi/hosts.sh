# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Namespace "hosts" for Open MPI runs (sourced by tests/test_mpi.sh,
# tests/test_mpi_fault.sh, tests/test_multiq.sh and bench/mpi/run.sh).
# Needs T (a unique tag, e.g. $$) and TMP; provides hosts N veth|bridge,
# fault_hosts, net_cleanup, cleanup, HOSTS, steer_counts, wire_drops.
HOSTS=()
LINKS=()
FAULT_PID= FAULT_IN= FAULT_OUT=
# Remove this run's namespaces (and what still runs in them: processes of
# this test's job only), links and fault harness.
net_cleanup() {
	local h l ino
	for h in "${HOSTS[@]}"; do ip netns pids "$h" 2>/dev/null | xargs -r kill -9 2>/dev/null; done
	# the local path's inboxes and id claims of processes killed there
	# (/dev/shm/xdpwake-<netns inode>-*: a closed endpoint removes its own)
	for h in "${HOSTS[@]}"; do
		ino=$(stat -L -c %i "/run/netns/$h" 2>/dev/null) && rm -f /dev/shm/xdpwake-"$ino"-*
	done
	for h in "${HOSTS[@]}"; do ip netns del "$h" 2>/dev/null; done
	for l in "${LINKS[@]}"; do ip link del "$l" 2>/dev/null; done
	rm -f "/sys/fs/bpf/xwsteer-$T"
	HOSTS=() LINKS=()
	# Last: in an EXIT trap, bash 5.2 exits as soon as the fault harness's
	# coprocess ends (strace: exit_group right after its SIGCHLD, tail
	# still running), so nothing after this may be needed.
	if [ -n "$FAULT_PID" ]; then
		# end of its stdin: it removes its namespaces and exits
		exec {FAULT_IN}>&- 2>/dev/null
		timeout 30 tail --pid="$FAULT_PID" -f /dev/null || kill -9 "$FAULT_PID" 2>/dev/null
		wait "$FAULT_PID" 2>/dev/null
		FAULT_PID=
	fi
	return 0
}
# the temporary directory first (see net_cleanup's last step)
cleanup() {
	rm -rf "$TMP"
	net_cleanup
}

# The management bridge xbm$T (10.212.0.1/24 in the root namespace) for
# Open MPI's out-of-band TCP.  The subnet is one per machine: a bridge left
# by a run that was killed before its clean-up (xbm<tag>, the tag the PID of
# that run's script) would take the route to 10.212.0.0/24 and Open MPI's
# daemons would never reach mpirun (a hang until the timeout).  A bridge
# whose run is gone is removed; one whose run still lives is an error.
mgmt_bridge() {
	local l tag
	for l in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}'); do
		tag=${l#xbm}
		[ "$tag" != "$l" ] && [ -n "$tag" ] && [ -z "${tag//[0-9]/}" ] || continue
		if kill -0 "$tag" 2>/dev/null; then
			echo "FAIL: management subnet 10.212.0.0/24 in use by $l (process $tag)" >&2
			return 1
		fi
		echo "note: removing $l, left by a run that is gone (process $tag)" >&2
		ip link del "$l" 2>/dev/null
	done
	ip link add "xbm$T" type bridge || skip "cannot create a bridge"
	LINKS+=("xbm$T")
	ip addr add 10.212.0.1/24 dev "xbm$T"
	ip link set "xbm$T" up
}

# mgmt_host I NS: namespace NS on the management bridge as 10.212.0.(10+I).
mgmt_host() {
	ip -n "$2" link set lo up
	ip link add "xm$1$T" type veth peer name xwm0 netns "$2"
	LINKS+=("xm$1$T")
	ip link set "xm$1$T" master "xbm$T" up
	ip -n "$2" addr add "10.212.0.$((10 + $1))/24" dev xwm0
	ip -n "$2" link set xwm0 up
}

# xdp_pass_on DEV: a pass-only XDP program on DEV (bench/bpf/bench_pass.bpf.c,
# built once into $TMP); a warning if it cannot be attached.
xdp_pass_on() {
	local o=$TMP/xdp_pass.o src=${XW_SRC:-$here/..}/bench/bpf/bench_pass.bpf.c
	[ -f "$o" ] || clang -O2 -target bpf -I"/usr/include/$(gcc -dumpmachine)" -c "$src" -o "$o" ||
		{ echo "warning: cannot build $src: liveness probes through the bridge go unanswered"; return 0; }
	ip link set dev "$1" xdp obj "$o" sec xdp 2>/dev/null ||
		echo "warning: no XDP program on $1: liveness probes through the bridge go unanswered"
}

# hosts N DATA: namespaces xwh<i>-$T on the management bridge, data
# interface xwd0 in each: a veth pair between the two (DATA=veth) or ports
# of bridge xbd$T (bridge).  With QUEUES=Q > 1 (bridge only) the veths have
# Q queues each way and every bridge port steers like a NIC's n-tuple rules
# "UDP destination port STEER_BASE+q -> RX queue q" (bpf/steer.bpf.c at tc
# ingress of the bridge ports, through $OUTPUT/tests/mpi/steer; STEER_BASE
# defaults to xdpwake's UDP port 49152): an endpoint on queue q of one host
# gets the frames the other hosts send to its port on its queue.  With
# MTU=M (veth only) the data veths have MTU M.
hosts() {
	local n=$1 data=$2 i h q=${QUEUES:-1} mq=() ports=()
	net_cleanup
	mgmt_bridge || return 1
	if [ "$q" -gt 1 ]; then
		[ "$data" = bridge ] || { echo "FAIL: QUEUES > 1 needs the bridge set-up"; return 1; }
		[ -x "$OUTPUT/tests/mpi/steer" ] || skip "steer not built (make tests)"
		mq=(numtxqueues "$q" numrxqueues "$q")
	fi
	if [ "$data" = bridge ]; then
		ip link add "xbd$T" type bridge
		LINKS+=("xbd$T")
		no_ipv6 - "xbd$T"
		ip link set "xbd$T" up
	fi
	for i in $(seq 1 "$n"); do
		h=xwh$i-$T
		ip netns add "$h" || skip "cannot create namespaces"
		HOSTS+=("$h")
		mgmt_host "$i" "$h"
		if [ "$data" = bridge ]; then
			ip link add "xd$i$T" "${mq[@]}" type veth peer name xwd0 netns "$h" "${mq[@]}"
			LINKS+=("xd$i$T")
			ports+=("xd$i$T")
			no_ipv6 - "xd$i$T"
			ip link set "xd$i$T" master "xbd$T" up
			# the XDP program on xwd0 answers liveness probes with
			# XDP_TX, which a veth delivers to its peer only when
			# the peer runs an XDP program (GRO alone did not do
			# here): a pass-only one on the bridge's end, as a
			# switch port would just forward
			xdp_pass_on "xd$i$T"
		fi
	done
	if [ "$q" -gt 1 ]; then
		"$OUTPUT/tests/mpi/steer" attach "${STEER_BASE:-49152}" "$q" "/sys/fs/bpf/xwsteer-$T" \
			"${ports[@]}"
		case $? in
		0) ;;
		77) skip "the tc steering program cannot be attached" ;;
		*) echo "FAIL: attaching the steering program"; return 1 ;;
		esac
	fi
	if [ "$data" = veth ]; then
		ip link add xwd0 netns "${HOSTS[0]}" type veth peer name xwd0 netns "${HOSTS[1]}"
	fi
	for i in $(seq 1 "$n"); do
		h=${HOSTS[$((i - 1))]}
		no_ipv6 "$h" xwd0
		ip -n "$h" link set xwd0 address "02:00:00:00:d0:0$i"
		# for the kernel-socket transports benchmarked against xdpwake
		ip -n "$h" addr add "10.213.0.$i/24" dev xwd0
		[ -z "${MTU:-}" ] || ip -n "$h" link set xwd0 mtu "$MTU" ||
			{ echo "FAIL: MTU $MTU on xwd0"; return 1; }
		ip -n "$h" link set xwd0 up
	done
}

# in_ns NETNS CMD...: CMD in namespace NETNS ("-": this one).
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

# no_ipv6 NETNS DEV: no IPv6 on data device DEV (before it is up): the
# kernel's own frames (neighbour and router solicitations, MLD reports)
# would share the data path's rings with the tests' frames, and a drop of
# one would count in wire_drops.  The tests use IPv4 only.
no_ipv6() {
	in_ns "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1" 2>/dev/null
	return 0
}

# pair_drops SRC_NS SRC DST_NS DST: frames veth SRC has lost so far on
# their way to its peer DST, each counted once: what SRC dropped sending
# (tx_dropped: the peer's ring full, an XDP_TX or redirected frame the
# peer could not take) and what DST dropped receiving (rx_dropped, less
# SRC's XDP_TX and redirect failures, which a veth counts on both ends:
# SRC's xdp_tx_errors and xdp_xmit_errors of ethtool -S).
pair_drops() {
	local tx rx twice
	tx=$(in_ns "$1" cat "/sys/class/net/$2/statistics/tx_dropped") &&
		rx=$(in_ns "$3" cat "/sys/class/net/$4/statistics/rx_dropped") &&
		twice=$(in_ns "$1" ethtool -S "$2" |
			awk '/_xdp_tx_errors:|_xdp_xmit_errors:/ {n += $2} END {print n + 0}') &&
		echo $((tx + rx - twice))
}

# wire_drops I J (bridge, after hosts): frames lost so far on the data path
# from host I to host J as the devices count them: I's xwd0 to its bridge
# port, J's bridge port to J's xwd0 (a veth with an XDP program on the
# receiving end queues into a ring per RX queue and drops when it is full
# and the receiving NAPI has not run: a loaded machine).
wire_drops() {
	local a b
	a=$(pair_drops "${HOSTS[$(($1 - 1))]}" xwd0 - "xd$1$T") &&
		b=$(pair_drops - "xd$2$T" "${HOSTS[$(($2 - 1))]}" xwd0) &&
		echo $((a + b))
}

# steer_counts: frames the bridge ports steered, "q<i> N" per queue
# ("other N": our port range but beyond QUEUES).
steer_counts() {
	"$OUTPUT/tests/mpi/steer" counts "/sys/fs/bpf/xwsteer-$T"
}

# fault_hosts DROP_PERMILLE REORDER_EVERY REORDER_BY: two hosts xwf1-$T and
# xwf2-$T on the management bridge whose data interfaces xwd0 are joined
# through the fault harness's impairing middle (tests/lib/fault.h, through
# $OUTPUT/tests/mpi/fault_hosts, which runs as a coprocess until
# net_cleanup).  fault_counters prints its counters.
fault_hosts() {
	local line i
	net_cleanup
	[ -x "$OUTPUT/tests/mpi/fault_hosts" ] || skip "fault_hosts not built (make tests)"
	mgmt_bridge || return 1
	coproc FAULT { exec "$OUTPUT/tests/mpi/fault_hosts" "xwf1-$T" "xwf2-$T" "$@" 2>&1; }
	FAULT_IN=${FAULT[1]} FAULT_OUT=${FAULT[0]}
	HOSTS=("xwf1-$T" "xwf2-$T")
	while :; do
		# set-up takes well under a second; 60 s only bounds a hang
		IFS= read -r -t 60 -u "$FAULT_OUT" line || { echo "FAIL: fault harness set-up"; return 1; }
		case $line in
		ready) break ;;
		SKIP*) skip "fault harness: $line" ;;
		fault-injection*) echo "    $line" ;;
		*) echo "    | $line" ;;
		esac
	done
	for i in 1 2; do mgmt_host "$i" "${HOSTS[$((i - 1))]}"; done
}

fault_counters() {
	local line i
	echo counters >&"$FAULT_IN"
	for i in 1 2; do
		IFS= read -r -t 30 -u "$FAULT_OUT" line || return 1
		echo "$line"
	done
}
