#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Before and after: the spinning ping-pong of two (or more) builds of
# xdpwake, interleaved in one run, next to the raw AF_XDP floor.
#
#   bench/ab.sh [--stream | --unidir] [--mtu N] [--reps N] [--sizes LIST]
#               [--duration S] [--policy P] [--wait W] [--raw PATH] [--csv FILE]
#               [--faults]
#               DIR_A [DIR_B ...]
#
#   DIR_A ...      build directories (each with its `xdpwake`, e.g. a
#                  worktree's .output); the first is the reference
#   --stream       the one-way stream (batches of 32, `xdpwake stream`;
#                  raw: --mode stream) instead of the ping-pong: messages/s
#   --unidir       the ping-pong tool's stream (`pingpong --unidir`, batches
#                  acknowledged): bandwidth in MB/s; the raw floor is its
#                  stream of MTU-sized frames (--mode stream, MTU - 16 B of
#                  payload; skipped where that does not fit its 2 KiB frame)
#   --mtu N        the veth pair's MTU (default: as created, 1500)
#   --reps N       repetitions (default 5): every build once per
#                  repetition, in order, then the raw floor
#   --sizes LIST   message sizes (default 0,64,1024; stream 64)
#   --duration S   seconds per size (default 1)
#   --policy P     wake policy (default marker)
#   --wait W       wait strategy (default spin-block)
#   --raw PATH     the raw AF_XDP program (default DIR_A/bench/afxdp_raw;
#                  none: skipped)
#   --csv FILE     every run's numbers (build, rep, size, p50, p99, CPU; CPU
#                  of both processes per MiB of messages, getrusage; the raw
#                  server's from its first data frame to the end)
#   --faults       also the page faults of both processes per MiB of
#                  messages (client: perf stat; server: its minflt and
#                  majflt before it is stopped; start-up included; with
#                  several sizes the run's faults over all its messages)
#
# Placement as bench/peers.sh: server in namespace A pinned to CPU 0, client
# in namespace B on CPU 1, one veth pair; the program is attached afresh for
# every build (each attaches its own).  Prints each run, then per build and
# size the median p50 one-way latency over the repetitions and its ratio to
# the reference and to the raw floor.  Takes /tmp/xdpwake-net.lock; removes
# its namespaces, processes and pins at the end, also on Ctrl-C.
# Exit: 0 ok, 1 failure, 2 usage, 77 not root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")
# shellcheck source=scripts/lib.sh
. "$TOP/scripts/lib.sh"
die() { echo "ab: $*" >&2; exit 1; }
test=pingpong reps=5 sizes='' dur=1 policy=marker wait=spin-block raw='' csv='' dirs=() mtu='' faults=''
while [ $# -gt 0 ]; do
	case $1 in
	--stream) test=stream ;;
	--unidir) test=unidir ;;
	--mtu) mtu=${2:-}; shift ;;
	--reps) reps=${2:-}; shift ;;
	--sizes) sizes=${2:-}; shift ;;
	--duration) dur=${2:-}; shift ;;
	--policy) policy=${2:-}; shift ;;
	--wait) wait=${2:-}; shift ;;
	--raw) raw=${2:-}; shift ;;
	--csv) csv=${2:-}; shift ;;
	--faults) faults=1 ;;
	-h | --help) xw_usage 0 ;;
	-*) echo "ab: unknown argument '$1'" >&2; xw_usage ;;
	*) dirs+=("$1") ;;
	esac
	shift
done
[ ${#dirs[@]} -ge 1 ] || xw_usage
if [ -z "$sizes" ]; then
	sizes=0,64,1024
	[ "$test" = stream ] && sizes=64
	[ "$test" = unidir ] && sizes=1048576
fi
case "$reps$dur$mtu" in *[!0-9]* | '') echo "ab: --reps and --duration take numbers" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "SKIP ab: needs root (namespaces, XDP)"; exit 77; }
for d in "${dirs[@]}"; do [ -x "$d/xdpwake" ] || die "$d/xdpwake not built"; done
raw=${raw:-${dirs[0]}/bench/afxdp_raw}
rawsizes=$sizes
if [ "$test" = unidir ]; then
	rawsizes=$((${mtu:-1500} - 16))
	[ "$rawsizes" -le 2018 ] || { echo "ab: MTU ${mtu}: no raw floor (one 2 KiB frame)"; raw=none; }
fi
[ "$raw" = none ] || [ -x "$raw" ] || die "$raw not built (make benches), or --raw none"
[ -z "$faults" ] || command -v perf >/dev/null || die "--faults needs perf"
xw_net_lock ab

NS_A=xwab-$$-a NS_B=xwab-$$-b IF_A=xwab$$a IF_B=xwab$$b
TMP=$(mktemp -d /tmp/xwab.XXXXXX) srv=''
ROOT=/sys/fs/bpf/xwab-$$
cleanup() {
	xw_kill_pid "$srv"
	xw_netns_del
	rm -rf "$ROOT" "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
xw_veth_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B"
if [ -n "$mtu" ]; then
	ip -n "$NS_A" link set "$IF_A" mtu "$mtu" && ip -n "$NS_B" link set "$IF_B" mtu "$mtu" ||
		die "MTU $mtu refused"
fi
for i in $(seq 50); do
	ip -n "$NS_A" link show "$IF_A" | grep -q LOWER_UP && break
	sleep 0.1
done
xw_bpffs
export XDPWAKE_PIN_ROOT=$ROOT
A=(nsenter --net="/run/netns/$NS_A" taskset -c 0)
B=(nsenter --net="/run/netns/$NS_B" taskset -c 1)
[ "$(nproc)" -ge 2 ] || B=(nsenter --net="/run/netns/$NS_B" taskset -c 0)
lim=$(($(tr ',' ' ' <<<"$sizes" | wc -w) * dur * 3 + 30))

# NAME: the run's JSON in $TMP/out -> lines "NAME REP SIZE VALUE P99 CPU"
# (VALUE: the p50 one-way latency, a stream's messages/s, or --unidir's
# MB/s; MIB: both processes' CPU in us per MiB of messages; FAULTS: $2,
# both processes' page faults, per MiB of the run's messages; $3: a server
# that reports no CPU in the JSON (the raw one): its CPU in us per message)
rows() {
	python3 - "$TMP/out" "$1" "$rep" "$test" "${2:-}" "${3:-}" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
tot = sum(r.get("msgs", 0) * r["size"] for r in d["results"]) / 1048576
pf = "%.1f" % (float(sys.argv[5]) / tot) if sys.argv[5] and tot else "-"
for r in d["results"]:
    lat = r.get("latency_us") or {}
    mbps = r.get("bandwidth_MBps") or r["msg_rate"] * r["size"] / 1e6
    v = {"stream": r["msg_rate"], "unidir": mbps}.get(sys.argv[4], lat.get("p50"))
    pc = (r.get("proc_cpu_us_per_msg") or 0) + (r.get("server_proc_cpu_us_per_msg") or 0)
    if sys.argv[6]:
        pc += float(sys.argv[6])
    mib = "%.1f" % (pc * 1048576 / r["size"]) if pc and r["size"] else "-"
    print(sys.argv[2], sys.argv[3], r["size"], v, lat.get("p99") or "-",
          r.get("machine_cpu_us_per_msg") or "-", mib, pf)
EOF
}

: >"$TMP/all"
for ((rep = 0; rep < reps; rep++)); do
	for i in "${!dirs[@]}"; do
		X=${dirs[$i]}/xdpwake name=$i:${dirs[$i]}
		if ! "${A[@]}" "$X" attach "$IF_A" >/dev/null || ! "${B[@]}" "$X" attach "$IF_B" >/dev/null; then
			die "attach failed ($X)"
		fi
		rm -f "$TMP/addr"
		"${A[@]}" "$X" pingpong "$IF_A" --server --addr-file "$TMP/addr" >/dev/null 2>&1 &
		srv=$!
		for _ in $(seq 100); do [ -s "$TMP/addr" ] && break; sleep 0.05; done
		sub=$test unidir=()
		[ "$test" = unidir ] && sub=pingpong unidir=(--unidir)
		pf=()
		[ -z "$faults" ] || pf=(perf stat -x, -e page-faults -o "$TMP/pf" --)
		timeout "$lim" "${B[@]}" "${pf[@]}" "$X" -j "$sub" "$IF_B" --client --peer-file "$TMP/addr" "${unidir[@]}" \
			--policy "$policy" --wait "$wait" --sizes "$sizes" --duration "$dur" \
			>"$TMP/out" 2>"$TMP/err" || die "$X pingpong failed: $(tail -1 "$TMP/err")"
		nf=''
		if [ -n "$faults" ]; then
			# minflt and majflt: fields 10 and 12 after the command's ")"
			nf=$(($(sed 's/.*) //' "/proc/$srv/stat" | awk '{print $8 + $10}') +
				$(awk -F, '/page-faults/ {print $1}' "$TMP/pf")))
		fi
		xw_kill_pid "$srv"
		srv=''
		"${A[@]}" "$X" detach "$IF_A" >/dev/null 2>&1
		"${B[@]}" "$X" detach "$IF_B" >/dev/null 2>&1
		rows "$name" "$nf" | tee -a "$TMP/all"
	done
	if [ "$raw" != none ]; then
		"${A[@]}" "$raw" --server "$IF_A" >/dev/null 2>"$TMP/srv" &
		srv=$!
		sleep 0.5
		timeout "$lim" "${B[@]}" "$raw" --client "$IF_B" --mode "${test/unidir/stream}" \
			--sizes "$rawsizes" --duration "$dur" -j \
			>"$TMP/out" 2>"$TMP/err" || die "afxdp_raw failed: $(tail -1 "$TMP/err")"
		xw_kill_pid "$srv"
		srv=''
		rows raw "" "$(awk '/server CPU/ {print $4}' "$TMP/srv")" | tee -a "$TMP/all"
	fi
done
col=p50_us
[ "$test" = stream ] && col=msg_per_s
[ "$test" = unidir ] && col=MBps
[ -z "$csv" ] || { echo "build,rep,size,$col,p99_us,cpu_us_per_msg,proc_cpu_us_per_MiB,faults_per_MiB"; tr ' ' ',' <"$TMP/all"; } >"$csv"

python3 - "$TMP/all" "$col" "$test" <<'EOF'
import statistics, sys
runs, cpu, pf = {}, {}, {}
for line in open(sys.argv[1]):
    name, rep, size, p50 = line.split()[:4]
    runs.setdefault((name, int(size)), []).append(float(p50))
    f = line.split()
    if len(f) > 6 and f[6] != "-":
        cpu.setdefault((name, int(size)), []).append(float(f[6]))
    if len(f) > 7 and f[7] != "-":
        pf.setdefault((name, int(size)), []).append(float(f[7]))
names = list(dict.fromkeys(k[0] for k in runs))
ref = names[0]
what = {"msg_per_s": "messages/s", "MBps": "MB/s"}.get(sys.argv[2], "p50 one-way latency (us)")
print("\nmedian %s over the repetitions (range); ratio to %s and to raw" % (what, ref))
for name in names:
    for (n, size), v in sorted(runs.items(), key=lambda kv: kv[0][1]):
        if n != name:
            continue
        m = statistics.median(v)
        r = statistics.median(runs[(ref, size)]) if (ref, size) in runs else None
        w = statistics.median(runs[("raw", size)]) if ("raw", size) in runs else None
        rs = [k for k in runs if k[0] == "raw"]
        if w is None and sys.argv[3] == "unidir" and rs:  # frames of the MTU
            w = statistics.median(runs[rs[0]])
        c, g = cpu.get((name, size)), pf.get((name, size))
        print("%-40s %6d B  %10.2f (%.2f-%.2f)  x%.3f ref  %s%s%s" % (name, size, m, min(v), max(v), m / r if r else 0,
              "x%.3f raw" % (m / w) if w and name != "raw" else "",
              "  CPU %.0f us/MiB" % statistics.median(c) if c else "",
              "  %.1f faults/MiB" % statistics.median(g) if g else ""))
EOF
