#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# xdpwake next to its peers (issue 7, experiment 8): the same ping-pong and
# one-way stream, the same namespaces and placement, one run.
#
#   bench/peers.sh [--quick] [--out DIR] [--reps N] [--no-install]
#
#   --quick        2 repetitions, sizes 0 and 64 B, short runs (a few minutes)
#   --out DIR      where peers.csv, peers_runs.csv, peers_meta.json, peers.md
#                  and peers.svg/png go (default bench/results); the report can
#                  be drawn again from the last two: bench/peers_report.py report
#                  --runs DIR/peers_runs.csv --meta DIR/peers_meta.json --out DIR
#   --reps N       repetitions of every configuration (default 5, quick 2)
#   --no-install   do not install missing peer packages (scripts/deps.sh)
#   OUTPUT=dir     build directory (default ./.output; built if a binary is missing)
#   PYTHON=path    a python3 with matplotlib (default /usr/bin/python3)
#
# Peers (peer / variants in peers.csv):
#   xdpwake       marker/spin-block, marker/block, every/block (xdpwake pingpong/stream)
#   afxdp-raw     busy-spin: raw AF_XDP, one frame each way (bench/afxdp_raw.c)
#   udp           blocking, spin, busy-poll: kernel UDP sockets (bench/udp_pingpong.c)
#   sockperf      udp, udp-nonblocked (--nonblocked on both sides; ping-pong;
#                 stream = sockperf throughput)
#   qperf         udp_lat, tcp_lat (ping-pong); udp_bw, tcp_bw (stream)
#   fi_pingpong   tcp (-p tcp -e msg), udp (-p udp -e dgram); ping-pong only
#   ucx_perftest  tcp (UCX_TLS=tcp: tag_lat; stream = tag_bw)
# Ping-pong at 0, 64, 1K and 4K B, a stream of 64 B messages; repetitions
# interleaved (repetition, then peer), medians reported.  Every run has a
# time limit.  A peer that cannot run gets a row "unavailable: <why>"; one
# that fails, "failed: <why>".
#
# Placement, the same for every peer: the server (answering side) in
# namespace A pinned to CPU 0, the client in namespace B pinned to CPU 1
# (both on CPU 0 on a single-CPU machine).  On a veth pair the receive work
# (softirq) of a frame runs on the sending CPU, inside its send call, so
# spinning on both CPUs does not starve it.  xdpwake runs through nsenter
# (its pins live in the shared bpffs); everything else through `ip netns
# exec` (UCX reads the interfaces from /sys/class/net, which that remounts).
#
# It takes /tmp/xdpwake-net.lock for the whole run (unless
# XDPWAKE_NET_LOCK_HELD is set by a caller that holds it), creates its own
# namespaces xwpeers-PID-a/-b and veth pair, and removes them, every process
# it started and its bpffs pins at the end, also on Ctrl-C (the runs done by
# then are still reported).
#
# Exit: 0 ok (also when peers are unavailable or failed), 1 the harness
# itself failed (set-up, build, report), 2 usage, 130/143 interrupted.
# shellcheck disable=SC2317 # cleanup() and on_signal() run from traps
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")
# shellcheck source=scripts/lib.sh
. "$TOP/scripts/lib.sh"
OUTPUT=${OUTPUT:-$TOP/.output}
PYTHON=${PYTHON:-/usr/bin/python3}
quick=0 out="$HERE/results" reps='' install=1
cmdline="bench/peers.sh${*:+ $*}"

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--out | --results)
		[ $# -ge 2 ] || xw_usage
		out=$2
		shift
		;;
	--reps)
		[ $# -ge 2 ] || xw_usage
		reps=$2
		shift
		case $reps in '' | *[!0-9]* | 0) echo "peers: --reps takes a positive number" >&2; exit 2 ;; esac
		;;
	--no-install) install=0 ;;
	-h | --help) xw_usage 0 ;;
	*) echo "peers: unknown argument '$1'" >&2; xw_usage ;;
	esac
	shift
done

die() {
	echo "peers: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, XDP, AF_XDP)"
for c in ip nsenter taskset timeout ss ethtool; do
	command -v "$c" >/dev/null || die "$c missing (scripts/deps.sh iproute2 util-linux coreutils ethtool)"
done
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
mkdir -p "$OUTPUT" || die "cannot create $OUTPUT"
OUTPUT=$(cd "$OUTPUT" && pwd)
X=$OUTPUT/xdpwake
UDP=$OUTPUT/bench/udp_pingpong
RAW=$OUTPUT/bench/afxdp_raw

# ---- the machine-wide lock ------------------------------------------------------

xw_net_lock peers
T_ALL=$(date +%s) # the run's time, without the wait for the lock

# ---- parameters -----------------------------------------------------------------

if [ "$quick" = 1 ]; then
	REPS=${reps:-2}
	PP_SIZES="0 64"
	PP_DUR=0.25 ST_DUR=0.5
	SEC_PP=1 SEC_ST=1 # tools that take whole seconds
else
	REPS=${reps:-5}
	PP_SIZES="0 64 1024 4096"
	PP_DUR=1 ST_DUR=2
	SEC_PP=1 SEC_ST=2
fi
ST_SIZE=64 # issue 14: one-way stream of 64 B messages
RAW_MAX=1484 # one 1500 B MTU frame minus afxdp_raw's 16 B header
PP_LIST=${PP_SIZES// /,}
# Iterations for the tools that take a count, sized to about PP_DUR/ST_DUR
# (measured here: fi_pingpong ~20-30 us per one-way message, ucx_perftest
# ~10 us, ucx tag_bw ~3 us per message).
FI_ITERS=$(awk -v d="$PP_DUR" 'BEGIN { printf "%d", d / 50e-6 + 0.5 }')
UCX_ITERS=$(awk -v d="$PP_DUR" 'BEGIN { printf "%d", d / 20e-6 + 0.5 }')
UCX_BW_ITERS=$(awk -v d="$ST_DUR" 'BEGIN { printf "%d", d / 3e-6 + 0.5 }')

# ---- set-up and clean-up ------------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/xwpeers.XXXXXX") || exit 1
RUNS=$TMP/runs.tsv
: >"$RUNS"
NS_A='' NS_B='' ROOT='' server_pid='' client_pid='' reported=0 rep=0
BG=()
IF_A=xwp$$a IF_B=xwp$$b
NET=10.$((200 + $$ % 50)).$(($$ / 50 % 250)) # inside our namespaces only
IP_A=$NET.1 IP_B=$NET.2

kill_pid() { xw_kill_pid "$1" "${2:-INT}"; } # INT by default: the peer tools' clean exit

cleanup() {
	trap - EXIT INT TERM
	kill_pid "$client_pid"
	kill_pid "$server_pid"
	xw_netns_del
	[ -n "$ROOT" ] && rm -rf "$ROOT"
	rm -rf "$TMP"
}
on_signal() { # $1: exit status (128 + signal number)
	trap - INT TERM
	echo >&2
	echo "peers: interrupted, cleaning up" >&2
	kill_pid "$client_pid"
	client_pid=
	kill_pid "$server_pid"
	server_pid=
	[ -s "$RUNS" ] && [ "$reported" = 0 ] && report "(interrupted)" >&2
	exit "$1" # runs cleanup through the EXIT trap
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

# ---- build, packages ------------------------------------------------------------------

"$PYTHON" -c 'import matplotlib' 2>/dev/null ||
	{ [ "$install" = 1 ] && "$TOP/scripts/deps.sh" python3-matplotlib >"$TMP/deps-mpl.log" 2>&1; }
"$PYTHON" -c 'import json, csv, statistics' 2>/dev/null || die "$PYTHON does not run"
if [ ! -x "$X" ] || [ ! -x "$UDP" ] || [ ! -x "$RAW" ]; then
	echo "peers: building xdpwake and the peer benchmarks in $OUTPUT"
	make -C "$TOP" -s OUTPUT="$OUTPUT" all "$UDP" "$RAW" >"$TMP/build.log" 2>&1 ||
		{ tail -20 "$TMP/build.log" >&2; die "build failed"; }
fi

# Peer tools: package, command.  unavail[cmd] = why it cannot run.
declare -A unavail=()
for pc in sockperf:sockperf qperf:qperf libfabric-bin:fi_pingpong ucx-utils:ucx_perftest; do
	pkg=${pc%%:*} cmd=${pc##*:}
	if ! command -v "$cmd" >/dev/null; then
		if [ "$install" = 1 ]; then
			if ! "$TOP/scripts/deps.sh" "$pkg" >"$TMP/deps-$pkg.log" 2>&1; then
				why=$(grep -v '^\s*$' "$TMP/deps-$pkg.log" | tail -1)
				unavail[$cmd]="package $pkg could not be installed (scripts/deps.sh $pkg: ${why:-failed})"
			fi
		else
			unavail[$cmd]="package $pkg is not installed (--no-install)"
		fi
	fi
	if [ -z "${unavail[$cmd]:-}" ] && ! command -v "$cmd" >/dev/null; then
		unavail[$cmd]="$cmd not found after installing $pkg"
	fi
done

# ---- namespaces ------------------------------------------------------------------------

NS_A=xwpeers-$$-a
NS_B=xwpeers-$$-b
xw_veth_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B"
ip -n "$NS_A" addr add "$IP_A/24" dev "$IF_A" || die "cannot address $IF_A"
ip -n "$NS_B" addr add "$IP_B/24" dev "$IF_B" || die "cannot address $IF_B"
for ((i = 0; i < 50; i++)); do
	ip -n "$NS_A" link show "$IF_A" | grep -q LOWER_UP &&
		ip -n "$NS_B" link show "$IF_B" | grep -q LOWER_UP && break
	sleep 0.1
done
ip -n "$NS_A" link show "$IF_A" | grep -q LOWER_UP || die "the veth pair has no carrier after 5 s"
xw_bpffs
ROOT=/sys/fs/bpf/xwpeers-$$
export XDPWAKE_PIN_ROOT=$ROOT

NCPU=$(nproc)
CS=0 CC=1
[ "$NCPU" -ge 2 ] || CC=0
A_NS=(ip netns exec "$NS_A" taskset -c "$CS")
B_NS=(ip netns exec "$NS_B" taskset -c "$CC")
A_XW=(nsenter --net="/run/netns/$NS_A" taskset -c "$CS")
B_XW=(nsenter --net="/run/netns/$NS_B" taskset -c "$CC")
HZ=$(getconf CLK_TCK)

busy_us() { # whole-machine busy time: user nice system irq softirq steal
	local u n s irq sirq st
	read -r _ u n s _ _ irq sirq st _ </proc/stat
	echo $(((u + n + s + irq + sirq + st) * 1000000 / HZ))
}

ready() { # WHAT: tcp:PORT, udp:PORT, file:PATH or none; up to 5 s
	local i what=$1
	for ((i = 0; i < 100; i++)); do
		case $what in
		none) sleep 0.2; return 0 ;;
		file:*) [ -s "${what#file:}" ] && return 0 ;;
		tcp:*) ip netns exec "$NS_A" ss -Hltn "sport = :${what#tcp:}" 2>/dev/null | grep -q . && return 0 ;;
		udp:*) ip netns exec "$NS_A" ss -Hlun "sport = :${what#udp:}" 2>/dev/null | grep -q . && return 0 ;;
		esac
		kill -0 "$server_pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# Unavailable row(s): mark PEER VARIANT TEST "SIZES" REASON
mark() {
	local s
	for s in $4; do
		printf '%s\t%s\t%s\t%s\t0\t\t\t\t\t\t\tunavailable: %s\n' "$1" "$2" "$3" "$s" "$5" >>"$RUNS"
	done
}

declare -A seen_cmd=()
COMMANDS=()
note_cmd() { # the commands for the summary, once per template
	local key=$1
	shift
	[ -n "${seen_cmd[$key]:-}" ] && return
	seen_cmd[$key]=1
	COMMANDS+=("$*")
}

k=0
STOP_SIG=INT # qperf's server ignores SIGINT
# run_one LABEL LIMIT READY -- parse args; uses the arrays SRV (may be empty) and CLI.
run_one() {
	local label=$1 lim=$2 rdy=$3 base rc b0 b1 t0
	shift 3
	k=$((k + 1))
	base=$TMP/run-$k
	printf '  [%d/%d] %-44s ' "$rep" "$REPS" "$label"
	t0=$(date +%s%N)
	server_pid=
	if [ ${#SRV[@]} -gt 0 ]; then
		"${SRV[@]}" >"$base.srv" 2>&1 &
		server_pid=$!
		if ! ready "$rdy"; then
			kill_pid "$server_pid"
			server_pid=
			echo "failed (server not ready)"
			"$PYTHON" "$HERE/peers_report.py" parse --runs "$RUNS" --out /dev/null \
				--srv "$base.srv" --rep "$rep" --rc 1 "$@" 2>/dev/null
			return
		fi
	fi
	b0=$(busy_us)
	timeout -k 2 "$lim" "${CLI[@]}" >"$base.out" 2>"$base.err" &
	client_pid=$!
	while :; do
		wait "$client_pid"
		rc=$?
		kill -0 "$client_pid" 2>/dev/null || break
	done
	client_pid=
	b1=$(busy_us)
	if [ -n "$server_pid" ]; then
		# fi_pingpong, ucx_perftest and afxdp_raw servers end with their
		# client: give them a moment, then STOP_SIG (SIGINT: sockperf
		# prints its receive count on it), then KILL.
		for ((i = 0; i < 10; i++)); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
		kill_pid "$server_pid" "$STOP_SIG"
		server_pid=
	fi
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "client timed out after $lim s" >>"$base.err"
	printf '%s (%s s)\n' "$([ "$rc" = 0 ] && echo ok || echo "exit $rc")" \
		"$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
	"$PYTHON" "$HERE/peers_report.py" parse --runs "$RUNS" --out "$base.out" --err "$base.err" \
		--srv "$base.srv" --rep "$rep" --rc "$rc" --busy-us $((b1 - b0)) "$@"
	sleep 0.1
}

lim_for() { # SECONDS_OF_MEASUREMENT -> a generous limit
	awk -v s="$1" 'BEGIN { printf "%d", s * 3 + 20 }'
}

# ---- the peers --------------------------------------------------------------------------

run_xdpwake() {
	local pw p w t addr
	if ! "${A_XW[@]}" "$X" attach "$IF_A" >"$TMP/attach" 2>&1 ||
		! "${B_XW[@]}" "$X" attach "$IF_B" >>"$TMP/attach" 2>&1; then
		for pw in marker/spin-block marker/block every/block; do
			mark xdpwake "$pw" pingpong "$PP_SIZES" "xdpwake attach failed: $(tail -1 "$TMP/attach")"
			mark xdpwake "$pw" stream "$ST_SIZE" "xdpwake attach failed: $(tail -1 "$TMP/attach")"
		done
		"${A_XW[@]}" "$X" detach "$IF_A" >/dev/null 2>&1
		return
	fi
	for pw in marker/spin-block marker/block every/block; do
		p=${pw%/*} w=${pw#*/}
		for t in pingpong stream; do
			addr=$TMP/addr-$k
			rm -f "$addr"
			SRV=("${A_XW[@]}" "$X" pingpong "$IF_A" --server --addr-file "$addr")
			if [ "$t" = pingpong ]; then
				CLI=("${B_XW[@]}" "$X" -j pingpong "$IF_B" --client --peer-file "$addr"
					--policy "$p" --wait "$w" --sizes "$PP_LIST" --duration "$PP_DUR")
				run_one "xdpwake $pw pingpong" "$(lim_for "$(awk -v d="$PP_DUR" -v n="$(wc -w <<<"$PP_SIZES")" 'BEGIN{print d*n}')")" \
					"file:$addr" --tool json --peer xdpwake --variant "$pw" --test pingpong
			else
				CLI=("${B_XW[@]}" "$X" -j stream "$IF_B" --client --peer-file "$addr"
					--policy "$p" --wait "$w" --sizes "$ST_SIZE" --duration "$ST_DUR")
				run_one "xdpwake $pw stream" "$(lim_for "$ST_DUR")" "file:$addr" \
					--tool json --peer xdpwake --variant "$pw" --test stream --size "$ST_SIZE"
			fi
		done
	done
	note_cmd xw-attach "xdpwake attach IF   (in NS_A and NS_B)"
	note_cmd xw-srv "taskset -c $CS xdpwake pingpong IF_A --server --addr-file F"
	note_cmd xw-pp "taskset -c $CC xdpwake -j pingpong IF_B --client --peer-file F --policy marker|every --wait spin-block|block --sizes $PP_LIST --duration $PP_DUR"
	note_cmd xw-st "taskset -c $CC xdpwake -j stream IF_B --client --peer-file F --policy P --wait W --sizes $ST_SIZE --duration $ST_DUR"
	"${A_XW[@]}" "$X" detach "$IF_A" >/dev/null 2>&1
	"${B_XW[@]}" "$X" detach "$IF_B" >/dev/null 2>&1
}

run_raw() {
	local s sizes='' big=''
	for s in $PP_SIZES; do
		if [ "$s" -le "$RAW_MAX" ]; then sizes="$sizes${sizes:+,}$s"; else big="$big $s"; fi
	done
	if [ "$rep" = 1 ] && [ -n "$big" ]; then
		mark afxdp-raw busy-spin pingpong "$big" "one frame each way: a message over $RAW_MAX B does not fit the veth's 1500 B MTU and raw AF_XDP does not fragment"
	fi
	SRV=("${A_NS[@]}" "$RAW" --server "$IF_A")
	if [ -n "$sizes" ]; then
		CLI=("${B_NS[@]}" "$RAW" --client "$IF_B" --sizes "$sizes" --duration "$PP_DUR" -j)
		run_one "afxdp-raw busy-spin pingpong" 60 none --tool json --peer afxdp-raw \
			--variant busy-spin --test pingpong
	fi
	CLI=("${B_NS[@]}" "$RAW" --client "$IF_B" --mode stream --sizes "$ST_SIZE" --duration "$ST_DUR" -j)
	run_one "afxdp-raw busy-spin stream" "$(lim_for "$ST_DUR")" none --tool json \
		--peer afxdp-raw --variant busy-spin --test stream --size "$ST_SIZE"
	note_cmd raw-srv "taskset -c $CS .output/bench/afxdp_raw --server IF_A"
	note_cmd raw-cli "taskset -c $CC .output/bench/afxdp_raw --client IF_B [--mode stream] --sizes $sizes|$ST_SIZE --duration $PP_DUR|$ST_DUR -j"
}

# The kernel's busy polling needs a NAPI id on the receive path: on a veth
# pair that is GRO on (the veth then receives through its own NAPI
# context), with UDP GRO forwarding so that a socket's datagrams take it.
# Only for the busy-poll runs: the other peers run on the pair as created.
veth_napi() { # on|off
	ip netns exec "$NS_A" ethtool -K "$IF_A" gro "$1" rx-udp-gro-forwarding "$1" >/dev/null 2>&1 &&
		ip netns exec "$NS_B" ethtool -K "$IF_B" gro "$1" rx-udp-gro-forwarding "$1" >/dev/null 2>&1
}

run_udp() {
	local w t
	# blocking: recv() sleeps; spin: recv(MSG_DONTWAIT) loop; busy-poll:
	# recv() with SO_BUSY_POLL 50 us (udp_pingpong fails the run when no
	# datagram was received by busy polling).
	for w in blocking spin busy-poll; do
		if [ "$w" = busy-poll ] && ! veth_napi on; then
			[ "$rep" = 1 ] && mark udp busy-poll pingpong "$PP_SIZES" \
				"ethtool cannot turn GRO on for the veth pair (no NAPI id to busy-poll)" &&
				mark udp busy-poll stream "$ST_SIZE" \
					"ethtool cannot turn GRO on for the veth pair (no NAPI id to busy-poll)"
			veth_napi off
			continue
		fi
		for t in pingpong stream; do
			SRV=("${A_NS[@]}" "$UDP" --server --mode "$t" --wait "${w/blocking/block}")
			if [ "$t" = pingpong ]; then
				CLI=("${B_NS[@]}" "$UDP" --client "$IP_A" --mode pingpong --wait "${w/blocking/block}"
					--sizes "$PP_LIST" --duration "$PP_DUR" -j)
				run_one "udp $w pingpong" 60 udp:18515 --tool json --peer udp --variant "$w" \
					--test pingpong
			else
				CLI=("${B_NS[@]}" "$UDP" --client "$IP_A" --mode stream --wait "${w/blocking/block}"
					--sizes "$ST_SIZE" --duration "$ST_DUR" -j)
				run_one "udp $w stream" "$(lim_for "$ST_DUR")" udp:18515 --tool json --peer udp \
					--variant "$w" --test stream --size "$ST_SIZE"
			fi
		done
		[ "$w" = busy-poll ] && veth_napi off
	done
	note_cmd udp-srv "taskset -c $CS .output/bench/udp_pingpong --server --mode pingpong|stream --wait block|spin|busy-poll"
	note_cmd udp-cli "taskset -c $CC .output/bench/udp_pingpong --client IP_A --mode pingpong|stream --wait block|spin|busy-poll --sizes $PP_LIST|$ST_SIZE --duration $PP_DUR|$ST_DUR -j"
	note_cmd udp-napi "busy-poll only: ethtool -K IF gro on rx-udp-gro-forwarding on (both ends; off again after)"
}

run_sockperf() {
	local s v nb
	if [ -n "${unavail[sockperf]:-}" ]; then
		for v in udp udp-nonblocked; do
			[ "$rep" = 1 ] && mark sockperf $v pingpong "$PP_SIZES" "${unavail[sockperf]}" &&
				mark sockperf $v stream "$ST_SIZE" "${unavail[sockperf]}"
		done
		return
	fi
	# udp: its defaults (blocking sockets, epoll); udp-nonblocked:
	# --nonblocked on both sides, the application polls its sockets.
	for v in udp udp-nonblocked; do
		nb=()
		[ "$v" = udp-nonblocked ] && nb=(--nonblocked)
		for s in $PP_SIZES; do
			SRV=("${A_NS[@]}" sockperf server -i "$IP_A" -p 11111 "${nb[@]}")
			CLI=("${B_NS[@]}" sockperf ping-pong -i "$IP_A" -p 11111 -m "$s" -t "$SEC_PP" "${nb[@]}")
			if [ "$s" -lt 14 ]; then
				# sockperf's messages carry its own header: it refuses
				# smaller sizes; its own words go in the row (once).
				[ "$rep" = 1 ] || continue
				SRV=()
				run_one "sockperf $v pingpong $s B" 20 none --tool sockperf-pp --peer sockperf \
					--variant "$v" --test pingpong --size "$s" --unavail 'Invalid message size'
				continue
			fi
			run_one "sockperf $v pingpong $s B" "$(lim_for "$SEC_PP")" udp:11111 --tool sockperf-pp \
				--peer sockperf --variant "$v" --test pingpong --size "$s"
		done
		SRV=("${A_NS[@]}" sockperf server -i "$IP_A" -p 11111 "${nb[@]}")
		CLI=("${B_NS[@]}" sockperf throughput -i "$IP_A" -p 11111 -m "$ST_SIZE" -t "$SEC_ST" "${nb[@]}")
		run_one "sockperf $v stream" "$(lim_for "$SEC_ST")" udp:11111 --tool sockperf-tp \
			--peer sockperf --variant "$v" --test stream --size "$ST_SIZE"
	done
	note_cmd sp-srv "taskset -c $CS sockperf server -i IP_A -p 11111 [--nonblocked]"
	note_cmd sp-cli "taskset -c $CC sockperf ping-pong -i IP_A -p 11111 -m SIZE -t $SEC_PP [--nonblocked];  sockperf throughput -i IP_A -p 11111 -m $ST_SIZE -t $SEC_ST [--nonblocked]"
}

run_qperf() {
	local s v
	if [ -n "${unavail[qperf]:-}" ]; then
		if [ "$rep" = 1 ]; then
			for v in udp_lat tcp_lat; do mark qperf "$v" pingpong "$PP_SIZES" "${unavail[qperf]}"; done
			for v in udp_bw tcp_bw; do mark qperf "$v" stream "$ST_SIZE" "${unavail[qperf]}"; done
		fi
		return
	fi
	STOP_SIG=TERM
	for v in udp_lat tcp_lat; do
		for s in $PP_SIZES; do
			if [ "$s" = 0 ]; then
				[ "$rep" = 1 ] && mark qperf "$v" pingpong 0 "qperf -m 0 moves no data and so measures no round trip (a trial on this machine reported tcp_lat 1.55 ns and udp_lat 1.9 us for it)"
				continue
			fi
			SRV=("${A_NS[@]}" qperf)
			CLI=("${B_NS[@]}" qperf "$IP_A" -m "$s" -t "$SEC_PP" -vv "$v")
			run_one "qperf $v pingpong $s B" "$(lim_for "$SEC_PP")" tcp:19765 --tool qperf-lat \
				--peer qperf --variant "$v" --test pingpong --size "$s"
		done
	done
	for v in udp_bw tcp_bw; do
		SRV=("${A_NS[@]}" qperf)
		CLI=("${B_NS[@]}" qperf "$IP_A" -m "$ST_SIZE" -t "$SEC_ST" -vv "$v")
		run_one "qperf $v stream" "$(lim_for "$SEC_ST")" tcp:19765 --tool qperf-bw --peer qperf \
			--variant "$v" --test stream --size "$ST_SIZE"
	done
	STOP_SIG=INT
	note_cmd qp-srv "taskset -c $CS qperf"
	note_cmd qp-cli "taskset -c $CC qperf IP_A -m SIZE -t $SEC_PP -vv udp_lat|tcp_lat;  qperf IP_A -m $ST_SIZE -t $SEC_ST -vv udp_bw|tcp_bw"
}

run_fi() {
	local s v prov
	for v in tcp udp; do
		if [ "$rep" = 1 ]; then
			if [ -n "${unavail[fi_pingpong]:-}" ]; then
				mark fi_pingpong "$v" pingpong "$PP_SIZES" "${unavail[fi_pingpong]}"
			fi
			mark fi_pingpong "$v" stream "$ST_SIZE" "fi_pingpong has a ping-pong test only (no one-way stream)"
		fi
		[ -n "${unavail[fi_pingpong]:-}" ] && continue
		prov=(-p "$v" -e msg)
		[ "$v" = udp ] && prov=(-p udp -e dgram)
		for s in $PP_SIZES; do
			SRV=("${A_NS[@]}" fi_pingpong "${prov[@]}" -I "$FI_ITERS" -S "$s")
			CLI=("${B_NS[@]}" fi_pingpong "${prov[@]}" -I "$FI_ITERS" -S "$s" "$IP_A")
			run_one "fi_pingpong $v pingpong $s B" 60 tcp:47592 --tool fi_pingpong \
				--peer fi_pingpong --variant "$v" --test pingpong --size "$s" --iters "$FI_ITERS" \
				--unavail 'fi_getinfo\(\)'
		done
	done
	note_cmd fi-srv "taskset -c $CS fi_pingpong -p tcp -e msg | -p udp -e dgram -I $FI_ITERS -S SIZE"
	note_cmd fi-cli "taskset -c $CC fi_pingpong -p tcp -e msg | -p udp -e dgram -I $FI_ITERS -S SIZE IP_A"
}

run_ucx() {
	local s q w
	if [ -n "${unavail[ucx_perftest]:-}" ]; then
		[ "$rep" = 1 ] && mark ucx_perftest tcp pingpong "$PP_SIZES" "${unavail[ucx_perftest]}" &&
			mark ucx_perftest tcp stream "$ST_SIZE" "${unavail[ucx_perftest]}"
		return
	fi
	w=$((UCX_ITERS / 10))
	for s in $PP_SIZES; do
		for q in 50 90 99; do
			SRV=(env UCX_TLS=tcp UCX_NET_DEVICES="$IF_A" "${A_NS[@]}" ucx_perftest -p 13337)
			CLI=(env UCX_TLS=tcp UCX_NET_DEVICES="$IF_B" "${B_NS[@]}" ucx_perftest "$IP_A" -p 13337
				-t tag_lat -s "$s" -n "$UCX_ITERS" -w "$w" -f -R "$q")
			run_one "ucx_perftest tcp pingpong $s B (-R $q)" 60 tcp:13337 --tool ucx-lat \
				--peer ucx_perftest --variant tcp --test pingpong --size "$s" --rank "$q" --warmup "$w"
		done
	done
	SRV=(env UCX_TLS=tcp UCX_NET_DEVICES="$IF_A" "${A_NS[@]}" ucx_perftest -p 13337)
	CLI=(env UCX_TLS=tcp UCX_NET_DEVICES="$IF_B" "${B_NS[@]}" ucx_perftest "$IP_A" -p 13337
		-t tag_bw -s "$ST_SIZE" -n "$UCX_BW_ITERS" -w 1000 -f)
	run_one "ucx_perftest tcp stream" 60 tcp:13337 --tool ucx-bw --peer ucx_perftest \
		--variant tcp --test stream --size "$ST_SIZE" --warmup 1000
	note_cmd ucx-srv "UCX_TLS=tcp UCX_NET_DEVICES=IF_A taskset -c $CS ucx_perftest -p 13337"
	note_cmd ucx-cli "UCX_TLS=tcp UCX_NET_DEVICES=IF_B taskset -c $CC ucx_perftest IP_A -p 13337 -t tag_lat -s SIZE -n $UCX_ITERS -w $w -f -R 50|90|99;  -t tag_bw -s $ST_SIZE -n $UCX_BW_ITERS -w 1000 -f"
}

# ---- the report ----------------------------------------------------------------------------

version_of() { # a one-line version of a peer tool, or "absent"
	case $1 in
	sockperf) sockperf --version 2>/dev/null | grep -o 'version [^ ]*' | head -1 ;;
	qperf) dpkg-query -W -f='${Version}' qperf 2>/dev/null ;;
	fi_pingpong) fi_info --version 2>/dev/null | grep -o 'libfabric: [^ ]*' | head -1 ;;
	ucx_perftest) ucx_info -v 2>/dev/null | grep -o 'Version [^ ]*' | head -1 ;;
	esac
}

report() { # [NOTE]: medians, CSV, Markdown, plot from the runs so far
	local note=${1:-} meta=$out/peers_meta.json cmds=$TMP/commands.txt secs
	reported=1
	secs=$(($(date +%s) - T_ALL))
	printf '%s\n' "${COMMANDS[@]}" >"$cmds"
	M_HOST=$(uname -n) M_NCPU=$NCPU M_MODEL=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1) \
	M_KERNEL=$(uname -r) M_CMD="$cmdline" M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC') \
	M_ELAPSED="$((secs / 60)) min $((secs % 60)) s${note:+ $note}" M_REPS=$REPS M_PP_DUR=$PP_DUR \
	M_ST_DUR=$ST_DUR M_ST_SIZE=$ST_SIZE M_CS=$CS M_CC=$CC M_SIZES="$PP_SIZES" M_BG="${BG[*]}" \
	M_VERSIONS="xdpwake $("$X" --version 2>/dev/null | head -1 | grep -o '[0-9][0-9.]*' | head -1) (tree $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)); sockperf $(version_of sockperf); qperf $(version_of qperf); $(version_of fi_pingpong); UCX $(version_of ucx_perftest)" \
		"$PYTHON" - "$meta" "$cmds" <<'EOF'
import json, os, sys
e = os.environ
sizes = [int(s) for s in e["M_SIZES"].split()]
json.dump(dict(host=e["M_HOST"], ncpus=e["M_NCPU"], cpu_model=e["M_MODEL"], kernel=e["M_KERNEL"],
               cmdline=e["M_CMD"], date=e["M_DATE"], elapsed=e["M_ELAPSED"], reps=e["M_REPS"],
               pp_dur=e["M_PP_DUR"], st_dur=e["M_ST_DUR"], st_size=e["M_ST_SIZE"],
               cpu_server=e["M_CS"], cpu_client=e["M_CC"], versions=e["M_VERSIONS"],
               target_sizes=[s for s in (0, 64, 1024) if s in sizes] or sizes[:1],
               background=[float(x) for x in e["M_BG"].split()],
               commands=[l.rstrip("\n") for l in open(sys.argv[2]) if l.strip()]),
          open(sys.argv[1], "w"), indent=1)
EOF
	"$PYTHON" "$HERE/peers_report.py" report --runs "$RUNS" --out "$out" --meta "$meta"
}

# ---- main ----------------------------------------------------------------------------------

echo "peers: namespaces $NS_A / $NS_B, veth $IF_A <-> $IF_B ($IP_A / $IP_B); server on CPU $CS, client on CPU $CC"
echo "peers: $REPS repetitions; ping-pong sizes $PP_SIZES B, ${PP_DUR} s each; stream $ST_SIZE B, ${ST_DUR} s"
for c in sockperf qperf fi_pingpong ucx_perftest; do
	[ -n "${unavail[$c]:-}" ] && echo "peers: $c unavailable: ${unavail[$c]}"
done
for ((rep = 1; rep <= REPS; rep++)); do
	# Work that is not ours (other users' builds...) counts in /proc/stat
	# too: one idle second before each repetition says how much there was.
	b0=$(busy_us)
	sleep 1
	BG+=("$(awk -v b="$(($(busy_us) - b0))" -v n="$NCPU" 'BEGIN { printf "%.1f", b / (n * 1e4) }')")
	echo "repetition $rep of $REPS (background load before it: ${BG[-1]}% of the machine)"
	run_xdpwake
	run_raw
	run_udp
	run_sockperf
	run_qperf
	run_fi
	run_ucx
done
echo
echo "peers: medians of $REPS repetitions -> $out/peers.csv, peers.md, peers.svg/png"
report || die "the report failed"
secs=$(($(date +%s) - T_ALL))
echo "peers: done in $((secs / 60)) min $((secs % 60)) s"
exit 0
