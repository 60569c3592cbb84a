# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Shared by the Open MPI tests (sourced by tests/test_mpi.sh and
# tests/test_mpi_fault.sh): checks, the build of the project's MPI program,
# the mpirun command of set-up (a) and the verdict on a run.
# Needs here, OUTPUT.  Sets PROVDIR BIN AGENT T TMP MPI_COMMON fail, and
# sources hosts.sh.

skip() { echo "SKIP $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, XDP)"
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
	skip "Open MPI missing (openmpi-bin, libopenmpi-dev)"
PROVDIR=$OUTPUT/fabric
[ -f "$PROVDIR/libxdpwake-fi.so" ] || skip "provider not built (libfabric-dev missing?)"
. "$here/fabric/san_preload.sh"
san_preload "$PROVDIR/libxdpwake-fi.so"
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
# (-x before an MPMD launch's first app context applies to that one only:
# test_mpi.sh passes SAN_MPI_X to its second context too)
SAN_MPI_X=()
[ "$SAN_PRELOADED" = 1 ] && SAN_MPI_X=(-x LD_PRELOAD -x ASAN_OPTIONS)
MPI_COMMON+=(${SAN_MPI_X[@]+"${SAN_MPI_X[@]}"})
fail=0

# mpirun_hosts LOG [OPTION...]: the MPI program ($BIN, its arguments
# MPI_ARGS) on RANKS_PER_HOST ranks
# (default 1) per host of HOSTS, ranks numbered host by host (set-up (a):
# namespaces reached through ns_agent.sh, Open MPI's own traffic on the
# management bridge, xdpwake on xwd0); its exit code.
mpirun_hosts() {
	local log=$1 k=${RANKS_PER_HOST:-1} hl
	shift
	hl=$(printf "%s:$k," "${HOSTS[@]}")
	timeout --kill-after=10 "${XW_MPI_TIMEOUT:-300}" mpirun "${MPI_COMMON[@]}" --host "${hl%,}" \
		-np $((${#HOSTS[@]} * k)) --mca plm rsh --mca plm_rsh_agent "$AGENT" \
		--mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include 10.212.0.0/24 \
		-x FI_XDPWAKE_IFACE=xwd0 "$@" "$BIN" ${MPI_ARGS[@]+"${MPI_ARGS[@]}"} >"$log" 2>&1
}

# expect NAME LOG RC RANKS: the program passed every part on RANKS ranks.
expect() {
	[ -n "${XW_MPI_LOGDIR:-}" ] && cp "$2" "$XW_MPI_LOGDIR/"
	if [ "$3" -eq 0 ] && grep -q "ok:   all parts passed on $4 ranks" "$2"; then
		echo "ok:   $1"
		grep '^ok:' "$2" | grep -v 'all parts' | sed 's/^/    /'
		return 0
	fi
	echo "FAIL: $1 (exit $3)"
	sed 's/^/    | /' "$2" | tail -40
	fail=1
	return 1
}
