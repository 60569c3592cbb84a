# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bench/cost.sh's report: instructions and system calls per round trip.

  cost_report.py --n1 N1 --n2 N2 --ann1 F --ann2 F --strace1 F --strace2 F
                 --src DIR --out DIR [--title T]

--ann1/--ann2: `callgrind_annotate` output of the runs with N1 and N2 round
trips; --strace1/--strace2: `strace -c` summaries of the same.  The per
round trip cost of a function is (self Ir at N2 - self Ir at N1) / (N2 - N1).
Functions are grouped by the step of a message's path: by their file, and
for msg.c by what the function does (see MSG_STEP).
Writes cost.csv (function, file, step, Ir per round trip) and cost.md (the
table by step, the top functions, system calls), and prints cost.md.
"""
import argparse
import csv
import os
import re
import sys

# Step of the path for each library file; msg.c is split by function.
FILE_STEP = {
    "engine.c": "engine: creation, peers lookup, progress",
    "conn.c": "connection layer (frame in, seq/ack/SACK, RTO, timers)",
    "stream.c": "connection layer (frame in, seq/ack/SACK, RTO, timers)",
    "match.c": "matching and message receive",
    "port.c": "RX ring to engine, TX ring and kick (port)",
    "frame.c": "parse and CRC32C",
    "crc32c.c": "parse and CRC32C",
    "wait.c": "waiting (strategy, spin loop, sleep)",
    "addr.c": "addresses",
}
# msg.c functions by prefix (first match); the rest is message receive.
MSG_STEP = (
    (("xwi_req_", "xwi_request_", "xwi_send_complete", "send_try_finish", "xwi_job_free",
      "xwi_engine_cancel", "xwi_engine_abort"), "requests (allocation, completion)"),
    (("tx_", "xwi_tx_", "peer_tx_one", "peer_has_other", "hdr_data"),
     "TX build (engine transmit scheduler)"),
    (("xwi_engine_isend",), "message layer: send"),
)
ENDPOINT_STEP = {
    # the endpoint layer's functions outside waiting
    "default": "waiting (strategy, spin loop, sleep)",
    "request": "request API (request.c)",
}
# The endpoint layer's files (userspace/lib/endpoint_int.h lists them).
ENDPOINT_FILES = ("endpoint.c", "endpoint_int.h", "ifref.c", "request.c", "waitloop.c",
                  "sleep.c", "threads.c", "calib.c", "check.c")
LIBC_STEP = {
    "malloc": "memory allocation (malloc/free)",
    "calloc": "memory allocation (malloc/free)",
    "free": "memory allocation (malloc/free)",
    "_int_malloc": "memory allocation (malloc/free)",
    "_int_free": "memory allocation (malloc/free)",
    "unlink_chunk.constprop.0": "memory allocation (malloc/free)",
    "malloc_consolidate": "memory allocation (malloc/free)",
    "clock_gettime@@GLIBC_2.17": "clock reads",
    "clock_gettime": "clock reads",
    "__vdso_clock_gettime": "clock reads",
    "pthread_mutex_lock@@GLIBC_2.2.5": "locks",
    "__pthread_mutex_unlock_usercnt": "locks",
    "pthread_mutex_unlock@@GLIBC_2.2.5": "locks",
    "pthread_mutex_trylock@@GLIBC_2.34": "locks",
}

ANN = re.compile(r"\s*([\d,]+) \([^)]*\)\s+(.+?):(\S+)(?: \[(.*)\])?\s*$")


def load(path):
    """{(file, function): self Ir} from callgrind_annotate output."""
    out = {}
    with open(path) as f:
        for line in f:
            m = ANN.match(line)
            if not m:
                continue
            ir = int(m.group(1).replace(",", ""))
            key = (os.path.basename(m.group(2)), m.group(3).split("'")[0])
            out[key] = out.get(key, 0) + ir
    return out


def step_of(file, func):
    if file == "msg.c":
        for prefixes, step in MSG_STEP:
            if func.startswith(prefixes):
                return step
        return "matching and message receive"
    if file in ENDPOINT_FILES:
        if func.startswith(("xw_endpoint__isend", "xw_endpoint__irecv", "collect", "xwi_req_",
                            "xw_request__test", "xw_endpoint__send", "xw_endpoint__recv")):
            return ENDPOINT_STEP["request"]
        if func in ("ep_send", "ep_deliver", "ep_now", "xwi_ep_progress_locked",
                    "xw_endpoint__progress"):
            return "engine callbacks and progress (endpoint.c, waitloop.c)"
        return ENDPOINT_STEP["default"]
    if file in FILE_STEP:
        return FILE_STEP[file]
    if func in LIBC_STEP:
        return LIBC_STEP[func]
    if file == "msort.c" or func in ("qsort_r", "qsort", "cmp_u64"):
        # libc's qsort: the tool's percentiles (cmp_double), and before
        # the wait estimate kept its window sorted, the library (cmp_u64)
        return "qsort (see the comparators: cmp_double tool, cmp_u64 library)"
    if func.startswith(("__memcpy", "__memmove", "memcpy", "__memset", "memset")):
        return "copies (memcpy/memset)"
    # the tool (cmd_*.c, perf_*.c) and its helper library (userspace/util/)
    if file.startswith(("cmd_", "perf_")) or file in ("xdpwake.c", "measure.c", "stats.c",
                                                       "addrfile.c", "json.c"):
        return "the measuring tool (not the library)"
    return "other: " + file


def strace_counts(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            # % time, seconds, usecs/call, calls, [errors], syscall
            if len(p) >= 5 and p[0][0].isdigit() and p[-1] != "total":
                try:
                    calls = int(p[3])
                except ValueError:
                    continue
                out[p[-1]] = out.get(p[-1], 0) + calls
    return out


def main():
    ap = argparse.ArgumentParser()
    for a in ("--ann1", "--ann2", "--strace1", "--strace2", "--src", "--out"):
        ap.add_argument(a, required=True)
    ap.add_argument("--n1", type=int, required=True)
    ap.add_argument("--n2", type=int, required=True)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    d = a.n2 - a.n1
    c1, c2 = load(a.ann1), load(a.ann2)
    rows = []
    for key in set(c1) | set(c2):
        per = (c2.get(key, 0) - c1.get(key, 0)) / d
        if abs(per) < 0.5:
            continue
        rows.append((key[1], key[0], step_of(key[0], key[1]), per))
    rows.sort(key=lambda r: -r[3])
    total = sum(r[3] for r in rows)
    lib_total = sum(r[3] for r in rows if not r[2].startswith("the measuring tool"))
    steps = {}
    for r in rows:
        steps[r[2]] = steps.get(r[2], 0) + r[3]
    s1, s2 = strace_counts(a.strace1), strace_counts(a.strace2)
    sys_rows = sorted(((k, (s2.get(k, 0) - s1.get(k, 0)) / d) for k in set(s1) | set(s2)),
                      key=lambda r: -r[1])
    sys_rows = [r for r in sys_rows if r[1] >= 0.005]

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "cost.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["function", "file", "step", "instructions_per_round_trip"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], "%.1f" % r[3]])
    md = []
    md.append("User-space instructions per round trip (callgrind, runs of %d and %d round "
              "trips, difference / %d)%s:" % (a.n1, a.n2, d, ": " + a.title if a.title else ""))
    md.append("")
    md.append("| step | instructions | share |")
    md.append("|---|---:|---:|")
    for k, v in sorted(steps.items(), key=lambda kv: -kv[1]):
        md.append("| %s | %.0f | %.0f%% |" % (k, v, 100.0 * v / total if total else 0))
    md.append("| **total** (library and libc: %.0f) | **%.0f** | |" % (lib_total, total))
    md.append("")
    md.append("Top functions:")
    md.append("")
    md.append("| function | file | instructions |")
    md.append("|---|---|---:|")
    for r in rows[:15]:
        md.append("| `%s` | %s | %.0f |" % (r[0], r[1], r[3]))
    md.append("")
    md.append("System calls per round trip (strace -c, same difference): " +
              (", ".join("%s %.2f" % r for r in sys_rows) or "none"))
    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, "cost.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
