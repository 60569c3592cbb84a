// SPDX-License-Identifier: GPL-2.0
/*
 * bench_pass.bpf.c - the cheapest possible XDP program: pass every frame.
 * bench/xdp_cost.c measures it next to the wake engine as the baseline
 * (the fixed cost of BPF_PROG_TEST_RUN and of running any XDP program).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bench_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
