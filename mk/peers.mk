# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Issue 7, experiment 8: xdpwake next to its peers (kernel UDP sockets,
# sockperf, qperf, fi_pingpong, ucx_perftest, raw AF_XDP busy-spin) in two
# namespaces joined by veth; bench/peers.sh writes peers.csv, peers.md and
# peers.svg/png.
#   make bench-peers          full run into bench/results
#   make bench-peers-quick    a few minutes, into $(OUTPUT)/bench/results
.PHONY: bench-peers bench-peers-quick

PEERS_BINS := $(OUTPUT)/bench/udp_pingpong $(OUTPUT)/bench/afxdp_raw

# The bench rule tracks the library's headers only; these two share
# bench/peers_common.h.
$(PEERS_BINS): bench/peers_common.h

bench-peers:
	$(Q)$(MAKE) all $(PEERS_BINS)
	$(Q)OUTPUT=$(OUTPUT) bench/peers.sh --out bench/results

bench-peers-quick:
	$(Q)$(MAKE) all $(PEERS_BINS)
	$(Q)OUTPUT=$(OUTPUT) bench/peers.sh --quick --out $(OUTPUT)/bench/results
