# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Shared by tests/test_multiq.sh and tests/test_ranks128.sh (sourced; needs
# here, OUTPUT, MQ_TMP - the prefix of the run's temporary directory): the
# checks, tests/mpi/hosts.sh with its clean-up, bad(), the processes
# (tests/multiq_peer) of a run on the two namespace hosts, and their
# results.  The processes get the caller's environment (XW_MQ_* of
# multiq_peer.c).
PEER=$OUTPUT/tests/multiq_peer
skip() { echo "SKIP $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, XDP)"
[ -x "$PEER" ] || { echo "FAIL: $PEER not built (make tests)"; exit 1; }
T=$$
TMP=$(mktemp -d "/tmp/$MQ_TMP.XXXXXX")
. "$here/mpi/hosts.sh"
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# launch RUN VICTIMS ROUNDS: the processes of each host (ids1, ids2; ALL:
# every id, a comma list) under one shell per host (one mount namespace: the host's processes share the bpffs
# with the program's pinned maps); their pids in $D/pid.ID.
launch() {
	local run=$1 victims=$2 rounds=$3 h mine
	D=$TMP/$run
	mkdir -p "$D"
	for h in 1 2; do
		if [ $h = 1 ]; then mine="${ids1[*]}"; else mine="${ids2[*]}"; fi
		ip netns exec "${HOSTS[$((h - 1))]}" sh -c '
			mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || exit 1
			peer=$1 d=$2 all=$3 victims=$4 rounds=$5; shift 5
			for id in "$@"; do
				"$peer" xwd0 "$id" "$d" "$all" "$all" "$victims" "$rounds" \
					>"$d/out.$id" 2>&1 &
				echo $! >"$d/pid.$id"
			done
			wait' sh "$PEER" "$D" "$ALL" "$victims" "$rounds" $mine &
		eval "HOST_SH$h=$!"
	done
}

# finish SECS: wait (at most SECS) for both host shells.
finish() {
	local i
	for i in $(seq 1 $(($1 * 10))); do
		kill -0 "$HOST_SH1" 2>/dev/null || kill -0 "$HOST_SH2" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$HOST_SH1" 2>/dev/null || kill -0 "$HOST_SH2" 2>/dev/null; then
		bad "processes still running after $1 s"
		for f in "$D"/pid.*; do kill -9 "$(cat "$f")" 2>/dev/null; done
	fi
	wait "$HOST_SH1" "$HOST_SH2" 2>/dev/null
}

# field ID KEY: a value of process ID's RESULT line.
field() {
	sed -n "s/^RESULT .* $2=\([0-9]*\).*/\1/p; s/^RESULT $2=\([0-9]*\).*/\1/p" "$D/out.$1" | head -1
}

show() {
	local id
	for id in "$@"; do sed 's/^/    | /' "$D/out.$id" | tail -8; done
}
