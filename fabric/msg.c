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
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	if (xwfi_av_lookup_addr(ep->av, dest, &dst)) {
		ret = -FI_EINVAL;
		goto out;
	}
	op = xwfi_op_new(XWFI_OP_SEND, inject ? NULL : ctx, cqflags, comp);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	op->silent = inject;
	op->acked = !inject && (flags & FI_TRANSMIT_COMPLETE);
	{
		XW_OPTS(xw_send_opts, so, .flags = has_data ? XW_SEND_DATA : 0,
			.data = (__u32)cqdata);

		err = xw_endpoint__isend_opts(ep->ref.xep, &dst, buf, len, match, &so, &op->req);
	}
	if (err) {
		free(op);
		if (err == -EAGAIN)
			xwfi_ep_progress(ep);
		ret = xwfi_err(err);
		goto out;
	}
	xwfi_op_link(ep, op);
out:
	if (!ret)
		xwfi_ep_kick(ep); /* its completion may need no frame */
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
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
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	op = xwfi_op_new(XWFI_OP_RECV, ctx, cqflags, comp);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	op->buf = buf;
	op->len = len;
	xwfi_recv_match(ep, tagged, tag, ignore, &op->rmatch, &op->mask);
	FI_TRACE(&xwfi_prov, FI_LOG_EP_DATA, "recv %zu bytes from %lld match %#llx mask %#llx\n",
		 len, (long long)src, (unsigned long long)op->rmatch, (unsigned long long)op->mask);
	if (xwfi_ep_src_lookup(ep, src, &op->has_src, &op->src)) {
		free(op);
		ret = -FI_EINVAL;
		goto out;
	}
	{
		XW_OPTS(xw_recv_opts, ro, .src = op->has_src ? &op->src : NULL);

		err = xw_endpoint__irecv_opts(ep->ref.xep, buf, len, op->rmatch, op->mask, &ro,
					      &op->req);
	}
	if (err) {
		free(op);
		ret = xwfi_err(err);
		goto out;
	}
	xwfi_op_link(ep, op);
out:
	if (!ret)
		xwfi_ep_kick(ep); /* its completion may need no frame */
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
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
	struct xw_status st;
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
		struct xwfi_op *op = xwfi_op_new(XWFI_OP_RECV, NULL, e.flags, false);
		int err = op ? xw_endpoint__irecv_claimed(ep->ref.xep, id, NULL, 0, &op->req) : -ENOMEM;

		if (err) {
			free(op);
			ret = xwfi_err(err);
			goto out;
		}
		op->silent = true;
		op->discard = true;
		xwfi_op_link(ep, op);
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
	op = xwfi_op_new(XWFI_OP_RECV, ctx, cqflags, true);
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
	if (err) {
		free(op);
		ret = xwfi_err(err);
	} else {
		xwfi_op_link(ep, op);
	}
	free(c);
out:
	if (!ret)
		xwfi_ep_kick(ep); /* its completion may need no frame */
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

/* ---- FI_MSG ---------------------------------------------------------------------- */

static ssize_t msg_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			void *ctx)
{
	(void)desc;
	return xwfi_ep_recv(xwfi_ep_of(fep), buf, len, src, 0, 0, false, ctx,
			    xwfi_ep_of(fep)->rx_flags);
}

static ssize_t msg_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, void *ctx)
{
	void *buf;
	size_t len;

	(void)desc;
	if (xwfi_iov_one(iov, count, &buf, &len))
		return -FI_EINVAL;
	return xwfi_ep_recv(xwfi_ep_of(fep), buf, len, src, 0, 0, false, ctx,
			    xwfi_ep_of(fep)->rx_flags);
}

static ssize_t msg_recvmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!msg || xwfi_iov_one(msg->msg_iov, msg->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & FI_MULTI_RECV)
		return -FI_EBADFLAGS;
	return xwfi_ep_recv(xwfi_ep_of(fep), buf, len, msg->addr, 0, 0, false, msg->context, flags);
}

static ssize_t msg_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, void *ctx)
{
	(void)desc;
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, 0, false, ctx,
			    xwfi_ep_of(fep)->tx_flags, false, false, 0);
}

static ssize_t msg_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, void *ctx)
{
	void *buf;
	size_t len;

	(void)desc;
	if (xwfi_iov_one(iov, count, &buf, &len))
		return -FI_EINVAL;
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, 0, false, ctx,
			    xwfi_ep_of(fep)->tx_flags, false, false, 0);
}

static ssize_t msg_sendmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!msg || xwfi_iov_one(msg->msg_iov, msg->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & XWFI_NO_COMP_LEVELS)
		return -FI_EBADFLAGS; /* completion levels not offered (xwfi.h) */
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, msg->addr, 0, false, msg->context, flags,
			    false, flags & FI_REMOTE_CQ_DATA, msg->data);
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

