// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * op.c - an endpoint's posted operations: every send and receive is an op
 * on the endpoint's list, in post order; progress (xwfi_ep_progress, from
 * CQ and counter reads through the endpoint's struct xwfi_epref, and from
 * the FI_PROGRESS_AUTO thread) runs the library once and turns completed
 * requests into completions, reported to the endpoint's CQs and counters
 * through their completion-report interface (xwfi_cq_push,
 * xwfi_cntr_inc).  Also the match values of FI_MSG and FI_TAGGED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ep.h"

void xwfi_op_link(struct xwfi_ep *ep, struct xwfi_op *op)
{
	op->prev = ep->ops.prev;
	op->next = &ep->ops;
	ep->ops.prev->next = op;
	ep->ops.prev = op;
	xwfi_ep_touched(ep);
}

void xwfi_ep_touched(struct xwfi_ep *ep)
{
	__atomic_store_n(&ep->walk_due, true, __ATOMIC_RELEASE);
}

void xwfi_op_unlink(struct xwfi_op *op)
{
	op->prev->next = op->next;
	op->next->prev = op->prev;
}

/* The endpoint keeps this many finished ops for its next posts (the
 * domain lock held): a ping-pong's post allocates nothing. */
#define XWFI_OP_SPARES 64

struct xwfi_op *xwfi_op_new(struct xwfi_ep *ep, enum xwfi_op_kind kind, void *ctx,
			    uint64_t cqflags, bool comp)
{
	struct xwfi_op *op = ep->spare;

	if (op) {
		ep->spare = op->next;
		ep->nspare--;
		memset(op, 0, sizeof(*op));
	} else {
		op = calloc(1, sizeof(*op));
	}
	if (op) {
		op->kind = kind;
		op->ctx = ctx;
		op->cqflags = cqflags;
		op->comp = comp;
	}
	return op;
}

void xwfi_op_free(struct xwfi_ep *ep, struct xwfi_op *op)
{
	if (!op)
		return;
	if (ep->nspare >= XWFI_OP_SPARES) {
		free(op);
		return;
	}
	op->next = ep->spare;
	ep->spare = op;
	ep->nspare++;
}

/* ---- completions ----------------------------------------------------------- */

fi_addr_t xwfi_ep_src_of(struct xwfi_ep *ep, const struct xw_addr *a)
{
	return xwfi_av_reverse(ep->av, a);
}

int xwfi_ep_src_lookup(struct xwfi_ep *ep, fi_addr_t src, bool *has_src, struct xw_addr *a)
{
	*has_src = false;
	if (src == FI_ADDR_UNSPEC || !(ep->caps & FI_DIRECTED_RECV))
		return 0;
	if (xwfi_av_lookup_addr(ep->av, src, a))
		return -FI_EINVAL;
	*has_src = true;
	return 0;
}

void xwfi_op_complete(struct xwfi_ep *ep, struct xwfi_op *op, const struct xw_status *st)
{
	bool recv = op->kind == XWFI_OP_RECV;
	struct xwfi_cq *cq = recv ? ep->rcq : ep->tcq;
	int err = st->error;
	struct xwfi_cqe e = {
		.ctx = op->ctx,
		.flags = op->cqflags,
		.src = FI_ADDR_NOTAVAIL,
	};

	if (op->discard && err == -EMSGSIZE)
		err = 0;
	FI_TRACE(&xwfi_prov, FI_LOG_EP_DATA, "%s done: %zu bytes match %#llx error %d%s\n",
		 recv ? "recv" : "send", st->len, (unsigned long long)st->match, err,
		 op->comp ? "" : " (no completion)");
	if (recv) {
		e.len = op->discard ? 0 : st->len;
		e.buf = op->buf;
		e.tag = (op->cqflags & FI_TAGGED) ? st->match : 0;
		e.src = xwfi_ep_src_of(ep, &st->src);
		if (st->has_data) {
			e.flags |= FI_REMOTE_CQ_DATA;
			e.data = st->data;
		}
	}
	xwfi_cntr_inc(recv ? ep->rcntr : ep->tcntr, err != 0);
	if (err) {
		e.err = -xwfi_err(err);
		e.prov_errno = err;
		if (err == -EMSGSIZE)
			e.olen = st->msg_len - st->len;
		/* an operation posted with a NULL context still reports its
		 * error (with that context) */
		if (cq && !op->silent)
			xwfi_cq_push(cq, &e);
		if (op->silent)
			FI_WARN(&xwfi_prov, FI_LOG_EP_DATA, "%s failed: %s\n",
				recv ? "discard" : "inject", xw_strerror(err));
		return;
	}
	if (cq && op->comp)
		xwfi_cq_push(cq, &e);
}

__u64 xwfi_ep_peers_unacked(struct xwfi_ep *ep)
{
	XW_OPTS(xw_endpoint_stats, st);

	return xw_endpoint__stats(ep->ref.xep, &st) ? 0 : st.peers_unacked;
}

/* @op's library request, if it has one, is done: its status taken. */
static bool op_collect(struct xwfi_op *op)
{
	if (op->req) {
		if (xw_request__done(op->req) != 1)
			return false;
		op->st.sz = sizeof(op->st);
		xw_request__test(op->req, &op->st);
		op->req = NULL;
	}
	return true;
}

/* A send the library completed as it was posted (an eager one: copied or
 * on its peer's ring) completes at once, not at the next progress pass:
 * the CQ read that waits for it finds it queued, without a pass and a
 * walk of the posted operations.  One held for its acknowledgement
 * (FI_TRANSMIT_COMPLETE) is left to the walk.  False: @op still waits. */
bool xwfi_op_complete_now(struct xwfi_ep *ep, struct xwfi_op *op)
{
	if (op->acked || !op_collect(op))
		return false;
	xwfi_op_complete(ep, op, &op->st);
	xwfi_op_free(ep, op);
	return true;
}

int xwfi_ep_progress(struct xwfi_ep *ep)
{
	struct xwfi_op *op, *next;
	__u64 unacked = UINT64_MAX; /* not asked yet */
	int frames;

	if (!ep->ref.xep)
		return 0;
	frames = xw_endpoint__progress(ep->ref.xep);
	/* The pass count before the walk: a pass of another thread that
	 * completes a request during the walk moves it past ep->walked. */
	__atomic_store_n(&ep->walked, xw_endpoint__passes(ep->ref.xep), __ATOMIC_RELAXED);
	__atomic_store_n(&ep->walk_due, false, __ATOMIC_RELAXED);
	for (op = ep->ops.next; op != &ep->ops; op = next) {
		next = op->next;
		if (!op_collect(op))
			continue;
		/* FI_TRANSMIT_COMPLETE: held until acknowledged */
		if (op->acked && !op->st.error) {
			if (unacked == UINT64_MAX)
				unacked = xwfi_ep_peers_unacked(ep);
			if (unacked) {
				__atomic_store_n(&ep->walk_due, true, __ATOMIC_RELAXED);
				continue;
			}
		}
		xwfi_op_unlink(op);
		xwfi_op_complete(ep, op, &op->st);
		xwfi_op_free(ep, op);
	}
	return frames > 0 ? frames : 0;
}

int xwfi_ep_ref_progress(struct xwfi_epref *ref)
{
	return xwfi_ep_progress(container_of(ref, struct xwfi_ep, ref));
}

/*
 * A request completes only in a library pass (whoever's thread makes it)
 * or in a call that posts or cancels one - that request or another: a
 * send's transmit round also sends what earlier sends left queued, and
 * the send whose last frame goes completes then (every such call marks
 * the walk due: xwfi_ep_touched).  So with no op linked or held and no
 * such call since the last walk, no pass since (the library's pass count
 * as the walk read it) and none due (no frame waiting, no timer due,
 * nothing to transmit), a pass and a walk would find nothing.  A post, a
 * frame or another thread's pass racing this check is seen by the next
 * call.
 */
bool xwfi_ep_ref_idle(struct xwfi_epref *ref)
{
	struct xwfi_ep *ep = container_of(ref, struct xwfi_ep, ref);
	struct xw_endpoint *xep = __atomic_load_n(&ref->xep, __ATOMIC_ACQUIRE);

	if (!xep)
		return true;
	return !__atomic_load_n(&ep->walk_due, __ATOMIC_ACQUIRE) &&
	       xw_endpoint__passes(xep) == __atomic_load_n(&ep->walked, __ATOMIC_RELAXED) &&
	       !xw_endpoint__pass_due(xep);
}

/* Whoever sleeps on the endpoint's CQs and counters makes a pass: the
 * completion of an operation just posted may be there without a frame (an
 * eager send, a receive that matched a message already in). */
void xwfi_ep_kick(struct xwfi_ep *ep)
{
	if (ep->tcq)
		xwfi_wset_kick(&ep->tcq->ws);
	if (ep->rcq && ep->rcq != ep->tcq)
		xwfi_wset_kick(&ep->rcq->ws);
	if (ep->tcntr)
		xwfi_wset_kick(&ep->tcntr->ws);
	if (ep->rcntr && ep->rcntr != ep->tcntr)
		xwfi_wset_kick(&ep->rcntr->ws);
}

/* ---- matching values --------------------------------------------------------- */

uint64_t xwfi_send_match(const struct xwfi_ep *ep, bool tagged, uint64_t tag)
{
	if (!tagged)
		return XWFI_MSG_BIT;
	return (ep->caps & FI_MSG) ? tag & ~XWFI_MSG_BIT : tag;
}

void xwfi_recv_match(const struct xwfi_ep *ep, bool tagged, uint64_t tag, uint64_t ignore,
		     uint64_t *match, uint64_t *mask)
{
	if (!tagged) {
		*match = XWFI_MSG_BIT;
		*mask = ~0ULL;
		return;
	}
	*mask = ~ignore;
	*match = tag & ~ignore;
	if (ep->caps & FI_MSG) {
		*mask |= XWFI_MSG_BIT;
		*match &= ~XWFI_MSG_BIT;
	}
}
