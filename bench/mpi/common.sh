# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Shared by bench/mpi/run.sh and bench/mpi/ranks.sh (sourced; needs here,
# the script's directory): options --out DIR --runs N, the checks, the
# build of mpi_pingpong, the namespace hosts of tests/mpi/hosts.sh with
# their clean-up, LAUNCH, the mpirun options that reach them, and mpi_run
# (one mpirun of a transport in CFG).
XW_SRC=$(cd "$here/../.." && pwd)
OUTPUT=${OUTPUT:-$XW_SRC/.output}
out=$XW_SRC/bench/results
runs=3
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) echo "usage: $0 [--out DIR] [--runs N]" >&2; exit 2 ;;
	esac
done
skip() { echo "SKIP $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
command -v mpicc >/dev/null || skip "Open MPI missing"
PROVDIR=$OUTPUT/fabric
[ -f "$PROVDIR/libxdpwake-fi.so" ] || skip "provider not built"
mkdir -p "$out" "$OUTPUT/bench"
BIN=$OUTPUT/bench/mpi_pingpong
mpicc -O2 -Wall -o "$BIN" "$here/mpi_pingpong.c" || exit 1
T=$$
TMP=$(mktemp -d /tmp/xwbmpi.XXXXXX)
. "$XW_SRC/tests/mpi/hosts.sh"
trap cleanup EXIT
trap 'exit 1' INT TERM

LAUNCH=(--allow-run-as-root --bind-to none --mca plm rsh
	--mca plm_rsh_agent "$XW_SRC/tests/mpi/ns_agent.sh" --mca plm_rsh_no_tree_spawn 1
	--mca oob_tcp_if_include 10.212.0.0/24)
declare -A CFG

# mpi_run NAME WHAT T MPIRUN-ARGS...: mpirun with transport T's options
# (CFG[T]), at most 600 s, stdout to $TMP/NAME.out, stderr to $TMP/NAME.err;
# when it fails, "WHAT: failed" and the error's last lines on stderr.
mpi_run() {
	local name=$1 what=$2 t=$3
	shift 3
	# shellcheck disable=SC2086 # CFG entries are option lists
	timeout --kill-after=10 600 mpirun "${LAUNCH[@]}" ${CFG[$t]} "$@" \
		> "$TMP/$name.out" 2> "$TMP/$name.err" && return 0
	echo "$what: failed" >&2
	tail -5 "$TMP/$name.err" >&2
	return 1
}
