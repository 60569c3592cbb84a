#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# `make demo`: run bench/policy_demo, the five wake policies side by side.
#
#   scripts/demo.sh [--quick] [--json] [--reps N] ...   (arguments go to policy_demo)
#   IFACE=eth1 scripts/demo.sh    attach to a real interface and only receive
#                                 (policy_demo --iface eth1; it prints the peer's command)
#   OUTPUT=dir                    build directory (default ./.output)
#
# The demo creates two anonymous network namespaces and a veth pair; they
# vanish with its processes.  Ctrl-C (or TERM) stops it cleanly: the demo
# detaches, removes its pins and kills its sender.
# shellcheck disable=SC2317 # stop() and alive() run from traps
set -u

OUTPUT=${OUTPUT:-./.output}
bin="$OUTPUT/bench/policy_demo"

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, XDP, AF_XDP, BPF maps): run 'sudo make demo'" >&2
	exit 1
fi
if [ ! -x "$bin" ]; then
	echo "demo: $bin not built: run 'make benches' (or 'make demo')" >&2
	exit 1
fi

args=("$@")
if [ -n "${IFACE:-}" ]; then
	args=(--iface "$IFACE" "${args[@]}")
fi

pid=
alive() { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
# $1: seconds the demo gets to finish on its own before TERM (Ctrl-C
# reaches it too, and it cleans up: detach, pins, sender), then KILL.
stop() {
	trap - INT TERM
	local i
	for ((i = 0; i < $1 * 10; i++)); do alive || break; sleep 0.1; done
	if alive; then
		echo "demo: stopping..." >&2
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 50; i++)); do alive || break; sleep 0.1; done
		alive && kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	exit 130
}
trap 'stop 3' INT
trap 'stop 0' TERM

"$bin" "${args[@]}" &
pid=$!
# wait returns early when a trapped signal arrives; loop until the demo ends
while :; do
	wait "$pid"
	rc=$?
	kill -0 "$pid" 2>/dev/null || break
done
exit "$rc"
