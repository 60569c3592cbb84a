#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bench/mpi/bulk.sh's CSV -> markdown: per MTU, IMB-MPI1 over xdpwake and
over Open MPI's TCP BTL (median of the runs) and their ratio, and the raw
AF_XDP floor for MTU-sized frames.  Usage: bulk_report.py bulk.csv"""
import csv
import statistics
import sys
from collections import defaultdict

vals = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    key = (r["transport"], int(r["mtu"]), r["bench"], int(r["size"]))
    vals[key].append((float(r["t_us"]), float(r["mb_per_s"])))


def med(t, mtu, bench, size, i):
    v = vals.get((t, mtu, bench, size))
    return statistics.median(x[i] for x in v) if v else None


def size_s(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10) if n >= 1024 \
        else "%d B" % n


# (bench, what, index into (t_us, mb_per_s), higher is better)
ROWS = [("PingPong", "time", 0, False), ("PingPong", "bandwidth", 1, True),
        ("Sendrecv", "bandwidth", 1, True), ("Uniband", "bandwidth", 1, True),
        ("Allreduce", "time", 0, False), ("Alltoall", "time", 0, False)]
mtus = sorted({k[1] for k in vals})
sizes = sorted({k[3] for k in vals if k[0] != "afxdp-raw"})
runs = defaultdict(set)
print("| MTU | benchmark | size | xdpwake | TCP BTL | xdpwake / TCP |")
print("|---|---|---|---|---|---|")
for mtu in mtus:
    for bench, what, i, up in ROWS:
        for size in sizes:
            x, t = med("xdpwake", mtu, bench, size, i), med("tcp-btl", mtu, bench, size, i)
            if x is None and t is None:
                continue
            unit = " MB/s" if i else " µs"
            fmt = (lambda v: "-" if v is None else ("%.0f" % v if i else "%.2f" % v) + unit)
            ratio = "-"
            if x and t:
                ratio = "%.2fx" % (x / t)
                if not up:
                    ratio += " (%s)" % ("faster" if x < t else "slower")
            print("| %d | %s %s | %s | %s | %s | %s |" % (mtu, bench, what, size_s(size), fmt(x),
                                                          fmt(t), ratio))
n = defaultdict(set)
for k in vals:
    n[k[0]].add(len(vals[k]))
print()
for mtu in mtus:
    for k in sorted(k for k in vals if k[0] == "afxdp-raw" and k[1] == mtu):
        bw = med(*k, 1)
        x = med("xdpwake", mtu, "Uniband", 4194304, 1)
        print("MTU %d: raw AF_XDP floor (afxdp_raw stream, %d B frames): %.0f MB/s%s" %
              (mtu, k[3], bw, "; xdpwake Uniband 4 MiB is %.2fx of it" % (x / bw) if x else ""))
print()
print("Runs per value: %s" % ", ".join("%s %s" % (t, "/".join(map(str, sorted(c))))
                                      for t, c in sorted(n.items())))
