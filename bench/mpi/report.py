#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Report of bench/mpi/run.sh (make bench-mpi): tables and plot.

  report.py CSV OUTDIR

CSV is mpi.csv (transport,hosts,run,kind,size,rtt_us,mb_per_s,cpu_us_per_msg).
Prints the Markdown tables (run.sh keeps them in OUTDIR/mpi.md) and writes
OUTDIR/mpi.svg and mpi.png: round trip against message size, bandwidth
against message size, and MPI_Allreduce latency, one line or bar per
transport (medians over the runs).
"""
import csv
import os
import statistics
import sys

ORDER = ["xdpwake", "tcp-btl", "tcp-rxm", "udp-rxd"]
COLORS = {"xdpwake": "#d62728", "tcp-btl": "#1f77b4", "tcp-rxm": "#2ca02c",
          "udp-rxd": "#9467bd"}


def load(path):
    rows = list(csv.DictReader(open(path)))
    ts = [t for t in ORDER if any(r["transport"] == t for r in rows)]
    ts += sorted({r["transport"] for r in rows} - set(ts))
    return rows, ts


def med(rows, t, kind, size, field, hosts="2"):
    v = [float(r[field]) for r in rows if r["transport"] == t and r["kind"] == kind
         and r["size"] == str(size) and r["hosts"] == hosts and r[field]]
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


def tables(rows, ts):
    out = []
    sizes = sorted({int(r["size"]) for r in rows if r["kind"] == "pingpong"})
    for h in hosts_of(rows, "pingpong"):
        out.append("MPI ping-pong between two namespace hosts%s: round trip in us (bandwidth "
                   "in MB/s for >= 256 KiB), median of the runs.\n"
                   % (" on a veth pair" if h == "2" else " of %s on a bridge" % h))
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
    out.append("CPU per message (both ranks, us of user+system time, 8 B):\n")
    out.append("| " + " | ".join(ts) + " |")
    out.append("|" + "---|" * len(ts))
    out.append("| " + " | ".join(fmt(med(rows, t, "pingpong", 8, "cpu_us_per_msg"))
                                 for t in ts) + " |")
    out.append("\nMPI_Allreduce (8 B) latency in us:\n")
    out.append("| hosts | " + " | ".join(ts) + " |")
    out.append("|---|" + "---|" * len(ts))
    for h in hosts_of(rows, "allreduce"):
        out.append("| %s | " % h + " | ".join(fmt(med(rows, t, "allreduce", 8, "rtt_us", h))
                                              for t in ts) + " |")
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
                     linewidth=2.2 if t == "xdpwake" else 1.3, label=t)
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
    ax1.set_title("MPI ping-pong, 2 hosts: round trip")
    ax2.set_ylabel("bandwidth (MB/s)")
    ax2.set_title("MPI ping-pong, 2 hosts: bandwidth")
    hs = hosts_of(rows, "allreduce")
    width = 0.8 / max(len(ts), 1)
    for i, t in enumerate(ts):
        xs = [j + (i - len(ts) / 2 + 0.5) * width for j in range(len(hs))]
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
    fig.suptitle("Open MPI 4.1 over xdpwake and kernel transports, namespace hosts on one "
                 "machine (medians of the runs)", fontsize=11)
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
