/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The network of the engine tests (test_engine_msg, test_engine_rel):
 * up to XWT_MAXN nodes, each a protocol engine with an address and an
 * inbound queue on the in-memory link (link.h), a record of every frame
 * sent, the payload pattern the tests check byte for byte, and the checks
 * both make on a node.  Each test brings its own send callback (what the
 * link does to a frame) and its own pump.
 */
#ifndef XWT_ENGINE_NET_H
#define XWT_ENGINE_NET_H

#include "harness.h"
#include "link.h"

#define XWT_MAXN 5
#define XWT_RING 8192 /* frames a node's inbound queue can hold */
#define XWT_GUARD 64  /* guard bytes (0xA5) after every receive buffer */

struct xwt_node {
	int id;
	struct xwi_engine *e;
	struct xwi_engine_cfg cfg;
	struct xw_addr addr;
	struct xwt_lq q;
	struct xwt_lframe slots[XWT_RING];
	size_t cap; /* frames queued before the send callback says -EAGAIN */
};

/* One frame sent, as recorded by the send callbacks. */
struct xwt_logent {
	int src, dst;
	struct xw_hdr h;
	__u32 pull_block, pull_nfrags;
};

extern struct xwt_node xwt_nodes[XWT_MAXN];
extern int xwt_nnodes;
extern struct xwt_logent *xwt_flog;
extern size_t xwt_nlog;

/* Node @i with @cfg on the link: its address (xwt_link_addr), an empty
 * queue of @cap frames, a new engine with @ops (its ctx: the node). */
void xwt_node_start(int i, const struct xwi_engine_cfg *cfg, const struct xwi_engine_ops *ops,
		    size_t cap);
/* The node with address @a, or -1. */
int xwt_node_of(const struct xw_addr *a);
/* Record a frame from @s to @d; returns its entry. */
struct xwt_logent *xwt_log_add(int s, int d, const struct xw_hdr *h);
void xwt_log_free(void);
/* Take the next frame of node @d's queue (the caller frees its payload). */
struct xwt_lframe xwt_qpop(int d);
/* Free every frame queued for node @d. */
void xwt_drop_queue(int d);
struct xwi_engine_stats xwt_node_stats(int i);
/* Node @i holds no more unexpected and pushed bytes than configured. */
void xwt_bounds_check(int i);

/* The payload pattern (xwt_link_pat): fill a buffer, find the first wrong
 * byte (-1: none); the guard after a buffer intact? */
void xwt_epat_fill(unsigned char *b, size_t len, __u32 seed);
long xwt_epat_verify(const unsigned char *b, size_t len, __u32 seed);
bool xwt_guard_ok(const unsigned char *b);

#endif
