#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The provider through the libfabric API (tests/fabric/fi_unit.c): one
# process, two RDM endpoints on the two ends of a veth pair inside a fresh
# namespace.  Also: fi_info lists one entry per usable interface with the
# interface as domain name, and fi_info -e shows the FI_XDPWAKE_* settings.
# fi_unit --wait counts sleeps and wakes of every waiting path (see there),
# fi_unit --watchdog: the default watchdog answers a computing application's
# peer; fi_unit --one-cpu: a ping-pong on one CPU yields instead of sleeping;
# fi_unit --crowd: on a crowded host an idle read sleeps at once;
# fi_unit --race: completions other threads make while a reader spins are
# seen.  Then fi_unit --peer-death: the peer is a child process, killed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
. "$here/fabric/common.sh"

fi_common_checks
BIN=$OUTPUT/tests/fi_unit.bin # make tests (mk/fabric.mk)
[ -x "$BIN" ] || { echo "FAIL: $BIN not built (make tests)"; exit 1; }
fi_ns1 u 02:00:00:00:ea:01 02:00:00:00:eb:01
fail=0

out=$(ip netns exec "$NS_A" fi_info -p xdpwake 2>&1)
doms=$(grep -c 'domain:' <<<"$out")
if [ "$doms" -eq 2 ] && grep -q 'domain: xwa' <<<"$out" && grep -q 'domain: xwb' <<<"$out" &&
	! grep -q 'domain: lo' <<<"$out"; then
	echo "ok:   fi_info -p xdpwake: one entry per interface (xwa, xwb), none for lo"
else
	echo "FAIL: fi_info -p xdpwake"; sed 's/^/    | /' <<<"$out"; fail=1
fi
out=$(FI_XDPWAKE_IFACE=xwb ip netns exec "$NS_A" fi_info -p xdpwake 2>&1)
if [ "$(grep -c 'domain:' <<<"$out")" -eq 1 ] && grep -q 'domain: xwb' <<<"$out"; then
	echo "ok:   FI_XDPWAKE_IFACE=xwb: only xwb"
else
	echo "FAIL: FI_XDPWAKE_IFACE"; sed 's/^/    | /' <<<"$out"; fail=1
fi
n=$(fi_info -e 2>/dev/null | grep -ac '^# FI_XDPWAKE_')
if [ "$n" -ge 10 ] && fi_info -e 2>/dev/null | grep -q '^# FI_XDPWAKE_WATCHDOG_USECS' &&
	fi_info -e 2>/dev/null | grep -q '^# FI_XDPWAKE_IDLE_SLEEP_USECS'; then
	echo "ok:   fi_info -e shows $n FI_XDPWAKE_* settings"
else
	echo "FAIL: fi_info -e shows $n FI_XDPWAKE_* settings"; fail=1
fi
# A setting out of range fails the endpoint's open, naming it
if FI_LOG_LEVEL=warn FI_XDPWAKE_PULL_SPIN=1001 ip netns exec "$NS_A" timeout 60 "$BIN" xwa xwb \
	>"$OUTPUT/tests/fi_unit_badparam.out" 2>&1; then
	echo "FAIL: FI_XDPWAKE_PULL_SPIN=1001 accepted"; fail=1
elif grep -q 'FI_XDPWAKE_PULL_SPIN: 1001 above 1000' "$OUTPUT/tests/fi_unit_badparam.out" &&
	grep -q 'fi_endpoint xwa: Invalid argument' "$OUTPUT/tests/fi_unit_badparam.out"; then
	echo "ok:   FI_XDPWAKE_PULL_SPIN=1001: fi_endpoint fails with -FI_EINVAL, the warning names it"
else
	echo "FAIL: FI_XDPWAKE_PULL_SPIN=1001: no clear error"
	sed 's/^/    | /' "$OUTPUT/tests/fi_unit_badparam.out" | tail -10; fail=1
fi
if FI_LOG_LEVEL=warn ip netns exec "$NS_A" timeout 120 "$BIN" xwa xwb 2>"$OUTPUT/tests/fi_unit.err"; then
	echo "ok:   fi_unit"
else
	echo "FAIL: fi_unit"; sed 's/^/    | /' "$OUTPUT/tests/fi_unit.err" | tail -20; fail=1
fi
# fi_unit opens a second endpoint from the default info (id 1 is taken):
# the ids it finds busy on the way are not warnings
if grep -q 'endpoint [0-9]* is' "$OUTPUT/tests/fi_unit.err"; then
	echo "FAIL: busy ids during the id search logged as warnings:"
	grep 'endpoint [0-9]* is' "$OUTPUT/tests/fi_unit.err" | sed 's/^/    | /'; fail=1
else
	echo "ok:   no warning for the busy ids an endpoint skips"
fi
# Sleeps and wakes, counted (fi_unit --wait): the idle read's sleep is 5 s
# long, so a lost wake shows as a timeout, and no sleep as none counted;
# no watchdog, so that only FI_PROGRESS_AUTO's thread can progress a
# computing application's endpoint
if FI_LOG_LEVEL=warn FI_XDPWAKE_IDLE_SLEEP_USECS=5000000 FI_XDPWAKE_WATCHDOG_USECS=0 \
	ip netns exec "$NS_A" timeout 180 "$BIN" --wait xwa xwb 2>"$OUTPUT/tests/fi_unit_wait.err"; then
	echo "ok:   fi_unit --wait"
else
	echo "FAIL: fi_unit --wait"; sed 's/^/    | /' "$OUTPUT/tests/fi_unit_wait.err" | tail -20; fail=1
fi
# Both ends of a ping-pong pinned to one CPU, in two processes (fi_unit
# --one-cpu): the idle reads yield the CPU to each other instead of
# sleeping (counted, not timed)
if FI_LOG_LEVEL=warn ip netns exec "$NS_A" timeout 120 "$BIN" --one-cpu xwa xwb \
	>"$OUTPUT/tests/fi_unit_1cpu.out" 2>&1; then
	echo "ok:   fi_unit --one-cpu: $(grep '^ping-pong' "$OUTPUT/tests/fi_unit_1cpu.out")"
else
	echo "FAIL: fi_unit --one-cpu"; sed 's/^/    | /' "$OUTPUT/tests/fi_unit_1cpu.out" | tail -20; fail=1
fi
# A crowded host (fi_unit --crowd: more spinning processes than CPUs,
# FI_XDPWAKE_IDLE_CROWD=1): the idle read sleeps at once, without a
# sched_yield() probe, and the frame wakes it (counted, not timed)
if FI_LOG_LEVEL=warn ip netns exec "$NS_A" timeout 120 "$BIN" --crowd xwa xwb \
	>"$OUTPUT/tests/fi_unit_crowd.out" 2>&1; then
	echo "ok:   fi_unit --crowd:$(grep 'crowded idle read' "$OUTPUT/tests/fi_unit_crowd.out")"
else
	echo "FAIL: fi_unit --crowd"; sed 's/^/    | /' "$OUTPUT/tests/fi_unit_crowd.out" | tail -20; fail=1
fi
# Completions other threads make while a reader spins (fi_unit --race):
# busy-polling, the reads as tight as they get: a missed completion is a
# timeout
if FI_LOG_LEVEL=warn FI_XDPWAKE_WAIT=spin ip netns exec "$NS_A" timeout 180 "$BIN" --race xwa xwb \
	>"$OUTPUT/tests/fi_unit_race.out" 2>&1; then
	echo "ok:   fi_unit --race: $(grep -c '^    ' "$OUTPUT/tests/fi_unit_race.out") cases"
	sed 's/^/    | /' "$OUTPUT/tests/fi_unit_race.out" | grep ' round trips\| receives'
else
	echo "FAIL: fi_unit --race"; sed 's/^/    | /' "$OUTPUT/tests/fi_unit_race.out" | tail -20; fail=1
fi
# The default watchdog (FI_XDPWAKE_WATCHDOG_USECS=1000) answers a computing
# application's peer
if FI_LOG_LEVEL=warn ip netns exec "$NS_A" timeout 120 "$BIN" --watchdog xwa xwb \
	2>"$OUTPUT/tests/fi_unit_wd.err"; then
	echo "ok:   fi_unit --watchdog"
else
	echo "FAIL: fi_unit --watchdog"; sed 's/^/    | /' "$OUTPUT/tests/fi_unit_wd.err" | tail -20; fail=1
fi
# B in a child process, killed: A's requests with it fail with FI_ECONNRESET
# once B's program answers a liveness probe "gone" (about 1 s); the program
# bounds its own waits to 30 s, half the give-up time for a silent peer
if ip netns exec "$NS_A" timeout 120 "$BIN" --peer-death xwa xwb; then
	echo "ok:   fi_unit --peer-death"
else
	echo "FAIL: fi_unit --peer-death"; fail=1
fi
exit $fail
