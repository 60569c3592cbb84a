#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# `make demo`: the wake policies and waiting strategies side by side, on real
# messages, in one table.
#
#   scripts/demo.sh [--quick] [--only pingpong|stream] [--policies LIST] [--waits LIST]
#   scripts/demo.sh --frames [policy_demo options]   the raw-frame policy tables
#                                                     (.output/bench/policy_demo)
#   IFACE=eth1 PEER=ADDR scripts/demo.sh   against a real NIC: only the local side
#                                          runs (as the client); start the server
#                                          on the peer first (IFACE alone prints how)
#   OUTPUT=dir     build directory (default ./.output)
#   DEMO_OUT=dir   also keep every run's JSON and a CSV of the table there
#
# Locally it creates two network namespaces (xwdemo-PID-a/-b) joined by a
# veth pair, attaches xdpwake to both ends (native XDP; AF_XDP in copy mode),
# starts `xdpwake pingpong --server` in one and runs `xdpwake pingpong` and
# `xdpwake stream` clients from the other, once for every policy and wait
# strategy.  The namespaces, the pins and the processes it started are
# removed at the end, also on Ctrl-C or failure.
#
# Exit: 0 ok, 1 a run or the set-up failed, 2 usage.
# shellcheck disable=SC2317 # cleanup() and on_signal() run from traps
set -u

OUTPUT=${OUTPUT:-./.output}
X="$OUTPUT/xdpwake"
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"


need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "demo: needs root (network namespaces, XDP, AF_XDP, BPF maps): run 'sudo make demo'" >&2
		exit 1
	fi
}

# ---- --frames: the raw-frame policy demo (the former main job) --------------

if [ "${1:-}" = "--frames" ]; then
	shift
	need_root
	bin="$OUTPUT/bench/policy_demo"
	if [ ! -x "$bin" ]; then
		echo "demo: $bin not built: run 'make benches' (or 'make demo')" >&2
		exit 1
	fi
	args=("$@")
	[ -n "${IFACE:-}" ] && args=(--iface "$IFACE" "${args[@]}")
	pid=
	alive() { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
	# $1: seconds policy_demo gets to finish on its own (it cleans up on
	# INT/TERM: detach, pins, sender), then TERM, then KILL.
	stop() {
		trap - INT TERM
		local i
		for ((i = 0; i < $1 * 10; i++)); do alive || break; sleep 0.1; done
		if alive; then
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
	while :; do
		wait "$pid"
		rc=$?
		kill -0 "$pid" 2>/dev/null || break
	done
	exit "$rc"
fi

# ---- options ------------------------------------------------------------------

quick=0
only=
policies="every timeout marker stream adaptive"
waits="spin block spin-block"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--only)
		[ $# -ge 2 ] || xw_usage
		only=$2
		shift
		case $only in pingpong | stream) ;; *) echo "demo: --only pingpong or stream" >&2; exit 2 ;; esac
		;;
	--policies)
		[ $# -ge 2 ] || xw_usage
		policies=${2//,/ }
		shift
		;;
	--waits)
		[ $# -ge 2 ] || xw_usage
		waits=${2//,/ }
		shift
		;;
	-h | --help) xw_usage 0 ;;
	*) echo "demo: unknown argument '$1'" >&2; xw_usage ;;
	esac
	shift
done

need_root
if [ ! -x "$X" ]; then
	echo "demo: $X not built: run 'make' (or 'make demo')" >&2
	exit 1
fi
command -v python3 >/dev/null || { echo "demo: python3 is needed for the table (make deps)" >&2; exit 1; }
for p in $policies; do
	case $p in every | timeout | marker | stream | adaptive) ;; *) echo "demo: unknown policy '$p'" >&2; exit 2 ;; esac
done
for w in $waits; do
	case $w in spin | yield | block | spin-yield | spin-block | notify | adaptive) ;;
	*) echo "demo: unknown wait strategy '$w'" >&2; exit 2 ;; esac
done

# Seconds per size: pingpong runs 3 sizes, stream 1.
if [ "$quick" = 1 ]; then pp_dur=0.15 st_dur=0.4; else pp_dur=1 st_dur=2; fi
pp_sizes=0,64,32K
st_size=128

# ---- set-up and clean-up ------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/xwdemo.XXXXXX") || exit 1
NS_A='' NS_B='' ROOT='' server_pid='' client_pid='' detach_iface=''
real=0
[ -n "${IFACE:-}" ] && real=1

cleanup() {
	trap - EXIT INT TERM
	xw_kill_pid "$client_pid"
	xw_kill_pid "$server_pid"
	[ -n "$detach_iface" ] && "$X" detach "$detach_iface" >/dev/null 2>&1
	xw_netns_del
	[ -n "$ROOT" ] && rm -rf "$ROOT"
	rm -rf "$TMP"
}
on_signal() { # $1: exit status (128 + signal number)
	echo >&2
	echo "demo: interrupted, cleaning up" >&2
	exit "$1" # runs cleanup through the EXIT trap
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

die() {
	echo "demo: $*" >&2
	[ -s "$TMP/server.log" ] && sed 's/^/  server: /' "$TMP/server.log" | tail -5 >&2
	exit 1
}

if [ "$real" = 1 ]; then
	# ---- a real NIC: only the client side runs here --------------------------
	ip link show "$IFACE" >/dev/null 2>&1 || die "no interface '$IFACE'"
	if [ -z "${PEER:-}" ]; then
		cat <<EOF
demo: on a real NIC the demo runs the client side only.  On the peer machine
(root, the same xdpwake built there), start the server on its interface:

    .output/xdpwake pingpong PEER_IFACE --server${ENCAP:+ --encap $ENCAP}

It prints "listening on ADDR".  Then run here:

    IFACE=$IFACE PEER=ADDR make demo       (or: IFACE=$IFACE PEER=ADDR scripts/demo.sh)

The peer's frames must arrive on queue ${QUEUE:-0} of each side (the queue the endpoints
bind): with RSS, use one queue (ethtool -L IFACE combined 1) or a flow-steering
rule for EtherType 0x88b5 (with --encap udp: UDP port 49152 + queue to that queue, which
`xdpwake steer IFACE --apply` installs).
EOF
		exit 2
	fi
	# Attach once for all runs (the clients would attach and detach each time).
	"$X" status "$IFACE" >/dev/null 2>&1
	case $? in
	0) ;;
	3)
		"$X" attach "$IFACE" >/dev/null || die "cannot attach xdpwake to $IFACE"
		detach_iface=$IFACE
		;;
	*) "$X" status "$IFACE" >&2; die "cannot read the status of $IFACE" ;;
	esac
	client_run=("$X")
	cli_if=$IFACE
	peer_args=(--peer "$PEER")
	[ -n "${QUEUE:-}" ] && peer_args+=(--queue "$QUEUE")
	[ -n "${EP:-}" ] && peer_args+=(--ep "$EP")
	where="$IFACE -> $PEER (real NIC; CPU per message counts this machine only)"
else
	# ---- two namespaces joined by a veth pair --------------------------------
	command -v ip >/dev/null || die "iproute2 missing (make deps)"
	command -v nsenter >/dev/null || die "nsenter missing (util-linux; make deps)"
	NS_A=xwdemo-$$-a
	NS_B=xwdemo-$$-b
	IF_A=xwd$$a
	IF_B=xwd$$b
	xw_veth_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B"
	# Pins in a private directory of the shared bpffs (nsenter switches only
	# the network namespace, so both sides see it; `ip netns exec` would
	# give each command a bpffs of its own).
	xw_bpffs
	ROOT=/sys/fs/bpf/xwdemo-$$
	export XDPWAKE_PIN_ROOT=$ROOT
	in_a() { nsenter --net="/run/netns/$NS_A" "$@"; }
	in_b() { nsenter --net="/run/netns/$NS_B" "$@"; }
	in_a "$X" attach "$IF_A" >"$TMP/attach" 2>&1 || { cat "$TMP/attach" >&2; die "cannot attach xdpwake to $IF_A"; }
	in_b "$X" attach "$IF_B" >"$TMP/attach" 2>&1 || { cat "$TMP/attach" >&2; die "cannot attach xdpwake to $IF_B"; }
	mode=$(sed -n 's/^ *mode *//p' "$TMP/attach")
	# Directly, not through in_a: $! must be the server itself (nsenter
	# execs it), since only the PIDs we started are killed.
	nsenter --net="/run/netns/$NS_A" "$X" pingpong "$IF_A" --server --addr-file "$TMP/addr" \
		>"$TMP/server.log" 2>&1 &
	server_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$TMP/addr" ] && break
		kill -0 "$server_pid" 2>/dev/null || die "the server exited"
		sleep 0.05
	done
	[ -s "$TMP/addr" ] || die "the server did not start within 5 s"
	client_run=(nsenter --net="/run/netns/$NS_B" "$X")
	cli_if=$IF_B
	peer_args=(--peer-file "$TMP/addr")
	where="namespaces $NS_A / $NS_B, veth $IF_A <-> $IF_B, xdpwake ${mode:-attached} (AF_XDP copy mode)"
fi

# ---- the runs -----------------------------------------------------------------

runs=()
for t in pingpong stream; do
	[ -n "$only" ] && [ "$only" != "$t" ] && continue
	for w in $waits; do
		for p in $policies; do runs+=("$t $p $w"); done
	done
done
total=${#runs[@]}
[ "$total" -gt 0 ] || die "nothing to run"
echo "xdpwake demo: $where"
desc=
[ "$only" != stream ] && desc="pingpong ($pp_sizes B, ${pp_dur} s per size)"
[ "$only" != pingpong ] && desc="${desc:+$desc and }stream ($st_size B messages, ${st_dur} s)"
echo "$total runs: $desc"
echo "  policies: $policies; wait strategies: $waits (both sides)"
failed=0
k=0
for r in "${runs[@]}"; do
	read -r t p w <<<"$r"
	k=$((k + 1))
	printf '[%d/%d] %-8s %-8s %-10s ... ' "$k" "$total" "$t" "$p" "$w"
	if [ "$t" = pingpong ]; then
		extra=(--sizes "$pp_sizes" --duration "$pp_dur")
	else
		extra=(--sizes "$st_size" --duration "$st_dur")
	fi
	# The time from bash itself, not $(date): bash drops a SIGINT that
	# arrives while it waits for a command substitution (the trap never
	# runs: 1 in 30 signals in a loop of them), and Ctrl-C often lands
	# right here, as a run starts.  In microseconds, any decimal point.
	start=${EPOCHREALTIME//[!0-9]/}
	out="$TMP/run-$k.json"
	"${client_run[@]}" -j "$t" "$cli_if" --client "${peer_args[@]}" --policy "$p" --wait "$w" \
		"${extra[@]}" >"$out" 2>"$TMP/run-$k.err" &
	client_pid=$!
	while :; do
		wait "$client_pid"
		rc=$?
		kill -0 "$client_pid" 2>/dev/null || break
	done
	client_pid=
	secs=$(( (${EPOCHREALTIME//[!0-9]/} - start) / 100000 ))
	if [ "$rc" -eq 0 ]; then
		echo "ok ($((secs / 10)).$((secs % 10)) s)"
	else
		failed=$((failed + 1))
		msg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["message"])' "$out" 2>/dev/null ||
		      tail -1 "$TMP/run-$k.err")
		echo "FAILED (exit $rc): $msg"
	fi
	echo "$t $p $w $rc $out" >>"$TMP/index"
	if [ "$real" = 0 ] && ! kill -0 "$server_pid" 2>/dev/null; then
		die "the server died"
	fi
done

# ---- the table ----------------------------------------------------------------

echo
python3 - "$TMP/index" "${DEMO_OUT:-}" "$policies" "$waits" "$real" <<'EOF'
import csv, json, math, os, shutil, sys

index, keep = sys.argv[1], sys.argv[2]
policies, waits = sys.argv[3].split(), sys.argv[4].split()
real = sys.argv[5] == "1"
rows = []
for line in open(index):
    t, p, w, rc, path = line.split()
    try:
        d = json.load(open(path))
    except Exception:
        d = {}
    if rc != "0" or "results" not in d:
        rows.append(dict(test=t, policy=p, wait=w, size=None, failed=True))
        continue
    for r in d["results"]:
        srv = r["server"]
        rows.append(dict(
            test=t, policy=p, wait=w, size=r["size"], failed=False,
            p50=r["latency_us"]["p50"], p99=r["latency_us"]["p99"],
            rate=r["msg_rate"], wakes=r["wakes_per_msg"],
            cpu=r["machine_cpu_us_per_msg"], proc=r["proc_cpu_us_per_msg"],
            srv_proc=r["server_proc_cpu_us_per_msg"],
            more=(srv["more_frames"] / srv["frames_redirected"]) if srv["frames_redirected"] else 0.0,
            deferrals=srv["deferrals"], ncpus=d.get("ncpus"),
            batch=r.get("batch"), msgs=r["msgs"]))

def human(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)

def num(v, fmt):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v

def label(r):
    size = "?" if r["size"] is None else human(r["size"]) + "B"
    return "%-8s %-5s %-8s %-10s" % (r["test"], size, r["policy"], r["wait"])

# A failed run shows up in every size group of its test.
sizes = {}
for r in rows:
    if not r["failed"]:
        sizes.setdefault(r["test"], set()).add(r["size"])
expanded = []
for r in rows:
    if r["failed"] and sizes.get(r["test"]):
        expanded += [dict(r, size=z) for z in sorted(sizes[r["test"]])]
    else:
        expanded.append(r)
order_t = {"pingpong": 0, "stream": 1}
order_w = {w: i for i, w in enumerate(waits)}
order_p = {p: i for i, p in enumerate(policies)}
rows = sorted(expanded, key=lambda r: (order_t.get(r["test"], 9), r["size"] or 0,
                                       order_w.get(r["wait"], 99), order_p.get(r["policy"], 99)))

hdr = "%-34s %10s %10s %11s %9s %10s" % ("configuration", "lat p50", "p99", "msg/s", "wakes", "CPU")
sub = "%-34s %10s %10s %11s %9s %10s" % ("test     size  policy   wait", "us", "us", "", "per msg", "us/msg")
print(hdr)
print(sub)
print("-" * len(hdr))
prev = None
for r in rows:
    group = (r["test"], r["size"])
    if prev is not None and group != prev:
        print()
    prev = group
    if r["failed"]:
        print("%-34s %s" % (label(r), "run failed"))
        continue
    print("%-34s %10s %10s %11s %9s %10s" % (label(r), num(r["p50"], "%.1f"), num(r["p99"], "%.1f"),
          num(r["rate"], "%.0f"), num(r["wakes"], "%.3f"), num(r["cpu"], "%.1f")))
print("-" * len(hdr))
print("pingpong latency: half the round trip; stream latency: one batch of %s messages, first send"
      % next((str(r["batch"]) for r in rows if r.get("batch")), "N")
      + " to its ack.\nwakes: XDP wakes sent to the receiving process(es) per message; CPU: busy"
      + (" time of this machine (/proc/stat; the peer's is in the JSON) per message." if real else
         " time of the whole machine (/proc/stat, both sides and softirq) per message."))

# ---- what it shows: sentences computed from the rows above ----
ok = [r for r in rows if not r["failed"]]
def get(test, size, policy, wait):
    for r in ok:
        if (r["test"], r["size"], r["policy"], r["wait"]) == (test, size, policy, wait):
            return r
    return None

notes = []
pp_size = 64 if any(r["test"] == "pingpong" and r["size"] == 64 for r in ok) else \
    next((r["size"] for r in ok if r["test"] == "pingpong"), None)
if pp_size is not None:
    tag = human(pp_size) + " B ping-pong"
    mk, to = get("pingpong", pp_size, "marker", "block"), get("pingpong", pp_size, "timeout", "block")
    if mk and to:
        d = to["p50"] - mk["p50"]
        notes.append("%s with blocking receivers: marker wakes at once (p50 %.1f us, %.2f wakes/msg) while "
                     "timeout waits for its coalescing timer (p50 %.1f us, %s%.1f us)."
                     % (tag, mk["p50"], mk["wakes"], to["p50"], "+" if d >= 0 else "", d))
    sp, sb, bl = (get("pingpong", pp_size, "marker", w) for w in ("spin", "spin-block", "block"))
    if sp and sb:
        s = ("%s, marker: spinning gives p50 %.1f us at %.1f us of machine CPU per message; spin-block "
             "p50 %.1f us at %.1f us/msg" % (tag, sp["p50"], sp["cpu"], sb["p50"], sb["cpu"]))
        if bl:
            s += ", block p50 %.1f us at %.1f us/msg" % (bl["p50"], bl["cpu"])
        best = min((x for x in (sp, sb, bl) if x), key=lambda x: x["p50"])
        s += " (lowest latency here: %s)." % best["wait"]
        notes.append(s)
    # The spin-block row against spin and block (issue 27): the message rate
    # of the ping-pong, policy every if it ran (else marker).  Spin-block
    # spins for B, and blocks at once while its spins find another task
    # waiting for the CPU (on this machine the peer often shares a core).
    pol = "every" if get("pingpong", pp_size, "every", "spin-block") else "marker"
    sp, sb, bl = (get("pingpong", pp_size, pol, w) for w in ("spin", "spin-block", "block"))
    if sb and (sp or bl):
        best = max((x for x in (sp, bl) if x), key=lambda x: x["rate"])
        ratio = best["rate"] / sb["rate"] if sb["rate"] else float("inf")
        s = ("%s, %s: spin-block %.0f msg/s (p50 %.1f us, %.2f wakes/msg) against %s"
             % (tag, pol, sb["rate"], sb["p50"], sb["wakes"],
                " and ".join("%s %.0f msg/s" % (x["wait"], x["rate"]) for x in (sp, bl) if x)))
        if ratio <= 1.0:
            s += ": at least as fast as the better of the two (%s, %.2fx its rate)" % (
                best["wait"], 1 / ratio if ratio else 0)
        elif ratio <= 2.0:
            s += ": within 2x of the better (%s is %.2fx faster)" % (best["wait"], ratio)
        else:
            s += ": %.1fx slower than %s, outside spin-block's 2x bound" % (ratio, best["wait"])
        s += (". Its spin lasts one block-and-wake (B) and yields to any task waiting for the CPU; "
              "a spin that finds one (the peer, when both share a core) ends, and the next waits "
              "block at once, so it never spins while its peer waits to answer.")
        notes.append(s)
st = [r for r in ok if r["test"] == "stream"]
if st:
    size = st[0]["size"]
    for w in ("block", "spin-block"):
        ev = get("stream", size, "every", w)
        others = [r for r in st if r["wait"] == w and r["policy"] != "every"]
        if not ev or not others:
            continue
        best = min(others, key=lambda r: r["wakes"])
        if best["wakes"] >= ev["wakes"]:
            rel = "no fewer than every"
        elif best["wakes"] == 0:
            rel = "no wake at all"
        else:
            rel = "%.1fx fewer" % (ev["wakes"] / best["wakes"])
        dcpu = (best["cpu"] - ev["cpu"]) / ev["cpu"] * 100 if ev["cpu"] else float("nan")
        notes.append("%s B stream, %s: every needs %.3f wakes/msg, %s (the fewest of the other "
                     "policies) %.3f: %s, at %s machine CPU per message (%.1f vs %.1f us) and "
                     "%.0f vs %.0f msg/s."
                     % (size, w, ev["wakes"], best["policy"], best["wakes"], rel,
                        "%+.0f%%" % dcpu if not math.isnan(dcpu) else "?", best["cpu"], ev["cpu"],
                        best["rate"], ev["rate"]))
        break
    more = max(r["more"] for r in st)
    sdef = sum(r["deferrals"] for r in st if r["policy"] == "stream")
    if more == 0 and any(r["policy"] == "stream" for r in st):
        notes.append("No frame of the %s B stream carried MORE (each send goes out at once) and the "
                     "stream policy deferred %d wakes: it woke like marker here, so differences "
                     "between the two rows are run-to-run variation." % (size, sdef))
    sp = [r for r in st if r["wait"] == "spin"]
    if sp:
        notes.append("Spinning receivers are never woken (%.3f wakes/msg at most with spin)."
                     % max(r["wakes"] for r in sp))
spin = [r for r in ok if r["wait"] == "spin" and r["test"] == "pingpong"]
slow = [r for r in spin if r["p50"] >= 1000]
if slow:
    notes.append("%d of %d spinning ping-pong rows have a p50 of a millisecond or more: with both "
                 "sides spinning on %s CPUs, the softirq work that moves frames across the veth "
                 "pair competes with the spinners (compare spin-block)."
                 % (len(slow), len(spin), slow[0]["ncpus"] or "the"))
print()
print("What it shows:")
for n in notes or ["(not enough runs to compare)"]:
    print("  - " + n)

if keep:
    os.makedirs(keep, exist_ok=True)
    with open(os.path.join(keep, "demo.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["test", "size", "policy", "wait", "lat_p50_us", "lat_p99_us", "msg_rate",
                     "wakes_per_msg", "machine_cpu_us_per_msg", "proc_cpu_us_per_msg", "failed"])
        for r in rows:
            wr.writerow([r["test"], r["size"], r["policy"], r["wait"], r.get("p50"), r.get("p99"),
                         r.get("rate"), r.get("wakes"), r.get("cpu"), r.get("proc"), r["failed"]])
    for line in open(index):
        t, p, w, rc, path = line.split()
        shutil.copy(path, os.path.join(keep, "%s-%s-%s.json" % (t, p, w)))
    print("\nraw results: %s/demo.csv and one JSON file per run" % keep)
EOF
[ "$failed" -eq 0 ] || { echo "demo: $failed of $total runs failed" >&2; exit 1; }
exit 0
