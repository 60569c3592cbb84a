#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Report of bench/mpi/run.sh (make bench-mpi): tables and plot.

  report.py CSV OUTDIR

CSV is mpi.csv (transport,hosts,run,kind,size,rtt_us,mb_per_s,cpu_us_per_msg).
Prints the Markdown tables and issue 15's targets (run.sh keeps them in
OUTDIR/mpi.md) and writes OUTDIR/mpi.svg and mpi.png: round trip against
message size, bandwidth against message size, and MPI_Allreduce latency, one
line or bar per transport (medians over the runs).  The transports that are
not MPI (NOT_MPI: xdpwake's own ping-pong tool and raw AF_XDP) have rows of
kind pingpong (2 x p50 of their one-way latency) and pingpong-mean (2 x its
mean); the targets compare MPI's round trip (mean of a batch, median of 5)
with the former and show the latter too.
"""
import csv
import os
import statistics
import sys

ORDER = ["xdpwake", "xdpwake-tool", "afxdp-raw", "tcp-btl", "tcp-rxm", "udp-rxd"]
COLORS = {"xdpwake": "#d62728", "tcp-btl": "#1f77b4", "tcp-rxm": "#2ca02c",
          "udp-rxd": "#9467bd", "xdpwake-tool": "#ff7f0e", "afxdp-raw": "#7f7f7f"}
NOT_MPI = ("xdpwake-tool", "afxdp-raw")
KERNEL = ("tcp-btl", "tcp-rxm", "udp-rxd")  # Open MPI over kernel sockets
TARGET_SIZE = 8


def load(path):
    rows = list(csv.DictReader(open(path)))
    ts = [t for t in ORDER if any(r["transport"] == t for r in rows)]
    ts += sorted({r["transport"] for r in rows} - set(ts))
    return rows, ts


def values(rows, t, kind, size, field, hosts="2"):
    return [float(r[field]) for r in rows if r["transport"] == t and r["kind"] == kind
            and r["size"] == str(size) and r["hosts"] == hosts and r[field]]


def med(rows, t, kind, size, field, hosts="2"):
    v = values(rows, t, kind, size, field, hosts)
    return statistics.median(v) if v else None


def hosts_of(rows, kind):
    return sorted({r["hosts"] for r in rows if r["kind"] == kind}, key=int)


def human(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def fmt(v, f="%.1f"):
    return "-" if v is None else f % v


def ratio_line(label, me, other, limit):
    """(label, met, detail) of me / other <= limit; met None without figures."""
    if me is None or other is None:
        return (label, None, "no figure to compare (%s did not run)"
                % ("MPI over xdpwake" if me is None else "the other side"))
    q = me / other
    met = q <= limit
    d = "%.2f / %.2f us = **%.2fx** (limit %.2fx): %s" % (
        me, other, q, limit,
        "met, %.0f%% under the limit" % ((1 - q / limit) * 100) if met else
        "missed by %.0f%% (%.2f us over %.2f us allowed)" % ((q / limit - 1) * 100,
                                                             me - limit * other, limit * other))
    return (label, met, d)


def targets(rows):
    """Issue 15's targets at TARGET_SIZE: list of (text, met, detail)."""
    sz = TARGET_SIZE
    me = med(rows, "xdpwake", "pingpong", sz, "rtt_us")
    tool = med(rows, "xdpwake-tool", "pingpong", sz, "rtt_us")
    text, met, d = ratio_line("MPI over xdpwake within 1.3x of `xdpwake pingpong` "
                              "(policy marker, wait spin: as the provider runs under Open MPI)",
                              me, tool, 1.3)
    mean = med(rows, "xdpwake-tool", "pingpong-mean", sz, "rtt_us")
    if me is not None and mean is not None:
        d += ("; against the tool's mean round trip (MPI's is the mean of a batch): "
              "%.2f / %.2f us = %.2fx" % (me, mean, me / mean))
    out = [(text, met, d)]
    kern = [(t, med(rows, t, "pingpong", sz, "rtt_us")) for t in KERNEL]
    kern = [(t, v) for t, v in kern if v is not None]
    label = "MPI over xdpwake at most 0.5x the best kernel-socket MPI transport"
    if kern:
        best, v = min(kern, key=lambda x: x[1])
        text, met, d = ratio_line(label, me, v, 0.5)
        out.append((text, met, "best is %s; %s" % (best, d)))
    else:
        out.append((label, None, "no kernel-socket transport ran"))
    return out


def target_lines(rows):
    sz = TARGET_SIZE
    out = ["Targets (issue 15: %d B round trip, medians of the runs):\n" % sz]
    for text, met, d in targets(rows):
        word = "n/a" if met is None else ("**met**" if met else "**missed**")
        out.append("- %d B, %s: %s; %s" % (sz, text, word, d))
    raw = med(rows, "afxdp-raw", "pingpong", sz, "rtt_us")
    if raw is not None:
        rel = ["%s %.2fx" % (t, v / raw) for t, v in
               ((t, med(rows, t, "pingpong", sz, "rtt_us")) for t in ("xdpwake-tool", "xdpwake"))
               if v is not None]
        out.append("- For scale (not a target): raw AF_XDP busy-spin, one frame each way, "
                   "%.2f us; %s of it." % (raw, ", ".join(rel) or "nothing else ran"))
    spread = []
    for t in ORDER:
        v = values(rows, t, "pingpong", sz, "rtt_us")
        if len(v) > 1:
            spread.append("%s %.2f-%.2f" % (t, min(v), max(v)))
    if spread:
        out.append("\nSpread of the %d B round trip over the runs (min-max, us): %s."
                   % (sz, "; ".join(spread)))
    return out


def tables(rows, ts):
    out = []
    sizes = sorted({int(r["size"]) for r in rows if r["kind"] == "pingpong"})
    for h in hosts_of(rows, "pingpong"):
        out.append("Ping-pong between two namespace hosts%s: round trip in us (bandwidth "
                   "in MB/s for >= 256 KiB), median of the runs.%s\n"
                   % (" on a veth pair" if h == "2" else " of %s on a bridge" % h,
                      "" if not set(NOT_MPI) & set(ts) else
                      " Not MPI: xdpwake-tool is `xdpwake pingpong` and afxdp-raw raw AF_XDP "
                      "(one frame each way, so not 4096 B), on the same hosts and interface; "
                      "their round trip is 2 x the p50 of the one-way latency."))
        out.append("| size | " + " | ".join(ts) + " |")
        out.append("|---|" + "---|" * len(ts))
        for s in sizes:
            cells = []
            for t in ts:
                v = med(rows, t, "pingpong", s, "rtt_us", h)
                b = med(rows, t, "pingpong", s, "mb_per_s", h)
                cells.append(fmt(v) + (" (%.0f MB/s)" % b if v is not None and b is not None
                                       and s >= 262144 else ""))
            out.append("| %d | " % s + " | ".join(cells) + " |")
        out.append("")
    out.append("CPU per message (both ranks or tool processes, us of user+system time, "
               "8 B; afxdp-raw measures only the whole machine):\n")
    out.append("| " + " | ".join(ts) + " |")
    out.append("|" + "---|" * len(ts))
    out.append("| " + " | ".join(fmt(med(rows, t, "pingpong", 8, "cpu_us_per_msg"))
                                 for t in ts) + " |")
    ar = [t for t in ts if t not in NOT_MPI]
    if hosts_of(rows, "allreduce"):
        out.append("\nMPI_Allreduce (8 B) latency in us:\n")
        out.append("| hosts | " + " | ".join(ar) + " |")
        out.append("|---|" + "---|" * len(ar))
        for h in hosts_of(rows, "allreduce"):
            out.append("| %s | " % h + " | ".join(fmt(med(rows, t, "allreduce", 8, "rtt_us", h))
                                                  for t in ar) + " |")
    out.append("")
    out += target_lines(rows)
    return "\n".join(out)


def plot(rows, ts, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({int(r["size"]) for r in rows if r["kind"] == "pingpong"
                    and r["hosts"] == "2"})
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.8),
                                        gridspec_kw={"width_ratios": [3, 3, 2]})
    for t in ts:
        style = dict(color=COLORS.get(t), marker="o", markersize=4,
                     linewidth=2.2 if t == "xdpwake" else 1.3,
                     linestyle="--" if t in NOT_MPI else "-",
                     label=t + (" (not MPI)" if t in NOT_MPI else ""))
        pts = [(max(s, 1), med(rows, t, "pingpong", s, "rtt_us")) for s in sizes]
        pts = [(x, y) for x, y in pts if y is not None]
        ax1.plot([x for x, _ in pts], [y for _, y in pts], **style)
        pts = [(s, med(rows, t, "pingpong", s, "mb_per_s")) for s in sizes if s >= 512]
        pts = [(x, y) for x, y in pts if y is not None]
        ax2.plot([x for x, _ in pts], [y for _, y in pts], **style)
    for ax, lo in ((ax1, 0), (ax2, 512)):
        ticks = [s for s in sizes if s >= lo]
        ax.set_xscale("log", base=2)
        ax.set_xticks([max(s, 1) for s in ticks])
        ax.set_xticklabels([human(s).replace(" ", "\n") for s in ticks], fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("message size" + (" (0 B drawn at 1 B)" if lo == 0 else ""))
        ax.grid(which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax1.set_yscale("log")
    ax1.set_ylabel("round trip (us, log scale)")
    ax1.set_title("Ping-pong, 2 hosts: round trip")
    ax2.set_ylabel("bandwidth (MB/s)")
    ax2.set_title("Ping-pong, 2 hosts: bandwidth")
    hs = hosts_of(rows, "allreduce")
    ar = [t for t in ts if t not in NOT_MPI]
    width = 0.8 / max(len(ar), 1)
    for i, t in enumerate(ar):
        xs = [j + (i - len(ar) / 2 + 0.5) * width for j in range(len(hs))]
        ys = [med(rows, t, "allreduce", 8, "rtt_us", h) for h in hs]
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
        ax3.bar([x for x, _ in pts], [y for _, y in pts], width, color=COLORS.get(t), label=t)
    ax3.set_yscale("log")
    ax3.set_xticks(range(len(hs)))
    ax3.set_xticklabels(["%s hosts" % h for h in hs])
    ax3.set_ylabel("latency (us, log scale)")
    ax3.set_title("MPI_Allreduce, 8 B")
    ax3.grid(axis="y", which="both", alpha=0.3)
    ax3.legend(fontsize=8)
    fig.suptitle("Open MPI 4.1 over xdpwake and kernel transports, with xdpwake's own "
                 "ping-pong and raw AF_XDP (dashed), namespace hosts on one machine "
                 "(medians of the runs)", fontsize=11)
    fig.tight_layout()
    for ext in ("svg", "png"):
        fig.savefig(os.path.join(outdir, "mpi." + ext), dpi=110)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows, ts = load(sys.argv[1])
    print(tables(rows, ts))
    try:
        plot(rows, ts, sys.argv[2])
    except ImportError:
        print("\n(no plot: python3-matplotlib missing)", file=sys.stderr)


if __name__ == "__main__":
    main()
