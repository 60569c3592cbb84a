# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Issue 15: Open MPI over xdpwake against Open MPI over its TCP BTL,
# libfabric's tcp;ofi_rxm and udp;ofi_rxd, ranks on namespace hosts
# (bench/mpi/run.sh -> bench/results/mpi.csv, mpi.md, mpi.svg/png).
#   make bench-mpi            3 runs into bench/results
#   BENCH_MPI_ARGS="--runs 1 --out DIR"
.PHONY: bench-mpi

bench-mpi:
	$(Q)scripts/deps.sh python3 python3-matplotlib
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/mpi/run.sh $(BENCH_MPI_ARGS)

# Issue 16: several ranks per host: two ranks on one host (xdpwake's local
# path against Open MPI's vader and btl tcp) and 1, 2, 4 ranks per host
# across two hosts (bench/mpi/ranks.sh -> bench/results/ranks.csv, ranks.md).
#   make bench-mpi-ranks      3 runs into bench/results
#   BENCH_MPI_ARGS="--runs 1 --out DIR"
.PHONY: bench-mpi-ranks

bench-mpi-ranks:
	$(Q)scripts/deps.sh python3 python3-matplotlib
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/mpi/ranks.sh $(BENCH_MPI_ARGS)

# Issue 23: ranks that compute COMPUTE s (60) or are stopped STOP s (30)
# between MPI calls, at the default give-up time, over xdpwake and the TCP
# BTL (bench/mpi/alive.sh -> bench/results/alive.md).
#   make bench-mpi-alive      1 run into bench/results
.PHONY: bench-mpi-alive

bench-mpi-alive:
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/mpi/alive.sh --runs 1 $(BENCH_MPI_ARGS)

# Issue 23, goal 2: ranks asleep while waiting (the provider's idle sleep)
# against spinning and the TCP BTL (bench/mpi/idle.sh -> bench/results/
# idle.csv, idle.md, idle.svg/png).
#   make bench-mpi-idle       1 run into bench/results
.PHONY: bench-mpi-idle

bench-mpi-idle:
	$(Q)scripts/deps.sh python3 python3-matplotlib
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/mpi/idle.sh --runs 1 $(BENCH_MPI_ARGS)

# Issue 25: bulk data, the Intel MPI Benchmarks (built outside the tree,
# BUILD=/tmp/xwbulk-imb) at MTU 1500 and 9000 over xdpwake and the TCP BTL,
# and the raw AF_XDP floor (bench/mpi/bulk.sh -> bench/results/bulk.csv,
# bulk.md).
#   make bench-mpi-bulk       2 runs into bench/results
.PHONY: bench-mpi-bulk

bench-mpi-bulk:
	$(Q)scripts/deps.sh python3 python3-matplotlib
	$(Q)$(MAKE) all benches
	$(Q)OUTPUT=$(OUTPUT) bench/mpi/bulk.sh --runs 2 $(BENCH_MPI_ARGS)

# Issue 28: eight ranks on one host, MPI_Alltoall of 4 KiB to 1 MiB per pair,
# xdpwake's local path against Open MPI's vader (bench/mpi/a2a.sh ->
# bench/results/a2a.csv, a2a.md).
#   make bench-mpi-a2a        1 run into bench/results
.PHONY: bench-mpi-a2a

bench-mpi-a2a:
	$(Q)scripts/deps.sh python3
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/mpi/a2a.sh $(BENCH_MPI_ARGS)
