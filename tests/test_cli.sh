#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# The xdpwake command-line tool, for real: a veth pair in an anonymous
# network namespace (nothing can leak: it disappears with the process), a
# private mount namespace (for a faked busy-poll sysctl), and a unique bpffs
# pin root removed on exit.
# Exit: 0 pass, 1 failure, 77 skip (not root / no namespaces / no python3).
set -u

OUTPUT=${OUTPUT:-$(cd "$(dirname "$0")/.." && pwd)/.output}
X=$OUTPUT/xdpwake

skip() {
	echo "SKIP: $*"
	exit 77
}

if [ "$(id -u)" -ne 0 ]; then
	skip "needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN)"
fi
if [ ! -x "$X" ]; then
	echo "FAIL: $X not built (run make)"
	exit 1
fi
command -v python3 >/dev/null || skip "python3 needed to check JSON output"

# Re-run this script inside fresh network and mount namespaces.
if [ -z "${XW_CLI_TEST_INNER:-}" ]; then
	unshare --net --mount -- true 2>/dev/null || skip "unshare --net --mount failed"
	XW_CLI_TEST_INNER=1 exec unshare --net --mount -- "$BASH" "$0" "$@"
	skip "unshare --net --mount failed"
fi

ROOT=/sys/fs/bpf/xwtest-$$
TMP=$(mktemp -d /tmp/xwcli.XXXXXX) || exit 1
A=xwa
B=xwb
cleanup() {
	umount /proc/sys/net/core 2>/dev/null
	rm -rf "$ROOT" "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || skip "cannot mount bpffs"
ip link set lo up || skip "ip link set lo up failed (iproute2 missing?)"
ip link add "$A" type veth peer name "$B" || skip "cannot create a veth pair"
ip link set "$A" up && ip link set "$B" up

. "$(dirname "$0")/lib/check.sh"
xdp_on() { ip link show "$1" | grep -q 'prog/xdp'; }

P=(--pin-root "$ROOT")

# ---- help, version, usage errors ------------------------------------------

run "$X" --help
check "xdpwake --help exits 0 and lists commands" \
	test "$rc" -eq 0 -a -n "$(has "$out" 'attach' && has "$out" 'knobs' && echo y)"
run "$X" --version
check "xdpwake --version" test "$rc" -eq 0 -a -n "$(has "$out" '^xdpwake ' && echo y)"

declare -A opts=(
	[attach]="--mode --encap --ethertype --udp-port --policy --max-endpoints --pin-root"
	[detach]="--pin-root"
	[status]="--pin-root"
	[stats]="--ep --watch --count --pin-root"
	[set]="--ep --pin-root"
	[get]="--ep --pin-root"
	[knobs]=""
	[steer]="--queues --apply --remove --udp-port --pin-root"
	[help]=""
)
for c in attach detach status stats set get knobs steer help; do
	run "$X" "$c" --help
	missing=
	for o in ${opts[$c]} --json --verbose --help; do
		has "$out" "$o" || missing="$missing $o"
	done
	has "$out" "Usage: xdpwake $c" || missing="$missing usage-line"
	has "$out" "Exit status" || missing="$missing exit-codes"
	check "$c --help exits 0 and documents its options" test "$rc" -eq 0 -a -z "$missing"
done
run "$X" help stats
check "help stats shows the stats help" test "$rc" -eq 0 -a -n "$(has "$out" -- '--watch' && echo y)"

run "$X" frobnicate
check "unknown subcommand exits 2" test "$rc" -eq 2 -a -n "$err"
run "$X" --frobnicate
check "unknown global option exits 2" test "$rc" -eq 2
run "$X" attach "$A" --frobnicate "${P[@]}"
check "unknown subcommand option exits 2" test "$rc" -eq 2 -a -n "$(has "$err" frobnicate && echo y)"
run "$X" attach
check "missing IFACE exits 2" test "$rc" -eq 2
run "$X" attach "$A" --mode warp "${P[@]}"
check "bad --mode exits 2" test "$rc" -eq 2
run "$X" attach "$A" --ethertype 12 "${P[@]}"
check "out-of-range --ethertype exits 2" test "$rc" -eq 2
run "$X" stats "$A" --watch soon "${P[@]}"
check "bad --watch number exits 2" test "$rc" -eq 2
run "$X" stats "$A" --ep 1025 "${P[@]}"
check "bad --ep exits 2" test "$rc" -eq 2
run "$X" get
check "get without IFACE exits 2" test "$rc" -eq 2
run "$X" -j frobnicate
check "JSON usage error is valid JSON with error" \
	test "$rc" -eq 2 -a "$(jq_py "$out" '"error" in d and d["error"]["code"] < 0')" = True
check "nothing was attached by the failed commands" bash -c "! ip link show $A | grep -q prog/xdp"

run "$X" knobs
check "knobs lists policy without an interface" \
	test "$rc" -eq 0 -a -n "$(has "$out" '^policy ' && echo y)"
run "$X" -j knobs
check "knobs -j is valid JSON with every knob" \
	test "$rc" -eq 0 -a "$(jq_py "$out" 'd["policy"]["default"]["name"] == "marker" and all("scope" in v and "help" in v for v in d.values())')" = True

# ---- attach ------------------------------------------------------------

run "$X" attach xwnosuch0 "${P[@]}"
check "attach on a missing interface exits 1 with a message" \
	test "$rc" -eq 1 -a -n "$(has "$err" 'no such' && echo y)"
run "$X" -j attach xwnosuch0 "${P[@]}"
check "JSON error of a failing attach is valid JSON with error" \
	test "$rc" -eq 1 -a "$(jq_py "$out" 'd["error"]["code"]')" = -19

run "$X" attach "$A" "${P[@]}"
check "attach exits 0" test "$rc" -eq 0
check "attach reports mode, attach kind, prog id and pin dir" \
	test -n "$(has "$out" 'mode' && has "$out" 'program id' && has "$out" "$ROOT/$A" &&
		   has "$out" 'single program\|dispatcher' && echo y)"
check "ip link shows an XDP program on $A" xdp_on "$A"
check "pin dir exists" test -d "$ROOT/$A"
id1=$(ip link show "$A" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')

run "$X" -j attach "$A" --policy every "${P[@]}"
id2=$(jq_py "$out" 'd["prog_id"]')
check "second attach shares the program (same prog id)" \
	test "$rc" -eq 0 -a -n "$id1" -a "$id1" = "$id2"
check "second attach says it was attached already and ignored --policy" \
	test "$(jq_py "$out" 'd["already_attached"] and d["ignored_options"] == ["--policy"]')" = True

# ---- status ------------------------------------------------------------

run "$X" status "$A" "${P[@]}"
check "status IFACE shows the program" \
	test "$rc" -eq 0 -a -n "$(has "$out" "$A" && has "$out" "id $id1" && has "$out" 'ethertype 0x88b5' && echo y)"
check "status says veth does not report coalescing (info, not warning)" \
	test -n "$(has "$out" 'info: interrupt coalescing not reported' && echo y)"
run "$X" status "${P[@]}"
check "status without IFACE finds $A under the pin root" \
	test "$rc" -eq 0 -a -n "$(has "$out" "^$A " && echo y)"
run "$X" -j status "${P[@]}"
check "status -j is valid JSON with the prog id" \
	test "$rc" -eq 0 -a -n "$id1" -a "$(jq_py "$out" 'd["interfaces"][0]["prog_id"]')" = "$id1"
check "status -j shows the default endpoint count (at least 64, a power of two)" \
	test "$(jq_py "$out" '(lambda n: 64 <= n <= 1024 and n & (n - 1) == 0)(d["interfaces"][0]["max_endpoints"])')" = True

# A registered endpoint (written the way the library registers one).
if command -v bpftool >/dev/null; then
	pid=$$
	bpftool map update pinned "$ROOT/$A/endpoints" key 5 0 0 0 \
		value 1 0 0 0 0 0 0 0 $((pid & 255)) $(((pid >> 8) & 255)) $(((pid >> 16) & 255)) 0 0 0 0 0
	run "$X" -j status "$A" "${P[@]}"
	check "status lists an active endpoint with queue, owner pid and policy" \
		test "$(jq_py "$out" '[(e["ep"], e["owner_pid"], e["policy"]["name"]) for e in d["interfaces"][0]["endpoints"]]')" = "[(5, $pid, 'marker')]"
	bpftool map update pinned "$ROOT/$A/endpoints" key 5 0 0 0 value 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
fi

# busy-poll sysctls: fake them in this private mount namespace.
mkdir "$TMP/core" && echo 50 >"$TMP/core/busy_poll" && echo 0 >"$TMP/core/busy_read"
if mount --bind "$TMP/core" /proc/sys/net/core 2>/dev/null; then
	run "$X" status "$A" "${P[@]}"
	check "status warns about net.core.busy_poll with the fix" \
		test -n "$(has "$out" 'warning: net.core.busy_poll is 50' &&
			   has "$out" 'fix: sysctl -w net.core.busy_poll=0' && echo y)"
	run "$X" -j status "$A" "${P[@]}"
	check "status -j carries the busy_poll warning" \
		test "$(jq_py "$out" 'd["system"]["busy_poll"] == 50 and d["system"]["warnings"][0]["fix"]')" = \
		"sysctl -w net.core.busy_poll=0"
	umount /proc/sys/net/core
fi

# ---- set / get ---------------------------------------------------------

run "$X" set "$A" policy=stream "${P[@]}"
check "set policy=stream exits 0" test "$rc" -eq 0
run "$X" get "$A" policy "${P[@]}"
check "get policy returns stream" test "$rc" -eq 0 -a -n "$(has "$out" '^policy stream' && echo y)"
run "$X" -j get "$A" policy "${P[@]}"
check "get -j policy gives value and name" \
	test "$(jq_py "$out" '(d["policy"]["value"], d["policy"]["name"])')" = "(3, 'stream')"

run "$X" set "$A" coalesce_usecs=123 policy=bogus "${P[@]}"
check "set with one bad value exits 2 and names the valid values" \
	test "$rc" -eq 2 -a -n "$(has "$err" 'every|timeout|marker|stream|adaptive' && echo y)"
run "$X" set "$A" coalesce_usecs=124 nosuchknob=1 "${P[@]}"
check "set with one unknown knob exits 2 and lists the knobs" \
	test "$rc" -eq 2 -a -n "$(has "$err" 'coalesce_frames' && echo y)"
run "$X" set "$A" coalesce_frames=0 "${P[@]}"
check "set out-of-range value exits 2 with the range" \
	test "$rc" -eq 2 -a -n "$(has "$err" '1-1000000' && echo y)"
run "$X" set "$A" ethertype=0x10000 "${P[@]}"
check "set out-of-range ethertype exits 2" test "$rc" -eq 2
run "$X" -j get "$A" "${P[@]}"
check "rejected set commands changed nothing" \
	test "$(jq_py "$out" '(d["coalesce_usecs"]["value"], d["coalesce_frames"]["value"], d["ethertype"]["value"], d["policy"]["name"])')" = \
	"(75, 32, 34997, 'stream')"

run "$X" set "$A" --ep 7 coalesce_usecs=200 ethertype=0x88b6 "${P[@]}"
check "set --ep with a per-interface knob exits 0" test "$rc" -eq 0
run "$X" -j get "$A" --ep 7 "${P[@]}"
check "get --ep 7 shows the endpoint's value" \
	test "$(jq_py "$out" '(d["coalesce_usecs"]["value"], d["ethertype"]["value"])')" = "(200, 34998)"
run "$X" -j get "$A" coalesce_usecs "${P[@]}"
check "get without --ep reports that endpoints differ" \
	test "$(jq_py "$out" '(d["coalesce_usecs"]["uniform"], d["coalesce_usecs"]["values"][7])')" = "(False, 200)"

run "$X" get "$A" nosuchknob "${P[@]}"
check "get unknown key fails with exit 2" test "$rc" -eq 2 -a -n "$err"
run "$X" -j get "$A" nosuchknob "${P[@]}"
check "JSON error of get unknown key is valid JSON with error" \
	test "$(jq_py "$out" '"error" in d and "nosuchknob" in d["error"]["message"]')" = True

# ---- stats -------------------------------------------------------------

ping -c 2 -i 0.2 -W 1 -I "$B" ff02::1%"$B" >/dev/null 2>&1 # some frames to count
run "$X" -j stats "$A" "${P[@]}"
check "stats -j is valid JSON (python3 -m json.tool)" test "$rc" -eq 0 -a -n "$(json_ok "$out" && echo y)"
check "stats -j maps counter names to numbers" \
	test "$(jq_py "$out" 'isinstance(d["frames_passed"], int) and isinstance(d["wake_marker"], int)')" = True
run "$X" stats "$A" --ep 3 "${P[@]}"
check "stats text shows wakes per redirected frame" \
	test "$rc" -eq 0 -a -n "$(has "$out" 'wakes per redirected frame' && echo y)"
run "$X" -j stats "${P[@]}"
check "stats -j without IFACE is keyed by interface" \
	test "$(jq_py "$out" 'list(d) == ["'"$A"'"]')" = True

# (exit 0, not timeout's 124: it ended by itself; how fast is not asserted)
run timeout 60 "$X" stats "$A" --watch 0.2 --count 2 "${P[@]}"
check "stats --watch 0.2 --count 2 terminates by itself with 2 intervals" \
	test "$rc" -eq 0 -a "$(grep -c 'period' <<<"$out")" -eq 2
run timeout 10 "$X" -j stats "$A" --watch 0.1 --count 2 "${P[@]}"
check "stats --watch -j prints one valid JSON object per interval" \
	test "$rc" -eq 0 -a "$(python3 -c 'import json,sys; print(sum("rates" in json.loads(l) for l in sys.stdin))' <<<"$out" 2>/dev/null)" = 2
"$X" stats "$A" --watch 0.1 "${P[@]}" >"$TMP/watch" 2>&1 &
wpid=$!
# interrupted once it is watching (its first interval printed), not after
# a fixed 0.5 s that a loaded machine may spend starting it
for ((i = 0; i < 600; i++)); do grep -q period "$TMP/watch" && break; sleep 0.05; done
kill -INT "$wpid"
wait "$wpid"
rc=$?
out=$(cat "$TMP/watch")
err=
check "Ctrl-C stops stats --watch cleanly (exit 0)" test "$rc" -eq 0 -a -n "$(has "$out" period && echo y)"

# ---- detach ------------------------------------------------------------

run "$X" detach "$A" "${P[@]}"
check "detach exits 0" test "$rc" -eq 0
check "detach removes the XDP program" bash -c "! ip link show $A | grep -q prog/xdp"
check "detach removes the pin dir" test ! -e "$ROOT/$A"
run "$X" detach "$A" "${P[@]}"
check "detach again exits 3" test "$rc" -eq 3 -a -n "$err"
run "$X" -j detach "$A" "${P[@]}"
check "JSON error of detach again is valid JSON" \
	test "$rc" -eq 3 -a "$(jq_py "$out" 'd["error"]["code"]')" = -2
run "$X" status "$A" "${P[@]}"
check "status after detach exits 3" test "$rc" -eq 3
run "$X" get "$A" policy "${P[@]}"
check "get after detach exits 3" test "$rc" -eq 3
check "status/get did not recreate the pin dir" test ! -e "$ROOT/$A"
run "$X" stats "${P[@]}"
check "stats with nothing attached exits 3" test "$rc" -eq 3

# Options at attach time.
run "$X" attach "$A" --max-endpoints 0 "${P[@]}"
check "attach --max-endpoints 0 exits 2 with the range" \
	test "$rc" -eq 2 -a -n "$(has "$err" '1-1024' && echo y)"
run "$X" attach "$A" --mode generic --encap eth,udp --udp-port 5000 --policy timeout \
	--max-endpoints 24 "${P[@]}"
check "attach --mode generic with initial knobs exits 0" test "$rc" -eq 0
check "attach reports the endpoint ids it was given" test -n "$(has "$out" 'endpoints 24 (ids 0-23)' && echo y)"
run "$X" -j status "$A" "${P[@]}"
check "status -j shows max_endpoints 24" test "$(jq_py "$out" 'd["interfaces"][0]["max_endpoints"]')" = 24
run "$X" status "$A" "${P[@]}"
check "status shows the endpoint ids and the setting" \
	test -n "$(has "$out" 'endpoint ids 0-23 (max_endpoints 24' && echo y)"
if command -v bpftool >/dev/null; then
	check "the per-endpoint maps have 24 entries, stats 25" \
		test "$(bpftool map show pinned "$ROOT/$A/endpoints" | sed -n 's/.*max_entries \([0-9]*\).*/\1/p'),$(
			bpftool map show pinned "$ROOT/$A/stats" | sed -n 's/.*max_entries \([0-9]*\).*/\1/p')" = 24,25
fi
run "$X" set "$A" --ep 24 policy=every "${P[@]}"
check "set --ep 24 beyond the 24 ids fails" test "$rc" -ne 0
run "$X" -j get "$A" --ep all policy "${P[@]}"
check "get --ep all reads the 24 ids" test "$rc" -eq 0 -a "$(jq_py "$out" 'd["policy"]["uniform"]')" = True
run "$X" stats "$A" --ep all "${P[@]}"
check "stats --ep all with 24 ids exits 0" test "$rc" -eq 0
run "$X" -j get "$A" "${P[@]}"
check "initial knobs were applied" \
	test "$(jq_py "$out" '(d["encap"]["name"], d["udp_port"]["value"], d["policy"]["name"])')" = \
	"('eth,udp', 5000, 'timeout')"
run "$X" -j status "$A" "${P[@]}"
check "status shows generic mode" test "$(jq_py "$out" 'd["interfaces"][0]["mode"]')" = generic

# Several queues: ports udp_port + queue, and the steering check (veth:
# nothing to install, a note on what steers).
if command -v bpftool >/dev/null; then
	pid=$$
	for e in "5 0" "6 2"; do
		set -- $e
		bpftool map update pinned "$ROOT/$A/endpoints" key "$1" 0 0 0 value 1 0 0 0 "$2" 0 0 0 \
			$((pid & 255)) $(((pid >> 8) & 255)) $(((pid >> 16) & 255)) 0 0 0 0 0
	done
	run "$X" -j status "$A" "${P[@]}"
	check "status -j shows each endpoint's queue and UDP port (udp_port + queue)" \
		test "$(jq_py "$out" '[(e["ep"], e["queue"], e["udp_port"]) for e in d["interfaces"][0]["endpoints"]]')" = \
		"[(5, 0, 5000), (6, 2, 5002)]"
	check "status -j notes that a veth's RX queue follows the sender's TX queue" \
		test "$(jq_py "$out" 'any("sender" in i and "TX queue" in i for i in d["interfaces"][0]["info"])')" = True
	run "$X" status "$A" "${P[@]}"
	check "status text has the PORT column and the steering note" \
		test -n "$(has "$out" 'PORT' && has "$out" '5002' && has "$out" "info: endpoints on 2 queues" && echo y)"
	for e in 5 6; do
		bpftool map update pinned "$ROOT/$A/endpoints" key "$e" 0 0 0 value 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
	done
fi

# steer: a veth has no n-tuple filters: a clear error, nothing changed.
run "$X" steer "$A" "${P[@]}"
check "steer on a veth exits 1 and says why (no n-tuple filters, steer on the path)" \
	test "$rc" -eq 1 -a -n "$(has "$err" 'n-tuple' && has "$err" 'veth' && has "$err" "TX queue" && echo y)"
run "$X" -j steer "$A" --apply --queues 4 "${P[@]}"
check "steer --apply -j on a veth: JSON error -EOPNOTSUPP" \
	test "$rc" -eq 1 -a "$(jq_py "$out" 'd["error"]["code"]')" = -95
run "$X" steer "$A" --apply --remove "${P[@]}"
check "steer --apply --remove exits 2" test "$rc" -eq 2
run "$X" steer "$A" --queues 0 "${P[@]}"
check "steer --queues 0 exits 2" test "$rc" -eq 2
run "$X" detach "$A" "${P[@]}"
check "detach of the generic-mode program exits 0" test "$rc" -eq 0 -a -n "$(! xdp_on "$A" && echo y)"

check_summary
