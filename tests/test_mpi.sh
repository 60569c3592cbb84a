#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Open MPI (pml cm, mtl ofi) over the xdpwake provider, running the project's
# MPI test program (tests/mpi/xw_mpi_test.c):
#   (a) hosts as network namespaces, launched through tests/mpi/ns_agent.sh
#       (plm_rsh_agent), a management veth per host on a root-namespace
#       bridge for Open MPI's out-of-band TCP, and a data interface xwd0
#       for xdpwake: two ranks on two hosts joined by a veth pair, then
#       four ranks on four hosts joined by a bridge;
#   (m) several ranks per host: eight ranks, four on each of two hosts, each
#       rank with its own queue of the host's interface (UDP encapsulation;
#       the bridge steers frames to queues as a NIC's ntuple rules do, see
#       tests/mpi/hosts.sh); ranks on one host reach each other through
#       xdpwake's local path, ranks on the other host through the wire;
#       eight ranks share 2 cores, so Open MPI yields when idle;
#   (b) two ranks in one namespace, each on its own end of a veth pair,
#       chosen by FI_XDPWAKE_IFACE in an MPMD launch (-x before the first
#       app context applies to that context only: the second one repeats
#       FI_PROVIDER_PATH).
#   (j) set-up (a) with two hosts at MTU 9000 (jumbo frames: native XDP
#       with fragment support, multi-buffer AF_XDP frames);
# XW_MPI_PARTS="a2 a4 m b j" selects parts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
parts=${XW_MPI_PARTS:-a2 a4 m b j}

. "$here/mpi/common.sh"

# (a) N ranks on N namespace hosts
run_a() {
	local n=$1 data=$2 log=$TMP/a$1.log rc
	hosts "$n" "$data" || { fail=1; return; }
	mpirun_hosts "$log"
	rc=$?
	expect "(a) $n ranks on $n namespace hosts, data over a $data" "$log" "$rc" "$n"
}

# (j) 2 ranks on 2 namespace hosts, the data veth at MTU 9000; the
# provider must attach natively (no generic-mode fallback) and use frames
# up to the MTU
run_j() {
	local log=$TMP/j.log rc
	MTU=9000 hosts 2 veth || { fail=1; return; }
	mpirun_hosts "$log" -x FI_LOG_LEVEL=info -x FI_LOG_PROV=xdpwake
	rc=$?
	expect "(j) 2 ranks on 2 namespace hosts, data over a veth at MTU 9000" "$log" "$rc" 2 ||
		return
	if grep -q "using generic mode" "$log" || ! grep -q "attached .* in native mode" "$log" ||
	    ! grep -q "8936 payload bytes per frame" "$log"; then
		echo "FAIL: (j) not native XDP with MTU-sized frames:"
		grep -E "XDP|payload bytes" "$log" | sed 's/^/    | /' | head
		fail=1
	fi
}

# (m) 4 ranks on each of 2 namespace hosts, one queue each
run_m() {
	local log=$TMP/m.log rc
	QUEUES=4 hosts 2 bridge || { fail=1; return; }
	RANKS_PER_HOST=4 mpirun_hosts "$log" --mca mpi_yield_when_idle 1 -x FI_XDPWAKE_ENCAP=udp
	rc=$?
	expect "(m) 8 ranks, 4 per namespace host, one queue each, local and remote peers" \
		"$log" "$rc" 8
}

# (b) MPMD: two ranks in one namespace, one interface each
run_b() {
	local h=xwh0-$T log=$TMP/b.log rc
	net_cleanup
	HOSTS=("$h")
	ip netns add "$h" || skip "cannot create namespaces"
	ip -n "$h" link set lo up
	ip -n "$h" link add xwa type veth peer name xwb
	ip -n "$h" link set xwa address 02:00:00:00:d0:0a
	ip -n "$h" link set xwb address 02:00:00:00:d0:0b
	ip -n "$h" link set xwa up
	ip -n "$h" link set xwb up
	timeout --kill-after=10 "${XW_MPI_TIMEOUT:-300}" ip netns exec "$h" sh -c '
		mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || exit 1
		exec "$@"' sh mpirun "${MPI_COMMON[@]}" --mca oob_tcp_if_include lo \
		-np 1 -x FI_XDPWAKE_IFACE=xwa "$BIN" \
		: -np 1 -x FI_PROVIDER_PATH="$PROVDIR" ${SAN_MPI_X[@]+"${SAN_MPI_X[@]}"} \
		-x FI_XDPWAKE_IFACE=xwb "$BIN" \
		>"$log" 2>&1
	rc=$?
	expect "(b) MPMD: 2 ranks in one namespace, FI_XDPWAKE_IFACE per rank" "$log" "$rc" 2
}

for p in $parts; do
	case $p in
	a2) run_a 2 veth ;;
	a4) run_a 4 bridge ;;
	j) run_j ;;
	m) run_m ;;
	b) run_b ;;
	esac
done
exit $fail
