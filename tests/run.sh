#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Run every test: the program of each tests/test_*.c (built into
# $OUTPUT/tests/; one missing is a failure, and a stale binary of a test
# that no longer exists is not run) and the tests/test_*.sh scripts.
# Exit codes: 0 pass, 77 skip (reason printed), anything else fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUTPUT=${OUTPUT:-$here/../.output}
export OUTPUT XW_SRC=$(cd "$here/.." && pwd)
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
only=${TESTS:-}

# Pins of test processes that died (crash, kill -9) are stale.
for d in /sys/fs/bpf/xwtest-*; do
	[ -d "$d" ] || continue
	pid=${d##*-}
	kill -0 "$pid" 2>/dev/null || rm -rf "$d"
done
# So are the namespaces (and the hosts' bridge) of a test script killed by
# a signal its EXIT trap cannot catch (SIGKILL, e.g. timeout's
# --kill-after): each name carries the PID of the script that made it
# (tests/fabric/common.sh xwfi-TAG[-a|-b]-PID, tests/mpi/hosts.sh
# xwhI-PID and xbdPID, test_perf.sh xwtp-PID-b).
for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1); do
	case $ns in
	xwfi-*-[0-9]* | xwh[0-9]*-[0-9]*) pid=${ns##*-} ;;
	xwtp-[0-9]*-b) pid=${ns#xwtp-}; pid=${pid%-b} ;;
	*) continue ;;
	esac
	[[ $pid =~ ^[0-9]+$ ]] || continue
	kill -0 "$pid" 2>/dev/null && continue
	ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) && rm -f /dev/shm/xdpwake-"$ino"-*
	ip netns del "$ns"
done
for br in $(ip -o link show type bridge 2>/dev/null | sed -n 's/^[0-9]*: \(xbd[0-9]*\)[:@].*/\1/p'); do
	kill -0 "${br#xbd}" 2>/dev/null || ip link del "$br"
done

pass=0 fail=0 skip=0 failed=()
tests=()
for t in "$here"/test_*.c; do [ -f "$t" ] && tests+=("$OUTPUT/tests/$(basename "$t" .c)"); done
for t in "$here"/test_*.sh; do [ -f "$t" ] && tests+=("$t"); done
for t in "${tests[@]}"; do
	name=$(basename "$t")
	if [ -n "$only" ] && [[ " $only " != *" ${name%.sh} "* ]]; then continue; fi
	start=$(date +%s%N)
	[ -x "$t" ] || { fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (not built: $t)"; continue; }
	out=$(timeout --kill-after=10 "$TEST_TIMEOUT" "$t" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	secs=$((ms / 1000)).$(((ms % 1000) / 100))
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-28s %6ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-28s %s\n' "$name" "$(grep -m1 '^SKIP' <<<"$out")" ;;
	*) fail=$((fail + 1)); failed+=("$name")
	   printf 'FAIL %-28s %6ss (exit %d)\n' "$name" "$secs" "$rc"
	   sed 's/^/    | /' <<<"$out" | tail -40 ;;
	esac
done
echo "----"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
