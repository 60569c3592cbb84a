#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Eight ranks on one host (issue 28): Open MPI (pml cm, mtl ofi) over the
# xdpwake provider, MPI_Alltoall of 4 KiB to 1 MiB per pair of ranks
# (tests/mpi/xw_mpi_a2a.c), every byte of every block checked; all traffic
# between the ranks goes through xdpwake's local path (one namespace host,
# an 8-queue data interface, a queue per rank, UDP encapsulation).  Eight
# ranks share two cores: Open MPI yields when idle.  bench/mpi/a2a.sh
# times the same program against Open MPI's vader.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}

. "$here/mpi/common.sh"
BIN=$OUTPUT/tests/mpi/xw_mpi_a2a
mpicc -O2 -Wall -Werror -o "$BIN" "$here/mpi/xw_mpi_a2a.c" || { echo "FAIL: mpicc"; exit 1; }

log=$TMP/a2a.log
QUEUES=8 hosts 1 bridge || exit 1
MPI_ARGS=(--bytes $((8 * 1024 * 1024)))
RANKS_PER_HOST=8 mpirun_hosts "$log" --mca mpi_yield_when_idle 1 -x FI_XDPWAKE_ENCAP=udp \
	-x FI_LOG_LEVEL=info -x FI_LOG_SUBSYS=ep_ctrl
rc=$?
expect "8 ranks on one host, MPI_Alltoall of 4 KiB .. 1 MiB per pair, every byte checked" \
	"$log" "$rc" 8 && grep '^a2a,' "$log" | awk -F, '{ printf "    %7d B per pair: %d alltoalls, %.0f us each\n", $2, $3, $4 }'
# The endpoints' closing statistics carry the local path's counters: every
# endpoint took frames from its inbox, none lost, corrupt or retransmitted.
stats=$(grep -a -o 'closed: .*' "$log")
bad=$(awk '{ for (i = 2; i < NF; i++) v[$i] = $(i + 1)
	if (v["local_rx_frames"] + 0 == 0 || v["local_lost"] != 0 || v["local_rx_bad"] != 0 ||
	    v["retransmits"] != 0 || v["local_cma_fallbacks"] == "") print }' <<<"$stats")
if [ "$(grep -c . <<<"$stats")" -eq 8 ] && [ -z "$bad" ]; then
	echo "ok:   8 endpoints' closing statistics: local frames taken, none lost, corrupt or retransmitted"
else
	echo "FAIL: the endpoints' closing statistics (8 lines with the local path's counters)"
	sed 's/^/    | /' <<<"${bad:-$stats}"
	fail=1
fi
exit $fail
