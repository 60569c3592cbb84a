#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Wait strategies against think time (issue 7, experiment 5; SHRIMP Fig. 2-4).
#
#   bench/wait_strategies.sh [--quick] [--only a|b|c] [--no-md] [--results DIR]
#
#   --quick        fewer think times, repetitions and messages (a few minutes)
#   --only a|b|c   run only experiment A (one pair, think 0-600 us), B
#                  (five pairs, think 0-300 us, with and without a CPU hog)
#                  or C (placements: pinned apart, not pinned, one CPU, five
#                  pairs; issue 27)
#   --no-md        do not update bench/RESULTS.md (CSV and plots are written)
#   --results DIR  where the CSV files and plots go (default bench/results)
#   --keep-raw DIR also keep every run's JSON and GNU time output in DIR
#                  (plot_wait.py --raw DIR --results ... analyses it again)
#   OUTPUT=dir     build directory (default ./.output)
#   PYTHON=path    a python3 with matplotlib (default /usr/bin/python3;
#                  Debian: apt-get install python3-matplotlib)
#
# A: one ping-pong pair, 64 B messages, marker policy, in two network
#    namespaces joined by a veth pair; for every think time of the server and
#    every wait strategy (both sides wait the same way): latency p50/p99 and
#    whole-machine CPU per message from `xdpwake pingpong -j`.  Repetitions
#    are interleaved (rep, think, strategy) so background noise hits every
#    configuration alike; the median over repetitions is reported.  An extra
#    configuration, spin-block with --spin 50, is measured next to the default
#    spin-block (whose spin time is the measured block-and-wake cost).
# B: five ping-pong pairs at once, each in its own pair of namespaces, with
#    fixed think times 0, 75, 150, 225, 300 us (the tool has no random think
#    time), N round trips per pair, with and without a CPU hog (one busy
#    loop, not pinned): wall time, user and system time and context switches
#    of the ten processes (GNU time), whole-machine CPU (/proc/stat).  Each
#    configuration also runs with N/10 round trips: the difference takes the
#    processes' start-up (attach, set-up, connect) out of the numbers.
# C: where the processes run (issue 27): one pair, 64 B, policy every, no
#    think time, spin / block / spin-block / adaptive, with the server and
#    the client pinned to CPUs 0 and 1 ("apart"), not pinned ("free"), both
#    on CPU 0 ("one"), and five pairs at once, not pinned ("pairs5", SHRIMP's
#    multiprogramming experiment); each run lasts C_DUR seconds; repetitions
#    interleaved (rep, placement, strategy); mean round trip and
#    percentiles, the median over repetitions, ratios within each
#    repetition (bench/wait_shared.py, its own section of RESULTS.md).
#
# The namespaces, veth pairs, bpffs pins and every process this script
# started are removed at the end, also on Ctrl-C (the runs done so far are
# then analysed into the results directory, RESULTS.md is left alone).
#
# Exit: 0 ok, 1 a run or the set-up failed, 2 usage.
# shellcheck disable=SC2317 # cleanup() and on_signal() run from traps
set -u

OUTPUT=${OUTPUT:-./.output}
PYTHON=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$HERE/../scripts/lib.sh"
RESULTS=$HERE/results
quick=0 only='' md=1 keep=''
cmdline="bench/wait_strategies.sh${*:+ $*}"

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--only)
		[ $# -ge 2 ] || xw_usage
		only=$2
		shift
		case $only in a | b | c) ;; *) echo "wait_strategies: --only a, b or c" >&2; exit 2 ;; esac
		;;
	--no-md) md=0 ;;
	--results)
		[ $# -ge 2 ] || xw_usage
		RESULTS=$2
		shift
		;;
	--keep-raw)
		[ $# -ge 2 ] || xw_usage
		keep=$2
		shift
		;;
	-h | --help) xw_usage 0 ;;
	*) echo "wait_strategies: unknown argument '$1'" >&2; xw_usage ;;
	esac
	shift
done

if [ "$(id -u)" -ne 0 ]; then
	echo "wait_strategies: needs root (namespaces, XDP, AF_XDP)" >&2
	exit 1
fi
if [ ! -x "$OUTPUT/xdpwake" ]; then
	echo "wait_strategies: $OUTPUT/xdpwake not built: run 'make'" >&2
	exit 1
fi
for c in ip nsenter pgrep taskset /usr/bin/time; do
	command -v "$c" >/dev/null || { echo "wait_strategies: $c missing (iproute2, util-linux, time)" >&2; exit 1; }
done
# the plots of A and B (C's report needs no matplotlib)
[ "$only" = c ] || "$PYTHON" -c 'import matplotlib' 2>/dev/null ||
	{ echo "wait_strategies: $PYTHON has no matplotlib (apt-get install python3-matplotlib)" >&2; exit 1; }

# ---- parameters ---------------------------------------------------------------

STRATS="spin yield block spin-yield spin-block notify adaptive spin-block:50"
B_STRATS="spin block spin-block adaptive"
B_THINKS="0 75 150 225 300"
SIZE=64
POLICY=marker
C_STRATS="spin block spin-block adaptive"
C_PLACES="apart free one pairs5"
C_POLICY=every
if [ "$quick" = 1 ]; then
	THINKS="0 50 200 600" REPS=2 DUR=0.4 B_ITERS=300 B_SMALL=30 B_REPS=1
	C_REPS=1 C_DUR=0.5
else
	THINKS="0 25 50 100 200 300 400 600" REPS=5 DUR=1 B_ITERS=1000 B_SMALL=100 B_REPS=2
	C_REPS=3 C_DUR=1
fi
B_LIMIT=90 # seconds a five-pair configuration may take before it is stopped

# ---- set-up and clean-up ------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/xwwait.XXXXXX") || exit 1
X=$TMP/xdpwake
cp "$OUTPUT/xdpwake" "$X" || exit 1 # a private copy: the tree may be rebuilt meanwhile
ROOT=/sys/fs/bpf/xwwait-$$
export XDPWAKE_PIN_ROOT=$ROOT
NPAIRS=5
PIDS=() # processes started (only these are removed; the namespaces: XW_NETNS)

kill_tree() { # PID: its children first (xdpwake under GNU time), then itself
	local pid=$1 c i
	[ -n "$pid" ] || return 0
	for c in $(pgrep -P "$pid"); do kill -TERM "$c" 2>/dev/null; done
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}
cleanup() {
	local p ns
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do kill_tree "$p"; done
	xw_netns_del
	[ -n "$keep" ] && [ -d "${RAW:-}" ] && mkdir -p "$keep" && cp -a "$RAW/." "$keep/"
	rm -rf "$ROOT" "$TMP"
}
on_signal() {
	echo >&2
	echo "wait_strategies: interrupted, cleaning up; analysing the runs done so far" >&2
	local p
	for p in "${PIDS[@]}"; do kill_tree "$p"; done
	PIDS=()
	analyse partial
	exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

die() {
	echo "wait_strategies: $*" >&2
	exit 1
}

# Busy share of the whole machine (all CPUs, %) over $1 seconds, from /proc/stat.
busy_pct() {
	local a b
	a=$(head -1 /proc/stat)
	sleep "$1"
	b=$(head -1 /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN {
		split(a, x); split(b, y)
		busy = (y[2]+y[3]+y[4]+y[7]+y[8]+y[9]) - (x[2]+x[3]+x[4]+x[7]+x[8]+x[9])
		tot = busy + (y[5]+y[6]) - (x[5]+x[6])
		printf "%.1f", tot ? 100 * busy / tot : 0 }'
}
# busy, total, softirq, steal (ticks) from the first line of /proc/stat
proc_stat() { head -1 /proc/stat | awk '{ print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9, $8, $9 }'; }

xw_bpffs
for ((i = 1; i <= NPAIRS; i++)); do
	a=xwwait-$$-a$i b=xwwait-$$-b$i
	xw_veth_pair "$a" "$b" "xww$$a$i" "xww$$b$i"
	nsenter --net="/run/netns/$a" "$X" attach "xww$$a$i" >"$TMP/attach" 2>&1 ||
		{ cat "$TMP/attach" >&2; die "cannot attach xdpwake to xww$$a$i"; }
	nsenter --net="/run/netns/$b" "$X" attach "xww$$b$i" >"$TMP/attach" 2>&1 ||
		{ cat "$TMP/attach" >&2; die "cannot attach xdpwake to xww$$b$i"; }
done
mode=$(sed -n 's/^ *mode *//p' "$TMP/attach")
A() { echo "/run/netns/xwwait-$$-a$1"; } # server side of pair $1
B() { echo "/run/netns/xwwait-$$-b$1"; } # client side of pair $1

RAW=$TMP/raw
mkdir -p "$RAW" "$RESULTS" || exit 1
kernel=$(uname -r)
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1)
ncpu=$(nproc)
rev=$(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null)
if [ -n "$rev" ] && [ -n "$(git -C "$HERE/.." status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	rev="$rev + uncommitted changes"
fi
started=$(date -u '+%Y-%m-%d %H:%M UTC')
{
	echo "command=$cmdline"
	echo "date=$started"
	echo "kernel=$kernel"
	echo "cpu=$cpu"
	echo "ncpu=$ncpu"
	echo "revision=${rev:-unknown}"
	echo "xdp_mode=${mode:-?} (AF_XDP copy mode over veth)"
	echo "quick=$quick"
	echo "a_thinks=$THINKS"
	echo "a_reps=$REPS"
	echo "a_duration_s=$DUR"
	echo "a_size=$SIZE"
	echo "policy=$POLICY"
	echo "b_thinks=$B_THINKS"
	echo "b_iters=$B_ITERS"
	echo "b_small=$B_SMALL"
	echo "b_reps=$B_REPS"
	echo "c_reps=$C_REPS"
	echo "c_duration_s=$C_DUR"
	echo "c_policy=$C_POLICY"
	echo "load_before_pct=$(busy_pct 1)"
} >"$RAW/meta"

analyse() { # [partial]
	local args=(--raw "$RAW" --results "$RESULTS") rc=0
	[ "${1:-}" = partial ] && args+=(--partial)
	[ "$md" = 1 ] && [ "${1:-}" != partial ] && args+=(--md "$HERE/RESULTS.md")
	[ -s "$RAW/index" ] || { echo "wait_strategies: no runs to analyse" >&2; return 1; }
	# Each report owns its section: a run of C alone leaves A and B's.
	if grep -q '^[AB] ' "$RAW/index"; then
		"$PYTHON" "$HERE/plot_wait.py" "${args[@]}" || rc=1
	fi
	if grep -q '^C ' "$RAW/index"; then
		"$PYTHON" "$HERE/wait_shared.py" "${args[@]}" || rc=1
	fi
	return $rc
}

echo "wait_strategies: $NPAIRS namespace pairs, veth, xdpwake ${mode:-attached}; kernel $kernel, $ncpu x $cpu"
echo "machine busy before the runs (1 s, nothing of ours running): $(sed -n 's/^load_before_pct=//p' "$RAW/meta") %"
failed=0

# ---- experiment A: one pair, think time 0-600 us --------------------------------

if [ -z "$only" ] || [ "$only" = a ]; then
	nsenter --net="$(A 1)" "$X" pingpong "xww$$a1" --server --addr-file "$TMP/addr1" >"$TMP/server1.log" 2>&1 &
	srv=$!
	PIDS+=("$srv")
	for ((i = 0; i < 100; i++)); do
		[ -s "$TMP/addr1" ] && break
		kill -0 "$srv" 2>/dev/null || die "the server exited: $(tail -2 "$TMP/server1.log")"
		sleep 0.05
	done
	[ -s "$TMP/addr1" ] || die "the server did not start within 5 s"
	nthink=$(wc -w <<<"$THINKS")
	nstrat=$(wc -w <<<"$STRATS")
	total=$((REPS * nthink * nstrat))
	echo
	echo "A: one pair, $SIZE B, $POLICY, $REPS reps x $nthink think times x $nstrat strategies ($total runs, ${DUR} s each)"
	k=0
	for ((rep = 1; rep <= REPS; rep++)); do
		for t in $THINKS; do
			# Background load of the machine with nothing of ours running.
			echo "BG $rep $t $(busy_pct 0.5)" >>"$RAW/index"
			for s in $STRATS; do
				k=$((k + 1))
				w=${s%%:*} spin=
				[ "$w" != "$s" ] && spin=${s#*:}
				out="$RAW/a-$rep-$t-${s/:/_}.json"
				printf '\r[%d/%d] rep %d think %3d us %-14s' "$k" "$total" "$rep" "$t" "$s"
				nsenter --net="$(B 1)" "$X" -j pingpong "xww$$b1" --client --peer-file "$TMP/addr1" \
					--policy "$POLICY" --wait "$w" ${spin:+--spin "$spin"} --sizes "$SIZE" \
					--think "$t" --duration "$DUR" --warmup 50 >"$out" 2>"$out.err" &
				cpid=$!
				PIDS+=("$cpid")
				while :; do
					wait "$cpid"
					rc=$?
					kill -0 "$cpid" 2>/dev/null || break
				done
				unset 'PIDS[-1]'
				if [ "$rc" -ne 0 ]; then
					failed=$((failed + 1))
					printf '\n  FAILED (exit %d): %s\n' "$rc" "$(tail -1 "$out.err")"
				fi
				echo "A $rep $t $s $w ${spin:--} $rc ${out#"$RAW"/}" >>"$RAW/index"
				kill -0 "$srv" 2>/dev/null || die "the server died: $(tail -2 "$TMP/server1.log")"
			done
		done
	done
	echo
	kill_tree "$srv"
	unset 'PIDS[-1]'
fi

# reap: the exit codes of the clients (cpids), comma-separated, into rcs;
# then each server (spids) gets 5 s to end on its own before it is stopped.
reap() {
	local p j
	rcs=
	for p in "${cpids[@]}"; do
		wait "$p"
		rcs="$rcs,$?"
	done
	for p in "${spids[@]}"; do
		for ((j = 0; j < 100; j++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill_tree "$p"
	done
	PIDS=()
}

# ---- experiment B: five pairs at once, with and without a CPU hog ---------------

if [ -z "$only" ] || [ "$only" = b ]; then
	read -r -a bthink <<<"$B_THINKS"
	total=$((B_REPS * 4 * $(wc -w <<<"$B_STRATS")))
	echo
	echo "B: $NPAIRS pairs at once (think ${B_THINKS// /, } us), $B_ITERS round trips each (and $B_SMALL, to take"
	echo "   the start-up out), $B_REPS reps, hog off/on ($total runs)"
	k=0
	for ((rep = 1; rep <= B_REPS; rep++)); do
		for hog in 0 1; do
			for s in $B_STRATS; do
				for n in "$B_ITERS" "$B_SMALL"; do
					k=$((k + 1))
					printf '[%d/%d] rep %d hog %d %-11s %5d round trips ... ' "$k" "$total" "$rep" "$hog" "$s" "$n"
					base=$RAW/b-$rep-$hog-$s-$n
					spids=() cpids=() hpid=
					for ((i = 1; i <= NPAIRS; i++)); do
						rm -f "$TMP/baddr$i"
						nsenter --net="$(A "$i")" /usr/bin/time -f '%e %U %S %w %c' -o "$base-s$i.time" \
							"$X" -j pingpong "xww$$a$i" --server --once --accept-timeout 30 \
							--addr-file "$TMP/baddr$i" >"$base-s$i.json" 2>"$base-s$i.err" &
						spids+=($!)
						PIDS+=($!)
					done
					for ((i = 1; i <= NPAIRS; i++)); do
						for ((j = 0; j < 100; j++)); do [ -s "$TMP/baddr$i" ] && break; sleep 0.05; done
						[ -s "$TMP/baddr$i" ] || die "server $i did not start: $(tail -2 "$base-s$i.err")"
					done
					if [ "$hog" = 1 ]; then
						bash -c 'while :; do :; done' &
						hpid=$!
						PIDS+=("$hpid")
						sleep 0.2
					fi
					read -r b0 t0 si0 st0 < <(proc_stat)
					start=$(date +%s%N)
					for ((i = 1; i <= NPAIRS; i++)); do
						nsenter --net="$(B "$i")" /usr/bin/time -f '%e %U %S %w %c' -o "$base-c$i.time" \
							"$X" -j pingpong "xww$$b$i" --client --peer-file "$TMP/baddr$i" \
							--policy "$POLICY" --wait "$s" --sizes "$SIZE" --think "${bthink[$((i - 1))]}" \
							--iters "$n" --warmup 20 --timeout 20000 >"$base-c$i.json" 2>"$base-c$i.err" &
						cpids+=($!)
						PIDS+=($!)
					done
					# Wait for the clients, at most B_LIMIT seconds.
					timed_out=0
					for ((j = 0; ; j++)); do
						alive=0
						for p in "${cpids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
						[ "$alive" = 0 ] && break
						if [ "$j" -ge $((B_LIMIT * 20)) ]; then
							timed_out=1
							for p in "${cpids[@]}"; do kill_tree "$p"; done
							break
						fi
						sleep 0.05
					done
					end=$(date +%s%N)
					read -r b1 t1 si1 st1 < <(proc_stat)
					[ -n "$hpid" ] && kill_tree "$hpid"
					reap
					wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
					echo "B $rep $hog $s $n $wall $timed_out ${rcs#,} $((b1 - b0)) $((t1 - t0)) $((si1 - si0))" \
						"$((st1 - st0)) ${base#"$RAW"/}" >>"$RAW/index"
					if [ "$timed_out" = 1 ]; then
						failed=$((failed + 1))
						echo "stopped after ${B_LIMIT} s"
					elif [ "${rcs//[,0]/}" != "" ]; then
						failed=$((failed + 1))
						echo "FAILED (client exits ${rcs#,}): $(tail -1 "$base-c1.err")"
					else
						echo "ok ($wall s)"
					fi
				done
			done
		done
	done
fi

# ---- experiment C: placements (issue 27) ------------------------------------------

# c_run REP PLACE STRAT: one configuration; servers --once, clients for C_DUR s.
c_run() {
	local rep=$1 place=$2 s=$3 np=1 i j base ps pc rcs p
	local spids=() cpids=()
	[ "$place" = pairs5 ] && np=$NPAIRS
	case $place in
	apart) ps="taskset -c 0" pc="taskset -c 1" ;;
	one) ps="taskset -c 0" pc="taskset -c 0" ;;
	*) ps="" pc="" ;;
	esac
	base=$RAW/c-$rep-$place-$s
	for ((i = 1; i <= np; i++)); do
		rm -f "$TMP/caddr$i"
		# shellcheck disable=SC2086 # $ps: the taskset prefix, or nothing
		nsenter --net="$(A "$i")" $ps "$X" -j pingpong "xww$$a$i" --server --once \
			--accept-timeout 30 --addr-file "$TMP/caddr$i" >"$base-s$i.json" 2>"$base-s$i.err" &
		spids+=($!)
		PIDS+=($!)
	done
	for ((i = 1; i <= np; i++)); do
		for ((j = 0; j < 100; j++)); do [ -s "$TMP/caddr$i" ] && break; sleep 0.05; done
		[ -s "$TMP/caddr$i" ] || die "C: server $i did not start: $(tail -2 "$base-s$i.err")"
	done
	for ((i = 1; i <= np; i++)); do
		# shellcheck disable=SC2086
		nsenter --net="$(B "$i")" $pc "$X" -j pingpong "xww$$b$i" --client \
			--peer-file "$TMP/caddr$i" --policy "$C_POLICY" --wait "$s" --sizes "$SIZE" \
			--duration "$C_DUR" --warmup 50 --timeout 20000 >"$base-c$i.json" 2>"$base-c$i.err" &
		cpids+=($!)
		PIDS+=($!)
	done
	reap
	echo "C $rep $place $s $np ${rcs#,} ${base#"$RAW"/}" >>"$RAW/index"
	if [ "${rcs//[,0]/}" != "" ]; then
		failed=$((failed + 1))
		echo "FAILED (client exits ${rcs#,}): $(tail -1 "$base-c1.err")"
	else
		echo ok
	fi
}

if [ -z "$only" ] || [ "$only" = c ]; then
	total=$((C_REPS * $(wc -w <<<"$C_PLACES") * $(wc -w <<<"$C_STRATS")))
	echo
	echo "C: placements ($C_PLACES), $SIZE B, $C_POLICY, no think time, $C_REPS reps x ${C_DUR} s ($total runs)"
	k=0
	for ((rep = 1; rep <= C_REPS; rep++)); do
		for place in $C_PLACES; do
			for s in $C_STRATS; do
				k=$((k + 1))
				printf '[%d/%d] rep %d %-6s %-10s ... ' "$k" "$total" "$rep" "$place" "$s"
				c_run "$rep" "$place" "$s"
			done
		done
	done
fi

echo "load_after_pct=$(busy_pct 1)" >>"$RAW/meta"
echo
analyse || failed=$((failed + 1))
[ "$failed" -eq 0 ] || { echo "wait_strategies: $failed runs failed" >&2; exit 1; }
exit 0
