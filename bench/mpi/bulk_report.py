#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bench/mpi/bulk.sh's CSV -> markdown: per MTU, IMB-MPI1 over xdpwake and
over Open MPI's TCP BTL (median of the runs) and their ratio, the same for
the TCP BTL with MTU-sized packets (tcp-mtu: the veths' TSO/GSO off) where
it ran, and the raw AF_XDP floor for MTU-sized frames.  Usage: bulk_report.py bulk.csv [--plot PNG]
(--plot: PingPong and Uniband bandwidth against message size, xdpwake and the
TCP BTL at each MTU, drawn with matplotlib)"""
import csv
import statistics
import sys
from collections import defaultdict

vals = defaultdict(list)
plot = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--plot" else None
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
seg = any(k[0] == "tcp-mtu" for k in vals)
print("| MTU | benchmark | size | xdpwake | TCP BTL | xdpwake / TCP |" +
      (" TCP BTL, MTU-sized packets | xdpwake / it |" if seg else ""))
print("|---|---|---|---|---|---|" + ("---|---|" if seg else ""))


def ratio(x, t, up):
    if not (x and t):
        return "-"
    r = "%.2fx" % (x / t)
    return r if up else r + " (%s)" % ("faster" if x < t else "slower")


for mtu in mtus:
    for bench, what, i, up in ROWS:
        for size in sizes:
            x, t = med("xdpwake", mtu, bench, size, i), med("tcp-btl", mtu, bench, size, i)
            m = med("tcp-mtu", mtu, bench, size, i)
            if x is None and t is None and m is None:
                continue
            unit = " MB/s" if i else " µs"
            fmt = (lambda v: "-" if v is None else ("%.0f" % v if i else "%.2f" % v) + unit)
            print("| %d | %s %s | %s | %s | %s | %s |" % (mtu, bench, what, size_s(size), fmt(x),
                                                          fmt(t), ratio(x, t, up)) +
                  (" %s | %s |" % (fmt(m), ratio(x, m, up)) if seg else ""))
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

if plot:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, bench in zip(axes, ("PingPong", "Uniband")):
        for mtu in mtus:
            for t, style in (("xdpwake", "-o"), ("tcp-btl", "--s"), ("tcp-mtu", ":^")):
                pts = [(sz, med(t, mtu, bench, sz, 1)) for sz in sizes]
                pts = [(sz, v) for sz, v in pts if v]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                            label="%s MTU %d" % ({"tcp-btl": "TCP BTL",
                                                  "tcp-mtu": "TCP BTL, MTU-sized packets"}
                                                 .get(t, t), mtu))
        if bench == "Uniband":
            # the raw AF_XDP floor for MTU-sized frames, where measured
            for k in sorted(k for k in vals if k[0] == "afxdp-raw"):
                ax.axhline(med(*k, 1), linestyle=":", color="grey")
                ax.annotate("raw AF_XDP floor, MTU %d" % k[1], (sizes[0], med(*k, 1)),
                            textcoords="offset points", xytext=(2, 3), fontsize=7,
                            color="grey")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_s(sz) for sz in sizes], rotation=30)
        ax.set_title("IMB %s bandwidth" % bench)
        ax.set_xlabel("message size")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("MB/s")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(plot, dpi=110)
