// SPDX-License-Identifier: GPL-2.0
/*
 * warm.bpf.c - the first turn of a new AF_XDP socket's receive ring, taken
 * before the socket is used (port.c, port_warm): run with BPF_PROG_TEST_RUN
 * in live-frames mode on the socket's interface and queue, it redirects
 * every test frame to the one socket in its private XSKMAP, so that the
 * kernel copies a frame into each receive frame of the UMEM once, on the
 * real receive path.  Not attached to any interface.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} warm_xsk SEC(".maps");

SEC("xdp")
int xw_warm(struct xdp_md *ctx)
{
	return bpf_redirect_map(&warm_xsk, 0, XDP_DROP);
}

char LICENSE[] SEC("license") = "GPL";
