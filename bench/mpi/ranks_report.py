#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Report of bench/mpi/ranks.sh (make bench-mpi-ranks): Markdown tables.

  ranks_report.py CSV

CSV is ranks.csv (transport,ranks_per_host,run,kind,size,rtt_us,mb_per_s,
cpu_us_per_msg,rtt_max_us).  Medians over the runs; ratios to xdpwake's
figure in the same run set.
"""
import csv
import statistics
import sys


def med(rows, t, tag, size, field):
    v = [float(r[field]) for r in rows if r["transport"] == t and r["ranks_per_host"] == tag
         and r["size"] == str(size) and r[field]]
    return statistics.median(v) if v else None


def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def human(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    runs = len({r["run"] for r in rows})
    out = []
    local = [t for t in ("xdpwake", "vader", "tcp-btl")
             if any(r["transport"] == t and r["ranks_per_host"] == "local" for r in rows)]
    if local:
        sizes = sorted({int(r["size"]) for r in rows if r["ranks_per_host"] == "local"})
        out.append("Two ranks on one host, MPI ping-pong: round trip in us (bandwidth in MB/s "
                   "from 32 KiB), median of %d runs; last column: xdpwake / vader.\n" % runs)
        out.append("| size | " + " | ".join(local) + " | xdpwake/vader |")
        out.append("|---|" + "---|" * (len(local) + 1))
        for s in sizes:
            cells = []
            for t in local:
                v = med(rows, t, "local", s, "rtt_us")
                b = med(rows, t, "local", s, "mb_per_s")
                cells.append(fmt(v) + (" (%.0f MB/s)" % b if v is not None and b is not None
                                       and s >= 32768 else ""))
            x, y = med(rows, "xdpwake", "local", s, "rtt_us"), med(rows, "vader", "local", s,
                                                                      "rtt_us")
            ratio = "%.1fx" % (x / y) if x and y else "-"
            out.append("| %s | " % human(s) + " | ".join(cells) + " | %s |" % ratio)
        out.append("\nCPU per message (both ranks, us, 8 B): " + ", ".join(
            "%s %s" % (t, fmt(med(rows, t, "local", 8, "cpu_us_per_msg"))) for t in local))
        out.append("")
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
