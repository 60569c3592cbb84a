#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bench/peers.sh's helper (issue 7, experiment 8).

  peers_report.py parse --tool T --out FILE [--err FILE] [--srv FILE] --peer P
                        --variant V --test T [--size N] --rep R --rc RC
                        --busy-us US [--iters N] [--rank Q]
      Reads one run's output and appends its rows (one per message size) to
      the runs file given by --runs, tab-separated:
      peer variant test size rep p50 p90 p99 mean msg_rate cpu status
  peers_report.py report --runs FILE --out DIR --meta FILE
      Medians over the repetitions -> DIR/peers.csv, DIR/peers_runs.csv,
      DIR/peers.md, DIR/peers.svg and DIR/peers.png.

Units: latency in us, one-way (half the round trip) for ping-pong; msg_rate
counts the messages of both directions for ping-pong; CPU = whole-machine
/proc/stat busy time (user+nice+system+irq+softirq+steal) over the run,
divided by those messages.
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import sys

FIELDS = ["peer", "variant", "test", "size", "rep", "p50", "p90", "p99", "mean", "msg_rate",
          "cpu", "status"]
CSV_COLS = ["peer", "variant", "test", "size", "reps", "p50_us", "p90_us", "p99_us", "msg_rate",
            "machine_cpu_us_per_msg", "status"]

# Display order of the peers and their variants.
ORDER = [
    ("xdpwake", "marker/spin-block"), ("xdpwake", "marker/block"), ("xdpwake", "every/block"),
    ("afxdp-raw", "busy-spin"),
    ("udp", "blocking"), ("udp", "spin"), ("udp", "busy-poll"),
    ("sockperf", "udp"), ("sockperf", "udp-nonblocked"),
    ("qperf", "udp_lat"), ("qperf", "tcp_lat"), ("qperf", "udp_bw"), ("qperf", "tcp_bw"),
    ("fi_pingpong", "tcp"), ("fi_pingpong", "udp"),
    ("ucx_perftest", "tcp"),
]
# Kernel sockets that the application polls (issue 14's "best kernel-socket
# peer"): a recv(MSG_DONTWAIT) loop, the kernel's busy polling, sockperf
# with non-blocking sockets.
POLLED_SOCKETS = [("udp", "spin"), ("udp", "busy-poll"), ("sockperf", "udp-nonblocked")]
# Tools that report an average only: their p50 column holds it.
AVG_ONLY = {"qperf", "fi_pingpong"}


def fnum(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) or math.isinf(v) else v


def last_error(*paths):
    """The most telling line of a failed run's output."""
    lines = []
    for p in paths:
        if p and os.path.exists(p):
            with open(p, errors="replace") as f:
                lines += [ln.strip() for ln in f if ln.strip()]
    for pat in (r"error|fail|invalid|cannot|refused|unable|no such|not available|timed out",):
        hits = [ln for ln in lines if re.search(pat, ln, re.I)]
        if hits:
            return clean(hits[-1])
    return clean(lines[-1]) if lines else "no output"


def clean(s):
    s = re.sub(r"\x1b\[[0-9;]*m", "", s)
    s = re.sub(r"^\[\d+\.\d+\] \[[^]]*\]\s*", "", s)  # UCX log prefix
    return s.replace("\t", " ")[:200]


def read(path):
    if not path or not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return re.sub(r"\x1b\[[0-9;]*m", "", f.read())


def count(s):
    """qperf counts: '16,748', '316 million'."""
    m = re.match(r"([\d,.]+)\s*(thousand|million|billion)?", s.strip())
    if not m:
        return None
    v = float(m.group(1).replace(",", ""))
    return v * {"thousand": 1e3, "million": 1e6, "billion": 1e9}.get(m.group(2), 1)


def qperf_field(text, name):
    m = re.search(r"^\s*%s\s*=\s*(.+)$" % name, text, re.M)
    return m.group(1).strip() if m else None


def qperf_time_us(s):
    m = re.match(r"([\d.]+)\s*(ns|us|ms|sec)", s or "")
    if not m:
        return None
    return float(m.group(1)) * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "sec": 1e6}[m.group(2)]


def qperf_rate(s):
    m = re.match(r"([\d.]+)\s*(K|M|G)?/sec", s or "")
    if not m:
        return None
    return float(m.group(1)) * {"K": 1e3, "M": 1e6, "G": 1e9}.get(m.group(2), 1)


def parse_run(a):
    """Rows (dicts of FIELDS without peer/variant/test/rep) of one run."""
    out, err, srv = read(a.out), a.err, a.srv
    busy = a.busy_us

    def row(size, p50=None, p90=None, p99=None, mean=None, rate=None, cpu=None, status="ok"):
        return dict(size=size, p50=p50, p90=p90, p99=p99, mean=mean, msg_rate=rate, cpu=cpu,
                    status=status)

    def fail(reason=None):
        if a.unavail:  # a limit of the tool, in its own words
            for p in (a.out, err, srv):
                for ln in read(p).splitlines():
                    if re.search(a.unavail, ln):
                        return [row(a.size, status="unavailable: " + clean(ln.strip()))]
        return [row(a.size, status="failed: " + (reason or last_error(a.out, err, srv)))]

    if a.tool == "json":  # xdpwake, udp_pingpong, afxdp_raw
        try:
            d = json.loads(out)
        except ValueError:
            d = {}
        if "results" not in d:
            msg = d.get("error", {}).get("message") if isinstance(d.get("error"), dict) else None
            return fail(clean(msg) if msg else None)
        rows = []
        for r in d["results"]:
            lat = r.get("latency_us", {})
            rows.append(row(r["size"], lat.get("p50"), lat.get("p90"), lat.get("p99"),
                            lat.get("mean"), r.get("msg_rate"), r.get("machine_cpu_us_per_msg")))
        if a.rc != 0:
            rows.append(row(a.size, status="failed: " + last_error(err, srv)))
        return rows
    if a.rc != 0:
        return fail()
    if a.tool == "sockperf-pp":
        pct = {q: fnum(v) for q, v in re.findall(r"percentile (\d+\.\d+) =\s*([\d.]+)", out)}
        avg = re.search(r"avg-latency=([\d.]+)", out)
        tot = re.search(r"\[Total Run\] RunTime=([\d.]+) sec;.*SentMessages=(\d+); "
                        r"ReceivedMessages=(\d+)", out)
        if not pct or not tot:
            return fail("no statistics in sockperf's output")
        msgs = int(tot.group(2)) + int(tot.group(3))
        return [row(a.size, pct.get("50.000"), pct.get("90.000"), pct.get("99.000"),
                    fnum(avg.group(1)) if avg else None, msgs / float(tot.group(1)),
                    busy / msgs if msgs else None)]
    if a.tool == "sockperf-tp":
        sent = re.search(r"Total of (\d+) messages sent in ([\d.]+) sec", out)
        got = re.search(r"Total (\d+) messages received", read(srv))
        if not sent or not got:
            return fail("no message counts in sockperf's output")
        n = int(got.group(1))
        return [row(a.size, rate=n / float(sent.group(2)), cpu=busy / n if n else None)]
    if a.tool == "qperf-lat":
        lat = qperf_time_us(qperf_field(out, "latency"))
        s, r = qperf_field(out, "loc_send_msgs"), qperf_field(out, "loc_recv_msgs")
        msgs = (count(s) or 0) + (count(r) or 0) if s and r else None
        if lat is None:
            return fail("no latency in qperf's output")
        return [row(a.size, p50=lat, mean=lat, rate=qperf_rate(qperf_field(out, "msg_rate")),
                    cpu=busy / msgs if msgs else None)]
    if a.tool == "qperf-bw":
        n = count(qperf_field(out, "recv_msgs") or "")
        rate = qperf_rate(qperf_field(out, "msg_rate"))
        if not n or rate is None:
            return fail("no message counts in qperf's output")
        return [row(a.size, rate=rate, cpu=busy / n)]
    if a.tool == "fi_pingpong":
        # bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec, e.g.
        # "1k  20k  =20k  39m  0.41s  97.12  10.54  0.09": the line after the header.
        lines = out.splitlines()
        us = None
        for i, ln in enumerate(lines):
            if ln.split()[:1] == ["bytes"] and "usec/xfer" in ln and i + 1 < len(lines):
                f = lines[i + 1].split()
                us = fnum(f[6]) if len(f) == 8 else None
        if us is None:
            return fail("no result line in fi_pingpong's output")
        msgs = 2 * a.iters
        return [row(a.size, p50=us, mean=us, rate=1e6 / us if us else None,
                    cpu=busy / msgs if msgs else None)]
    if a.tool in ("ucx-lat", "ucx-bw"):
        m = None
        for ln in out.splitlines():
            f = ln.split()
            if len(f) == 8 and all(re.match(r"^[\d.]+$", x) for x in f):
                m = [float(x) for x in f]
        if not m:
            return fail("no result line in ucx_perftest's output")
        iters, pctl, avg, _overall, _bwa, _bwo, _mra, mro = m
        if a.tool == "ucx-bw":
            msgs = iters + a.warmup
            return [row(a.size, rate=mro, cpu=busy / msgs if msgs else None)]
        msgs = 2 * (iters + a.warmup)
        r = row(a.size, rate=mro, mean=avg, cpu=busy / msgs if msgs else None)
        r[{50: "p50", 90: "p90", 99: "p99"}[int(a.rank)]] = pctl
        if int(a.rank) != 50:  # only the percentile: the p50 run gives the rest
            r.update(mean=None, msg_rate=None, cpu=None)
        return [r]
    return fail("unknown tool " + a.tool)


def cmd_parse(a):
    rows = parse_run(a)
    with open(a.runs, "a") as f:
        for r in rows:
            vals = [a.peer, a.variant, a.test, r["size"], a.rep] + \
                [r[k] for k in ("p50", "p90", "p99", "mean", "msg_rate", "cpu")] + [r["status"]]
            f.write("\t".join("" if v is None else ("%.6g" % v if isinstance(v, float) else str(v))
                              for v in vals) + "\n")
            if r["status"] != "ok":
                print("    %s" % r["status"], file=sys.stderr)


# ---- report ---------------------------------------------------------------------------------

def load_runs(path):
    """The runs: peers.sh's TSV, or a peers_runs.csv written by an earlier report."""
    rows = []
    with open(path) as f:
        first = f.readline()
        f.seek(0)
        if first.startswith("peer,variant,test,size,rep,"):
            recs = [[r["peer"], r["variant"], r["test"], r["size"], r["rep"], r["p50_us"],
                     r["p90_us"], r["p99_us"], r["mean_us"], r["msg_rate"],
                     r["machine_cpu_us_per_msg"], r["status"]] for r in csv.DictReader(f)]
        else:
            recs = [ln.rstrip("\n").split("\t") for ln in f]
        for p in recs:
            if len(p) != len(FIELDS):
                continue
            d = dict(zip(FIELDS, p))
            d["size"] = int(d["size"]) if d["size"] not in ("", "-") else None
            for k in ("p50", "p90", "p99", "mean", "msg_rate", "cpu"):
                d[k] = fnum(d[k])
            rows.append(d)
    return rows


def order_key(peer, variant, test, size):
    try:
        i = ORDER.index((peer, variant))
    except ValueError:
        i = len(ORDER)
    return (0 if test == "pingpong" else 1, i, size if size is not None else -1)


def aggregate(rows):
    groups = {}
    for r in rows:
        groups.setdefault((r["peer"], r["variant"], r["test"], r["size"]), []).append(r)
    agg = []
    for (peer, variant, test, size), rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        med = {}
        for k in ("p50", "p90", "p99", "mean", "msg_rate", "cpu"):
            vals = [r[k] for r in ok if r[k] is not None]
            med[k] = statistics.median(vals) if vals else None
        reps = len({r["rep"] for r in ok if r["p50"] is not None or r["msg_rate"] is not None})
        if ok:
            status = "ok"
        else:
            status = rs[0]["status"]
        bad = [r for r in rs if r["status"] != "ok"]
        agg.append(dict(peer=peer, variant=variant, test=test, size=size, reps=reps,
                        status=status, nfail=len({r["rep"] for r in bad if
                                                  r["status"].startswith("failed")}),
                        fail_reason=bad[0]["status"] if bad else None, **med))
    agg.sort(key=lambda r: order_key(r["peer"], r["variant"], r["test"], r["size"]))
    return agg


def fmt(v, spec="%.2f"):
    return "" if v is None else spec % v


def human(n):
    if n is None:
        return "?"
    for unit, shift in (("M", 20), ("K", 10)):
        if n and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)


def write_csv(agg, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLS)
        for r in agg:
            w.writerow([r["peer"], r["variant"], r["test"], "" if r["size"] is None else r["size"],
                        r["reps"], fmt(r["p50"], "%.3f"), fmt(r["p90"], "%.3f"),
                        fmt(r["p99"], "%.3f"), fmt(r["msg_rate"], "%.0f"),
                        fmt(r["cpu"], "%.3f"), r["status"]])


def write_runs_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["peer", "variant", "test", "size", "rep", "p50_us", "p90_us", "p99_us",
                    "mean_us", "msg_rate", "machine_cpu_us_per_msg", "status"])
        for r in sorted(rows, key=lambda r: order_key(r["peer"], r["variant"], r["test"],
                                                       r["size"]) + (r["rep"],)):
            w.writerow([r["peer"], r["variant"], r["test"], "" if r["size"] is None else r["size"],
                        r["rep"], fmt(r["p50"], "%.3f"), fmt(r["p90"], "%.3f"),
                        fmt(r["p99"], "%.3f"), fmt(r["mean"], "%.3f"), fmt(r["msg_rate"], "%.0f"),
                        fmt(r["cpu"], "%.3f"), r["status"]])


def find(agg, peer, variant, test, size):
    for r in agg:
        if (r["peer"], r["variant"], r["test"], r["size"]) == (peer, variant, test, size):
            return r
    return None


def targets(agg, size):
    """The issue's three targets at @size: list of (text, met, detail)."""
    me = find(agg, "xdpwake", "marker/spin-block", "pingpong", size)
    out = []
    if not me or me["status"] != "ok" or me["p50"] is None:
        return [("xdpwake marker/spin-block did not run at %s B" % human(size), None, "")]

    def ratio_line(label, other, limit):
        if not other or other["status"] != "ok" or other["p50"] is None:
            why = other["status"] if other else "not run"
            return (label, None, "no figure to compare (%s)" % why)
        q = me["p50"] / other["p50"]
        met = q <= limit
        d = "%.2f / %.2f us = **%.2fx** (limit %.2fx): %s" % (
            me["p50"], other["p50"], q, limit,
            "met, %.0f%% under the limit" % ((1 - q / limit) * 100) if met else
            "missed by %.0f%% (%.2f us over %.2f us allowed)" % ((q / limit - 1) * 100,
                                                                 me["p50"] - limit * other["p50"],
                                                                 limit * other["p50"]))
        return (label, met, d)

    out.append(ratio_line("p50 <= 1.15x raw AF_XDP busy-spin",
                          find(agg, "afxdp-raw", "busy-spin", "pingpong", size), 1.15))
    out.append(ratio_line("p50 <= 0.6x blocking kernel UDP sockets",
                          find(agg, "udp", "blocking", "pingpong", size), 0.6))
    # Issue 14: against the best kernel socket that is polled, not slept on.
    polled = [r for r in (find(agg, p, v, "pingpong", size) for p, v in POLLED_SOCKETS)
              if r and r["status"] == "ok" and r["p50"] is not None]
    if polled:
        best = min(polled, key=lambda r: r["p50"])
        text, met, d = ratio_line("p50 <= 0.8x the best polled kernel socket", best, 0.8)
        out.append((text, met, "best is %s %s; %s" % (best["peer"], best["variant"], d)))
        cpu = [r for r in polled if r["cpu"] is not None]
        if me["cpu"] is not None and cpu:
            worse = ["%s %s %.2f" % (r["peer"], r["variant"], r["cpu"]) for r in cpu
                     if me["cpu"] > r["cpu"]]
            out.append(("CPU per message <= every polled kernel socket's", not worse,
                        "ours %.2f us/msg; %s" % (me["cpu"], "above: " + ", ".join(worse) if worse
                                                  else "at or below all %d" % len(cpu))))
    else:
        out.append(("p50 <= 0.8x the best polled kernel socket", None,
                    "no figure: none of %s ran" % ", ".join("%s %s" % pv for pv in POLLED_SOCKETS)))
    # Below every peer: the xdpwake rows themselves and raw AF_XDP excepted
    # (the floor xdpwake is built on; the first target compares with it).
    worse, better, missing = [], [], []
    for r in agg:
        if r["test"] != "pingpong" or r["size"] != size or r["peer"] in ("xdpwake", "afxdp-raw"):
            continue
        if r["status"] != "ok" or r["p50"] is None:
            missing.append("%s %s" % (r["peer"], r["variant"]))
            continue
        avg = r["peer"] in AVG_ONLY
        mine = me["mean"] if avg else me["p50"]
        entry = "%s %s (%s %.2f us vs ours %.2f: %+.0f%%)" % (
            r["peer"], r["variant"], "mean" if avg else "p50", r["p50"], mine,
            (mine / r["p50"] - 1) * 100 if r["p50"] else float("nan"))
        (better if mine < r["p50"] else worse).append(entry)
    met = not worse
    d = ("below %d of %d peers that ran" % (len(better), len(better) + len(worse)))
    if worse:
        d += "; not below (ours vs theirs): " + ", ".join(worse)
    if missing:
        d += "; no figure: " + ", ".join(missing)
    out.append(("below every other peer (raw AF_XDP, the floor, is the first target)", met, d))
    return out


def stream_targets(agg, size):
    """Issue 14: xdpwake's one-way stream at >= 0.8x raw AF_XDP's rate (same
    batch of 32 to an acknowledgement), and against the polled sockets."""
    me = find(agg, "xdpwake", "marker/spin-block", "stream", size)
    raw = find(agg, "afxdp-raw", "busy-spin", "stream", size)
    if not me or me["status"] != "ok" or not me["msg_rate"]:
        return [("xdpwake marker/spin-block stream did not run", None, "")]
    if not raw or raw["status"] != "ok" or not raw["msg_rate"]:
        return [("rate >= 0.8x raw AF_XDP busy-spin", None,
                 "no figure (%s)" % (raw["status"] if raw else "not run"))]
    q = me["msg_rate"] / raw["msg_rate"]
    return [("rate >= 0.8x raw AF_XDP busy-spin", q >= 0.8,
             "%.0f / %.0f msg/s = **%.2fx** (limit 0.80x)" % (me["msg_rate"], raw["msg_rate"], q))]


def write_md(agg, rows, meta, path, svg_name):
    m = meta
    L = []
    L.append("## Peers (`bench/peers.sh`, issue 7 experiment 8)")
    L.append("")
    L.append("xdpwake next to what a user would pick instead, in one run, on the same pair of "
             "network namespaces joined by a veth pair and with the same placement: the server "
             "(answering side) pinned to CPU %s, the client to CPU %s (`taskset`), one peer at a "
             "time, nothing else of ours running.  %s repetitions of every configuration, "
             "interleaved (repetition, then peer); the table shows the median over them."
             % (m["cpu_server"], m["cpu_client"], m["reps"]))
    L.append("")
    L.append("- Ping-pong: latency is **one-way = half the round trip**, in us; msg/s counts the "
             "messages of both directions; %s s per size (tools that take a count instead: "
             "sized to about that)." % m["pp_dur"])
    L.append("- Stream: one-way %s B messages for %s s; msg/s counts messages received; latency "
             "(our tools only) is one batch of 32 to its acknowledgement."
             % (m["st_size"], m["st_dur"]))
    L.append("- CPU: busy time of the **whole machine** from /proc/stat (user, nice, system, irq, "
             "softirq, steal) divided by the messages.  xdpwake, udp and afxdp-raw measure it "
             "over their measured window; for sockperf, qperf, fi_pingpong and ucx_perftest "
             "peers.sh reads /proc/stat around the client's whole invocation (start-up and "
             "warm-up included), so theirs are upper bounds: for fi_pingpong, whose start-up "
             "probes every libfabric provider, by a wide margin at short runs.")
    L.append("- qperf and fi_pingpong report only an **average**: their p50 column holds that "
             "average and p90/p99 are empty; ucx_perftest's p50, p90 and p99 come from three "
             "separate runs (`-R 50/90/99`); sockperf's percentiles are its own (of its valid "
             "window).")
    L.append("")
    L.append("![peers](%s)" % svg_name)
    L.append("")

    # Targets
    L.append("### Targets (small-message round trip, xdpwake `marker` + spin-block)")
    L.append("")
    for size in m["target_sizes"]:
        for text, met, d in targets(agg, size):
            word = "n/a" if met is None else ("**met**" if met else "**missed**")
            L.append("- %s B, %s: %s; %s" % (human(size), text, word, d))
    L.append("")
    for text, met, d in stream_targets(agg, int(m["st_size"])):
        word = "n/a" if met is None else ("**met**" if met else "**missed**")
        L.append("- %s B stream, %s: %s; %s" % (human(int(m["st_size"])), text, word, d))
    L.append("")
    L.append("For peers that give only an average (qperf, fi_pingpong), \"below every peer\" "
             "compares xdpwake's mean with theirs; otherwise p50 with p50.  The polled kernel "
             "sockets (issue 14) are %s." % ", ".join("%s %s" % pv for pv in POLLED_SOCKETS))
    # How much the repetitions spread: a ratio near a limit may fall either way in another run.
    spread = []
    for size in m["target_sizes"]:
        for peer, variant in (("xdpwake", "marker/spin-block"), ("afxdp-raw", "busy-spin"),
                              ("udp", "blocking"), ("udp", "spin"), ("udp", "busy-poll"),
                              ("sockperf", "udp-nonblocked")):
            v = sorted(r["p50"] for r in rows if (r["peer"], r["variant"], r["test"], r["size"])
                       == (peer, variant, "pingpong", size) and r["status"] == "ok"
                       and r["p50"] is not None)
            if v:
                spread.append("%s %s %s B %.2f-%.2f" % (peer, variant, human(size), v[0], v[-1]))
    if spread:
        L.append("Spread of p50 over the repetitions (min-max, us): " + "; ".join(spread) + ".")
    L.append("")

    # The table.
    L.append("### Ping-pong")
    L.append("")
    L.append("| peer | variant | size | reps | p50 us | p90 us | p99 us | msg/s | CPU us/msg | status |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in agg:
        if r["test"] != "pingpong":
            continue
        note = r["status"]
        if r["status"] == "ok" and r["nfail"]:
            note = "ok (%d failed rep(s): %s)" % (r["nfail"], r["fail_reason"])
        p50 = fmt(r["p50"]) + (" (avg)" if r["peer"] in AVG_ONLY and r["p50"] is not None else "")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["peer"], r["variant"], human(r["size"]), r["reps"], p50, fmt(r["p90"]),
            fmt(r["p99"]), fmt(r["msg_rate"], "%.0f"), fmt(r["cpu"]), note))
    L.append("")
    L.append("### One-way stream")
    L.append("")
    L.append("| peer | variant | size | reps | batch p50 us | msg/s | CPU us/msg | status |")
    L.append("|---|---|---:|---:|---:|---:|---:|---|")
    for r in agg:
        if r["test"] != "stream":
            continue
        note = r["status"]
        if r["status"] == "ok" and r["nfail"]:
            note = "ok (%d failed rep(s): %s)" % (r["nfail"], r["fail_reason"])
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["peer"], r["variant"], human(r["size"]), r["reps"], fmt(r["p50"], "%.1f"),
            fmt(r["msg_rate"], "%.0f"), fmt(r["cpu"]), note))
    L.append("")
    L.append("sockperf's stream rate is what its server received (`sockperf throughput` has no "
             "flow control: the sender's own rate, and the drops, are in the raw output); "
             "qperf's is its receiver's `msg_rate`; ucx_perftest's is `tag_bw`'s overall "
             "message rate.")
    L.append("")

    # Why peers could not run.
    una = [r for r in agg if r["status"] != "ok"]
    L.append("### What could not run, and why")
    L.append("")
    if not una:
        L.append("Every peer ran at every size.")
    for r in una:
        L.append("- %s %s, %s %s B: %s" % (r["peer"], r["variant"], r["test"], human(r["size"]),
                                           r["status"]))
    L.append("")

    # How
    L.append("### How the peers ran")
    L.append("")
    L.append("- xdpwake: `xdpwake attach` on both veth ends; `xdpwake pingpong IF --server` and "
             "`xdpwake pingpong|stream IF --client --policy P --wait W -j` (its own JSON; "
             "marker/spin-block spins for the calibrated block-and-wake cost).")
    L.append("- afxdp-raw: `.output/bench/afxdp_raw` (bench/bpf/afxdp_raw.bpf.c redirects EtherType "
             "0x88B6 to the queue's AF_XDP socket; copy mode; both sides spin on their rings; "
             "one frame each way, no library, no reliability).  One frame must hold the "
             "message, so 4 KiB does not fit the veth's 1500 B MTU.")
    L.append("- udp: `.output/bench/udp_pingpong` on both sides: blocking `recv()`; spin = a "
             "`recv(MSG_DONTWAIT)` loop; busy-poll = the kernel's busy polling, a blocking "
             "`recv()` on a socket with `SO_BUSY_POLL` 50 us, with GRO and UDP GRO forwarding "
             "turned on for the veth pair during those runs only (a veth receives through a "
             "NAPI context, which busy polling needs, only with GRO on); the client fails the "
             "run when its namespace's `BusyPollRxPackets` did not grow.")
    L.append("- sockperf: udp with its defaults (blocking sockets), udp-nonblocked with "
             "`--nonblocked` on both sides.  The other tools with their defaults (blocking "
             "sockets for qperf; libfabric and UCX poll their completion queues).")
    L.append("")
    L.append("Commands (NS_A / NS_B are the two namespaces, server in NS_A on CPU %s, client in "
             "NS_B on CPU %s; SIZE, T and N per size):" % (m["cpu_server"], m["cpu_client"]))
    L.append("")
    L.append("```")
    for c in m["commands"]:
        L.append(c)
    L.append("```")
    L.append("")
    L.append("Machine: %s; %s CPUs (%s); kernel %s; %s.  Run: `%s` on %s, %s."
             % (m["host"], m["ncpus"], m["cpu_model"], m["kernel"], m["versions"], m["cmdline"],
                m["date"], m["elapsed"]))
    bg = m.get("background") or []
    if bg:
        L.append("Other work on the machine (not ours: /proc/stat busy during one idle second "
                 "before each repetition): median %.1f%%, max %.1f%% of the machine; it lands "
                 "in the CPU column and, when it preempts a spinning side, in the latency "
                 "tails." % (statistics.median(bg), max(bg)))
    L.append("Raw: every repetition is in `peers_runs.csv` (with the mean latency).")
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def plot(agg, meta, base):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({r["size"] for r in agg if r["test"] == "pingpong" and r["size"] is not None})
    cmap = plt.get_cmap("tab20")

    def color(peer, variant):
        try:
            return cmap(ORDER.index((peer, variant)) % 20)
        except ValueError:
            return "grey"

    series = []
    for peer, variant in ORDER:
        rs = [find(agg, peer, variant, "pingpong", s) for s in sizes]
        ys = [r["p50"] if r and r["status"] == "ok" else None for r in rs]
        if any(y is not None for y in ys):
            series.append((peer, variant, ys))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [3, 2]})
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (peer, variant, ys) in enumerate(series):
        xs = [j + (i - n / 2 + 0.5) * width for j in range(len(sizes))]
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
        label = "%s %s%s" % (peer, variant, " (average)" if peer in AVG_ONLY else "")
        ax1.bar([x for x, _ in pts], [y for _, y in pts], width, label=label,
                color=color(peer, variant), edgecolor="black" if peer == "xdpwake" else "none",
                linewidth=1.2 if peer == "xdpwake" else 0)
        for x, y in zip(xs, ys):
            if y is None:
                ax1.text(x, 1.05, "n/a", rotation=90, ha="center", va="bottom", fontsize=6)
    ax1.set_yscale("log")
    top = max([y for _, _, ys in series for y in ys if y is not None] or [10]) * 1.6
    ax1.set_ylim(1, top)
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if t <= top]
    ax1.set_yticks(ticks)
    ax1.set_yticklabels([str(t) for t in ticks])
    ax1.set_xticks(range(len(sizes)))
    ax1.set_xticklabels([human(s) + " B" for s in sizes])
    ax1.set_ylabel("one-way latency p50 (us, log scale)")
    ax1.set_title("Ping-pong: half the round trip, median of %s runs" % meta["reps"])
    ax1.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.07))
    ax1.grid(axis="y", which="both", alpha=0.3)

    # Stream: message rate and CPU per message.
    st = [r for r in agg if r["test"] == "stream" and r["status"] == "ok"
          and r["msg_rate"] is not None]
    labels = ["%s %s" % (r["peer"], r["variant"]) for r in st]
    ax2.barh(range(len(st)), [r["msg_rate"] / 1e3 for r in st],
             color=[color(r["peer"], r["variant"]) for r in st],
             edgecolor=["black" if r["peer"] == "xdpwake" else "none" for r in st])
    for i, r in enumerate(st):
        if r["cpu"] is not None:
            ax2.text(r["msg_rate"] / 1e3, i, " %.1f us CPU/msg" % r["cpu"], va="center",
                     fontsize=7)
    ax2.set_yticks(range(len(st)))
    ax2.set_yticklabels(labels, fontsize=8)
    ax2.invert_yaxis()
    ax2.set_xlim(0, max([r["msg_rate"] / 1e3 for r in st] or [1]) * 1.3)
    ax2.set_xlabel("messages received per second (thousands)\nlabels: machine CPU per message")
    ax2.set_title("One-way stream, %s B messages" % meta["st_size"])
    ax2.grid(axis="x", alpha=0.3)
    fig.suptitle("xdpwake and its peers, veth between two namespaces (%s)" % meta["date"],
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(base + ".svg")
    fig.savefig(base + ".png", dpi=110)


def cmd_report(a):
    rows = load_runs(a.runs)
    with open(a.meta) as f:
        meta = json.load(f)
    agg = aggregate(rows)
    os.makedirs(a.out, exist_ok=True)
    write_csv(agg, os.path.join(a.out, "peers.csv"))
    write_runs_csv(rows, os.path.join(a.out, "peers_runs.csv"))
    plot_err = None
    try:
        plot(agg, meta, os.path.join(a.out, "peers"))
    except Exception as e:  # the numbers matter more than the picture
        plot_err = "%s: %s" % (type(e).__name__, e)
        print("peers: no plot: %s" % plot_err, file=sys.stderr)
    # The fragment is read from bench/ (RESULTS.md includes it): link the plot from there.
    img = os.path.relpath(os.path.join(a.out, "peers.svg"),
                          a.md_base or os.path.dirname(os.path.abspath(__file__)))
    write_md(agg, rows, meta, os.path.join(a.out, "peers.md"), img)
    if plot_err:
        with open(os.path.join(a.out, "peers.md"), "a") as f:
            f.write("\n(The plot could not be drawn: %s.)\n" % plot_err)
    # Console summary.
    for size in meta["target_sizes"]:
        for text, met, d in targets(agg, size):
            print("  %s B, %s: %s; %s" % (human(size), text,
                                        "n/a" if met is None else ("met" if met else "MISSED"),
                                        d.replace("**", "")))
    for text, met, d in stream_targets(agg, int(meta["st_size"])):
        print("  %s B stream, %s: %s; %s" % (human(int(meta["st_size"])), text,
                                           "n/a" if met is None else ("met" if met else "MISSED"),
                                           d.replace("**", "")))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("parse")
    p.add_argument("--tool", required=True)
    p.add_argument("--runs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--err")
    p.add_argument("--srv")
    p.add_argument("--peer", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("--rc", type=int, required=True)
    p.add_argument("--busy-us", type=float, default=0.0)
    p.add_argument("--iters", type=int, default=0)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--rank", type=float, default=50)
    p.add_argument("--unavail", help="a failed run whose output matches this regular "
                   "expression is a limit of the tool: 'unavailable: <that line>'")
    r = sub.add_parser("report")
    r.add_argument("--runs", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--meta", required=True)
    r.add_argument("--md-base", help="directory the Markdown is read from (default: bench/)")
    a = ap.parse_args()
    if a.cmd == "parse":
        cmd_parse(a)
        return 0
    return cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
