// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ep.c - the FI_EP_RDM endpoint: one xdpwake endpoint (xw_endpoint__open on
 * the domain's interface), FI_MSG and FI_TAGGED send/receive, inject,
 * directed receives (FI_DIRECTED_RECV: xw_endpoint__irecv_opts with a
 * source), FI_PEEK / FI_CLAIM / FI_DISCARD (xw_endpoint__peek and
 * xw_endpoint__irecv_claimed), fi_cancel of posted receives, and sends to
 * the endpoint's own address (matched here: a frame to our own MAC would
 * leave through the interface and not come back).
 *
 * Every posted operation is an `op` on the endpoint's list, in post order;
 * progress (xwfi_ep_progress, from CQ and counter reads) runs the library
 * once and turns completed requests into completions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>

#include "xwfi.h"

enum op_kind { OP_SEND, OP_RECV };

struct op {
	struct op *next, *prev;
	struct xw_request *req;
	enum op_kind kind;
	void *ctx;
	uint64_t cqflags;	/* FI_SEND/FI_RECV | FI_MSG/FI_TAGGED */
	bool comp;		/* write a completion on success */
	bool silent;		/* no completion, not even an error: an inject, or
				 * the discard behind a peek's completion */
	bool acked;		/* FI_TRANSMIT_COMPLETE: complete once the peers
				 * acknowledged what was sent (req NULL and st set
				 * meanwhile) */
	struct xw_status st;
	bool discard;		/* FI_CLAIM | FI_DISCARD: no data, no truncation */
	void *buf;
	size_t len;
	/* receives */
	uint64_t rmatch, mask;
	bool has_src;
	struct xw_addr src;
};

/* A message sent to ourselves that no receive took yet. */
struct smsg {
	struct smsg *next;
	uint64_t match;
	bool has_data;
	__u32 cqdata;
	void *data;
	size_t len;
	bool claimed;
};

/* A message set aside by FI_PEEK | FI_CLAIM, taken by FI_CLAIM with the
 * same context. */
struct claim {
	struct claim *next;
	void *ctx;
	struct smsg *sm;	/* a message to ourselves, or */
	__u64 id;		/* the library's claim */
};

struct xwfi_ep {
	struct fid_ep ep;
	struct xwfi_domain *dom;
	struct xw_endpoint *xep;
	struct xw_addr self;
	struct xwfi_av *av;
	struct xwfi_cq *tcq, *rcq;
	bool tsel, rsel;	/* FI_SELECTIVE_COMPLETION */
	struct xwfi_cntr *tcntr, *rcntr;
	uint64_t caps, tx_flags, rx_flags;
	bool enabled;
	struct op ops;		/* list head */
	struct smsg *selfq;
	struct claim *claims;
};

struct xw_endpoint *xwfi_ep_xw(struct xwfi_ep *ep)
{
	return ep->xep;
}

struct xw_request *xwfi_ep_wait_req(struct xwfi_ep *ep)
{
	for (struct op *op = ep->ops.next; op != &ep->ops; op = op->next)
		if (op->req)
			return op->req;
	return NULL;
}

static void op_link(struct xwfi_ep *ep, struct op *op)
{
	op->prev = ep->ops.prev;
	op->next = &ep->ops;
	ep->ops.prev->next = op;
	ep->ops.prev = op;
}

static void op_unlink(struct op *op)
{
	op->prev->next = op->next;
	op->next->prev = op->prev;
}

/* ---- completions ----------------------------------------------------------- */

static fi_addr_t src_of(struct xwfi_ep *ep, const struct xw_addr *a)
{
	return xwfi_av_reverse(ep->av, a);
}

/* Report @op finished with @st (st->error: 0 or a negative errno). */
static void op_complete(struct xwfi_ep *ep, struct op *op, const struct xw_status *st)
{
	bool recv = op->kind == OP_RECV;
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
		e.src = src_of(ep, &st->src);
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

/* Peers that something sent to is not acknowledged by yet. */
static __u64 peers_unacked(struct xwfi_ep *ep)
{
	XW_OPTS(xw_endpoint_stats, st);

	return xw_endpoint__stats(ep->xep, &st) ? 0 : st.peers_unacked;
}

int xwfi_ep_progress(struct xwfi_ep *ep)
{
	struct op *op, *next;
	__u64 unacked = UINT64_MAX; /* not asked yet */
	int frames;

	if (!ep->xep)
		return 0;
	frames = xw_endpoint__progress(ep->xep);
	for (op = ep->ops.next; op != &ep->ops; op = next) {
		next = op->next;
		if (op->req) {
			if (xw_request__done(op->req) != 1)
				continue;
			xw_request__test(op->req, &op->st);
			op->req = NULL;
		}
		/* FI_TRANSMIT_COMPLETE: held until acknowledged */
		if (op->acked && !op->st.error) {
			if (unacked == UINT64_MAX)
				unacked = peers_unacked(ep);
			if (unacked)
				continue;
		}
		op_unlink(op);
		op_complete(ep, op, &op->st);
		free(op);
	}
	return frames > 0 ? frames : 0;
}

void xwfi_ep_kick(struct xwfi_ep *ep)
{
	xwfi_wset_kick_ep(ep->tcq, ep->rcq, ep->tcntr, ep->rcntr);
}

/* ---- matching values --------------------------------------------------------- */

static uint64_t send_match(const struct xwfi_ep *ep, bool tagged, uint64_t tag)
{
	if (!tagged)
		return XWFI_MSG_BIT;
	return (ep->caps & FI_MSG) ? tag & ~XWFI_MSG_BIT : tag;
}

static void recv_match(const struct xwfi_ep *ep, bool tagged, uint64_t tag, uint64_t ignore,
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

static bool matches(uint64_t match, uint64_t mask, uint64_t m)
{
	return (m & mask) == (match & mask);
}

/* ---- sends to ourselves -------------------------------------------------------- */

static void self_deliver(struct xwfi_ep *ep, struct op *op, const void *data, size_t len,
			 uint64_t match, bool has_data, __u32 cqdata)
{
	struct xw_status st = { .msg_len = len, .match = match, .src = ep->self,
				.has_data = has_data, .data = cqdata };

	st.len = op->discard ? 0 : (len < op->len ? len : op->len);
	if (st.len)
		memcpy(op->buf, data, st.len);
	st.error = st.len < len ? -EMSGSIZE : 0;
	op_complete(ep, op, &st);
}

static struct smsg *self_find(struct xwfi_ep *ep, uint64_t match, uint64_t mask,
			      struct smsg ***prevp)
{
	struct smsg **pp;

	for (pp = &ep->selfq; *pp; pp = &(*pp)->next)
		if (!(*pp)->claimed && matches(match, mask, (*pp)->match)) {
			if (prevp)
				*prevp = pp;
			return *pp;
		}
	return NULL;
}

static void smsg_remove(struct xwfi_ep *ep, struct smsg *sm)
{
	for (struct smsg **pp = &ep->selfq; *pp; pp = &(*pp)->next)
		if (*pp == sm) {
			*pp = sm->next;
			free(sm->data);
			free(sm);
			return;
		}
}

/* A message to ourselves: the oldest posted receive that takes it and can
 * still be withdrawn from the library gets it; otherwise it waits. */
static int self_send(struct xwfi_ep *ep, const void *buf, size_t len, uint64_t match,
		     bool has_data, __u32 cqdata)
{
	struct smsg *sm, **tail;

	for (struct op *op = ep->ops.next; op != &ep->ops; op = op->next) {
		if (op->kind != OP_RECV || op->discard || !matches(op->rmatch, op->mask, match))
			continue;
		if (op->has_src && !xw_addr_equal(&op->src, &ep->self))
			continue;
		if (xw_request__cancel(op->req))
			continue; /* a message from the network has it */
		xw_request__test(op->req, NULL);
		op_unlink(op);
		self_deliver(ep, op, buf, len, match, has_data, cqdata);
		free(op);
		return 0;
	}
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return -FI_ENOMEM;
	sm->data = malloc(len ? len : 1);
	if (!sm->data) {
		free(sm);
		return -FI_ENOMEM;
	}
	memcpy(sm->data, buf, len);
	sm->len = len;
	sm->match = match;
	sm->has_data = has_data;
	sm->cqdata = cqdata;
	for (tail = &ep->selfq; *tail; tail = &(*tail)->next)
		;
	*tail = sm;
	return 0;
}

/* ---- posting --------------------------------------------------------------------- */

static struct op *op_new(enum op_kind kind, void *ctx, uint64_t cqflags, bool comp)
{
	struct op *op = calloc(1, sizeof(*op));

	if (op) {
		op->kind = kind;
		op->ctx = ctx;
		op->cqflags = cqflags;
		op->comp = comp;
	}
	return op;
}

static ssize_t do_send(struct xwfi_ep *ep, const void *buf, size_t len, fi_addr_t dest,
		       uint64_t tag, bool tagged, void *ctx, uint64_t flags, bool inject,
		       bool has_data, uint64_t cqdata)
{
	uint64_t cqflags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	uint64_t match = send_match(ep, tagged, tag);
	bool comp = !inject && (!ep->tsel || (flags & FI_COMPLETION));
	struct xw_addr dst;
	struct op *op;
	ssize_t ret = 0;
	int err;

	if (len > XWFI_MAX_MSG || ((inject || (flags & FI_INJECT)) && len > XWFI_INJECT_SIZE))
		return -FI_EMSGSIZE;
	if ((len && !buf) || (has_data && cqdata > XW_DATA_MAX))
		return -FI_EINVAL;
	FI_TRACE(&xwfi_prov, FI_LOG_EP_DATA, "send %zu bytes to %llu match %#llx flags %#llx%s\n",
		 len, (unsigned long long)dest, (unsigned long long)match,
		 (unsigned long long)flags, inject ? " inject" : "");
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	if (xwfi_av_lookup_addr(ep->av, dest, &dst)) {
		ret = -FI_EINVAL;
		goto out;
	}
	op = op_new(OP_SEND, inject ? NULL : ctx, cqflags, comp);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	op->silent = inject;
	op->acked = !inject && (flags & FI_TRANSMIT_COMPLETE);
	if (xw_addr_equal(&dst, &ep->self)) {
		struct xw_status st = { .len = len, .msg_len = len, .match = match };

		err = self_send(ep, buf, len, match, has_data, (__u32)cqdata);
		if (err) {
			free(op);
			ret = err;
			goto out;
		}
		op_complete(ep, op, &st);
		free(op);
		goto out;
	}
	{
		XW_OPTS(xw_send_opts, so, .flags = has_data ? XW_SEND_DATA : 0,
			.data = (__u32)cqdata);

		err = xw_endpoint__isend_opts(ep->xep, &dst, buf, len, match, &so, &op->req);
	}
	if (err) {
		free(op);
		if (err == -EAGAIN)
			xwfi_ep_progress(ep);
		ret = xwfi_err(err);
		goto out;
	}
	op_link(ep, op);
out:
	if (!ret)
		xwfi_ep_kick(ep); /* its completion may need no frame */
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static int src_lookup(struct xwfi_ep *ep, fi_addr_t src, bool *has_src, struct xw_addr *a)
{
	*has_src = false;
	if (src == FI_ADDR_UNSPEC || !(ep->caps & FI_DIRECTED_RECV))
		return 0;
	if (xwfi_av_lookup_addr(ep->av, src, a))
		return -FI_EINVAL;
	*has_src = true;
	return 0;
}

static ssize_t do_recv(struct xwfi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		       uint64_t ignore, bool tagged, void *ctx, uint64_t flags)
{
	uint64_t cqflags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	bool comp = !ep->rsel || (flags & FI_COMPLETION);
	struct op *op;
	struct smsg *sm, **pp;
	ssize_t ret = 0;
	int err;

	if (len && !buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	op = op_new(OP_RECV, ctx, cqflags, comp);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	op->buf = buf;
	op->len = len;
	recv_match(ep, tagged, tag, ignore, &op->rmatch, &op->mask);
	FI_TRACE(&xwfi_prov, FI_LOG_EP_DATA, "recv %zu bytes from %lld match %#llx mask %#llx\n",
		 len, (long long)src, (unsigned long long)op->rmatch, (unsigned long long)op->mask);
	if (src_lookup(ep, src, &op->has_src, &op->src)) {
		free(op);
		ret = -FI_EINVAL;
		goto out;
	}
	if (!op->has_src || xw_addr_equal(&op->src, &ep->self)) {
		sm = self_find(ep, op->rmatch, op->mask, &pp);
		if (sm) {
			self_deliver(ep, op, sm->data, sm->len, sm->match, sm->has_data,
				     sm->cqdata);
			smsg_remove(ep, sm);
			free(op);
			goto out;
		}
	}
	{
		XW_OPTS(xw_recv_opts, ro, .src = op->has_src ? &op->src : NULL);

		err = xw_endpoint__irecv_opts(ep->xep, buf, len, op->rmatch, op->mask, &ro,
					      &op->req);
	}
	if (err) {
		free(op);
		ret = xwfi_err(err);
		goto out;
	}
	op_link(ep, op);
out:
	if (!ret)
		xwfi_ep_kick(ep); /* its completion may need no frame */
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static struct claim *claim_take(struct xwfi_ep *ep, void *ctx)
{
	for (struct claim **pp = &ep->claims; *pp; pp = &(*pp)->next)
		if ((*pp)->ctx == ctx) {
			struct claim *c = *pp;

			*pp = c->next;
			return c;
		}
	return NULL;
}

/* FI_PEEK (with FI_CLAIM or FI_DISCARD): a completion with the envelope of
 * the oldest matching message, or an FI_ENOMSG error completion. */
static ssize_t do_peek(struct xwfi_ep *ep, fi_addr_t src, uint64_t tag, uint64_t ignore,
		       bool tagged, void *ctx, uint64_t flags)
{
	struct xwfi_cqe e = { .ctx = ctx, .flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) };
	uint64_t match, mask;
	struct xw_status st;
	struct xw_addr a;
	bool has_src, found = false;
	struct smsg *sm = NULL;
	struct claim *c = NULL;
	__u64 id = 0;
	ssize_t ret = 0;

	/* FI_CLAIM: the record first, so that a message the library sets
	 * aside always gets one (no allocation failure after the claim) */
	if ((flags & FI_CLAIM) && !(flags & FI_DISCARD) && !(c = calloc(1, sizeof(*c))))
		return -FI_ENOMEM;
	pthread_mutex_lock(&ep->dom->lock);
	recv_match(ep, tagged, tag, ignore, &match, &mask);
	if (src_lookup(ep, src, &has_src, &a)) {
		ret = -FI_EINVAL;
		goto out;
	}
	if (!has_src || xw_addr_equal(&a, &ep->self))
		sm = self_find(ep, match, mask, NULL);
	if (sm) {
		found = true;
		memset(&st, 0, sizeof(st));
		st.msg_len = sm->len;
		st.match = sm->match;
		st.src = ep->self;
	} else {
		XW_OPTS(xw_peek_opts, po, .src = has_src ? &a : NULL,
			.flags = (flags & (FI_CLAIM | FI_DISCARD)) ? XW_PEEK_CLAIM : 0);
		int err = xw_endpoint__peek(ep->xep, match, mask, &po, &st, &id);

		if (err && err != -ENOMSG) {
			ret = xwfi_err(err);
			goto out;
		}
		found = !err;
	}
	if (!found) {
		e.err = FI_ENOMSG;
		e.prov_errno = -ENOMSG;
		if (ep->rcq)
			xwfi_cq_push(ep->rcq, &e);
		goto out;
	}
	e.len = st.msg_len;
	e.tag = tagged ? st.match : 0;
	if (sm ? sm->has_data : st.has_data) {
		e.flags |= FI_REMOTE_CQ_DATA;
		e.data = sm ? sm->cqdata : st.data;
	}
	e.src = sm ? src_of(ep, &ep->self) : src_of(ep, &st.src);
	if (flags & FI_DISCARD) {
		if (sm) {
			smsg_remove(ep, sm);
		} else {
			struct op *op = op_new(OP_RECV, NULL, e.flags, false);
			int err = op ? xw_endpoint__irecv_claimed(ep->xep, id, NULL, 0, &op->req)
				     : -ENOMEM;

			if (op)
				op->silent = true;

			if (err) {
				free(op);
				ret = xwfi_err(err);
				goto out;
			}
			op->discard = true;
			op_link(ep, op);
		}
	} else if (c) {
		c->ctx = ctx;
		c->sm = sm;
		c->id = id;
		if (sm)
			sm->claimed = true;
		c->next = ep->claims;
		ep->claims = c;
		c = NULL;
	}
	if (ep->rcq)
		xwfi_cq_push(ep->rcq, &e);
out:
	pthread_mutex_unlock(&ep->dom->lock);
	free(c);
	return ret;
}

/* FI_CLAIM without FI_PEEK: receive (or with FI_DISCARD drop) the message
 * claimed with this context. */
static ssize_t do_claimed(struct xwfi_ep *ep, void *buf, size_t len, bool tagged, void *ctx,
			  uint64_t flags)
{
	uint64_t cqflags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	struct claim *c;
	struct op *op;
	ssize_t ret = 0;
	int err;

	pthread_mutex_lock(&ep->dom->lock);
	c = claim_take(ep, ctx);
	if (!c) {
		ret = -FI_EINVAL;
		goto out;
	}
	op = op_new(OP_RECV, ctx, cqflags, true);
	if (!op) {
		ret = -FI_ENOMEM;
		free(c);
		goto out;
	}
	op->buf = buf;
	op->len = len;
	op->discard = flags & FI_DISCARD;
	if (c->sm) {
		self_deliver(ep, op, c->sm->data, c->sm->len, c->sm->match, c->sm->has_data,
			     c->sm->cqdata);
		smsg_remove(ep, c->sm);
		free(op);
	} else {
		err = xw_endpoint__irecv_claimed(ep->xep, c->id, op->discard ? NULL : buf,
						 op->discard ? 0 : len, &op->req);
		if (err) {
			free(op);
			ret = xwfi_err(err);
		} else {
			op_link(ep, op);
		}
	}
	free(c);
out:
	if (!ret)
		xwfi_ep_kick(ep); /* its completion may need no frame */
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static struct xwfi_ep *ep_of(struct fid_ep *fep)
{
	return container_of(fep, struct xwfi_ep, ep);
}

static int iov_one(const struct iovec *iov, size_t count, void **buf, size_t *len)
{
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;
	*buf = count ? iov[0].iov_base : NULL;
	*len = count ? iov[0].iov_len : 0;
	return 0;
}

/* ---- FI_MSG ---------------------------------------------------------------------- */

static ssize_t msg_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			void *ctx)
{
	(void)desc;
	return do_recv(ep_of(fep), buf, len, src, 0, 0, false, ctx, ep_of(fep)->rx_flags);
}

static ssize_t msg_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, void *ctx)
{
	void *buf;
	size_t len;

	(void)desc;
	if (iov_one(iov, count, &buf, &len))
		return -FI_EINVAL;
	return do_recv(ep_of(fep), buf, len, src, 0, 0, false, ctx, ep_of(fep)->rx_flags);
}

static ssize_t msg_recvmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!msg || iov_one(msg->msg_iov, msg->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & FI_MULTI_RECV)
		return -FI_EBADFLAGS;
	return do_recv(ep_of(fep), buf, len, msg->addr, 0, 0, false, msg->context, flags);
}

static ssize_t msg_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, void *ctx)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, 0, false, ctx, ep_of(fep)->tx_flags, false, false, 0);
}

static ssize_t msg_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, void *ctx)
{
	void *buf;
	size_t len;

	(void)desc;
	if (iov_one(iov, count, &buf, &len))
		return -FI_EINVAL;
	return do_send(ep_of(fep), buf, len, dest, 0, false, ctx, ep_of(fep)->tx_flags, false, false, 0);
}

static ssize_t msg_sendmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!msg || iov_one(msg->msg_iov, msg->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & XWFI_NO_COMP_LEVELS)
		return -FI_EBADFLAGS; /* completion levels not offered (xwfi.h) */
	return do_send(ep_of(fep), buf, len, msg->addr, 0, false, msg->context, flags, false,
		       flags & FI_REMOTE_CQ_DATA, msg->data);
}

static ssize_t msg_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest)
{
	return do_send(ep_of(fep), buf, len, dest, 0, false, NULL, 0, true, false, 0);
}

static ssize_t msg_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, void *ctx)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, 0, false, ctx, ep_of(fep)->tx_flags, false, true,
		       data);
}

static ssize_t msg_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest)
{
	return do_send(ep_of(fep), buf, len, dest, 0, false, NULL, 0, true, true, data);
}

static struct fi_ops_msg msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};

/* ---- FI_TAGGED ------------------------------------------------------------------- */

static ssize_t t_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, void *ctx)
{
	(void)desc;
	return do_recv(ep_of(fep), buf, len, src, tag, ignore, true, ctx, ep_of(fep)->rx_flags);
}

static ssize_t t_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx)
{
	void *buf;
	size_t len;

	(void)desc;
	if (iov_one(iov, count, &buf, &len))
		return -FI_EINVAL;
	return do_recv(ep_of(fep), buf, len, src, tag, ignore, true, ctx, ep_of(fep)->rx_flags);
}

static ssize_t t_recvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!msg || iov_one(msg->msg_iov, msg->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & FI_MULTI_RECV)
		return -FI_EBADFLAGS;
	if (flags & FI_PEEK)
		return do_peek(ep_of(fep), msg->addr, msg->tag, msg->ignore, true, msg->context,
			       flags);
	if (flags & FI_CLAIM)
		return do_claimed(ep_of(fep), buf, len, true, msg->context, flags);
	return do_recv(ep_of(fep), buf, len, msg->addr, msg->tag, msg->ignore, true, msg->context,
		       flags);
}

static ssize_t t_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, tag, true, ctx, ep_of(fep)->tx_flags, false, false, 0);
}

static ssize_t t_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t dest, uint64_t tag, void *ctx)
{
	void *buf;
	size_t len;

	(void)desc;
	if (iov_one(iov, count, &buf, &len))
		return -FI_EINVAL;
	return do_send(ep_of(fep), buf, len, dest, tag, true, ctx, ep_of(fep)->tx_flags, false, false, 0);
}

static ssize_t t_sendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!msg || iov_one(msg->msg_iov, msg->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & XWFI_NO_COMP_LEVELS)
		return -FI_EBADFLAGS; /* completion levels not offered (xwfi.h) */
	return do_send(ep_of(fep), buf, len, msg->addr, msg->tag, true, msg->context, flags,
		       false, flags & FI_REMOTE_CQ_DATA, msg->data);
}

static ssize_t t_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
			uint64_t tag)
{
	return do_send(ep_of(fep), buf, len, dest, tag, true, NULL, 0, true, false, 0);
}

static ssize_t t_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return do_send(ep_of(fep), buf, len, dest, tag, true, ctx, ep_of(fep)->tx_flags, false, true,
		       data);
}

static ssize_t t_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest, uint64_t tag)
{
	return do_send(ep_of(fep), buf, len, dest, tag, true, NULL, 0, true, true, data);
}

static struct fi_ops_tagged tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};

/* ---- RMA, atomics, collectives: not offered ------------------------------------------ */

/* fi_write(), fi_atomic(), fi_barrier() ... are inline calls through these
 * tables: a NULL table would crash a stray call; every entry says
 * -FI_ENOSYS. */
#define NOSYS(...)                                                                         \
	{                                                                                  \
		return -FI_ENOSYS;                                                         \
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static ssize_t rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			   uint64_t flags) NOSYS()
static ssize_t rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
			  fi_addr_t dest, uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			    uint64_t flags) NOSYS()
static ssize_t rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t addr, uint64_t key) NOSYS()
static ssize_t rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			     void *ctx) NOSYS()
static ssize_t rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest, uint64_t addr, uint64_t key) NOSYS()

static struct fi_ops_rma rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};

static ssize_t at_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *ctx) NOSYS()
static ssize_t at_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			 enum fi_op op, void *ctx) NOSYS()
static ssize_t at_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			   uint64_t flags) NOSYS()
static ssize_t at_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op) NOSYS()
static ssize_t at_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags) NOSYS()
static ssize_t at_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags) NOSYS()
static int at_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op,
		    size_t *count) NOSYS()

static struct fi_ops_atomic atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = at_write,
	.writev = at_writev,
	.writemsg = at_writemsg,
	.inject = at_inject,
	.readwrite = at_readwrite,
	.readwritev = at_readwritev,
	.readwritemsg = at_readwritemsg,
	.compwrite = at_compwrite,
	.compwritev = at_compwritev,
	.compwritemsg = at_compwritemsg,
	.writevalid = at_valid,
	.readwritevalid = at_valid,
	.compwritevalid = at_valid,
};

static ssize_t co_barrier(struct fid_ep *ep, fi_addr_t coll, void *ctx) NOSYS()
static ssize_t co_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc,
			    fi_addr_t coll, fi_addr_t root, enum fi_datatype dt, uint64_t flags,
			    void *ctx) NOSYS()
static ssize_t co_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			   void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			   uint64_t flags, void *ctx) NOSYS()
static ssize_t co_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			    enum fi_op op, uint64_t flags, void *ctx) NOSYS()
static ssize_t co_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			    uint64_t flags, void *ctx) NOSYS()
static ssize_t co_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			 void *result, void *result_desc, fi_addr_t coll, fi_addr_t root,
			 enum fi_datatype dt, enum fi_op op, uint64_t flags, void *ctx) NOSYS()
static ssize_t co_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			  void *result, void *result_desc, fi_addr_t coll, fi_addr_t root,
			  enum fi_datatype dt, uint64_t flags, void *ctx) NOSYS()
static ssize_t co_msg(struct fid_ep *ep, const struct fi_msg_collective *msg,
		      struct fi_ioc *resultv, void **result_desc, size_t result_count,
		      uint64_t flags) NOSYS()
static ssize_t co_barrier2(struct fid_ep *ep, fi_addr_t coll, uint64_t flags, void *ctx) NOSYS()
#pragma GCC diagnostic pop
#undef NOSYS

static struct fi_ops_collective collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = co_barrier,
	.broadcast = co_broadcast,
	.alltoall = co_alltoall,
	.allreduce = co_allreduce,
	.allgather = co_allgather,
	.reduce_scatter = co_allreduce,
	.reduce = co_reduce,
	.scatter = co_scatter,
	.gather = co_scatter,
	.msg = co_msg,
	.barrier2 = co_barrier2,
};

/* ---- endpoint ops: cancel, options --------------------------------------------------- */

static ssize_t ep_cancel(fid_t fid, void *ctx)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	ssize_t ret = -FI_ENOENT;

	pthread_mutex_lock(&ep->dom->lock);
	for (struct op *op = ep->ops.next; op != &ep->ops; op = op->next) {
		struct xw_status st;

		if (op->kind != OP_RECV || op->ctx != ctx || !op->ctx)
			continue;
		ret = 0;
		if (xw_request__cancel(op->req))
			break; /* matched already: it completes normally */
		xw_request__test(op->req, &st);
		op_unlink(op);
		st.error = -ECANCELED;
		st.len = 0;
		st.msg_len = 0;
		op_complete(ep, op, &st);
		free(op);
		break;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int no_ctx(struct fid_ep *sep, int index, void *attr, struct fid_ep **ep, void *context)
{
	(void)sep, (void)index, (void)attr, (void)ep, (void)context;
	return -FI_ENOSYS;
}

static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	return no_ctx(sep, index, attr, tx_ep, context);
}

static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	return no_ctx(sep, index, attr, rx_ep, context);
}

static ssize_t size_left(struct fid_ep *ep)
{
	(void)ep;
	return 1024;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = size_left,
	.tx_size_left = size_left,
};

/* ---- connection management: only names --------------------------------------------- */

static int cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	size_t n = sizeof(ep->self);

	if (!addrlen)
		return -FI_EINVAL;
	if (*addrlen >= n && !addr)
		return -FI_EINVAL;
	if (*addrlen < n) {
		*addrlen = n;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &ep->self, n);
	*addrlen = n;
	return 0;
}

static int cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep, (void)addr, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int cm_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep, (void)handle, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep, (void)flags;
	return -FI_ENOSYS;
}

static int cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		   void *context)
{
	(void)ep, (void)addr, (void)flags, (void)mc, (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = cm_setname,
	.getname = cm_getname,
	.getpeer = cm_getpeer,
	.connect = cm_connect,
	.listen = cm_listen,
	.accept = cm_accept,
	.reject = cm_reject,
	.shutdown = cm_shutdown,
	.join = cm_join,
};

/* ---- fid: bind, control, close ---------------------------------------------------- */

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	int err = 0;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (ep->av) {
			err = -FI_EINVAL;
			break;
		}
		ep->av = container_of(bfid, struct xwfi_av, av.fid);
		ep->av->refs++;
		break;
	case FI_CLASS_CQ: {
		struct xwfi_cq *cq = container_of(bfid, struct xwfi_cq, cq.fid);

		if (!(flags & (FI_TRANSMIT | FI_RECV))) {
			err = -FI_EBADFLAGS;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->tcq) || ((flags & FI_RECV) && ep->rcq)) {
			err = -FI_EINVAL;
			break;
		}
		err = xwfi_cq_attach(cq, ep);
		if (err)
			break;
		if (flags & FI_TRANSMIT) {
			ep->tcq = cq;
			ep->tsel = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rcq = cq;
			ep->rsel = flags & FI_SELECTIVE_COMPLETION;
		}
		break;
	}
	case FI_CLASS_CNTR: {
		struct xwfi_cntr *c = container_of(bfid, struct xwfi_cntr, cntr.fid);

		if (!(flags & (FI_SEND | FI_RECV | FI_TRANSMIT))) {
			err = -FI_EBADFLAGS;
			break;
		}
		/* a second counter would replace the first one, left attached */
		if (((flags & (FI_SEND | FI_TRANSMIT)) && ep->tcntr) ||
		    ((flags & FI_RECV) && ep->rcntr)) {
			err = -FI_EINVAL;
			break;
		}
		err = xwfi_cntr_attach(c, ep);
		if (err)
			break;
		if (flags & (FI_SEND | FI_TRANSMIT))
			ep->tcntr = c;
		if (flags & FI_RECV)
			ep->rcntr = c;
		break;
	}
	case FI_CLASS_EQ:
		break; /* nothing to report on RDM */
	default:
		err = -FI_EINVAL;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return err;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	int err = 0;

	pthread_mutex_lock(&ep->dom->lock);
	switch (command) {
	case FI_ENABLE:
		if (!ep->av || (!ep->tcq && !ep->tcntr) || (!ep->rcq && !ep->rcntr))
			err = -FI_ENOCQ;
		if (!ep->av)
			err = -FI_ENOAV;
		if (!err)
			ep->enabled = true;
		break;
	case FI_GETOPSFLAG: {
		uint64_t *f = arg;

		if (!f || !(*f & (FI_TRANSMIT | FI_RECV))) {
			err = -FI_EINVAL;
			break;
		}
		*f = (*f & FI_TRANSMIT) ? ep->tx_flags : ep->rx_flags;
		break;
	}
	case FI_SETOPSFLAG: {
		uint64_t *f = arg, v;

		if (!f || !(*f & (FI_TRANSMIT | FI_RECV))) {
			err = -FI_EINVAL;
			break;
		}
		/* only what the provider honours (xwfi.h) */
		v = *f & ~(FI_TRANSMIT | FI_RECV);
		if (v & ~((*f & FI_TRANSMIT) ? XWFI_TX_OP_FLAGS : XWFI_RX_OP_FLAGS)) {
			err = -FI_EBADFLAGS;
			break;
		}
		if (*f & FI_TRANSMIT)
			ep->tx_flags = v;
		else
			ep->rx_flags = v;
		break;
	}
	default:
		err = -FI_ENOSYS;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return err;
}

/* What the reliability layer did for this endpoint, at FI_LOG_LEVEL=info:
 * how a job learns that its messages crossed a lossy network. */
static void log_stats(struct xwfi_ep *ep)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };
	char a[64];

	if (!fi_log_enabled(&xwfi_prov, FI_LOG_INFO, FI_LOG_EP_CTRL) ||
	    xw_endpoint__stats(ep->xep, &s) || xw_addr_format(&ep->self, a, sizeof(a)) < 0)
		return;
	FI_INFO(&xwfi_prov, FI_LOG_EP_CTRL,
		"endpoint %s closed: tx_frames %llu rx_frames %llu retransmits %llu "
		"rx_out_of_order %llu rx_dup_frames %llu crc_failures %llu sessions %llu "
		"conn_timeouts %llu peer_resets %llu live_probes %llu live_replies %llu "
		"live_local %llu rto_timeouts %llu sack_rtx %llu tail_probes %llu lost_rtx %llu "
		"spurious_rtx %llu rto_us %llu srtt_us %llu\n",
		a, (unsigned long long)s.tx_frames, (unsigned long long)s.rx_frames,
		(unsigned long long)s.retransmits, (unsigned long long)s.rx_out_of_order,
		(unsigned long long)s.rx_dup_frames, (unsigned long long)s.crc_failures,
		(unsigned long long)s.sessions, (unsigned long long)s.conn_timeouts,
		(unsigned long long)s.peer_resets, (unsigned long long)s.live_probes,
		(unsigned long long)s.live_replies, (unsigned long long)s.live_local,
		(unsigned long long)s.rto_timeouts, (unsigned long long)s.sack_rtx,
		(unsigned long long)s.tail_probes, (unsigned long long)s.lost_rtx,
		(unsigned long long)s.spurious_rtx, (unsigned long long)(s.rto_ns / 1000),
		(unsigned long long)(s.srtt_ns / 1000));
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * fi_close lingers, as a TCP close with SO_LINGER: a send completes once
 * its buffer may be reused (FI_INJECT_COMPLETE), before its peer
 * acknowledged it, and the library drops what is unacknowledged when the
 * endpoint closes - an application that closes right after its last send
 * (MPI_Finalize) would lose it.  So progress runs until every peer has
 * acknowledged what was sent to it (peers_unacked 0) or was given up: the
 * library gives a silent peer up after its give-up time (5 s), and the wait
 * is bounded a little above that.  Then the acks we owe go out: the library
 * delays an ack up to 200 us after a frame and drops it with the endpoint,
 * which would leave a peer lingering on its own close (MPI_Finalize on both
 * sides) until it gives us up.
 */
#define XWFI_LINGER_MS 6000
#define XWFI_ACK_FLUSH_MS 2

static void ep_linger(struct xwfi_ep *ep)
{
	struct xw_waitable it = { .ep = ep->xep };
	XW_OPTS(xw_wait_opts, wo, .timeout_ms = 1, .eps_no_unexpected = true);
	XW_OPTS(xw_wait_opts, fo, .timeout_ms = XWFI_ACK_FLUSH_MS, .eps_no_unexpected = true);
	uint64_t start = mono_ms();

	for (int i = 0; i < 4 * XWFI_LINGER_MS; i++) {
		XW_OPTS(xw_endpoint_stats, st);

		if (xw_endpoint__stats(ep->xep, &st) || !st.peers_unacked)
			break;
		if (mono_ms() - start >= XWFI_LINGER_MS) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"closing with data to %llu peer(s) unacknowledged after %d ms\n",
				(unsigned long long)st.peers_unacked, XWFI_LINGER_MS);
			break;
		}
		/* a pass, then asleep until a frame or 1 ms (timers run) */
		int r = xw_wait_any(&it, 1, &wo);

		if (r < 0 && r != -ETIMEDOUT) {
			struct timespec ts = { .tv_nsec = 250000 };

			xw_endpoint__progress(ep->xep);
			nanosleep(&ts, NULL);
		}
	}
	/* past every delayed ack's deadline, then a pass that sends them */
	xw_wait_any(&it, 1, &fo);
	xw_endpoint__progress(ep->xep);
}

static int ep_close(struct fid *fid)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	struct xwfi_domain *dom = ep->dom;

	/* No new operation; then linger without the domain lock (the other
	 * endpoints of the domain go on meanwhile). */
	pthread_mutex_lock(&dom->lock);
	ep->enabled = false;
	pthread_mutex_unlock(&dom->lock);
	if (ep->xep)
		ep_linger(ep);
	pthread_mutex_lock(&dom->lock);
	/* The library drops pending requests with the endpoint. */
	while (ep->ops.next != &ep->ops) {
		struct op *op = ep->ops.next;

		op_unlink(op);
		free(op);
	}
	while (ep->selfq)
		smsg_remove(ep, ep->selfq);
	while (ep->claims) {
		struct claim *c = ep->claims;

		ep->claims = c->next;
		free(c);
	}
	if (ep->tcq)
		xwfi_cq_detach(ep->tcq, ep);
	if (ep->rcq && ep->rcq != ep->tcq)
		xwfi_cq_detach(ep->rcq, ep);
	if (ep->tcntr)
		xwfi_cntr_detach(ep->tcntr, ep);
	if (ep->rcntr && ep->rcntr != ep->tcntr)
		xwfi_cntr_detach(ep->rcntr, ep);
	if (ep->av)
		ep->av->refs--;
	if (ep->xep) {
		log_stats(ep);
		xw_endpoint__close(ep->xep);
	}
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = XWFI_FI_OPS(ep_close, ep_bind, ep_control);

/* ---- open ----------------------------------------------------------------------------- */

static int xep_open(struct xwfi_ep *ep, const struct fi_info *info)
{
	XW_OPTS(xw_endpoint_opts, o, .queue = XW_QUEUE_ANY,
		.pin_root = xwfi_params.pin_root && *xwfi_params.pin_root ? xwfi_params.pin_root
									   : NULL);
	int first = 1, last = XW_MAX_ENDPOINTS - 1, err = -EBUSY;
	const char *q = xwfi_params.queue;

	if (q && *q && strcmp(q, "any")) {
		char *end;
		unsigned long v = strtoul(q, &end, 10);

		if (*end || end == q || v > 4095) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"FI_XDPWAKE_QUEUE: '%s' is neither a queue number nor any\n", q);
			return -FI_EINVAL;
		}
		o.queue = (__u32)v;
	}

	if (xwfi_params.encap && !strcmp(xwfi_params.encap, "udp"))
		o.encap = XW_ENCAP_UDP;
	else if (xwfi_params.encap && *xwfi_params.encap && strcmp(xwfi_params.encap, "eth")) {
		FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "FI_XDPWAKE_ENCAP: unknown '%s'\n",
			xwfi_params.encap);
		return -FI_EINVAL;
	}
	if (xwfi_params.policy && *xwfi_params.policy) {
		int p = xw_policy_parse(xwfi_params.policy);

		if (p < 0) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "FI_XDPWAKE_POLICY: unknown '%s'\n",
				xwfi_params.policy);
			return -FI_EINVAL;
		}
		o.policy_set = true;
		o.policy = (__u32)p;
	}
	if (xwfi_params.wait && *xwfi_params.wait) {
		int s = xw_wait_strategy_parse(xwfi_params.wait);

		if (s < 0) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "FI_XDPWAKE_WAIT: unknown '%s'\n",
				xwfi_params.wait);
			return -FI_EINVAL;
		}
		o.wait_strategy = (__u32)s;
	}
	if (xwfi_params.spin_usecs > 0)
		o.spin_ns = (__u64)xwfi_params.spin_usecs * 1000; /* the parameter is in usecs */
	if (xwfi_params.give_up_ms > 0)
		o.give_up_ms = (__u32)xwfi_params.give_up_ms;
	/* The id of the info's source address (FI_SOURCE node/service, the
	 * hints' src_addr, FI_XDPWAKE_EP_ID) is the one opened, except the
	 * default 1, from which the first free id is taken. */
	if (info->src_addr && info->src_addrlen == sizeof(struct xw_addr) &&
	    ((const struct xw_addr *)info->src_addr)->ep != 1)
		first = last = ((const struct xw_addr *)info->src_addr)->ep;
	if (xwfi_params.ep_id >= 0)
		first = last = xwfi_params.ep_id;
	/* An id found busy on the way is not worth a warning (only the last
	 * one tried, if every id is). */
	for (int id = first; id <= last && err == -EBUSY; id++) {
		xwfi_log_hold();
		err = xw_endpoint__open(ep->dom->ifname, (__u16)id, &o, &ep->xep);
		xwfi_log_release(err == -EBUSY && id < last);
	}
	if (err) {
		FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "cannot open an xdpwake endpoint on %s: %s\n",
			ep->dom->ifname, xw_strerror(err));
		ep->xep = NULL;
		return xwfi_err(err);
	}
	err = xw_endpoint__addr(ep->xep, &ep->self);
	if (err) {
		xw_endpoint__close(ep->xep);
		ep->xep = NULL;
		return xwfi_err(err);
	}
	/* FI_XDPWAKE_WATCHDOG_USECS: a rank that computes still answers */
	if (xwfi_params.watchdog_usecs > 0) {
		err = xw_endpoint__set_watchdog(ep->xep, (__u32)xwfi_params.watchdog_usecs);
		if (err)
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"FI_XDPWAKE_WATCHDOG_USECS=%d: no watchdog: %s\n",
				xwfi_params.watchdog_usecs, xw_strerror(err));
	}
	return 0;
}

int xwfi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp,
		 void *context)
{
	struct xwfi_domain *dom = container_of(domain, struct xwfi_domain, dom);
	struct xwfi_ep *ep;
	int err;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_RDM || !epp)
		return -FI_EINVAL;
	/* an info changed after fi_getinfo: nothing it does not grant */
	if (info->caps & ~(XWFI_CAPS | FI_REMOTE_CQ_DATA))
		return -FI_EINVAL;
	if ((info->tx_attr && (info->tx_attr->op_flags & ~XWFI_TX_OP_FLAGS)) ||
	    (info->rx_attr && (info->rx_attr->op_flags & ~XWFI_RX_OP_FLAGS)))
		return -FI_EBADFLAGS;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, dom->ifname))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = dom;
	ep->caps = info->caps ? info->caps : (FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
	ep->tx_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->ops.next = ep->ops.prev = &ep->ops;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &msg_ops;
	ep->ep.tagged = &tagged_ops;
	ep->ep.rma = &rma_ops;
	ep->ep.atomic = &atomic_ops;
	ep->ep.collective = &collective_ops;
	err = xep_open(ep, info);
	if (err) {
		free(ep);
		return err;
	}
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*epp = &ep->ep;
	return 0;
}
