#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Eight ranks on one namespace host (issue 28): MPI_Alltoall of 4 KiB to
# 1 MiB per pair of ranks (tests/mpi/xw_mpi_a2a.c, every byte checked),
# Open MPI over xdpwake's local path (pml cm, mtl ofi, UDP encapsulation, a
# queue per rank) against Open MPI's own shared memory (pml ob1, btl
# self,vader), --runs N runs of each (default 1), interleaved.  Eight ranks
# share this machine's cores: both transports run with mpi_yield_when_idle.
# Writes RESULTS_DIR/a2a.csv and a2a.md.
#   bench/mpi/a2a.sh [--out DIR] [--runs N]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
[ "$runs" = 3 ] && runs=1 # (common.sh's default is for the ping-pongs)
A2A=$OUTPUT/bench/xw_mpi_a2a
mpicc -O2 -Wall -o "$A2A" "$XW_SRC/tests/mpi/xw_mpi_a2a.c" || exit 1
CFG[xdpwake]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xdpwake --mca btl self -x FI_PROVIDER_PATH=$PROVDIR -x FI_XDPWAKE_IFACE=xwd0 -x FI_XDPWAKE_ENCAP=udp"
CFG[vader]="--mca pml ob1 --mca btl self,vader"

csv=$out/a2a.csv
echo "transport,run,size,iters,us_per_alltoall,mb_per_s" > "$csv"
QUEUES=8 hosts 1 bridge || exit 1
h1=${HOSTS[0]}
for run in $(seq 1 "$runs"); do
	for t in xdpwake vader; do
		if mpi_run "$t" "$t run $run" "$t" --host "$h1:8" -np 8 \
			--mca mpi_yield_when_idle 1 "$A2A" --bytes $((32 * 1024 * 1024)); then
			if grep -q '^ok:' "$TMP/$t.out"; then
				grep '^a2a,' "$TMP/$t.out" | sed "s/^a2a,/$t,$run,/" >> "$csv"
				echo "$t run $run: ok" >&2
			else
				echo "$t run $run: wrong bytes" >&2
			fi
		fi
	done
done

/usr/bin/python3 - "$csv" > "$out/a2a.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r["transport"], int(r["size"])), []).append(float(r["us_per_alltoall"]))
sizes = sorted({int(r["size"]) for r in rows})
print("| bytes per pair | xdpwake (local path) | vader | xdpwake / vader |")
print("|---:|---:|---:|---:|")
for s in sizes:
    x = by.get(("xdpwake", s)); v = by.get(("vader", s))
    fx = f"{statistics.median(x) / 1000:.2f} ms" if x else "-"
    fv = f"{statistics.median(v) / 1000:.2f} ms" if v else "-"
    ratio = f"{statistics.median(x) / statistics.median(v):.1f}x" if x and v else "-"
    size = f"{s // 1048576} MiB" if s >= 1048576 else f"{s // 1024} KiB"
    print(f"| {size} | {fx} | {fv} | {ratio} |")
PY
cat "$out/a2a.md"
