#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Report of bench/mpi/ranks.sh (make bench-mpi-ranks): Markdown tables.

  ranks_report.py CSV [RTX_CSV [PLOT_BASE]]

CSV is ranks.csv (transport,ranks_per_host,run,kind,size,rtt_us,mb_per_s,
cpu_us_per_msg,rtt_max_us; kind pingpong, stream or pairs).  RTX_CSV is
ranks_rtx.csv (transport,ranks_per_host,run,endpoints,tx_frames,retransmits,
rx_dup_frames: the xdpwake endpoints' closing statistics per run).  Medians
over the runs; ratios to xdpwake's figure in the same run set.  With
PLOT_BASE, the local bandwidth plot goes to PLOT_BASE.png and .svg.
"""
import csv
import statistics
import sys


def med(rows, t, tag, size, field, kind=None):
    v = [float(r[field]) for r in rows if r["transport"] == t and r["ranks_per_host"] == tag
         and r["size"] == str(size) and r[field] and (kind is None or r["kind"] == kind)]
    return statistics.median(v) if v else None


LOCAL = ("xdpwake", "xdpwake-spin", "vader", "tcp-btl")


def rel(x, y, f="%.2fx"):
    return f % (x / y) if x and y else "-"


def plot(rows, base):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4.6))
    for i, (kind, title) in enumerate((("pingpong", "ping-pong (one message in flight)"),
                                       ("stream", "stream (8 messages in flight)"))):
        for t in LOCAL:
            sizes = sorted({int(r["size"]) for r in rows if r["transport"] == t and
                            r["ranks_per_host"] == "local" and r["kind"] == kind and
                            int(r["size"]) >= 4096})
            pts = [(s, med(rows, t, "local", s, "mb_per_s", kind)) for s in sizes]
            pts = [(s, v) for s, v in pts if v]
            if pts:
                ax[i].plot([s for s, _ in pts], [v / 1000 for _, v in pts], "o-", label=t)
        ax[i].set_xscale("log", base=2)
        ax[i].set_xlabel("message size (bytes)")
        ax[i].set_ylabel("GB/s (one way)")
        ax[i].set_title(title)
        ax[i].grid(alpha=0.3)
        ax[i].legend(fontsize=8)
    fig.suptitle("Two MPI ranks on one host: xdpwake's local path against Open MPI's vader")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(base + "." + ext, dpi=90)


def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def human(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    rtx = list(csv.DictReader(open(sys.argv[2]))) if len(sys.argv) > 2 else []
    runs = len({r["run"] for r in rows})
    out = []
    local = [t for t in LOCAL
             if any(r["transport"] == t and r["ranks_per_host"] == "local" for r in rows)]
    if local:
        sizes = sorted({int(r["size"]) for r in rows if r["ranks_per_host"] == "local" and
                        r["kind"] == "pingpong"})
        out.append("Two ranks on one host, MPI ping-pong: round trip in us (bandwidth in MB/s "
                   "from 4 KiB), median of %d runs; xdpwake with the provider's default wait "
                   "(spin, then sleep) and busy-polling (xdpwake-spin: FI_XDPWAKE_WAIT=spin, "
                   "as vader polls); the last columns: their time / vader's.\n" % runs)
        out.append("| size | " + " | ".join(local) + " | xdpwake/vader | spin/vader |")
        out.append("|---|" + "---|" * (len(local) + 2))
        for s in sizes:
            cells = []
            for t in local:
                v = med(rows, t, "local", s, "rtt_us", "pingpong")
                b = med(rows, t, "local", s, "mb_per_s", "pingpong")
                cells.append(fmt(v) + (" (%.0f MB/s)" % b if v is not None and b is not None
                                       and s >= 4096 else ""))
            y = med(rows, "vader", "local", s, "rtt_us", "pingpong")
            out.append("| %s | " % human(s) + " | ".join(cells) + " | %s | %s |" % (
                rel(med(rows, "xdpwake", "local", s, "rtt_us", "pingpong"), y),
                rel(med(rows, "xdpwake-spin", "local", s, "rtt_us", "pingpong"), y)))
        out.append("\nCPU per message (both ranks, us, 8 B): " + ", ".join(
            "%s %s" % (t, fmt(med(rows, t, "local", 8, "cpu_us_per_msg", "pingpong")))
            for t in local))
        ssizes = sorted({int(r["size"]) for r in rows if r["ranks_per_host"] == "local" and
                         r["kind"] == "stream"})
        if ssizes:
            out.append("\nTwo ranks on one host, 8 messages in flight (rank 0 sends, rank 1 "
                       "answers each 8 with 0 bytes): MB/s one way, median of %d runs; the "
                       "last columns: xdpwake's bandwidth / vader's.\n" % runs)
            out.append("| size | " + " | ".join(local) + " | xdpwake/vader | spin/vader |")
            out.append("|---|" + "---|" * (len(local) + 2))
            for s in ssizes:
                y = med(rows, "vader", "local", s, "mb_per_s", "stream")
                out.append("| %s | " % human(s) + " | ".join(
                    fmt(med(rows, t, "local", s, "mb_per_s", "stream"), "%.0f") for t in local) +
                    " | %s | %s |" % (
                        rel(med(rows, "xdpwake", "local", s, "mb_per_s", "stream"), y),
                        rel(med(rows, "xdpwake-spin", "local", s, "mb_per_s", "stream"), y)))
        if rtx:
            out.append("\nRetransmissions and duplicates (the xdpwake endpoints' closing "
                       "statistics, summed over the ranks, per run):\n")
            out.append("| transport | ranks per host | run | frames sent | retransmissions | "
                       "duplicates |")
            out.append("|---|---|---|---|---|---|")
            for r in rtx:
                out.append("| %s | %s | %s | %s | %s | %s |" % (
                    r["transport"], r["ranks_per_host"], r["run"], r["tx_frames"],
                    r["retransmits"], r["rx_dup_frames"]))
        out.append("")
        if len(sys.argv) > 3:
            plot(rows, sys.argv[3])
    tags = sorted({r["ranks_per_host"] for r in rows if r["kind"] == "pairs"}, key=int)
    if tags:
        ts = [t for t in ("xdpwake", "tcp-btl")
              if any(r["transport"] == t and r["kind"] == "pairs" for r in rows)]
        sizes = sorted({int(r["size"]) for r in rows if r["kind"] == "pairs"})
        out.append("Off-host MPI ping-pong with k ranks per host, every rank of host 1 with its "
                   "partner on host 2 at once: round trip in us, median over the pairs (slowest "
                   "pair), 1 MiB as total MB/s; median of %d runs.  k > 1 shares 2 cores "
                   "among 2k ranks (mpi_yield_when_idle 1 for every transport).\n" % runs)
        out.append("| ranks per host | size | " + " | ".join(ts) + " | xdpwake/tcp |")
        out.append("|---|---|" + "---|" * (len(ts) + 1))
        for k in tags:
            for s in sizes:
                cells = []
                for t in ts:
                    v = med(rows, t, k, s, "rtt_us")
                    m = med(rows, t, k, s, "rtt_max_us")
                    b = med(rows, t, k, s, "mb_per_s")
                    cells.append("%.0f MB/s" % b if s >= 1 << 20 and b is not None
                                 else fmt(v) + " (%s)" % fmt(m))
                f = "mb_per_s" if s >= 1 << 20 else "rtt_us"
                x, y = med(rows, "xdpwake", k, s, f), med(rows, "tcp-btl", k, s, f)
                ratio = "%.2fx" % (x / y) if x and y else "-"
                out.append("| %s | %s | " % (k, human(s)) + " | ".join(cells) + " | %s |" % ratio)
    print("\n".join(out))


if __name__ == "__main__":
    main()
