# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Issue 7 benchmarks (bench/run.sh; root: namespaces, XDP, AF_XDP).
#   make bench          every experiment (long: about half an hour); CSV and
#                       plots in bench/results, bench/RESULTS.md regenerated
#                       section by section
#   make bench-quick    a small subset in a few minutes, into
#                       $(OUTPUT)/bench/quick (bench/RESULTS.md untouched)
#   BENCH_ARGS="--only 1,2"   pass options to bench/run.sh (see --help)
.PHONY: bench bench-quick

BENCH_DEPS := python3-matplotlib time procps

bench:
	$(Q)scripts/deps.sh $(BENCH_DEPS)
	$(Q)$(MAKE) all benches
	$(Q)OUTPUT=$(OUTPUT) bench/run.sh $(BENCH_ARGS)

bench-quick:
	$(Q)scripts/deps.sh $(BENCH_DEPS)
	$(Q)$(MAKE) all benches
	$(Q)OUTPUT=$(OUTPUT) bench/run.sh --quick $(BENCH_ARGS)

# Issue 14: where the user-space instructions of one round trip go, and the
# system calls per round trip (callgrind and strace; load-independent).
#   make bench-cost   [COST_ARGS="--size 1024 --wait spin-block"]
.PHONY: bench-cost
bench-cost:
	$(Q)scripts/deps.sh valgrind strace python3
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/cost.sh $(COST_ARGS)
