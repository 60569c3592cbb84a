#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Open MPI (pml cm, mtl ofi) over the xdpwake provider, running the project's
# MPI test program (tests/mpi/xw_mpi_test.c):
#   (a) hosts as network namespaces, launched through tests/mpi/ns_agent.sh
#       (plm_rsh_agent), a management veth per host on a root-namespace
#       bridge for Open MPI's out-of-band TCP, and a data interface xwd0
#       for xdpwake: two ranks on two hosts joined by a veth pair, then
#       four ranks on four hosts joined by a bridge;
#   (b) two ranks in one namespace, each on its own end of a veth pair,
#       chosen by FI_XDPWAKE_IFACE in an MPMD launch (-x before the first
#       app context applies to that context only: the second one repeats
#       FI_PROVIDER_PATH).
# XW_MPI_PARTS="a2 a4 b" selects parts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
parts=${XW_MPI_PARTS:-a2 a4 b}

skip() { echo "SKIP $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, XDP)"
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
	skip "Open MPI missing (openmpi-bin, libopenmpi-dev)"
PROVDIR=$OUTPUT/fabric
[ -f "$PROVDIR/libxdpwake-fi.so" ] || skip "provider not built (libfabric-dev missing?)"
mkdir -p "$OUTPUT/tests/mpi"
BIN=$OUTPUT/tests/mpi/xw_mpi_test
mpicc -O2 -Wall -Werror -o "$BIN" "$here/mpi/xw_mpi_test.c" || { echo "FAIL: mpicc"; exit 1; }
AGENT=$here/mpi/ns_agent.sh

T=$$
TMP=$(mktemp -d /tmp/xwmpi.XXXXXX)
. "$here/mpi/hosts.sh"
trap cleanup EXIT
trap 'exit 1' INT TERM

MPI_COMMON=(--allow-run-as-root --bind-to none
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self
	-x FI_PROVIDER_PATH="$PROVDIR" ${XW_MPI_EXTRA:-})
fail=0

# expect NAME LOG RC RANKS
expect() {
	[ -n "${XW_MPI_LOGDIR:-}" ] && cp "$2" "$XW_MPI_LOGDIR/"
	if [ "$3" -eq 0 ] && grep -q "ok:   all parts passed on $4 ranks" "$2"; then
		echo "ok:   $1"
		grep '^ok:' "$2" | grep -v 'all parts' | sed 's/^/    /'
	else
		echo "FAIL: $1 (exit $3)"
		sed 's/^/    | /' "$2" | tail -40
		fail=1
	fi
}

# (a) N ranks on N namespace hosts
run_a() {
	local n=$1 data=$2 hl log=$TMP/a$1.log rc
	hosts "$n" "$data"
	hl=$(IFS=,; echo "${HOSTS[*]}")
	timeout --kill-after=10 "${XW_MPI_TIMEOUT:-300}" mpirun "${MPI_COMMON[@]}" --host "$hl" -np "$n" \
		--mca plm rsh --mca plm_rsh_agent "$AGENT" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include 10.212.0.0/24 \
		-x FI_XDPWAKE_IFACE=xwd0 "$BIN" >"$log" 2>&1
	rc=$?
	expect "(a) $n ranks on $n namespace hosts, data over a $data" "$log" "$rc" "$n"
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
		: -np 1 -x FI_PROVIDER_PATH="$PROVDIR" -x FI_XDPWAKE_IFACE=xwb "$BIN" \
		>"$log" 2>&1
	rc=$?
	expect "(b) MPMD: 2 ranks in one namespace, FI_XDPWAKE_IFACE per rank" "$log" "$rc" 2
}

for p in $parts; do
	case $p in
	a2) run_a 2 veth ;;
	a4) run_a 4 bridge ;;
	b) run_b ;;
	esac
done
exit $fail
