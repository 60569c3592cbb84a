/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * match.h - matching (match.c), beside the message layer: the posted and
 * unexpected queues (struct xwi_engine: posted, unexp, next_claim; the
 * links xwi_req_priv.qlink and rmsg.ulink).  The message layer calls
 * these; the engine's entry points (xwi_engine_irecv*, xwi_engine_peek,
 * xwi_engine_has_unexpected, engine.c) check their arguments and call the
 * xwi_match_recv* / peek functions below.
 */
#ifndef XWI_MATCH_H
#define XWI_MATCH_H

#include "engine_int.h"

static inline void xwi_match_init(struct xwi_engine *e)
{
	xl_init(&e->posted);
	xl_init(&e->unexp);
}

/* The entry points' work, their arguments checked (engine.c): a receive
 * takes the oldest unexpected message it matches, or is posted. */
int xwi_match_recv(struct xwi_engine *e, void *buf, size_t len, __u64 match, __u64 mask,
		   const struct xw_addr *src, struct xw_request **reqp);
/* xwi_engine_peek() */
int xwi_match_peek(struct xwi_engine *e, __u64 match, __u64 mask, const struct xw_addr *src,
		   bool claim, struct xw_status *st, __u64 *claim_id);
/* xwi_engine_irecv_claimed() */
int xwi_match_recv_claimed(struct xwi_engine *e, __u64 claim_id, void *buf, size_t len,
			   struct xw_request **reqp);
/* xwi_engine_has_unexpected() */
bool xwi_match_has_unexpected(const struct xwi_engine *e);

/* The oldest posted receive that takes a message with match @match from
 * @from, taken out of the posted queue; NULL if none. */
struct xw_request *xwi_match_posted(struct xwi_engine *e, __u64 match,
				    const struct xw_addr *from);
/* Would a posted receive take it?  (Nothing changes.) */
bool xwi_match_would(const struct xwi_engine *e, __u64 match, const struct xw_addr *from);
/* The connection with @p was given up (RM_GIVEUP): receives posted for
 * messages from @p only (directed), which no other sender can satisfy,
 * complete with @err instead of waiting for a peer that is gone.  Receives
 * for any sender stay posted, and so do messages of @p already held. */
void xwi_match_fail_directed(struct xwi_engine *e, const struct peer *p, int err);
/* @m (eligible, no receive took it) joins the unexpected queue. */
void xwi_match_unexpected(struct xwi_engine *e, struct rmsg *m);

/* @m leaves the unexpected queue (if in it): matched or freed. */
static inline void xwi_match_forget(struct rmsg *m)
{
	xl_del(&m->ulink);
}

/* Receive @r leaves the posted queue (cancelled or aborted unmatched). */
static inline void xwi_match_unpost(struct xwi_req_priv *r)
{
	xl_del(&r->qlink);
}

#endif
