#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Per-message cost breakdown of the library (issue 14): where the user-space
# instructions of one round trip go, and how many system calls it makes.
#
#   bench/cost.sh [--size B] [--iters N1,N2] [--policy P] [--wait W] [--out DIR]
#
#   --size B       message size (default 64)
#   --iters N1,N2  the two run lengths (default 1000,5000)
#   --policy P     wake policy (default marker)
#   --wait W       wait strategy (default block: a spinning client's
#                  instruction count depends on how long it spins)
#   --out DIR      where cost.csv and cost.md go (default $OUTPUT/bench/cost)
#
# Method: `xdpwake pingpong` between two namespaces joined by a veth pair it
# creates; the client runs twice under valgrind's callgrind (instructions,
# not seconds: the same count on an idle or a loaded machine), once with N1
# and once with N2 measured round trips (same warm-up), and the difference
# divided by N2 - N1 is the cost of one round trip (one send and one
# receive of the client), start-up and the final report cancelled out.
# Functions are grouped by the step of a message's path they belong to
# (bench/cost_report.py; by file, msg.c by function).  Then the client runs
# twice under `strace -c` for the system calls per round trip.  Kernel work
# (the XDP program, AF_XDP copy, softirq) is not in these counts: the XDP
# program's per-frame cost is `make bench-xdp`.  Under valgrind the client
# is ~50x slower, so a waiting client finds the answer there at once: the
# spin loop's own instructions are a small share, unlike a real run.
#
# Takes /tmp/xdpwake-net.lock (as bench/run.sh and bench/peers.sh); removes
# its namespaces and processes at the end, also on Ctrl-C.
# Exit: 0 ok, 1 failure, 2 usage, 77 not root / no valgrind.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")
OUTPUT=${OUTPUT:-$TOP/.output}
# shellcheck source=scripts/lib.sh
. "$TOP/scripts/lib.sh"
size=64 iters=1000,5000 policy=marker wait=block out=''
while [ $# -gt 0 ]; do
	case $1 in
	--size) size=${2:-}; shift ;;
	--iters) iters=${2:-}; shift ;;
	--policy) policy=${2:-}; shift ;;
	--wait) wait=${2:-}; shift ;;
	--out) out=${2:-}; shift ;;
	-h | --help) xw_usage 0 ;;
	*) echo "cost: unknown argument '$1'" >&2; xw_usage ;;
	esac
	shift
done
n1=${iters%,*} n2=${iters#*,}
case "$n1$n2$size" in *[!0-9]* | '') echo "cost: --iters N1,N2 and --size take numbers" >&2; exit 2 ;; esac
[ "$n2" -gt "$n1" ] || { echo "cost: --iters N1,N2 needs N2 > N1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "SKIP cost: needs root (namespaces, XDP)"; exit 77; }
command -v valgrind >/dev/null || { echo "SKIP cost: valgrind not installed"; exit 77; }
command -v strace >/dev/null || { echo "SKIP cost: strace not installed"; exit 77; }
tool=$OUTPUT/xdpwake
[ -x "$tool" ] || { echo "cost: $tool not built (make)" >&2; exit 1; }
out=${out:-$OUTPUT/bench/cost}
mkdir -p "$out"

exec {lockfd}>>/tmp/xdpwake-net.lock
flock "$lockfd"
NS_A=xwcost-$$-a NS_B=xwcost-$$-b tmp=$(mktemp -d /tmp/xwcost.XXXXXX) srv=''
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$NS_A" && ip netns add "$NS_B" &&
	ip link add xwca netns "$NS_A" type veth peer name xwcb netns "$NS_B" &&
	ip -n "$NS_A" link set xwca address 02:00:00:00:0c:0a up &&
	ip -n "$NS_B" link set xwcb address 02:00:00:00:0c:0b up ||
	{ echo "cost: cannot create the namespaces and veth pair" >&2; exit 1; }

ip netns exec "$NS_A" "$tool" pingpong xwca --server --addr-file "$tmp/addr" >"$tmp/srv.log" 2>&1 &
srv=$!
client() { # N WRAPPER...: one client run of N round trips under WRAPPER
	local n=$1
	shift
	timeout 600 ip netns exec "$NS_B" "$@" "$tool" pingpong xwcb --client \
		--peer-file "$tmp/addr" --sizes "$size" --iters "$n" --warmup 100 \
		--policy "$policy" --wait "$wait" --timeout 10000
}
for n in "$n1" "$n2"; do
	echo "cost: callgrind, $n round trips of $size B ($policy, $wait)"
	client "$n" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" \
		>"$tmp/cg.$n.log" 2>&1 || { echo "cost: client failed:"; tail -5 "$tmp/cg.$n.log"; exit 1; }
	callgrind_annotate --threshold=100 "$tmp/cg.$n" >"$tmp/ann.$n" 2>/dev/null ||
		{ echo "cost: callgrind_annotate failed" >&2; exit 1; }
	echo "cost: strace, $n round trips"
	client "$n" strace -f -c -o "$tmp/st.$n" >"$tmp/st.$n.log" 2>&1 ||
		{ echo "cost: client under strace failed:"; tail -5 "$tmp/st.$n.log"; exit 1; }
done
"${PYTHON:-python3}" "$HERE/cost_report.py" --n1 "$n1" --n2 "$n2" \
	--ann1 "$tmp/ann.$n1" --ann2 "$tmp/ann.$n2" --strace1 "$tmp/st.$n1" --strace2 "$tmp/st.$n2" \
	--src "$TOP" --out "$out" \
	--title "$size B ping-pong, $policy, wait $wait (client: one send + one receive per round trip)"
