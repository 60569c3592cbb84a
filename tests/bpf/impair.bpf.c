// SPDX-License-Identifier: GPL-2.0
/*
 * impair.bpf.c - the fault-injection harness's impairment program (tests/
 * fault.h).  Attached with tc clsact, direct action, to the ingress of both
 * interfaces of the middle namespace M (A <-> M <-> B): every frame
 * arriving from A leaves towards B and vice versa (bpf_redirect), so M is a
 * transparent wire.  xdpwake frames (our EtherType, or IPv4/UDP with our
 * port) of the configured types are impaired on the way: blackhole, drop
 * (list, random, Gilbert-Elliott), duplication, one-bit corruption,
 * truncation (and, with tcp_port set, TCP segments of that port, for the
 * benchmarks' comparison with TCP); with the relay on for the direction they are redirected into
 * the relay's pipe instead (delay and reordering in user space).  Layouts
 * in tests/lib/fault_maps.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <linux/tcp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdpwake/proto.h"
#include "../lib/fault_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct xwf_dir);
} xwf_dirs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct xwf_counters);
} xwf_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xwf_global);
} xwf_global SEC(".maps");

/* Draw numbers: one independent stream per decision. */
enum { R_DROP, R_GE, R_CORRUPT, R_BIT, R_TRUNC, R_TLEN, R_DUP };

static __always_inline __u64 mix64(__u64 z)
{
	/* splitmix64 finaliser */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static __always_inline __u32 draw(__u64 seed, __u32 dir, __u64 index, __u32 k)
{
	return (__u32)mix64(seed + 0x9E3779B97F4A7C15ULL * (index * 16 + k + 1) +
			    ((__u64)dir << 56));
}

/* p in 1/65536 */
static __always_inline int hit(__u32 r, __u32 p)
{
	return (r & 0xFFFF) < p;
}

#define CNT(c, f) __sync_fetch_and_add(&(c)->f, 1)

SEC("tc")
int xwf_impair(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct xwf_global *g;
	struct xwf_counters *c;
	struct xwf_dir *d;
	struct xwf_cfg cfg;
	__u32 zero = 0, dir, out, xw, len, type, r;
	__u16 proto;
	__u64 index, now;
	__u32 ge_bad = 0;
	int ours = 0, tcp = -1;

	g = bpf_map_lookup_elem(&xwf_global, &zero);
	if (!g)
		return TC_ACT_SHOT;
	if (skb->ingress_ifindex == g->ifindex[0])
		dir = XWF_A_TO_B;
	else if (skb->ingress_ifindex == g->ifindex[1])
		dir = XWF_B_TO_A;
	else
		return TC_ACT_OK;
	out = g->ifindex[dir ^ 1];
	c = bpf_map_lookup_elem(&xwf_counters, &dir);
	d = bpf_map_lookup_elem(&xwf_dirs, &dir);
	if (!c || !d)
		return TC_ACT_SHOT;

	/* Ours?  Ethernet (+ one VLAN tag left in the frame), EtherType or
	 * IPv4/UDP with our port at either end. */
	xw = sizeof(*eth);
	if ((void *)(eth + 1) > end)
		goto other;
	proto = eth->h_proto;
	if (proto == bpf_htons(0x8100) || proto == bpf_htons(0x88A8)) {
		__be16 *inner = (void *)(eth + 1) + 2;

		if ((void *)(inner + 1) > end)
			goto other;
		proto = *inner;
		xw += 4;
	}
	if (proto == bpf_htons(g->ethertype)) {
		ours = 1;
	} else if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data + xw;
		struct udphdr *udp;
		__u32 ihl;

		if ((void *)(ip + 1) > end || (ip->frag_off & bpf_htons(0x1FFF)))
			goto other;
		ihl = ip->ihl * 4;
		if (ihl < sizeof(*ip) || ihl > 60)
			goto other;
		if (ip->protocol == IPPROTO_TCP && g->tcp_port) {
			struct tcphdr *th = (void *)ip + ihl;
			__u32 thl;

			if ((void *)(th + 1) > end ||
			    (th->dest != bpf_htons(g->tcp_port) && th->source != bpf_htons(g->tcp_port)))
				goto other;
			thl = th->doff * 4;
			tcp = bpf_ntohs(ip->tot_len) > ihl + thl ? XWF_TCP_DATA : XWF_TCP_CTL;
			xw += ihl + thl;
			ours = 1;
			goto matched;
		}
		if (ip->protocol != IPPROTO_UDP)
			goto other;
		udp = (void *)ip + ihl;
		if ((void *)(udp + 1) > end)
			goto other;
		if (udp->dest != bpf_htons(g->udp_port) && udp->source != bpf_htons(g->udp_port))
			goto other;
		xw += ihl + sizeof(*udp);
		ours = 1;
	}
matched:
	if (!ours)
		goto other;
	CNT(c, seen);
	if (tcp >= 0) {
		type = tcp;
	} else {
		__u8 *tp = data + xw + 1;

		if ((void *)(tp + 1) > end)
			type = 0;
		else
			type = *tp;
	}
	len = skb->len;

	/* Config, frame number and Gilbert-Elliott state under the lock. */
	bpf_spin_lock(&d->lock);
	__builtin_memcpy(&cfg, &d->cfg, sizeof(cfg));
	if (cfg.type_mask && (type >= 32 || !(cfg.type_mask & (1u << type)))) {
		bpf_spin_unlock(&d->lock);
		goto pass;
	}
	index = d->index++;
	if (cfg.ge_p_gb) {
		r = draw(g->seed, dir, index, R_GE);
		if (!d->ge_bad && hit(r, cfg.ge_p_gb))
			d->ge_bad = 1;
		else if (d->ge_bad && hit(r, cfg.ge_p_bg))
			d->ge_bad = 0;
		ge_bad = d->ge_bad;
	}
	bpf_spin_unlock(&d->lock);
	CNT(c, matched);

	/* Blackhole */
	now = bpf_ktime_get_ns();
	if (cfg.bh_end_ns > cfg.bh_start_ns && now >= cfg.bh_start_ns && now < cfg.bh_end_ns)
		goto blackhole;
	if (cfg.bh_period_ns && cfg.bh_on_ns && now >= cfg.bh_base_ns &&
	    (now - cfg.bh_base_ns) % cfg.bh_period_ns < cfg.bh_on_ns)
		goto blackhole;

	/* Drop: the list, then random (good / bad state). */
	for (__u32 i = 0; i < XWF_DROP_LIST_MAX; i++) {
		if (i >= cfg.ndrop)
			break;
		if (cfg.drop_idx[i] == index) {
			CNT(c, dropped_list);
			CNT(c, dropped);
			return TC_ACT_SHOT;
		}
	}
	if (index - cfg.drop_first < cfg.drop_n) {
		CNT(c, dropped_list);
		CNT(c, dropped);
		return TC_ACT_SHOT;
	}
	r = draw(g->seed, dir, index, R_DROP);
	if (ge_bad) {
		if (hit(r, cfg.ge_drop_bad)) {
			CNT(c, dropped_bad);
			CNT(c, dropped);
			return TC_ACT_SHOT;
		}
	} else if (hit(r, cfg.drop_p)) {
		CNT(c, dropped);
		return TC_ACT_SHOT;
	}

	if (g->relay_on[dir] && g->pipe[dir])
		out = g->pipe[dir];

	/* Duplicate: the clean copy goes first. */
	if (hit(draw(g->seed, dir, index, R_DUP), cfg.dup_p)) {
		if (bpf_clone_redirect(skb, out, 0) == 0)
			CNT(c, duplicated);
		else
			CNT(c, errors);
	}

	/* Corrupt one bit at or after xw + corrupt_off. */
	if (hit(draw(g->seed, dir, index, R_CORRUPT), cfg.corrupt_p)) {
		__u32 from = xw + cfg.corrupt_off, bits, bit, off;
		__u8 b;

		if (from < len && from < 0xFFFF && len < 0x10000) {
			bits = (len - from) * 8;
			bit = from * 8 + draw(g->seed, dir, index, R_BIT) % bits;
			off = bit / 8;
			if (off < 0xFFFF && bpf_skb_load_bytes(skb, off, &b, 1) == 0) {
				b ^= (__u8)(1u << (bit % 8));
				if (bpf_skb_store_bytes(skb, off, &b, 1, BPF_F_RECOMPUTE_CSUM) == 0) {
					CNT(c, corrupted);
					c->last_bit = bit;
				} else {
					CNT(c, errors);
				}
			} else {
				CNT(c, errors);
			}
		}
	}

	/* Truncate to [xw + 1, len - 1]. */
	if (hit(draw(g->seed, dir, index, R_TRUNC), cfg.trunc_p) && len >= xw + 2) {
		__u32 nl = xw + 1 + draw(g->seed, dir, index, R_TLEN) % (len - xw - 1);

		if (bpf_skb_change_tail(skb, nl, 0) == 0) {
			CNT(c, truncated);
			c->last_trunc = nl;
		} else {
			CNT(c, errors);
		}
	}
	if (out == g->pipe[dir])
		CNT(c, relayed);
	return bpf_redirect(out, 0);

pass:
	if (g->relay_on[dir] && g->pipe[dir]) {
		CNT(c, relayed);
		return bpf_redirect(g->pipe[dir], 0);
	}
	return bpf_redirect(out, 0);
blackhole:
	CNT(c, blackholed);
	return TC_ACT_SHOT;
other:
	CNT(c, other);
	return bpf_redirect(out, 0);
}

char LICENSE[] SEC("license") = "GPL";
