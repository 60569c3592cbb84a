// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * msg.c - posting on the RDM endpoint, shared by FI_MSG and FI_TAGGED:
 * sends (inject, senddata, FI_TRANSMIT_COMPLETE), receives, directed
 * receives (FI_DIRECTED_RECV: xw_endpoint__irecv_opts with a source),
 * FI_PEEK / FI_CLAIM / FI_DISCARD (xw_endpoint__peek and
 * xw_endpoint__irecv_claimed); and the FI_MSG operations.  A send to the
 * endpoint's own address is the library's (its local path delivers it to
 * the endpoint itself).  Every posted operation becomes an op (op.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "ep.h"

/* A post begins: the domain locked, the endpoint enabled, its op made
 * (NULL: *ret says why, the lock still held). */
static struct xwfi_op *post_begin(struct xwfi_ep *ep, enum xwfi_op_kind kind, void *ctx,
				  uint64_t cqflags, bool comp, ssize_t *ret)
{
	struct xwfi_op *op = NULL;

	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled)
		*ret = -FI_EOPBADSTATE;
	else if (!(op = xwfi_op_new(ep, kind, ctx, cqflags, comp)))
		*ret = -FI_ENOMEM;
	return op;
}

/* The library took @op (@err 0: it is linked) or refused it (freed). */
static ssize_t post_op(struct xwfi_ep *ep, struct xwfi_op *op, int err)
{
	if (err) {
		xwfi_op_free(ep, op);
		return xwfi_err(err);
	}
	xwfi_op_link(ep, op);
	return 0;
}

/* A post ends: its completion may need no frame (the sleepers of the
 * endpoint's CQs and counters make a pass), and the library's call may
 * have completed earlier requests (the next read walks); the domain
 * unlocked. */
static ssize_t post_end(struct xwfi_ep *ep, ssize_t ret)
{
	xwfi_ep_touched(ep);
	if (!ret)
		xwfi_ep_kick(ep);
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

ssize_t xwfi_ep_send(struct xwfi_ep *ep, const void *buf, size_t len, fi_addr_t dest,
		     uint64_t tag, bool tagged, void *ctx, uint64_t flags, bool inject,
		     bool has_data, uint64_t cqdata)
{
	uint64_t cqflags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	uint64_t match = xwfi_send_match(ep, tagged, tag);
	bool comp = !inject && (!ep->tsel || (flags & FI_COMPLETION));
	struct xw_addr dst;
	struct xwfi_op *op;
	ssize_t ret = 0;
	int err;

	if (len > XWFI_MAX_MSG || ((inject || (flags & FI_INJECT)) && len > XWFI_INJECT_SIZE))
		return -FI_EMSGSIZE;
	if ((len && !buf) || (has_data && cqdata > XW_DATA_MAX))
		return -FI_EINVAL;
	FI_TRACE(&xwfi_prov, FI_LOG_EP_DATA, "send %zu bytes to %llu match %#llx flags %#llx%s\n",
		 len, (unsigned long long)dest, (unsigned long long)match,
		 (unsigned long long)flags, inject ? " inject" : "");
	op = post_begin(ep, XWFI_OP_SEND, inject ? NULL : ctx, cqflags, comp, &ret);
	if (!op)
		goto out;
	if (xwfi_av_lookup_addr(ep->av, dest, &dst)) {
		xwfi_op_free(ep, op);
		ret = -FI_EINVAL;
		goto out;
	}
	op->silent = inject;
	op->acked = !inject && (flags & FI_TRANSMIT_COMPLETE);
	{
		XW_OPTS(xw_send_opts, so, .flags = has_data ? XW_SEND_DATA : 0,
			.data = (__u32)cqdata);

		err = xw_endpoint__isend_opts(ep->ref.xep, &dst, buf, len, match, &so, &op->req);
	}
	if (err == -EAGAIN)
		xwfi_ep_progress(ep);
	else if (!err && xwfi_op_complete_now(ep, op))
		goto out;
	ret = post_op(ep, op, err);
out:
	return post_end(ep, ret);
}

ssize_t xwfi_ep_recv(struct xwfi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		     uint64_t ignore, bool tagged, void *ctx, uint64_t flags)
{
	uint64_t cqflags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	bool comp = !ep->rsel || (flags & FI_COMPLETION);
	struct xwfi_op *op;
	ssize_t ret = 0;
	int err;

	if (len && !buf)
		return -FI_EINVAL;
	op = post_begin(ep, XWFI_OP_RECV, ctx, cqflags, comp, &ret);
	if (!op)
		goto out;
	op->buf = buf;
	op->len = len;
	xwfi_recv_match(ep, tagged, tag, ignore, &op->rmatch, &op->mask);
	FI_TRACE(&xwfi_prov, FI_LOG_EP_DATA, "recv %zu bytes from %lld match %#llx mask %#llx\n",
		 len, (long long)src, (unsigned long long)op->rmatch, (unsigned long long)op->mask);
	if (xwfi_ep_src_lookup(ep, src, &op->has_src, &op->src)) {
		xwfi_op_free(ep, op);
		ret = -FI_EINVAL;
		goto out;
	}
	{
		XW_OPTS(xw_recv_opts, ro, .src = op->has_src ? &op->src : NULL);

		err = xw_endpoint__irecv_opts(ep->ref.xep, buf, len, op->rmatch, op->mask, &ro,
					      &op->req);
	}
	ret = post_op(ep, op, err);
out:
	return post_end(ep, ret);
}

static struct xwfi_claim *claim_take(struct xwfi_ep *ep, void *ctx)
{
	for (struct xwfi_claim **pp = &ep->claims; *pp; pp = &(*pp)->next)
		if ((*pp)->ctx == ctx) {
			struct xwfi_claim *c = *pp;

			*pp = c->next;
			return c;
		}
	return NULL;
}

/* FI_PEEK (with FI_CLAIM or FI_DISCARD): a completion with the envelope of
 * the oldest matching message, or an FI_ENOMSG error completion. */
ssize_t xwfi_ep_peek(struct xwfi_ep *ep, fi_addr_t src, uint64_t tag, uint64_t ignore,
		     bool tagged, void *ctx, uint64_t flags)
{
	struct xwfi_cqe e = { .ctx = ctx, .flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) };
	uint64_t match, mask;
	XW_OPTS(xw_status, st);
	struct xw_addr a;
	bool has_src, found = false;
	struct xwfi_claim *c = NULL;
	__u64 id = 0;
	ssize_t ret = 0;

	/* FI_CLAIM: the record first, so that a message the library sets
	 * aside always gets one (no allocation failure after the claim) */
	if ((flags & FI_CLAIM) && !(flags & FI_DISCARD) && !(c = calloc(1, sizeof(*c))))
		return -FI_ENOMEM;
	pthread_mutex_lock(&ep->dom->lock);
	xwfi_recv_match(ep, tagged, tag, ignore, &match, &mask);
	if (xwfi_ep_src_lookup(ep, src, &has_src, &a)) {
		ret = -FI_EINVAL;
		goto out;
	}
	{
		XW_OPTS(xw_peek_opts, po, .src = has_src ? &a : NULL,
			.flags = (flags & (FI_CLAIM | FI_DISCARD)) ? XW_PEEK_CLAIM : 0);
		int err = xw_endpoint__peek(ep->ref.xep, match, mask, &po, &st, &id);

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
	if (st.has_data) {
		e.flags |= FI_REMOTE_CQ_DATA;
		e.data = st.data;
	}
	e.src = xwfi_ep_src_of(ep, &st.src);
	if (flags & FI_DISCARD) {
		struct xwfi_op *op = xwfi_op_new(ep, XWFI_OP_RECV, NULL, e.flags, false);
		int err = op ? xw_endpoint__irecv_claimed(ep->ref.xep, id, NULL, 0, &op->req) : -ENOMEM;

		ret = post_op(ep, op, err);
		if (ret)
			goto out;
		op->silent = true;
		op->discard = true;
	} else if (c) {
		c->ctx = ctx;
		c->id = id;
		c->next = ep->claims;
		ep->claims = c;
		c = NULL;
	}
	if (ep->rcq)
		xwfi_cq_push(ep->rcq, &e);
out:
	xwfi_ep_touched(ep);
	pthread_mutex_unlock(&ep->dom->lock);
	free(c);
	return ret;
}

/* FI_CLAIM without FI_PEEK: receive (or with FI_DISCARD drop) the message
 * claimed with this context. */
ssize_t xwfi_ep_claimed(struct xwfi_ep *ep, void *buf, size_t len, bool tagged, void *ctx,
			uint64_t flags)
{
	uint64_t cqflags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	struct xwfi_claim *c;
	struct xwfi_op *op;
	ssize_t ret = 0;
	int err;

	pthread_mutex_lock(&ep->dom->lock);
	c = claim_take(ep, ctx);
	if (!c) {
		ret = -FI_EINVAL;
		goto out;
	}
	op = xwfi_op_new(ep, XWFI_OP_RECV, ctx, cqflags, true);
	if (!op) {
		ret = -FI_ENOMEM;
		free(c);
		goto out;
	}
	op->buf = buf;
	op->len = len;
	op->discard = flags & FI_DISCARD;
	err = xw_endpoint__irecv_claimed(ep->ref.xep, c->id, op->discard ? NULL : buf,
					 op->discard ? 0 : len, &op->req);
	ret = post_op(ep, op, err);
	free(c);
out:
	return post_end(ep, ret);
}

/* ---- the forms FI_MSG and FI_TAGGED share -------------------------------------------- */

/* One buffer (iov_limit 1: -FI_EINVAL for more); the endpoint's operation
 * flags unless @msg (fi_recvmsg, fi_sendmsg: the caller's). */
static int post_form(struct fid_ep *fep, const struct iovec *iov, size_t count, bool msg, bool rx,
		     void **buf, size_t *len, uint64_t *flags)
{
	if (xwfi_iov_one(iov, count, buf, len))
		return -FI_EINVAL;
	if (!msg)
		*flags = rx ? xwfi_ep_of(fep)->rx_flags : xwfi_ep_of(fep)->tx_flags;
	return 0;
}

ssize_t xwfi_ep_recvv(struct fid_ep *fep, const struct iovec *iov, size_t count, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, bool tagged, void *ctx, uint64_t flags,
		      bool msg)
{
	struct xwfi_ep *ep = xwfi_ep_of(fep);
	void *buf;
	size_t len;

	if (post_form(fep, iov, count, msg, true, &buf, &len, &flags))
		return -FI_EINVAL;
	if (msg && (flags & FI_MULTI_RECV))
		return -FI_EBADFLAGS;
	if (msg && tagged && (flags & FI_PEEK))
		return xwfi_ep_peek(ep, src, tag, ignore, true, ctx, flags);
	if (msg && tagged && (flags & FI_CLAIM))
		return xwfi_ep_claimed(ep, buf, len, true, ctx, flags);
	return xwfi_ep_recv(ep, buf, len, src, tag, ignore, tagged, ctx, flags);
}

ssize_t xwfi_ep_sendv(struct fid_ep *fep, const struct iovec *iov, size_t count, fi_addr_t dest,
		      uint64_t tag, bool tagged, void *ctx, uint64_t flags, uint64_t data,
		      bool msg)
{
	void *buf;
	size_t len;

	if (post_form(fep, iov, count, msg, false, &buf, &len, &flags))
		return -FI_EINVAL;
	/* completion levels not offered (xwfi.h) */
	if (msg && (flags & XWFI_NO_COMP_LEVELS))
		return -FI_EBADFLAGS;
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, tag, tagged, ctx, flags, false,
			    msg && (flags & FI_REMOTE_CQ_DATA), data);
}

/* ---- FI_MSG ---------------------------------------------------------------------- */

static ssize_t msg_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void)desc;
	return xwfi_ep_recvv(fep, &iov, 1, src, 0, 0, false, ctx, 0, false);
}

static ssize_t msg_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, void *ctx)
{
	(void)desc;
	return xwfi_ep_recvv(fep, iov, count, src, 0, 0, false, ctx, 0, false);
}

static ssize_t msg_recvmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return xwfi_ep_recvv(fep, msg->msg_iov, msg->iov_count, msg->addr, 0, 0, false,
			     msg->context, flags, true);
}

static ssize_t msg_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, void *ctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return xwfi_ep_sendv(fep, &iov, 1, dest, 0, false, ctx, 0, 0, false);
}

static ssize_t msg_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, void *ctx)
{
	(void)desc;
	return xwfi_ep_sendv(fep, iov, count, dest, 0, false, ctx, 0, 0, false);
}

static ssize_t msg_sendmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return xwfi_ep_sendv(fep, msg->msg_iov, msg->iov_count, msg->addr, 0, false, msg->context,
			     flags, msg->data, true);
}

static ssize_t msg_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest)
{
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, 0, false, NULL, 0, true, false, 0);
}

static ssize_t msg_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, void *ctx)
{
	(void)desc;
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, 0, false, ctx,
			    xwfi_ep_of(fep)->tx_flags, false, true, data);
}

static ssize_t msg_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest)
{
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, 0, false, NULL, 0, true, true, data);
}

struct fi_ops_msg xwfi_msg_ops = {
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
