#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Analysis of bench/wait_strategies.sh: CSV files, plots, table, RESULTS.md.

  plot_wait.py --raw DIR --results DIR [--md bench/RESULTS.md] [--partial]

DIR (raw) holds `meta`, `index` and the JSON / GNU time files of every run;
see bench/wait_strategies.sh.  Written to --results: wait_a_runs.csv (every
run), wait_a.csv (median over repetitions), wait_a_ratios.csv, wait_b_runs.csv,
wait_b.csv, wait_latency.{svg,png}, wait_cpu.{svg,png}, wait_pairs.{svg,png}.
With --md the section between the wait-strategies markers of RESULTS.md is
replaced (appended when absent).
"""
import csv
import os
import sys

import matplotlib

from report_lib import fmt, load_json, med, read_meta, update_section, wait_args

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BEGIN = "<!-- wait-strategies-begin -->"
END = "<!-- wait-strategies-end -->"
HZ = os.sysconf("SC_CLK_TCK")
SB_LIMIT, AD_LIMIT, LAT_LIMIT = 2.0, 1.5, 1.15


def read_time(path):
    """GNU time -f '%e %U %S %w %c': wall, user, sys, voluntary, involuntary."""
    try:
        with open(path) as f:
            last = [ln for ln in f.read().splitlines() if ln.strip()][-1].split()
        return [float(last[0]), float(last[1]), float(last[2]), int(last[3]), int(last[4])]
    except Exception:
        return None


def main():
    o = wait_args()
    meta = read_meta(o.raw)
    os.makedirs(o.results, exist_ok=True)
    A, B, BG = [], [], []
    for ln in open(os.path.join(o.raw, "index")):
        f = ln.split()
        if f[0] == "BG":
            BG.append(dict(rep=int(f[1]), think=int(f[2]), busy_pct=float(f[3])))
        elif f[0] == "A":
            A.append(dict(rep=int(f[1]), think=int(f[2]), label=f[3], wait=f[4], spin=f[5], rc=int(f[6]),
                          path=os.path.join(o.raw, f[7])))
        elif f[0] == "B":
            B.append(dict(rep=int(f[1]), hog=int(f[2]), strat=f[3], n=int(f[4]), wall=float(f[5]),
                          timed_out=int(f[6]), rcs=f[7], busy_ticks=int(f[8]), total_ticks=int(f[9]),
                          softirq_ticks=int(f[10]), steal_ticks=int(f[11]), base=os.path.join(o.raw, f[12])))

    out = []  # Markdown lines
    say = out.append
    notes = []
    status = []

    # ---------------------------------------------------------------- A
    labels = []
    for r in A:
        if r["label"] not in labels:
            labels.append(r["label"])
    thinks = sorted({r["think"] for r in A})
    for r in A:
        d = load_json(r["path"]) if r["rc"] == 0 else None
        res = d["results"][0] if d and d.get("results") else None
        r["ok"] = res is not None
        if res:
            r.update(p50=res["latency_us"]["p50"], p99=res["latency_us"]["p99"],
                     rtt50=res["rtt_us"]["p50"], cpu=res["machine_cpu_us_per_msg"],
                     proc=res["proc_cpu_us_per_msg"], srv_proc=res["server_proc_cpu_us_per_msg"],
                     wakes=res["wakes_per_msg"], rate=res["msg_rate"], msgs=res["msgs"],
                     elapsed=res["elapsed_s"], busy_pct=res["client"]["machine_busy_pct"],
                     spin_us=d.get("spin_us"))
            # The think computation (once per round trip, i.e. per 2 messages) is the
            # same for every strategy: CPU over it is what waiting costs.
            r["cpu_over"] = r["cpu"] - r["think"] / 2.0
            # Cross-check without the rest of the machine: both processes'
            # getrusage (user + sys; softirq time is not in it), minus think/2.
            r["procs_over"] = r["proc"] + r["srv_proc"] - r["think"] / 2.0
            # What the background load (sampled just before this think time,
            # nothing of ours running) would add to the machine CPU per message.
            bg = [b["busy_pct"] for b in BG if b["rep"] == r["rep"] and b["think"] == r["think"]]
            r["bg_est"] = (bg[0] / 100.0 * int(meta.get("ncpu", 1)) * r["elapsed"] * 1e6 / r["msgs"]
                           if bg and r["msgs"] else None)
    keys = ["rep", "think", "label", "wait", "spin_us", "p50", "p99", "rtt50", "cpu", "cpu_over", "proc",
            "srv_proc", "procs_over", "bg_est", "wakes", "rate", "msgs", "elapsed", "busy_pct"]
    if A:
        with open(os.path.join(o.results, "wait_a_runs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["rep", "think_us", "strategy", "wait", "spin_us", "lat_p50_us", "lat_p99_us",
                        "rtt_p50_us", "machine_cpu_us_per_msg", "machine_cpu_over_think_us_per_msg",
                        "client_cpu_us_per_msg", "server_cpu_us_per_msg", "both_processes_cpu_over_think_us_per_msg",
                        "background_estimate_us_per_msg", "wakes_per_msg", "msg_rate",
                        "msgs", "elapsed_s", "machine_busy_pct", "ok"])
            for r in A:
                w.writerow([r.get(k) for k in keys] + [r["ok"]])
        with open(os.path.join(o.results, "wait_background.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["rep", "before_think_us", "machine_busy_pct_nothing_of_ours"])
            for b in BG:
                w.writerow([b["rep"], b["think"], b["busy_pct"]])

    M = {}  # (think, label) -> medians
    for t in thinks:
        for lb in labels:
            rs = [r for r in A if r["think"] == t and r["label"] == lb and r["ok"]]
            if not rs:
                continue
            M[(t, lb)] = {k: med([r[k] for r in rs]) for k in
                          ("p50", "p99", "cpu", "cpu_over", "procs_over", "bg_est", "wakes", "rate", "spin_us",
                           "busy_pct")}
            M[(t, lb)]["n"] = len(rs)
    if M:
        with open(os.path.join(o.results, "wait_a.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["think_us", "strategy", "reps", "lat_p50_us", "lat_p99_us", "machine_cpu_us_per_msg",
                        "machine_cpu_over_think_us_per_msg", "both_processes_cpu_over_think_us_per_msg",
                        "wakes_per_msg", "msg_rate", "spin_us"])
            for (t, lb), m in M.items():
                w.writerow([t, lb, m["n"], m["p50"], m["p99"], m["cpu"], m["cpu_over"], m["procs_over"], m["wakes"],
                            m["rate"], m["spin_us"]])

    # Ratios: medians over the repetitions, and the range of the same ratio
    # computed within each repetition (every repetition measured all
    # configurations back to back).
    def per_rep(t, num_lb, key, den):
        vals = []
        for rep in sorted({r["rep"] for r in A}):
            g = {r["label"]: r for r in A if r["rep"] == rep and r["think"] == t and r["ok"]}
            if num_lb not in g:
                continue
            d = den(g, key)
            if d:
                vals.append(g[num_lb][key] / d)
        return vals

    def best_sb(g, key):
        xs = [g[x][key] for x in ("spin", "block") if x in g]
        return min(xs) if len(xs) == 2 else None

    def spin_of(g, key):
        return g["spin"][key] if "spin" in g else None

    R = []
    for t in thinks:
        sp, bl = M.get((t, "spin")), M.get((t, "block"))
        row = dict(think=t)
        for key, tag in (("cpu", ""), ("cpu_over", "_over"), ("procs_over", "_procs")):
            best = min(sp[key], bl[key]) if sp and bl else None
            row["best" + tag] = ("spin" if sp[key] <= bl[key] else "block") if best else None
            for lb, name in (("spin-block", "sb"), ("adaptive", "ad")):
                m = M.get((t, lb))
                row[name + tag] = m[key] / best if m and best and best > 0 else None
                rr = per_rep(t, lb, key, best_sb)
                row[name + tag + "_range"] = (min(rr), max(rr)) if rr else None
        for lb, name in (("spin-block", "sbl"), ("spin-block:50", "sbl50")):
            m = M.get((t, lb))
            row[name] = m["p50"] / sp["p50"] if m and sp and sp["p50"] else None
            row[name + "_p99"] = m["p99"] / sp["p99"] if m and sp and sp["p99"] else None
            row[name + "_spin"] = m["spin_us"] if m else None
            row[name + "_applies"] = m is not None and m["spin_us"] is not None and t < m["spin_us"]
            rr = per_rep(t, lb, "p50", spin_of)
            row[name + "_range"] = (min(rr), max(rr)) if rr else None
        R.append(row)
    if R:
        with open(os.path.join(o.results, "wait_a_ratios.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["think_us", "better_of_spin_block", "spinblock_cpu_ratio", "adaptive_cpu_ratio",
                        "spinblock_cpu_over_think_ratio", "adaptive_cpu_over_think_ratio",
                        "spinblock_processes_cpu_over_think_ratio", "adaptive_processes_cpu_over_think_ratio",
                        "spinblock_lat_p50_vs_spin", "spinblock_spin_us", "lat_target_applies",
                        "spinblock50_lat_p50_vs_spin", "spinblock50_lat_target_applies"])
            for x in R:
                w.writerow([x["think"], x["best"], x["sb"], x["ad"], x["sb_over"], x["ad_over"], x["sb_procs"],
                            x["ad_procs"], x["sbl"],
                            x["sbl_spin"], x["sbl_applies"], x["sbl50"], x["sbl50_applies"]])

    # ---------------------------------------------------------------- B
    BR = []
    for r in B:
        base = r["base"]
        times = {}
        for side in ("s", "c"):
            for i in range(1, 6):
                times[side + str(i)] = read_time("%s-%s%d.time" % (base, side, i))
        cl = [load_json("%s-c%d.json" % (base, i)) for i in range(1, 6)]
        res = [c["results"][0] if c and c.get("results") else None for c in cl]
        ok = not r["timed_out"] and all(x is not None for x in res) and all(times.values())
        tt = [x for x in times.values() if x]
        BR.append(dict(rep=r["rep"], hog=r["hog"], strat=r["strat"], n=r["n"], ok=ok, timed_out=r["timed_out"],
                       wall=r["wall"],
                       window=max((x["elapsed_s"] for x in res if x), default=None),
                       user=sum(x[1] for x in tt), sys=sum(x[2] for x in tt),
                       vcs=sum(x[3] for x in tt), ics=sum(x[4] for x in tt),
                       # the library's own counts over the measured windows, both sides of every pair
                       blocks=sum(x["client"]["blocks"] + x["server"]["blocks"] for x in res if x),
                       yields=sum(x["client"]["yields"] + x["server"]["yields"] for x in res if x),
                       machine_busy_s=r["busy_ticks"] / HZ, softirq_s=r["softirq_ticks"] / HZ,
                       steal_s=r["steal_ticks"] / HZ,
                       machine_busy_pct=100.0 * r["busy_ticks"] / r["total_ticks"] if r["total_ticks"] else None,
                       lat_p50=med([x["latency_us"]["p50"] for x in res if x]),
                       lat_p99=max((x["latency_us"]["p99"] for x in res if x), default=None),
                       msgs=sum(x["msgs"] for x in res if x)))
    bkeys = ("wall", "user", "sys", "vcs", "ics", "blocks", "yields", "machine_busy_s", "softirq_s", "steal_s")
    if BR:
        bk = ["rep", "hog", "strat", "n", "ok", "timed_out", "wall", "window", "user", "sys", "vcs", "ics", "blocks",
              "yields", "machine_busy_s", "softirq_s", "steal_s", "machine_busy_pct", "lat_p50", "lat_p99", "msgs"]
        with open(os.path.join(o.results, "wait_b_runs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["rep", "hog", "strategy", "round_trips_per_pair", "ok", "stopped", "wall_s",
                        "longest_measured_window_s", "user_s", "sys_s", "voluntary_cs", "involuntary_cs",
                        "lib_blocks_in_window", "lib_yields_in_window", "machine_busy_s", "softirq_s", "steal_s",
                        "machine_busy_pct", "lat_p50_us_median_of_pairs", "lat_p99_us_worst_pair", "msgs"])
            for x in BR:
                w.writerow([x[k] for k in bk])
    n_big = max((x["n"] for x in BR), default=None)
    n_small = min((x["n"] for x in BR), default=None)
    BM, BD = {}, {}  # (hog, strategy) -> medians at N; net of start-up per 1000 round trips per pair
    for hog in (0, 1):
        for s in dict.fromkeys(x["strat"] for x in BR):
            rs = [x for x in BR if x["hog"] == hog and x["strat"] == s and x["n"] == n_big and x["ok"]]
            if rs:
                BM[(hog, s)] = {k: med([x[k] for x in rs]) for k in bkeys + ("lat_p50", "lat_p99")}
                BM[(hog, s)]["n"] = len(rs)
            diffs = []
            for x in rs:
                y = [z for z in BR if z["rep"] == x["rep"] and z["hog"] == hog and z["strat"] == s and
                     z["n"] == n_small and z["ok"]]
                if y and n_big > n_small:
                    diffs.append({k: (x[k] - y[0][k]) * 1000.0 / (n_big - n_small) for k in bkeys})
            if diffs:
                BD[(hog, s)] = {k: med([d[k] for d in diffs]) for k in bkeys}
                BD[(hog, s)]["n"] = len(diffs)
            bad = [x for x in BR if x["hog"] == hog and x["strat"] == s and not x["ok"]]
            if bad:
                notes.append("B, %s%s: %d of %d runs did not complete (%s)." % (
                    s, " with the hog" if hog else "", len(bad),
                    len([x for x in BR if x["hog"] == hog and x["strat"] == s]),
                    "stopped at the time limit" if any(x["timed_out"] for x in bad) else "a process failed"))
    if BM:
        with open(os.path.join(o.results, "wait_b.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["hog", "strategy", "what", "reps", "wall_s", "user_s", "sys_s", "voluntary_cs",
                        "involuntary_cs", "lib_blocks", "lib_yields", "machine_busy_s", "softirq_s", "steal_s",
                        "lat_p50_us", "lat_p99_us_worst_pair"])
            for (hog, s), m in BM.items():
                w.writerow([hog, s, "%d round trips per pair" % n_big, m["n"]] + [m[k] for k in bkeys] +
                           [m["lat_p50"], m["lat_p99"]])
            for (hog, s), m in BD.items():
                w.writerow([hog, s, "net of start-up, per 1000 round trips per pair", m["n"]] +
                           [m[k] for k in bkeys] + ["", ""])

    # ---------------------------------------------------------------- plots
    styles = {"spin": ("C3", "o"), "yield": ("C1", "v"), "block": ("C0", "s"), "spin-yield": ("C5", "^"),
              "spin-block": ("C2", "D"), "notify": ("C7", "x"), "adaptive": ("C4", "*"),
              "spin-block:50": ("C8", "P")}

    def lineplot(fn, panels, ylabel_log):
        fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 4.6))
        for ax, (key, title, ylabel, logy) in zip(axes, panels):
            for lb in labels:
                xs = [t for t in thinks if (t, lb) in M and M[(t, lb)][key] is not None]
                ys = [M[(t, lb)][key] for t in xs]
                c, mk = styles.get(lb, ("k", "."))
                ax.plot(xs, ys, marker=mk, color=c, label=lb.replace(":50", " (--spin 50)"))
            ax.set_xlabel("server think time (us)")
            ax.set_ylabel(ylabel)
            ax.set_title(title, fontsize=10)
            if logy:
                ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.suptitle("xdpwake pingpong, %s B, %s policy, median of %s reps (%s, %s)" % (
            meta.get("a_size"), meta.get("policy"), meta.get("a_reps"), meta.get("kernel"),
            meta.get("date")), fontsize=9)
        fig.tight_layout()
        for ext in ("svg", "png"):
            fig.savefig(os.path.join(o.results, fn + "." + ext), dpi=110)
        plt.close(fig)

    if M:
        lineplot("wait_latency", [("p50", "latency p50 ((round trip - think) / 2)", "us", True),
                                  ("p99", "latency p99", "us", True)], True)
        lineplot("wait_cpu", [("cpu", "whole-machine CPU per message (/proc/stat)", "us / message", True),
                              ("cpu_over", "the same minus the think computation (think / 2 per message)",
                               "us / message", True),
                              ("procs_over", "both processes' getrusage (no softirq) minus think / 2",
                               "us / message", True)], True)
    if BM:
        strats = list(dict.fromkeys(s for (_, s) in BM))
        fig, axes = plt.subplots(1, 5, figsize=(19, 4.2))
        for ax, (key, title, logy) in zip(axes, (("wall", "wall time (s, log)", True),
                                                 ("user", "user time, 10 processes (s, log)", True),
                                                 ("sys", "system time, 10 processes (s)", False),
                                                 ("vcs", "voluntary context switches", False),
                                                 ("ics", "involuntary context switches", False))):
            if logy:
                ax.set_yscale("log")
            for j, hog in enumerate((0, 1)):
                ys = []
                for s in strats:
                    m = BM.get((hog, s))
                    ys.append(m[key] if m else 0)
                ax.bar([i + 0.4 * j for i in range(len(strats))], ys, width=0.4,
                       label="with CPU hog" if hog else "no hog", color="C3" if hog else "C0")
            ax.set_xticks([i + 0.2 for i in range(len(strats))])
            ax.set_xticklabels(strats, fontsize=8)
            ax.set_title(title, fontsize=10)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.suptitle("five ping-pong pairs on %s CPUs, think 0/75/150/225/300 us, %s round trips per pair, "
                     "whole process lifetimes (GNU time), median of %s reps" % (
                         meta.get("ncpu"), meta.get("b_iters"), meta.get("b_reps")), fontsize=9)
        fig.tight_layout()
        for ext in ("svg", "png"):
            fig.savefig(os.path.join(o.results, "wait_pairs." + ext), dpi=110)
        plt.close(fig)

    # ---------------------------------------------------------------- text
    rdir = os.path.relpath(o.results, os.path.dirname(os.path.abspath(o.md)) if o.md else os.getcwd())
    say("## Wait strategies against think time (`bench/wait_strategies.sh`, issue 7 experiment 5)")
    say("")
    say("Command: `%s`, %s%s. Kernel %s, %s x %s (KVM guest, shared and noisy), source %s, "
        "xdpwake %s. Machine busy with nothing of ours running: %s %% before, %s %% after the runs "
        "(`%s/wait_background.csv` has a sample before every think time)." % (
            meta.get("command"), meta.get("date"), " (PARTIAL: interrupted)" if o.partial else "",
            meta.get("kernel"), meta.get("ncpu"), meta.get("cpu"), meta.get("revision"), meta.get("xdp_mode"),
            meta.get("load_before_pct"), meta.get("load_after_pct", "?"), rdir))
    say("")
    if M:
        bgs = [b["busy_pct"] for b in BG]
        say("**A** (SHRIMP Fig. 2): one `xdpwake pingpong` pair in two namespaces over a veth, %s B messages, "
            "`%s` policy, both sides waiting the same way, the server computing (spinning on the clock) for "
            "the think time before it answers. Each cell is the median of %s repetitions of %s s "
            "(interleaved: repetition, think time, strategy). Latency is `(round trip - think) / 2`; CPU is "
            "the busy time of the whole machine (/proc/stat: both sides, softirq, and anything else running "
            "on the machine; background %s-%s %%, median %s %%) per message, both directions counted, so it "
            "includes think/2 of computation; the second CPU table subtracts that. `spin-block:50` is "
            "spin-block with `--spin 50`; plain spin-block spins for the measured block-and-wake cost "
            "(%s us here)." % (
                meta.get("a_size"), meta.get("policy"), meta.get("a_reps"), meta.get("a_duration_s"),
                fmt(min(bgs) if bgs else None, "%.0f"), fmt(max(bgs) if bgs else None, "%.0f"),
                fmt(med(bgs), "%.0f"), fmt(med([M[k]["spin_us"] for k in M if k[1] == "spin-block"]), "%g")))
        say("")
        say("Plots: [latency](%s/wait_latency.svg), [CPU per message](%s/wait_cpu.svg); data: "
            "`%s/wait_a.csv` (medians), `wait_a_runs.csv` (every run), `wait_a_ratios.csv`." % (rdir, rdir, rdir))
        say("")
        for title, key2 in (("Latency p50 / p99 (us)", ("p50", "p99")),
                            ("Whole-machine CPU per message (us)", ("cpu",)),
                            ("Whole-machine CPU per message minus think/2 (us)", ("cpu_over",)),
                            ("Cross-check: CPU of the two processes (getrusage user + sys, no softirq, nothing else "
                             "on the machine) per message minus think/2 (us)", ("procs_over",))):
            say("%s:" % title)
            say("")
            say("| think us | " + " | ".join(labels) + " |")
            say("|---:|" + "---:|" * len(labels))
            for t in thinks:
                cells = []
                for lb in labels:
                    m = M.get((t, lb))
                    if not m:
                        cells.append("-")
                    elif len(key2) == 2:
                        cells.append("%s / %s" % (fmt(m["p50"]), fmt(m["p99"], "%.0f")))
                    else:
                        cells.append(fmt(m[key2[0]]))
                say("| %d | %s |" % (t, " | ".join(cells)))
            say("")
        say("Ratios (medians over repetitions; in brackets the range of the same ratio within single "
            "repetitions):")
        say("")
        say("| think us | better of spin/block (CPU) | spin-block CPU (target <= %.1fx) | adaptive CPU "
            "(target <= %.1fx) | same two, machine CPU minus think/2 | same two, processes' CPU minus think/2 | "
            "spin-block p50 vs spin | spin-block:50 p50 vs spin |" % (SB_LIMIT, AD_LIMIT))
        say("|---:|---|---:|---:|---:|---:|---:|---:|")

        def rng(x):
            return " (%.2f-%.2f)" % x if x else ""

        for x in R:
            lat = fmt(x["sbl"], "%.2fx") + rng(x["sbl_range"]) + ("" if x["sbl_applies"] else " n/a")
            lat50 = fmt(x["sbl50"], "%.2fx") + rng(x["sbl50_range"]) + ("" if x["sbl50_applies"] else " n/a")
            say("| %d | %s | %s%s | %s%s | %s / %s | %s / %s | %s | %s |" % (
                x["think"], x["best"] or "-", fmt(x["sb"], "%.2fx"), rng(x["sb_range"]), fmt(x["ad"], "%.2fx"),
                rng(x["ad_range"]), fmt(x["sb_over"], "%.2fx"), fmt(x["ad_over"], "%.2fx"),
                fmt(x["sb_procs"], "%.2fx"), fmt(x["ad_procs"], "%.2fx"), lat, lat50))
        say("")
        say("(n/a: the think time is not below that configuration's spin time, the latency target does not "
            "apply.)")
        say("")

        # Targets.
        def target(name, key, limit, rows):
            rows = [x for x in rows if x[key] is not None]
            if not rows:
                return
            miss = [x for x in rows if x[key] > limit]
            worst = max(rows, key=lambda x: x[key])
            if miss:
                status.append("%s: **missed** at %d of %d think times (%s); worst %.2fx at %d us, %.0f %% over "
                              "the %.2fx target." % (name, len(miss), len(rows),
                                                    ", ".join("%d us: %.2fx" % (x["think"], x[key]) for x in miss),
                                                    worst[key], worst["think"], 100 * (worst[key] / limit - 1),
                                                    limit))
            else:
                status.append("%s: **met** at all %d think times (worst %.2fx at %d us, target %.2fx)." % (
                    name, len(rows), worst[key], worst["think"], limit))

        target("spin-block CPU per message <= %.0fx the better of spin and block" % SB_LIMIT, "sb", SB_LIMIT, R)
        target("adaptive CPU per message <= %.1fx the better of spin and block" % AD_LIMIT, "ad", AD_LIMIT, R)
        target("spin-block latency p50 <= %.2fx spin, think below the default spin time" % LAT_LIMIT, "sbl",
               LAT_LIMIT, [x for x in R if x["sbl_applies"]])
        target("(extra, not the issue's configuration) spin-block --spin 50 latency p50 <= %.2fx spin, think "
               "below 50 us" % LAT_LIMIT, "sbl50", LAT_LIMIT, [x for x in R if x["sbl50_applies"]])
        for tag, what in (("_over", "machine CPU minus the think computation (think/2 per message)"),
                          ("_procs", "the two processes' own CPU minus think/2 (no softirq, no background)")):
            ov_sb = [x["sb" + tag] for x in R if x["sb" + tag] is not None]
            ov_ad = [x["ad" + tag] for x in R if x["ad" + tag] is not None]
            if ov_sb and ov_ad:
                status.append("Cross-check, %s: spin-block %.2f-%.2fx (%d of %d think times above 2x), adaptive "
                              "%.2f-%.2fx (%d of %d above 1.5x)." % (
                                  what, min(ov_sb), max(ov_sb), sum(v > SB_LIMIT for v in ov_sb), len(ov_sb),
                                  min(ov_ad), max(ov_ad), sum(v > AD_LIMIT for v in ov_ad), len(ov_ad)))

        # Reading, computed from the medians.
        t0 = thinks[0]
        row0 = sorted((M[(t0, lb)]["p50"], lb) for lb in labels if (t0, lb) in M)
        if row0:
            notes.append("At think %d us the lowest p50 is %s (%.1f us), then %s; block: %s us." % (
                t0, row0[0][1], row0[0][0], ", ".join("%s %.1f" % (lb, v) for v, lb in row0[1:4]),
                fmt(M.get((t0, "block"), {}).get("p50"))))
        sb0, sp0 = M.get((t0, "spin-block")), M.get((t0, "spin"))
        if sb0 and sp0 and sb0["spin_us"] is not None and 2 * sp0["p50"] + t0 <= sb0["spin_us"]:
            notes.append("spin-block's default spin time, %g us (the measured block-and-wake cost), covers the "
                         "round trip at think %d us (%.1f us with spin): it catches the reply while spinning "
                         "(%.2f wakes per message, p50 %.1f us vs spin's %.1f)."
                         % (sb0["spin_us"], t0, 2 * sp0["p50"] + t0, sb0["wakes"], sb0["p50"], sp0["p50"]))
        elif sb0 and sp0 and sb0["spin_us"] is not None:
            rtt = 2 * sp0["p50"] + t0
            notes.append("spin-block's default spin time is %g us (the measured block-and-wake cost) while the round "
                         "trip itself takes %.1f us with spin at think %d us: the reply comes after the spin budget "
                         "even with no think time, so spin-block often blocks (%.2f wakes per message, p50 %.1f us "
                         "vs spin's %.1f). With --spin 50, which covers the round trip, it is %s us at think %d us."
                         % (sb0["spin_us"], rtt, t0, sb0["wakes"], sb0["p50"], sp0["p50"],
                            fmt(M.get((t0, "spin-block:50"), {}).get("p50")), t0))
        tl = thinks[-1]
        if (tl, "spin") in M and (tl, "block") in M:
            s_, b_ = M[(tl, "spin")], M[(tl, "block")]
            notes.append("At think %d us: spin p50/p99 %.1f/%.0f us at %.1f us CPU/msg (%.1f over think), block "
                         "%.1f/%.0f us at %.1f (%.1f over think)." % (
                             tl, s_["p50"], s_["p99"], s_["cpu"], s_["cpu_over"], b_["p50"], b_["p99"], b_["cpu"],
                             b_["cpu_over"]))
        for lb in ("block", "spin"):
            m = M.get((tl, lb))
            if m and m["bg_est"] is not None:
                notes.append("Background: at think %d us, %s's machine CPU minus think/2 is %.1f us/msg, of which "
                             "the load sampled before that think time (nothing of ours running) would account for "
                             "about %.1f; its two processes' own CPU minus think/2 is %.1f. At large think times "
                             "the whole-machine numbers are dominated by think time and background, which pulls "
                             "every ratio towards 1." % (tl, lb, m["cpu_over"], m["bg_est"], m["procs_over"]))
                break
        sp_bad = [t for t in thinks if (t, "spin") in M and (t, "block") in M and
                  M[(t, "spin")]["p99"] > M[(t, "block")]["p99"]]
        if sp_bad:
            notes.append("Spin's p99 is worse than block's at think %s us: with 2 CPUs, a spinning client and a "
                         "computing server leave no CPU for the softirq that moves the frames over the veth." %
                         ", ".join(map(str, sp_bad)))
        bests = {}
        for t in thinks:
            c = [(M[(t, lb)]["cpu"], lb) for lb in labels if (t, lb) in M]
            if c:
                bests.setdefault(min(c)[1], []).append(t)
        if bests:
            notes.append("Least CPU per message: " + "; ".join("%s at think %s us" % (lb, ", ".join(map(str, ts)))
                                                              for lb, ts in bests.items()) + ".")

    if BM:
        say("**B** (SHRIMP Fig. 3-4): five ping-pong pairs at once on the %s CPUs, each pair in its own two "
            "namespaces and veth, fixed think times 0, 75, 150, 225, 300 us (one per pair; the tool has no "
            "random think time), %s round trips per pair, %s B, `%s`, with and without a CPU hog (one "
            "`while :; do :; done` shell, not pinned). Wall: from starting the five clients until the last "
            "one exits; user, system time and context switches (voluntary, involuntary): sums over the ten "
            "processes' whole lives (GNU time), so they include each process's start-up (attach, the "
            "block-cost measurement, connecting: several hundred voluntary switches per process); lib blocks: "
            "the library's own count of blocking waits in the measured windows (both sides, all pairs); machine "
            "busy and softirq: /proc/stat over the wall time (includes the hog and the background). Median of "
            "%s repetitions. The second table takes the start-up out: each configuration was also run with "
            "%s round trips per pair, and the difference is scaled to 1000 round trips per pair (same "
            "repetition, then the median). Plot: [wait_pairs](%s/wait_pairs.svg); data `%s/wait_b.csv`, "
            "`wait_b_runs.csv`." % (meta.get("ncpu"), meta.get("b_iters"), meta.get("a_size"), meta.get("policy"),
                                    meta.get("b_reps"), meta.get("b_small"), rdir, rdir))
        say("")
        say("%s round trips per pair, five pairs:" % n_big)
        say("")
        say("| hog | strategy | wall s | user s | sys s | vol. cs | invol. cs | lib blocks | machine busy s | "
            "softirq s | lat p50 us (median pair) | lat p99 us (worst pair) |")
        say("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (hog, s), m in BM.items():
            say("| %s | %s | %.2f | %.2f | %.2f | %d | %d | %d | %.2f | %.2f | %s | %s |" % (
                "yes" if hog else "no", s, m["wall"], m["user"], m["sys"], m["vcs"], m["ics"], m["blocks"],
                m["machine_busy_s"], m["softirq_s"], fmt(m["lat_p50"]), fmt(m["lat_p99"], "%.0f")))
        say("")
        if BD:
            say("Net of start-up, per 1000 round trips per pair (%s minus %s round trips, scaled; a difference of "
                "two runs, so small or negative values, e.g. spin's voluntary switches, are within the start-up's "
                "run-to-run variation):" % (n_big, n_small))
            say("")
            say("| hog | strategy | wall s | user s | sys s | vol. cs | invol. cs | machine busy s |")
            say("|---|---|---:|---:|---:|---:|---:|---:|")
            for (hog, s), m in BD.items():
                say("| %s | %s | %.2f | %.2f | %.2f | %.0f | %.0f | %.2f |" % (
                    "yes" if hog else "no", s, m["wall"], m["user"], m["sys"], m["vcs"], m["ics"],
                    m["machine_busy_s"]))
            say("")
        for hog in (0, 1):
            row = {s: m for (h, s), m in BM.items() if h == hog}
            if "spin" in row and "block" in row:
                sb = row.get("spin-block")
                notes.append("Five pairs%s: wall spin %.2f s, block %.2f s%s (spin/block %.2fx); user time spin "
                             "%.2f s vs block %.2f s." % (
                                 " with the hog" if hog else " without the hog", row["spin"]["wall"],
                                 row["block"]["wall"],
                                 ", spin-block %.2f s" % sb["wall"] if sb else "",
                                 row["spin"]["wall"] / row["block"]["wall"], row["spin"]["user"],
                                 row["block"]["user"]))
        for hog in (0, 1):
            row = {s: m for (h, s), m in BD.items() if h == hog}
            if "spin" in row and "block" in row:
                notes.append("Net of start-up%s, per 1000 round trips per pair: voluntary switches spin %.0f, block "
                             "%.0f%s; involuntary spin %.0f, block %.0f." % (
                                 " with the hog" if hog else " without the hog", row["spin"]["vcs"],
                                 row["block"]["vcs"],
                                 ", spin-block %.0f" % row["spin-block"]["vcs"] if "spin-block" in row else "",
                                 row["spin"]["ics"], row["block"]["ics"]))
        slow = [(BM[(1, s)]["wall"] / BM[(0, s)]["wall"], s) for s in dict.fromkeys(s for (_, s) in BM)
                if (0, s) in BM and (1, s) in BM]
        if slow:
            notes.append("The hog slows the five pairs down by " + ", ".join("%.2fx (%s)" % x for x in slow) + ".")

    if status:
        say("Targets (issue 5):")
        say("")
        for s in status:
            say("- " + s)
        say("")
    if notes:
        say("Reading (computed from the numbers above):")
        say("")
        for n in notes:
            say("- " + n)
        say("")

    text = "\n".join(out)
    print(text)
    if o.md and not o.partial:
        update_section(o.md, BEGIN, END, text)
    print("results: %s (CSV, SVG, PNG)" % o.results, file=sys.stderr)


if __name__ == "__main__":
    main()
