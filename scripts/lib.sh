# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# shellcheck shell=bash
# What the shell scripts of the demo and the benchmarks share; sourced, not
# run (scripts/demo.sh, bench/run.sh, bench/peers.sh, bench/wait_strategies.sh,
# bench/cost.sh): the usage text from the script's own header, stopping the
# processes a script started, two network namespaces joined by a veth pair,
# bpffs, and the machine-wide network lock.  What can fail calls the
# script's die() (its message prefix), which the script defines.

# The script's header comment (line 3 to the "# Exit:" line) as its usage
# text; then exit with $1 (default 2).
xw_usage() {
	sed -n '3,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}

# PID [SIGNAL]: SIGNAL (default TERM), up to 3 s, then KILL; for the
# script's own children only (it waits for them).
xw_kill_pid() {
	local pid=$1 sig=${2:-TERM} i
	[ -n "$pid" ] || return 0
	kill "-$sig" "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
	for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# The network namespaces xw_veth_pair created: only these are removed
# (xw_netns_del), so a name that was taken already is never deleted.
XW_NETNS=()

# NS_A NS_B IF_A IF_B: two network namespaces joined by a veth pair
# (IF_A in NS_A, IF_B in NS_B), loopback and both ends up.
xw_veth_pair() {
	local ns
	ip netns add "$1" || die "cannot create network namespace $1"
	XW_NETNS+=("$1")
	ip netns add "$2" || die "cannot create network namespace $2"
	XW_NETNS+=("$2")
	ip link add "$3" netns "$1" type veth peer name "$4" netns "$2" ||
		die "cannot create the veth pair $3 <-> $4"
	for ns in "$1" "$2"; do ip -n "$ns" link set lo up; done
	if ! ip -n "$1" link set "$3" up || ! ip -n "$2" link set "$4" up; then
		die "cannot bring the veth pair $3 <-> $4 up"
	fi
}

# Remove the namespaces xw_veth_pair created (their veth ends go with them).
xw_netns_del() {
	local ns
	for ns in "${XW_NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
	XW_NETNS=()
}

# bpffs at /sys/fs/bpf (the pins of the xdpwake program).
xw_bpffs() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs"
}

# Does a process this one descends from hold the lock on file $1 (as
# `flock FILE command` does for its command)?  /proc/locks names the
# holder of each granted lock by PID and the file by device:inode.
xw_lock_held_above() {
	local ino holders p=$BASHPID
	ino=$(stat -c %i "$1" 2>/dev/null) || return 1
	holders=" $(awk -v ino=":$ino" '$2 != "->" && substr($6, length($6) - length(ino) + 1) == ino { print $5 }' /proc/locks 2>/dev/null | tr '\n' ' ')"
	while [ "${p:-0}" -gt 1 ]; do
		case $holders in *" $p "*) return 0 ;; esac
		p=$(sed "s/.*) //" "/proc/$p/stat" 2>/dev/null | cut -d" " -f2)
	done
	return 1
}

# NAME: take the machine-wide lock /tmp/xdpwake-net.lock (nothing else on
# the network while we measure) unless a parent holds it already (it set
# XDPWAKE_NET_LOCK_HELD, or ran us under `flock /tmp/xdpwake-net.lock`);
# NAME prefixes the message when it has to wait.  Held until the script
# exits; its children see XDPWAKE_NET_LOCK_HELD.
xw_net_lock() {
	[ -z "${XDPWAKE_NET_LOCK_HELD:-}" ] && command -v flock >/dev/null || return 0
	exec {XW_LOCKFD}>>/tmp/xdpwake-net.lock
	if ! flock -n "$XW_LOCKFD"; then
		if xw_lock_held_above /tmp/xdpwake-net.lock; then
			exec {XW_LOCKFD}>&-
			export XDPWAKE_NET_LOCK_HELD=1
			return 0
		fi
		echo "$1: waiting for /tmp/xdpwake-net.lock (another network test is running)"
		flock "$XW_LOCKFD"
	fi
	export XDPWAKE_NET_LOCK_HELD=1
}
