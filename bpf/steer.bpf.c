// SPDX-License-Identifier: GPL-2.0
/*
 * steer.bpf.c - tests and benchmarks only: the veth test path's stand-in
 * for a NIC's n-tuple rules "UDP/IPv4 destination port udp_port + q -> RX
 * queue q" (`xdpwake steer`).
 *
 * On veth a frame lands on the peer's RX queue equal to the TX queue it was
 * sent on, and an AF_XDP sender transmits on its own queue: nothing steers
 * by destination.  tests/mpi/hosts.sh's `bridge` set-up joins the hosts
 * through a bridge in the root namespace; this program, attached at tc
 * ingress (clsact, direct action) of every bridge port, records the
 * destination queue as the frame's RX queue (skb->queue_mapping = q + 1).
 * The bridge's transmit towards the destination host's veth picks its TX
 * queue from the recorded RX queue (skb_tx_hash: queue_mapping - 1), and
 * veth delivers on the peer's RX queue of that number.  Everything else
 * passes untouched (its queue_mapping too).  Loaded by tests/mpi/steer.c.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdpwake/proto.h"

/* Set by the loader before the program is loaded. */
const volatile __u32 xws_base = XW_DEFAULT_UDP_PORT; /* udp_port (queue 0's port) */
const volatile __u32 xws_queues = 1;		      /* ports base .. base+queues-1 */

/* Frames steered to queue q (key q), and frames of ours out of range. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XW_MAX_QUEUES + 1);
	__type(key, __u32);
	__type(value, __u64);
} xws_counts SEC(".maps");

SEC("tc")
int xw_steer(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 q, key;
	__u64 *c;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5 ||
	    ip->protocol != IPPROTO_UDP)
		return TC_ACT_OK;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > data_end)
		return TC_ACT_OK;
	q = (__u32)bpf_ntohs(udp->dest) - xws_base;
	if (q >= XW_MAX_QUEUES)
		return TC_ACT_OK;
	key = q < xws_queues ? q : XW_MAX_QUEUES;
	c = bpf_map_lookup_elem(&xws_counts, &key);
	if (c)
		__sync_fetch_and_add(c, 1);
	if (q < xws_queues)
		skb->queue_mapping = q + 1;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
