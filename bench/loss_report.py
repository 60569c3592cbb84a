#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bench/loss.sh's report (issue 26): a table and plots from loss.json.

  loss_report.py FILE.json [--out DIR]

Writes DIR/loss.md (the table, printed too) and DIR/loss.png/.svg:
  left    slowdown against the loss-free row of the same transport and
          workload, per loss rate (xdpwake and TCP, one way and both ways)
  middle  the RTO over time in the 10 % rows: xdpwake's rto_ns (the
          largest among the host's connections, sampled every ~0.5 ms) and
          TCP's tcpi_rto
  right   the burst rounds: time of each 1 MiB + 0 B round, with and
          without 50 data frames dropped
Times are ratios within one run (a loaded machine changes the absolute
numbers, both transports alike).
"""
import argparse
import json
import math
import os
import statistics
import sys


def total(row, key):
    return sum(h.get(key, 0) for h in row["hosts"])


def tcpext(row, key):
    return sum(h.get("tcpext", {}).get(key, 0) for h in row["hosts"])


def waits(row):
    """[t, RTO] points of both hosts (a JSON from before the issue 26 fixes:
    xdpwake's inferred timer waits)."""
    key = "rto_ms" if row["transport"] == "tcp" or "rto_timeouts" in row["hosts"][0] \
        else "timer_waits_ms"
    return [w for h in row["hosts"] for w in h.get(key, [])]


def rto_cell(row):
    """xdpwake: timer expiries, tail probes, lost and spurious
    retransmissions, the RTO's median and largest value over the run."""
    w = [v for _, v in waits(row)]
    rto = f"{statistics.median(w):.1f} / {max(w):.1f} ms" if w else "-"
    return (f"{total(row, 'rto_timeouts')} | {total(row, 'tail_probes')} | "
            f"{total(row, 'lost_rtx')} | {total(row, 'spurious_rtx')} | {rto}")


def fmt_t(ms):
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return "-"
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.0f} ms"


def fmt_x(x):
    return "-" if x is None else f"{x:.1f}x"


def ratio(t, base):
    if t is None or base is None or base <= 0 or math.isnan(t):
        return None
    return t / base


def wire_drops(row):
    w = row["wire"]
    return w["a_to_b"]["dropped"] + w["b_to_a"]["dropped"]


def rtx_split(row):
    """xdpwake retransmissions by type, the busiest first."""
    by = {}
    for h in row["hosts"]:
        for k, v in h.get("rtx_by_type", {}).items():
            by[k] = by.get(k, 0) + v
    return ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1]) if v)


def table(doc):
    rows = doc["rows"]
    base = {}
    for r in rows:
        if r["workload"] != "burst" and r["loss"] == 0 and r["completed"]:
            base[(r["transport"], r["workload"])] = r["time_ms"]
    out = []
    out.append("| workload | loss | xdpwake | vs 0 % | rtx / drops | RTOs | TLPs | lost rtx | "
               "spurious | RTO median / max | dup frames rx | TCP | vs 0 % | rtx / drops | RTOs | "
               "TLPs | DSACKs |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["workload"], r["loss"]) for r in rows if r["workload"] != "burst"},
                  key=lambda k: (k[0] != "oneway", k[1]))
    for wl, loss in keys:
        cells = [wl, f"{loss * 100:g} %"]
        for tr in ("xdpwake", "tcp"):
            r = next((x for x in rows if x["transport"] == tr and x["workload"] == wl and
                      x["loss"] == loss), None)
            if r is None:
                cells += ["-"] * (9 if tr == "xdpwake" else 6)
                continue
            t = r["time_ms"] if r["completed"] else None
            cells.append(fmt_t(t) + ("" if r["errors"] == 0 else f" ({r['errors']} ERRORS)"))
            cells.append(fmt_x(ratio(t, base.get((tr, wl)))))
            cells.append(f"{total(r, 'retransmits')} / {wire_drops(r)}")
            if tr == "xdpwake":
                cells.append(rto_cell(r))
                cells.append(str(total(r, "rx_dup_frames")))
            else:
                cells += [str(tcpext(r, "TCPTimeouts")), str(tcpext(r, "TCPLossProbes")),
                          str(tcpext(r, "TCPDSACKRecv"))]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("| burst rows (1 MiB + 0 B answer) | rounds | median round | rtx / drops | "
               "RTOs, TLPs | retransmitted |")
    out.append("|---|---|---|---|---|---|")
    for r in rows:
        if r["workload"] != "burst":
            continue
        rounds = r["hosts"][0].get("rounds_ms", [])
        med = statistics.median(rounds) if rounds else None
        if r["transport"] == "tcp":
            w = f"{tcpext(r, 'TCPTimeouts')} RTOs, {tcpext(r, 'TCPLossProbes')} TLPs"
            split = f"fast {tcpext(r, 'TCPFastRetrans')}"
        else:
            w = f"{total(r, 'rto_timeouts')} RTOs, {total(r, 'tail_probes')} TLPs"
            split = rtx_split(r) + f" (on acks {total(r, 'sack_rtx')})"
        cells = [f"{r['transport']}, {r['burst']} frames dropped", str(len(rounds)),
                 fmt_t(med), f"{total(r, 'retransmits')} / {wire_drops(r)}", w, split]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("xdpwake retransmissions by type:")
    out.append("")
    for r in rows:
        if r["transport"] == "xdpwake" and r["workload"] != "burst" and r["loss"] > 0:
            out.append(f"- {r['workload']} {r['loss'] * 100:g} %: {rtx_split(r)}")
    return "\n".join(out) + "\n"


def plot(doc, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.8))
    style = {"xdpwake": "o-", "tcp": "s--"}
    for tr in ("xdpwake", "tcp"):
        for wl in ("oneway", "both"):
            rs = sorted((r for r in rows if r["transport"] == tr and r["workload"] == wl and
                         r["completed"]), key=lambda r: r["loss"])
            base = next((r["time_ms"] for r in rs if r["loss"] == 0), None)
            if not rs or not base:
                continue
            ax[0].plot([r["loss"] * 100 for r in rs], [r["time_ms"] / base for r in rs],
                       style[tr], label=f"{tr} {wl}")
    ax[0].set_xscale("symlog", linthresh=1)
    ax[0].set_yscale("log")
    ax[0].axhline(3, color="grey", lw=0.8, ls=":")
    ax[0].set_xlabel("random loss, both directions (%)")
    ax[0].set_ylabel("time / loss-free time")
    ax[0].set_title("slowdown (goal: <= 3x at 10 %)")
    ax[0].legend(fontsize=8)

    for r in rows:
        if r["workload"] == "burst" or abs(r["loss"] - 0.10) > 1e-9:
            continue
        pts = waits(r)
        if not pts:
            continue
        lab = (f"{r['transport']} {r['workload']}: " +
               ("tcpi_rto" if r["transport"] == "tcp" else "rto_ns"))
        pts = sorted(pts)
        ax[1].step([p[0] / 1000 for p in pts], [p[1] for p in pts], where="post", label=lab)
    ax[1].set_yscale("log")
    ax[1].set_xlabel("time in the run (s)")
    ax[1].set_ylabel("ms")
    ax[1].set_title("RTO over time, 10 % loss")
    ax[1].legend(fontsize=8)

    labels, data = [], []
    for r in rows:
        if r["workload"] == "burst":
            labels.append(f"{r['transport']}\n{r['burst']} lost")
            data.append(r["hosts"][0].get("rounds_ms", []) or [0])
    if data:
        ax[2].boxplot(data)
        ax[2].set_xticks(range(1, len(labels) + 1), labels, fontsize=8)
    ax[2].set_ylabel("round time (ms)")
    ax[2].set_title("1 MiB round, burst of 50 data frames")
    fig.suptitle(f"bench/loss.c ({'quick' if doc.get('quick') else 'full'} run, "
                 f"{doc.get('nmsg')} messages per direction, load {doc.get('loadavg_start', 0):.1f})")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, f"loss.{ext}"), dpi=90)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    with open(a.json) as f:
        doc = json.load(f)
    out = a.out or os.path.dirname(os.path.abspath(a.json))
    md = table(doc)
    sys.stdout.write(md)
    with open(os.path.join(out, "loss.md"), "w") as f:
        f.write(md)
    plot(doc, out)


if __name__ == "__main__":
    main()
