#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The benchmark harness (issue 7): `make bench` runs everything, `make
# bench-quick` a small subset in a few minutes.
#
#   bench/run.sh [--quick] [--only LIST] [--results DIR] [--md FILE] [--no-md]
#                [--raw DIR] [--no-lock]
#
#   --quick        fewer sizes, repetitions and messages; writes to
#                  $OUTPUT/bench/quick (CSV, plots, RESULTS.md) unless
#                  --results/--md say otherwise; bench/RESULTS.md is left alone
#   --only LIST    experiments to run, e.g. 1,2,idle (1 2 3 4 5 6 7 8 idle;
#                  default all)
#   --results DIR  CSV files and plots (default bench/results)
#   --md FILE      the Markdown summary to update (default bench/RESULTS.md):
#                  only the sections of the experiments run are replaced
#   --no-md        do not touch any Markdown summary
#   --raw DIR      keep every run's JSON there (default $OUTPUT/bench/raw[-quick])
#   --no-lock      do not take /tmp/xdpwake-net.lock (the caller holds it)
#   OUTPUT=dir     build directory (default ./.output)
#   PYTHON=path    a python3 with matplotlib (default /usr/bin/python3)
#
# Experiments (the paper each reproduces in brackets):
#   1  ping-pong latency vs size 0 B - 1 MiB, every/timeout/marker/stream,
#      receivers blocking [Open-MX coalescing Fig. 5-6]       xdpwake pingpong
#   2  unidirectional message rate at 0 B, 128 B, 32 KiB, 1 MiB with wakes
#      per message [Table I]                                  xdpwake stream
#   3  one 234 KiB message: time and wakes on both sides per policy, and
#      the marker ablation (no RNDV, PULL, last PULL_REPLY, NOTIFY mark)
#      [Table II]                                             xwbench pp
#   4  32 KiB medium message with the mark 1 and 3 fragments early, marker
#      vs stream [Table III]                                  xwbench pp
#   5  wait strategies (bench/wait_strategies.sh) [SHRIMP Fig. 2-4]
#   6  notification delay of a compute-bound receiver: polls at sends only,
#      xw_check(), watchdog 50 us (also with its thread under SCHED_FIFO)
#      and 1 ms, XDP-driven notify thread
#      [notification-delay paper Fig. 3, 4, 7]                xwbench notif
#   7  push-pull: latency vs BTP, early and late receiver for push-all,
#      push-zero, push-pull [push-pull paper Fig. 3-6]        xwbench pp
#   8  peers (bench/peers.sh, when present)
#   idle  CPU of a receiver waiting with no traffic (block, spin-block)
#
# Locally it creates two network namespaces joined by a veth pair (unique
# names with this PID), attaches xdpwake to both ends, and runs one side in
# each.  Every configuration is repeated and the repetitions interleaved;
# bench/report.py turns the runs into CSV, plots and the Markdown sections
# after each experiment, so an interrupted run keeps what finished.
#
# Between two hosts (not testable on one machine): IFACE=eth1 REMOTE=user@host
# REMOTE_IFACE=eth1 [REMOTE_DIR=path/to/xdpwake] bench/run.sh --only 1,2,3,4,7
# runs the local side here and the other side over ssh (root on both, the same
# tree built at REMOTE_DIR, default this path); experiment 6 needs one clock
# and is skipped, CPU per message then counts this machine only.
#
# Exit: 0 ok, 1 a run or the set-up failed, 2 usage, 130/143 interrupted.
# shellcheck disable=SC2317 # cleanup() and on_signal() run from traps
set -u

OUTPUT=${OUTPUT:-./.output}
OUTPUT=$(cd "$OUTPUT" 2>/dev/null && pwd) || { echo "bench: build directory missing: run 'make'" >&2; exit 1; }
PYTHON=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$TOP/scripts/lib.sh"
quick=0 only='' results='' md='' nomd=0 raw='' lock=1
cmdline="bench/run.sh${*:+ $*}"

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--only) [ $# -ge 2 ] || xw_usage; only=",${2// /,},"; shift ;;
	--results) [ $# -ge 2 ] || xw_usage; results=$2; shift ;;
	--md) [ $# -ge 2 ] || xw_usage; md=$2; shift ;;
	--no-md) nomd=1 ;;
	--raw) [ $# -ge 2 ] || xw_usage; raw=$2; shift ;;
	--no-lock) lock=0 ;;
	-h | --help) xw_usage 0 ;;
	*) echo "bench: unknown argument '$1'" >&2; xw_usage ;;
	esac
	shift
done
want() { [ -z "$only" ] || [[ $only == *",$1,"* ]]; }

if [ "$quick" = 1 ]; then
	results=${results:-$OUTPUT/bench/quick}
	md=${md:-$results/RESULTS.md}
	raw=${raw:-$OUTPUT/bench/raw-quick}
else
	results=${results:-$HERE/results}
	md=${md:-$HERE/RESULTS.md}
	raw=${raw:-$OUTPUT/bench/raw}
fi
[ "$nomd" = 1 ] && md=

if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (network namespaces, XDP, AF_XDP): run 'sudo make bench'" >&2
	exit 1
fi
X=$OUTPUT/xdpwake
XB=$OUTPUT/bench/xwbench
for f in "$X" "$XB"; do
	[ -x "$f" ] || { echo "bench: $f not built: run 'make all benches'" >&2; exit 1; }
done
for c in ip nsenter timeout; do
	command -v "$c" >/dev/null || { echo "bench: $c missing (make deps)" >&2; exit 1; }
done
"$PYTHON" -c 'import matplotlib' 2>/dev/null ||
	{ echo "bench: $PYTHON has no matplotlib (scripts/deps.sh python3-matplotlib)" >&2; exit 1; }

remote=0
if [ -n "${IFACE:-}" ]; then
	if [ -z "${REMOTE:-}" ] || [ -z "${REMOTE_IFACE:-}" ]; then
		echo "bench: IFACE needs REMOTE=user@host and REMOTE_IFACE (see --help)" >&2
		exit 2
	fi
	remote=1
	REMOTE_DIR=${REMOTE_DIR:-$TOP}
fi

# ---- the machine-wide lock: nothing else on the network while we measure ----

if [ "$lock" = 1 ]; then
	xw_net_lock bench
else
	export XDPWAKE_NET_LOCK_HELD=1 # the caller holds it: so must our children know
fi

# ---- parameters ----------------------------------------------------------------

POLICIES="every timeout marker stream"
if [ "$quick" = 1 ]; then
	REPS=2
	E1_SIZES=0,64,1K,32K,256K,1M E1_DUR=0.2
	E2_SIZES=0,128,32K,1M E2_DUR=0.3
	E3_ITERS=100 E4_ITERS=300
	IDLE_SECS=2 IDLE_REPS=1
	E6_MSGS=600 E6_REPS=1
	E7_ITERS=100 E7_SIZES="4K 64K" E7_BTP_SIZES="48K" E7_KS="1 3 9 33"
else
	REPS=5
	E1_SIZES=0,16,64,256,1K,4K,16K,32K,64K,128K,256K,1M E1_DUR=0.5
	E2_SIZES=0,128,32K,1M E2_DUR=1
	E3_ITERS=300 E4_ITERS=1000
	IDLE_SECS=10 IDLE_REPS=3
	E6_MSGS=3000 E6_REPS=3
	E7_ITERS=300 E7_SIZES="1K 4K 16K 64K 256K" E7_BTP_SIZES="48K 256K" E7_KS="1 2 3 5 9 17 33"
fi
E6_GAP=500 # mean gap between messages (us)

# ---- set-up and clean-up ----------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/xwbench.XXXXXX") || exit 1
NS_A='' NS_B='' ROOT='' PIDS=()
failed=0

cleanup() {
	local p
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do xw_kill_pid "$p"; done
	xw_netns_del
	[ -n "$ROOT" ] && rm -rf "$ROOT"
	rm -rf "$TMP"
}
on_signal() {
	echo >&2
	echo "bench: interrupted; the experiments that finished are in $results" >&2
	exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
die() {
	echo "bench: $*" >&2
	exit 1
}

mkdir -p "$raw" "$results" || exit 1
X_COPY=$TMP/xdpwake XB_COPY=$TMP/xwbench # private copies: the tree may be rebuilt meanwhile
cp "$X" "$X_COPY" && cp "$XB" "$XB_COPY" || exit 1
X=$X_COPY XB=$XB_COPY

if [ "$remote" = 0 ]; then
	NS_A=xwbench-$$-a NS_B=xwbench-$$-b IF_A=xwb$$a IF_B=xwb$$b
	xw_veth_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B"
	xw_bpffs
	ROOT=/sys/fs/bpf/xwbench-$$
	export XDPWAKE_PIN_ROOT=$ROOT
	nsenter --net="/run/netns/$NS_A" "$X" attach "$IF_A" >"$TMP/attach" 2>&1 ||
		{ cat "$TMP/attach" >&2; die "cannot attach xdpwake to $IF_A"; }
	nsenter --net="/run/netns/$NS_B" "$X" attach "$IF_B" >"$TMP/attach" 2>&1 ||
		{ cat "$TMP/attach" >&2; die "cannot attach xdpwake to $IF_B"; }
	xmode=$(sed -n 's/^ *mode *//p' "$TMP/attach")
	where="two network namespaces joined by a veth pair ($IF_A <-> $IF_B), xdpwake ${xmode:-attached}, AF_XDP copy mode"
	IF_S=$IF_A IF_C=$IF_B
else
	ip link show "$IFACE" >/dev/null 2>&1 || die "no interface '$IFACE'"
	"$X" status "$IFACE" >/dev/null 2>&1 || "$X" attach "$IFACE" >/dev/null || die "cannot attach to $IFACE"
	where="real NICs: $IFACE here, $REMOTE_IFACE on $REMOTE (CPU: this machine only)"
	IF_S=$REMOTE_IFACE IF_C=$IFACE
fi

# side b (server/receiver): namespace A, or the remote host.  $1: output file,
# $2: address file, rest: the command.  Sets BPID.
start_b() {
	local out=$1 addr=$2
	shift 2
	rm -f "$addr"
	if [ "$remote" = 0 ]; then
		nsenter --net="/run/netns/$NS_A" "$@" >"$out" 2>"$out.err" &
	else
		# shellcheck disable=SC2029 # expanded here on purpose
		ssh -o BatchMode=yes "$REMOTE" "cd '$REMOTE_DIR' && rm -f /tmp/xwbench-addr.$$ && $* \
			--addr-file /tmp/xwbench-addr.$$ >/tmp/xwbench-out.$$ 2>&1; rc=\$?; cat /tmp/xwbench-out.$$; exit \$rc" \
			>"$out" 2>"$out.err" &
	fi
	BPID=$!
	PIDS+=("$BPID")
}
# Wait until side b published its address into $1 (5 s; remote: 20 s).
wait_addr() {
	local addr=$1 i
	for ((i = 0; i < 400; i++)); do
		if [ "$remote" = 0 ]; then
			[ -s "$addr" ] && return 0
		else
			ssh -o BatchMode=yes "$REMOTE" "cat /tmp/xwbench-addr.$$" >"$addr" 2>/dev/null && [ -s "$addr" ] && return 0
		fi
		kill -0 "$BPID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
side_b_cmd() { # the side-b binary path for this mode (remote: in REMOTE_DIR)
	if [ "$remote" = 0 ]; then
		echo "$1"
	else
		case ${1##*/} in xwbench) echo ".output/bench/xwbench" ;; *) echo ".output/${1##*/}" ;; esac
	fi
}
in_c() { # side a (client): namespace B, or here
	if [ "$remote" = 0 ]; then nsenter --net="/run/netns/$NS_B" "$@"; else "$@"; fi
}
stop_b() {
	local i
	for ((i = 0; i < 100; i++)); do kill -0 "$BPID" 2>/dev/null || break; sleep 0.05; done
	xw_kill_pid "$BPID"
	wait "$BPID" 2>/dev/null
	BRC=$?
	unset 'PIDS[-1]'
}

# Run side a to completion in the background (so signals are handled), at most
# $1 seconds; the rest is the command.  Returns its status.
run_c() {
	local lim=$1 rc
	shift
	in_c timeout -k 5 "$lim" "$@" &
	CPID=$!
	PIDS+=("$CPID")
	while :; do
		wait "$CPID"
		rc=$?
		kill -0 "$CPID" 2>/dev/null || break
	done
	unset 'PIDS[-1]'
	return "$rc"
}

# One JSON line per run in $raw/<exp>/index.jsonl: labels, status, files,
# the exact commands.
log_run() { # exp rc labels-json afile bfile cmd-a cmd-b
	printf '{"exp": "%s", "rc": %s, %s, "a": "%s", "b": "%s", "cmd_a": "%s", "cmd_b": "%s"}\n' \
		"$1" "$2" "$3" "$4" "$5" "$6" "$7" >>"$raw/$1/index.jsonl"
}

# xwbench pair: exp labels-json name args...
pair() {
	local exp=$1 labels=$2 name=$3 rc dir
	shift 3
	dir=$raw/$exp
	local a=$dir/$name.a.json b=$dir/$name.b.json
	local bcmd acmd
	bcmd="$(side_b_cmd "$XB") $* --role b $IF_S"
	acmd="$XB $* --role a $IF_C"
	# shellcheck disable=SC2086 # word splitting of the options is wanted
	start_b "$b" "$TMP/addr" $bcmd --addr-file "$TMP/addr"
	if ! wait_addr "$TMP/addr"; then
		stop_b
		log_run "$exp" 1 "$labels" "${a#"$raw"/}" "${b#"$raw"/}" "${acmd#"$TMP"/}" "${bcmd#"$TMP"/}"
		echo "FAILED: side b did not start: $(tail -1 "$b.err")"
		failed=$((failed + 1))
		return 1
	fi
	local peer=(--peer-file "$TMP/addr")
	[ "$remote" = 1 ] && peer=(--peer "$(cat "$TMP/addr")")
	# shellcheck disable=SC2086
	run_c 300 $acmd "${peer[@]}" >"$a" 2>"$a.err"
	rc=$?
	stop_b
	[ "$rc" = 0 ] && [ "$BRC" != 0 ] && rc=$BRC
	log_run "$exp" "$rc" "$labels" "${a#"$raw"/}" "${b#"$raw"/}" "xwbench ${acmd#"$XB" }" "xwbench ${bcmd#*xwbench }"
	if [ "$rc" != 0 ]; then
		failed=$((failed + 1))
		echo "FAILED (exit $rc): $(tail -1 "$a.err") $(tail -1 "$b.err")"
		return 1
	fi
	return 0
}

# The xdpwake pingpong server for experiments 1 and 2.
cli_server_start() {
	local bin
	bin=$(side_b_cmd "$X")
	# shellcheck disable=SC2086
	start_b "$TMP/server.log" "$TMP/saddr" $bin pingpong "$IF_S" --server --accept-timeout 120 \
		--addr-file "$TMP/saddr"
	wait_addr "$TMP/saddr" || { stop_b; die "the pingpong server did not start: $(tail -2 "$TMP/server.log.err" "$TMP/server.log")"; }
	SPEER=(--peer-file "$TMP/saddr")
	[ "$remote" = 1 ] && SPEER=(--peer "$(cat "$TMP/saddr")")
}

# ---- metadata ------------------------------------------------------------------------

rev=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)
if [ -n "$rev" ] && [ -n "$(git -C "$TOP" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	rev="$rev + uncommitted changes"
fi
started=$(date -u '+%Y-%m-%d %H:%M UTC')
json_str() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
write_meta() { # exp
	mkdir -p "$raw/$1"
	: >"$raw/$1/index.jsonl"
	{
		printf '{"command": "%s", "date": "%s", "kernel": "%s", ' "$(json_str "$cmdline")" "$started" "$(uname -r)"
		printf '"cpu": "%s", "ncpu": %s, "revision": "%s", ' \
			"$(json_str "$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1)")" "$(nproc)" "$(json_str "${rev:-unknown}")"
		printf '"where": "%s", "quick": %s, "reps": %s, "host": "%s"}\n' "$(json_str "$where")" "$quick" "$REPS" \
			"$(json_str "$(uname -n)")"
	} >"$raw/$1/meta.json"
}
report() { # exp
	local args=(--raw "$raw" --results "$results" --exp "$1")
	[ -n "$md" ] && args+=(--md "$md")
	[ "$quick" = 1 ] && args+=(--quick)
	"$PYTHON" "$HERE/report.py" "${args[@]}" || { echo "bench: report for experiment $1 failed" >&2; failed=$((failed + 1)); }
}
progress() { printf '\r  [%d/%d] %-60s' "$1" "$2" "$3"; }
elapsed() { echo "$(( $(date +%s) - $1 )) s"; }

echo "xdpwake benchmarks$([ "$quick" = 1 ] && echo ' (quick)'): $where"
echo "kernel $(uname -r), $(nproc) x $(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1), revision ${rev:-unknown}"
echo "results: $results${md:+, summary: $md}; raw runs: $raw"
T_ALL=$(date +%s)

# cli_exp EXP TEST NAME SIZES DUR TITLE: the tool's TEST client (files
# NAME-POLICY-REP.json) against its server, every policy, receivers
# blocking, REPS repetitions, then the experiment's report.
cli_exp() {
	local e=$1 test=$2 name=$3 sizes=$4 dur=$5 rep p out rc n k=0 cmd
	t0=$(date +%s)
	echo
	echo "$6, sizes $sizes, policies $POLICIES, receivers blocking, $REPS reps"
	write_meta "$e"
	cli_server_start
	n=$((REPS * 4))
	for ((rep = 1; rep <= REPS; rep++)); do
		for p in $POLICIES; do
			k=$((k + 1))
			progress "$k" "$n" "rep $rep $p"
			out=$raw/$e/$name-$p-$rep.json
			cmd=("$X" -j "$test" "$IF_C" --client "${SPEER[@]}" --policy "$p" --wait block
				--sizes "$sizes" --duration "$dur")
			run_c 300 "${cmd[@]}" >"$out" 2>"$out.err"
			rc=$?
			log_run "$e" "$rc" "\"rep\": $rep, \"policy\": \"$p\"" "${out#"$raw"/}" "" \
				"xdpwake -j $test IFACE --client --peer ADDR --policy $p --wait block --sizes $sizes --duration $dur" \
				"xdpwake pingpong IFACE --server"
			[ "$rc" = 0 ] || { failed=$((failed + 1)); echo " FAILED (exit $rc): $(tail -1 "$out.err")"; }
		done
	done
	stop_b
	echo
	report "$e"
	echo "  done in $(elapsed "$t0")"
}

# ---- experiment 1: ping-pong latency vs size ------------------------------------------

want 1 && cli_exp 1 pingpong pp "$E1_SIZES" "$E1_DUR" "Experiment 1: ping-pong latency"

# ---- experiment 2: message rate --------------------------------------------------------

want 2 && cli_exp 2 stream stream "$E2_SIZES" "$E2_DUR" "Experiment 2: unidirectional stream"

# ---- experiment 3: anatomy of one 234 KiB message --------------------------------------

if want 3; then
	t0=$(date +%s)
	configs=("every all" "timeout all" "marker all" "stream all"
		"marker -rndv" "marker -pull" "marker -pull_reply" "marker -notify" "marker none")
	echo
	echo "Experiment 3: one 234 KiB message (0 B back), ${#configs[@]} configurations, receivers blocking, $REPS reps"
	write_meta 3
	n=$((REPS * ${#configs[@]})) k=0
	for ((rep = 1; rep <= REPS; rep++)); do
		for c in "${configs[@]}"; do
			read -r p m <<<"$c"
			k=$((k + 1))
			progress "$k" "$n" "rep $rep $p marks $m"
			pair 3 "\"rep\": $rep, \"policy\": \"$p\", \"marks\": \"$m\"" "${p}_${m#-}-$rep" \
				pp --size 234K --reply 0 --iters "$E3_ITERS" --policy "$p" --wait block --marks "$m" >/dev/null
		done
	done
	echo
	report 3
	echo "  done in $(elapsed "$t0")"
fi

# ---- experiment 4: mis-ordering ----------------------------------------------------------

if want 4; then
	t0=$(date +%s)
	echo
	echo "Experiment 4: 32 KiB medium message, mark moved 0/1/3 fragments early, marker vs stream (+ every, timeout), $REPS reps"
	write_meta 4
	configs=("every 0" "timeout 0" "marker 0" "stream 0" "marker 1" "stream 1" "marker 3" "stream 3")
	n=$((REPS * ${#configs[@]})) k=0
	for ((rep = 1; rep <= REPS; rep++)); do
		for c in "${configs[@]}"; do
			read -r p s <<<"$c"
			k=$((k + 1))
			progress "$k" "$n" "rep $rep $p shift $s"
			pair 4 "\"rep\": $rep, \"policy\": \"$p\", \"shift\": $s" "$p-$s-$rep" \
				pp --size 32K --iters "$E4_ITERS" --policy "$p" --wait block --mark-shift "$s" >/dev/null
		done
	done
	echo
	report 4
	echo "  done in $(elapsed "$t0")"
fi

# ---- idle receiver CPU ------------------------------------------------------------------------

if want idle; then
	t0=$(date +%s)
	echo
	echo "Idle receiver: waiting ${IDLE_SECS} s with no traffic (block, spin-block; spin for reference), $IDLE_REPS reps"
	write_meta idle
	n=$((IDLE_REPS * 3)) k=0
	for ((rep = 1; rep <= IDLE_REPS; rep++)); do
		for w in block spin-block spin; do
			k=$((k + 1))
			progress "$k" "$n" "rep $rep $w"
			secs=$IDLE_SECS
			[ "$w" = spin ] && secs=2
			# The machine with nothing of ours running, just before.
			base=$(head -1 /proc/stat)
			sleep "$secs"
			base2=$(head -1 /proc/stat)
			out=$raw/idle/$w-$rep.json
			run_c 120 "$XB" idle "$IF_C" --seconds "$secs" --wait "$w" >"$out" 2>"$out.err"
			rc=$?
			log_run idle "$rc" "\"rep\": $rep, \"wait\": \"$w\", \"base0\": \"$base\", \"base1\": \"$base2\", \"base_secs\": $secs" \
				"${out#"$raw"/}" "" "xwbench idle IFACE --seconds $secs --wait $w" ""
			[ "$rc" = 0 ] || { failed=$((failed + 1)); echo " FAILED (exit $rc): $(tail -1 "$out.err")"; }
		done
	done
	echo
	report idle
	echo "  done in $(elapsed "$t0")"
fi

# ---- experiment 6: notification delay -----------------------------------------------------

if want 6; then
	t0=$(date +%s)
	echo
	if [ "$remote" = 1 ]; then
		echo "Experiment 6: skipped between two hosts (the delay needs one clock)"
	else
		modes=("sends" "check --check-us 20" "watchdog --watchdog-us 50" "watchdog --watchdog-us 50 --watchdog-rt 1"
			"watchdog --watchdog-us 1000" "notify")
		echo "Experiment 6: notification delay, compute-bound receiver, $E6_MSGS messages (mean gap ${E6_GAP} us), ${#modes[@]} modes, $E6_REPS reps"
		write_meta 6
		n=$((E6_REPS * ${#modes[@]})) k=0
		for ((rep = 1; rep <= E6_REPS; rep++)); do
			for m in "${modes[@]}"; do
				k=$((k + 1))
				read -r mode extra <<<"$m"
				label=$mode
				case $m in
				*watchdog-us\ 50) label=wd50us ;;
				*watchdog-us\ 50\ --watchdog-rt\ 1) label=wd50us_rt ;;
				*watchdog-us\ 1000) label=wd1ms ;;
				esac
				progress "$k" "$n" "rep $rep $label"
				# shellcheck disable=SC2086
				pair 6 "\"rep\": $rep, \"mode\": \"$label\"" "$label-$rep" \
					notif --msgs "$E6_MSGS" --gap-us "$E6_GAP" --size 64 --seed "$rep" --policy marker \
					--wait block --mode $mode $extra --samples "$raw/6/$label-$rep.samples" >/dev/null
			done
		done
		echo
		report 6
	fi
	echo "  done in $(elapsed "$t0")"
fi

# ---- experiment 7: push-pull ---------------------------------------------------------------

if want 7; then
	t0=$(date +%s)
	echo
	nk=$(wc -w <<<"$E7_KS") nbs=$(wc -w <<<"$E7_BTP_SIZES") ns=$(wc -w <<<"$E7_SIZES")
	echo "Experiment 7: push-pull: BTP sweep (K = $E7_KS pushed frames; sizes $E7_BTP_SIZES), early/late receiver"
	echo "  (sizes $E7_SIZES; push-all, push-zero, push-pull), $REPS reps"
	write_meta 7
	n=$((REPS * (nk * nbs + ns * 6))) k=0
	for ((rep = 1; rep <= REPS; rep++)); do
		for s in $E7_BTP_SIZES; do
			for K in $E7_KS; do
				k=$((k + 1))
				progress "$k" "$n" "rep $rep btp size $s K $K"
				# K pushed frames: the RNDV's one frame (btp1 = 1 byte) and K-1 more
				b2="$((K - 1))f"
				[ "$K" = 1 ] && b2=1
				pair 7 "\"rep\": $rep, \"test\": \"btp\", \"size\": \"$s\", \"k\": $K" "btp-$s-$K-$rep" \
					pp --size "$s" --iters "$E7_ITERS" --eager-max 1f --btp1 1 --btp2 "$b2" >/dev/null
			done
		done
		for s in $E7_SIZES; do
			for t in early late; do
				if [ "$t" = early ]; then x=200 y=50; else x=50 y=200; fi
				for scheme in push-all push-zero push-pull; do
					k=$((k + 1))
					progress "$k" "$n" "rep $rep $t $s $scheme"
					case $scheme in
					push-all) # at least one frame (the library's minimum eager limit)
						fr=(--eager-max "$s")
						[ "$(numfmt --from=iec "$s")" -lt 2048 ] && fr=(--eager-max 1f) ;;
					push-zero) fr=(--eager-max 1f --btp1 1 --btp2 1) ;;
					push-pull) fr=(--eager-max 1f) ;;
					esac
					# the eager limit is at least one frame: below that every scheme is eager
					pair 7 "\"rep\": $rep, \"test\": \"$t\", \"size\": \"$s\", \"scheme\": \"$scheme\"" \
						"$t-$s-$scheme-$rep" pp --size "$s" --iters "$E7_ITERS" --x-us "$x" --y-us "$y" \
						"${fr[@]}" >/dev/null
				done
			done
		done
	done
	echo
	report 7
	echo "  done in $(elapsed "$t0")"
fi

# ---- experiment 5: wait strategies (its own namespaces) ------------------------------------

# Ours are not needed by the next two: remove them first.
if [ "$remote" = 0 ]; then
	xw_netns_del
	NS_A='' NS_B=''
fi

if want 5; then
	t0=$(date +%s)
	echo
	if [ "$remote" = 1 ]; then
		echo "Experiment 5: skipped between two hosts (bench/wait_strategies.sh runs on one machine)"
	elif [ "$quick" = 1 ]; then
		echo "Experiment 5: bench/wait_strategies.sh --quick (results in $results, no Markdown)"
		OUTPUT=$OUTPUT PYTHON=$PYTHON "$HERE/wait_strategies.sh" --quick --no-md --results "$results" ||
			failed=$((failed + 1))
	else
		echo "Experiment 5: bench/wait_strategies.sh (its own CSV, plots and RESULTS.md section)"
		wargs=()
		[ "$results" != "$HERE/results" ] && wargs+=(--results "$results")
		[ "$md" != "$HERE/RESULTS.md" ] && wargs+=(--no-md)
		OUTPUT=$OUTPUT PYTHON=$PYTHON "$HERE/wait_strategies.sh" "${wargs[@]}" || failed=$((failed + 1))
	fi
	echo "  done in $(elapsed "$t0")"
fi

# ---- experiment 8: peers (a colleague's script) ----------------------------------------------

if want 8; then
	t0=$(date +%s)
	echo
	if [ "$remote" = 1 ]; then
		echo "Experiment 8: skipped between two hosts (bench/peers.sh runs on one machine)"
	elif [ -x "$HERE/peers.sh" ] || [ -f "$HERE/peers.sh" ]; then
		echo "Experiment 8: bench/peers.sh$([ "$quick" = 1 ] && echo ' --quick') --out $results"
		pargs=(--out "$results")
		[ "$quick" = 1 ] && pargs=(--quick "${pargs[@]}")
		write_meta 8
		lim=3600
		[ "$quick" = 1 ] && lim=900
		OUTPUT=$OUTPUT PYTHON=$PYTHON timeout -k 10 "$lim" bash "$HERE/peers.sh" "${pargs[@]}" &
		ppid=$!
		PIDS+=("$ppid")
		while :; do
			wait "$ppid"
			rc=$?
			kill -0 "$ppid" 2>/dev/null || break
		done
		unset 'PIDS[-1]'
		[ "$rc" = 0 ] || { failed=$((failed + 1)); echo "bench: peers.sh failed (exit $rc)" >&2; }
		report 8
	else
		echo "Experiment 8: bench/peers.sh not present: skipped"
		write_meta 8
		report 8
	fi
	echo "  done in $(elapsed "$t0")"
fi

# ---- the summary's header and targets ----------------------------------------------------------

report summary
echo
echo "bench: finished in $(elapsed "$T_ALL"); results in $results${md:+, summary in $md}"
[ "$failed" -eq 0 ] || { echo "bench: $failed runs or steps failed" >&2; exit 1; }
exit 0
