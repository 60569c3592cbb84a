#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Tables, targets and plot of bench/mpi/idle.sh (issue 23, goal 2).

idle_report.py CSV PLOT_PREFIX > idle.md; the plot (E3: total time per
think time) goes to PLOT_PREFIX.svg and .png when matplotlib is there."""
import csv
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        if r["value"]:
            rows[(r["experiment"], r["transport"], r["x"])].append(float(r["value"]))


def med(e, t, x):
    v = rows.get((e, t, str(x)))
    return statistics.median(v) if v else None


def fmt(v, d=2):
    return "-" if v is None else f"{v:.{d}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


out = []
out.append("Medians over the runs; every row of one experiment from the same run(s), "
           "interleaved.\n")
out.append("**E1: a rank blocked 10 s** (CPU of the waiting rank, % of one core)\n")
out.append("| transport | in MPI_Recv | in MPI_Barrier |")
out.append("|---|---|---|")
for t in ("xdpwake-spin", "xdpwake", "tcp-btl", "tcp-btl-yield"):
    out.append(f"| {t} | {fmt(med('E1recv', t, 10))} | {fmt(med('E1barrier', t, 10))} |")
out.append("\n**E2: 8 B round trip, one rank per host** (us)\n")
out.append("| transport | round trip | vs xdpwake-spin |")
out.append("|---|---|---|")
for t in ("xdpwake-spin", "xdpwake", "tcp-btl"):
    out.append(f"| {t} | {fmt(med('E2', t, 8))} | "
               f"{fmt(ratio(med('E2', t, 8), med('E2', 'xdpwake-spin', 8)))}x |")
thinks = sorted({int(k[2]) for k in rows if k[0] == "E3"})
out.append("\n**E3: 4 ping-pong pairs across the hosts, 4 ranks per host on 2 cores, "
           "8 B, computing THINK us after each round trip** (total time, s)\n")
out.append("| think (us) | xdpwake-spin | xdpwake | tcp-btl-yield | xdpwake / spin | "
           "xdpwake / tcp-btl-yield |")
out.append("|---|---|---|---|---|---|")
for th in thinks:
    s, x, y = med("E3", "xdpwake-spin", th), med("E3", "xdpwake", th), med("E3", "tcp-btl-yield", th)
    out.append(f"| {th} | {fmt(s, 3)} | {fmt(x, 3)} | {fmt(y, 3)} | {fmt(ratio(x, s))}x | "
               f"{fmt(ratio(x, y))}x |")
out.append("\n**E4: 4 ranks per host, 1 MiB ping-pong between ranks 0 and 1 (other hosts), "
           "six ranks waiting** (MB/s)\n")
out.append("| transport | bandwidth | vs tcp-btl |")
out.append("|---|---|---|")
for t in ("xdpwake-spin", "xdpwake", "tcp-btl", "tcp-btl-yield"):
    out.append(f"| {t} | {fmt(med('E4', t, 1048576), 1)} | "
               f"{fmt(ratio(med('E4', t, 1048576), med('E4', 'tcp-btl', 1048576)))}x |")

# issue 23's targets
tg = []
e1 = [med(e, "xdpwake", 10) for e in ("E1recv", "E1barrier")]
if None not in e1:
    tg.append(("blocked rank under 2 % of a core", max(e1) < 2.0, f"{max(e1):.2f} %"))
r2 = ratio(med("E2", "xdpwake", 8), med("E2", "xdpwake-spin", 8))
if r2 is not None:
    tg.append(("8 B round trip within 1.1x of spinning", r2 <= 1.1, f"{r2:.2f}x"))
for th in thinks:
    s, x, y = med("E3", "xdpwake-spin", th), med("E3", "xdpwake", th), med("E3", "tcp-btl-yield", th)
    if None not in (s, x, y):
        tg.append((f"multiprogramming, think {th} us: at most 0.5x spinning and at most "
                   "the TCP BTL with yield", x <= 0.5 * s and x <= y,
                   f"{x / s:.2f}x spinning, {x / y:.2f}x tcp-btl-yield"))
r4 = ratio(med("E4", "xdpwake", 1048576), med("E4", "tcp-btl", 1048576))
if r4 is not None:
    tg.append(("4 ranks per host, 1 MiB: at least 0.5x the TCP BTL", r4 >= 0.5, f"{r4:.2f}x"))
out.append("\n**Targets (issue 23, goal 2)**\n")
out.append("| target | met | measured |")
out.append("|---|---|---|")
for name, ok, m in tg:
    out.append(f"| {name} | {'yes' if ok else 'no'} | {m} |")
print("\n".join(out))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(6, 4))
for t in ("xdpwake-spin", "xdpwake", "tcp-btl-yield"):
    xs = [th for th in thinks if med("E3", t, th) is not None]
    ax.plot(xs, [med("E3", t, th) for th in xs], marker="o", label=t)
ax.set_xlabel("think time after each round trip (us)")
ax.set_ylabel("total time (s)")
ax.set_yscale("log")
ax.set_title("4 ping-pong pairs, 4 ranks per host on 2 cores (8 B)")
ax.legend()
fig.tight_layout()
for ext in ("svg", "png"):
    fig.savefig(f"{sys.argv[2]}.{ext}")
