/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The in-memory link of the engine tests and of the engine fuzzer: protocol
 * engines (userspace/lib/engine.h) joined by per-node inbound frame queues,
 * no socket, no clock.  The test supplies the engine's ops (its send
 * callback decides what the link does to a frame: check it, drop, corrupt,
 * duplicate, reorder, then xwt_lq_push() it to the destination's queue) and
 * delivers queued frames to xwi_engine_rx() itself.
 *
 * Plain C on engine.h only (no harness, no libbpf): errors come back as
 * -errno, so the fuzz build (mk/fuzz.mk) compiles it with its own flags.
 */
#ifndef XWT_LINK_H
#define XWT_LINK_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

/* One frame on the link: the header, a copy of the payload, who sent it. */
struct xwt_lframe {
	struct xw_hdr h;
	unsigned char *pl; /* malloc'ed copy, never NULL while queued */
	size_t len;
	int src;	   /* the sending node (or another index of the test's) */
	bool hurt;	   /* damaged on the way (corrupted, truncated)        */
};

/* A node's inbound queue: a ring over the caller's @size slots; frames keep
 * their order, position 0 is the next to deliver. */
struct xwt_lq {
	struct xwt_lframe *f;
	size_t size, head, n;
};

void xwt_lq_init(struct xwt_lq *q, struct xwt_lframe *slots, size_t size);
/* Append a copy of the frame; -ENOSPC when all slots are taken, -ENOMEM. */
int xwt_lq_push(struct xwt_lq *q, const struct xw_hdr *h, const void *pl, size_t len, int src);
/* The frame at position @i (< q->n). */
struct xwt_lframe *xwt_lq_at(struct xwt_lq *q, size_t i);
/* Take the frame at position @i out (the caller frees its payload). */
struct xwt_lframe xwt_lq_take(struct xwt_lq *q, size_t i);
/* Put @f in at position @i (<= q->n; later frames move back); -ENOSPC. */
int xwt_lq_insert(struct xwt_lq *q, size_t i, const struct xwt_lframe *f);
/* Free every queued frame. */
void xwt_lq_drop(struct xwt_lq *q);
/* A copy of @f with its own payload (for duplicates); -ENOMEM. */
int xwt_lframe_dup(struct xwt_lframe *out, const struct xwt_lframe *f);

/* Byte @i of the payload pattern @seed (never all-equal): the engine tests'
 * and the fuzzer's messages. */
__u8 xwt_link_pat(__u32 seed, size_t i);

/* The address of node @i: 02:00:00:00:00:<0x10 + i>, endpoint @ep. */
void xwt_link_addr(struct xw_addr *a, int i, __u16 ep);

#endif
