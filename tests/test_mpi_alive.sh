#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Open MPI ranks that do not call MPI for many give-up times survive
# (issue 23, "alive while computing"): tests/mpi/xw_mpi_alive.c over the
# provider (pml cm, mtl ofi) on namespace hosts (tests/mpi/hosts.sh), with
# the give-up time scaled down to FI_XDPWAKE_GIVE_UP_MS=1000 so that a few
# seconds of computing are several give-up times (bench/mpi/alive.sh runs
# the same at full length):
#   (a2) two hosts on a veth pair (the provider's defaults: the polling
#        watchdog answers for a computing rank): a late barrier and allreduce, computing
#        between posting and waiting (both ways, eager and rendezvous), a
#        rank stopped (SIGSTOP) for 5 s in a ping-pong loop, a rank killed
#        (SIGKILL): the job ends with an error within a bounded time;
#   (a4) four hosts on a bridge, the watchdog off (only the liveness probes
#        keep a computing rank alive; their answers are counted): the late
#        barrier and computing between posting and waiting;
#   (m)  two hosts, two ranks each, each on its own queue (UDP), so ranks
#        reach each other both through the wire and through the local path.
# XW_ALIVE_PARTS="a2 stop kill a4 m" selects parts (stopb: the stop part
# on the bridge).
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
parts=${XW_ALIVE_PARTS:-a2 stop kill a4 m}
C=${XW_ALIVE_SECS:-6} # seconds of computing: 6 give-up times

. "$here/mpi/common.sh"
BIN=$OUTPUT/tests/mpi/xw_mpi_alive
mpicc -O2 -Wall -Werror -o "$BIN" "$here/mpi/xw_mpi_alive.c" || { echo "FAIL: mpicc"; exit 1; }
MPI_COMMON+=(-x FI_XDPWAKE_GIVE_UP_MS=1000 -x FI_LOG_LEVEL=info -x FI_LOG_PROV=xdpwake)

# liveness answers the ranks took (their endpoints' closing statistics at
# FI_LOG_LEVEL=info): probes answered by the peers' XDP programs, and
# local peers found alive; the sum over LOG
live_sum() { # LOG FIELD
	sed -n "s/.*closed: .* $2 \([0-9]*\).*/\1/p" "$1" | awk '{ n += $1 } END { print n + 0 }'
}

run_alive() { # NAME N DATA [mpirun options]
	local name=$1 n=$2 data=$3 log=$TMP/alive-$1.log rc
	shift 3
	hosts "$n" "$data" || { fail=1; return; }
	MPI_ARGS=(late "$C" post "$C")
	mpirun_hosts "$log" "$@"
	rc=$?
	expect "($name) late barrier and allreduce, compute between post and wait: $C s = 6 give-up times${WD_NOTE:-}" \
		"$log" "$rc" "$((n * ${RANKS_PER_HOST:-1}))" || return
	# with the polling watchdog (the provider's default) the computing
	# ranks answer through it; without, only the liveness probes can
	# have kept them
	[ -n "${WD_NOTE:-}" ] || return 0
	local r l
	r=$(live_sum "$log" live_replies) l=$(live_sum "$log" live_local)
	if [ "$r" -gt 0 ] || { [ "$name" = m ] && [ "$l" -gt 0 ]; }; then
		echo "ok:   ($name) the computing ranks were found alive: $r probes answered by their XDP programs, $l local peers alive"
	else
		echo "FAIL: ($name) no liveness answer: $r probe replies, $l local"; fail=1
	fi
}

# (stop) a rank stopped for 5 s (5 give-up times) in a ping-pong loop
run_stop() { # DATA
	local log=$TMP/alive-stop-$1.log pidf=$TMP/stop.pid rc pid gap
	hosts 2 "$1" || { fail=1; return; }
	rm -f "$pidf"
	MPI_ARGS=(loop 12)
	mpirun_hosts "$log" -x XW_ALIVE_PIDFILE="$pidf" &
	local mp=$!
	for _ in $(seq 1 300); do [ -s "$pidf" ] && break; sleep 0.1; done
	pid=$(cat "$pidf" 2>/dev/null)
	if [ -z "$pid" ]; then
		echo "FAIL: (stop) rank 1 never wrote its pid"; wait "$mp"; sed 's/^/    | /' "$log" | tail -20
		fail=1; return
	fi
	sleep 2
	kill -STOP "$pid"
	sleep 5
	kill -CONT "$pid"
	wait "$mp"
	rc=$?
	if expect "(stop) rank 1 stopped (SIGSTOP) for 5 s = 5 give-up times in a ping-pong loop, continued" \
		"$log" "$rc" 2; then
		gap=$(sed -n 's/.*longest gap between rounds \([0-9.]*\) s.*/\1/p' "$log")
		if python3 -c "import sys; sys.exit(0 if float('${gap:-0}') >= 4.5 else 1)"; then
			echo "ok:   (stop) the loop stood still ${gap} s while rank 1 was stopped"
		else
			echo "FAIL: (stop) longest gap ${gap:-?} s: rank 1 was not stopped long"; fail=1
		fi
	fi
}

# (kill) a rank killed (SIGKILL) in a ping-pong loop: the job ends with an
# error in bounded time, no rank hangs
run_kill() {
	local log=$TMP/alive-kill.log pidf=$TMP/kill.pid rc pid t0 t1
	hosts 2 veth || { fail=1; return; }
	rm -f "$pidf"
	MPI_ARGS=(loop 60)
	XW_MPI_TIMEOUT=120 mpirun_hosts "$log" -x XW_ALIVE_PIDFILE="$pidf" &
	local mp=$!
	for _ in $(seq 1 300); do [ -s "$pidf" ] && break; sleep 0.1; done
	pid=$(cat "$pidf" 2>/dev/null)
	if [ -z "$pid" ]; then
		echo "FAIL: (kill) rank 1 never wrote its pid"; wait "$mp"; fail=1; return
	fi
	sleep 2
	kill -KILL "$pid"
	t0=$(date +%s.%N)
	wait "$mp"
	rc=$?
	t1=$(date +%s.%N)
	# (137: mpirun passes on the killed rank's status; 124: our timeout)
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
		python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 30 else 1)"; then
		echo "ok:   (kill) rank 1 killed: the job ended with exit $rc after $(python3 -c "print('%.1f' % ($t1 - $t0))") s, no rank hung"
	else
		echo "FAIL: (kill) rank 1 killed: exit $rc after $(python3 -c "print('%.1f' % ($t1 - $t0))") s"
		sed 's/^/    | /' "$log" | tail -20
		fail=1
	fi
}

for p in $parts; do
	case $p in
	a2) run_alive a2 2 veth ;;
	stop) run_stop veth ;;
	stopb) run_stop bridge ;;
	kill) run_kill ;;
	a4) WD_NOTE=", watchdog off" run_alive a4 4 bridge -x FI_XDPWAKE_WATCHDOG_USECS=0 ;;
	m) WD_NOTE=", watchdog off" QUEUES=2 RANKS_PER_HOST=2 run_alive m 2 bridge \
		-x FI_XDPWAKE_ENCAP=udp --mca mpi_yield_when_idle 1 -x FI_XDPWAKE_WATCHDOG_USECS=0 ;;
	esac
done
exit $fail
