// SPDX-License-Identifier: GPL-2.0
/*
 * afxdp_raw.bpf.c - the smallest useful AF_XDP redirect: frames of one
 * EtherType (AFXDP_RAW_ETHERTYPE, a local-experimental one distinct from
 * xdpwake's) go to the AF_XDP socket of the queue they arrived on; anything
 * else passes untouched.  No header parsing beyond Ethernet, no wake
 * decision, no counters: bench/afxdp_raw.c uses it to measure the software
 * floor of the AF_XDP path that xdpwake builds on.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AFXDP_RAW_ETHERTYPE 0x88B6

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} raw_xsks SEC(".maps");

SEC("xdp")
int afxdp_raw(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(AFXDP_RAW_ETHERTYPE))
		return XDP_PASS;
	return bpf_redirect_map(&raw_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "GPL";
