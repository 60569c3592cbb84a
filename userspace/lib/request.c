// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The request API: post sends and receives, peek and claim, test, wait,
 * cancel, and the blocking send and receive built on them.  A request
 * knows its endpoint (xw_request.ep, set here when it is handed out).
 */
#include "internal.h"
#include "engine.h"
#include "port.h"
#include "endpoint_int.h"

/* A caller's status (NULL: not wanted) must have room for a field:
 * checked before a request is collected, so that a bad sz loses none. */
static bool status_ok(const struct xw_status *st)
{
	if (st && st->sz <= sizeof(st->sz)) {
		xwi_err("xw_status: sz (%zu) is too small; set it to sizeof(struct xw_status)",
			st->sz);
		return false;
	}
	return true;
}

/* Collect done @req: its status (into the caller's sz), then it is freed.
 * Caller holds the port lock, which this releases. */
static void collect_locked(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	/* What completing it queued (a large receive's NOTIFY, an ACK), and
	 * a batch's frames not kicked yet, go out now, not at the
	 * application's next call: the peer waits on them. */
	if (xwi_engine_tx_pending(ep->eng) || xwi_port_tx_unkicked(ep->port))
		xwi_ep_progress_locked(ep);
	if (st)
		XWI_OUT_COPY(st, &req->status, xw_status);
	xwi_request_free(req);
	xwi_ep_unlock(ep);
}

static void collect(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	xwi_port_lock(ep->port);
	collect_locked(ep, req, st);
}

/* Wait for @req as strategy @s and @spin say, until @deadline (0: none;
 * XWI_WAIT_REL: @timeout_ms from the wait's start), then collect it into
 * @st (the wait's last pass may hand over the port lock for it). */
static int wait_collect(struct xw_endpoint *ep, struct xw_request *req, enum xw_wait_strategy s,
			__u64 spin, __u64 deadline, int timeout_ms, struct xw_status *st)
{
	struct xwi_wait_target w = { .req = req, .keep_lock = true, .timeout_ms = timeout_ms };
	int err;

	if (xwi_req_is_done(req)) {
		/* Done already (an eager send completes once buffered): a
		 * pass only if it has work (the sender's acks, a timer), then
		 * the collection; counted as a wait of no delay. */
		ep->ws.waits++;
		xwi_waitpol_done(&ep->wait, 0);
		xwi_port_lock(ep->port);
		xwi_ep_progress_if_due_locked(ep);
		collect_locked(ep, req, st);
		return 0;
	}
	err = xwi_wait_for(&w, s, spin, deadline);
	if (err)
		return err;
	if (w.locked)
		collect_locked(ep, req, st);
	else
		collect(ep, req, st);
	return 0;
}

XW_API int xw_endpoint__isend(struct xw_endpoint *ep, const struct xw_addr *dst,
			      const void *buf, size_t len, __u64 match, struct xw_request **reqp)
{
	return xw_endpoint__isend_opts(ep, dst, buf, len, match, NULL, reqp);
}

XW_API int xw_endpoint__isend_opts(struct xw_endpoint *ep, const struct xw_addr *dst,
				   const void *buf, size_t len, __u64 match,
				   const struct xw_send_opts *opts, struct xw_request **reqp)
{
	__u32 flags;
	int err;

	if (!ep || !dst || !reqp || (len && !buf) || !XWI_OPTS_VALID(opts, xw_send_opts))
		return -EINVAL;
	flags = XWI_OPT(opts, flags, 0);
	if (flags & ~(XW_SEND_MORE | XW_SEND_DATA)) {
		xwi_err("xw_endpoint__isend_opts: unknown flags %#x",
			flags & ~(XW_SEND_MORE | XW_SEND_DATA));
		return -EINVAL;
	}
	if (dst->encap != ep->enc.encap) {
		xwi_err("endpoint %u: destination encapsulation differs from the endpoint's", ep->id);
		return -EINVAL;
	}
	if (dst->ep >= XW_MAX_ENDPOINTS)
		return -ERANGE;
	xwi_port_lock(ep->port);
	err = xwi_engine_isend_data(ep->eng, dst, buf, len, match,
				    (flags & XW_SEND_MORE ? XWI_SEND_MORE : 0) |
					    (flags & XW_SEND_DATA ? XWI_SEND_DATA : 0),
				    XWI_OPT(opts, data, 0), reqp);
	if (!err)
		(*reqp)->ep = ep;
	if (flags & XW_SEND_MORE)
		xwi_port_flush_more(ep->port);
	else
		xwi_port_flush(ep->port);
	xwi_ep_unlock(ep);
	return err;
}

XW_API int xw_endpoint__irecv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			      __u64 mask, struct xw_request **reqp)
{
	return xw_endpoint__irecv_opts(ep, buf, len, match, mask, NULL, reqp);
}

XW_API int xw_endpoint__irecv_opts(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
				   __u64 mask, const struct xw_recv_opts *opts,
				   struct xw_request **reqp)
{
	const struct xw_addr *src;
	int err;

	if (!ep || !reqp || (len && !buf) || !XWI_OPTS_VALID(opts, xw_recv_opts))
		return -EINVAL;
	src = XWI_OPT(opts, src, NULL);
	xwi_port_lock(ep->port);
	err = xwi_engine_irecv_from(ep->eng, buf, len, match, mask, src, reqp);
	if (!err)
		(*reqp)->ep = ep;
	xwi_port_flush(ep->port);
	xwi_ep_unlock(ep);
	return err;
}

XW_API int xw_endpoint__peek(struct xw_endpoint *ep, __u64 match, __u64 mask,
			     const struct xw_peek_opts *opts, struct xw_status *st, __u64 *claim)
{
	struct xw_status s = { .sz = sizeof(s) };
	__u32 flags;
	int err;

	if (!ep || !XWI_OPTS_VALID(opts, xw_peek_opts) || !status_ok(st))
		return -EINVAL;
	flags = XWI_OPT(opts, flags, 0);
	if ((flags & ~XW_PEEK_CLAIM) || ((flags & XW_PEEK_CLAIM) && !claim))
		return -EINVAL;
	xwi_port_lock(ep->port);
	xwi_ep_progress_locked(ep);
	err = xwi_engine_peek(ep->eng, match, mask, XWI_OPT(opts, src, NULL),
			      flags & XW_PEEK_CLAIM, st ? &s : NULL, claim);
	xwi_ep_unlock(ep);
	if (!err && st)
		XWI_OUT_COPY(st, &s, xw_status);
	return err;
}

XW_API int xw_endpoint__irecv_claimed(struct xw_endpoint *ep, __u64 claim, void *buf, size_t len,
				      struct xw_request **reqp)
{
	int err;

	if (!ep || !reqp || (len && !buf))
		return -EINVAL;
	xwi_port_lock(ep->port);
	err = xwi_engine_irecv_claimed(ep->eng, claim, buf, len, reqp);
	if (!err)
		(*reqp)->ep = ep;
	xwi_port_flush(ep->port);
	xwi_ep_unlock(ep);
	return err;
}

XW_API int xw_request__test(struct xw_request *req, struct xw_status *st)
{
	struct xw_endpoint *ep;

	if (!req || !status_ok(st))
		return -EINVAL;
	ep = req->ep;
	if (!xwi_req_is_done(req))
		xw_endpoint__progress(ep);
	if (!xwi_req_is_done(req))
		return 0;
	collect(ep, req, st);
	return 1;
}

XW_API int xw_request__done(const struct xw_request *req)
{
	return req ? xwi_req_is_done(req) : -EINVAL;
}

XW_API int xw_request__wait(struct xw_request *req, struct xw_status *st, int timeout_ms)
{
	if (!req || !status_ok(st))
		return -EINVAL;
	return wait_collect(req->ep, req, XW_WAIT_DEFAULT, 0, XWI_WAIT_REL, timeout_ms, st);
}

XW_API int xw_request__wait_opts(struct xw_request *req, struct xw_status *st,
				 const struct xw_wait_opts *opts)
{
	if (!req || !xwi_wait_opts_valid(opts) || !status_ok(st))
		return -EINVAL;
	return wait_collect(req->ep, req, XWI_OPT(opts, strategy, XW_WAIT_DEFAULT),
			    XWI_OPT(opts, spin_ns, 0),
			    XWI_OPT(opts, timeout_set, false) ? XWI_WAIT_REL : 0,
			    XWI_OPT(opts, timeout_ms, -1), st);
}

XW_API int xw_request__cancel(struct xw_request *req)
{
	struct xw_endpoint *ep;
	int err;

	if (!req)
		return -EINVAL;
	ep = req->ep;
	xwi_port_lock(ep->port);
	err = xwi_engine_cancel(ep->eng, req);
	xwi_ep_unlock(ep);
	return err;
}

/* A blocking call's request after its timeout: cancelled if nothing of it
 * went out yet, otherwise aborted (the protocol forgets it and stops using
 * the buffer), unless it completed in the meantime. */
static int timed_out(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	int err;

	xwi_port_lock(ep->port);
	err = xwi_engine_cancel(ep->eng, req);
	if (err)
		err = xwi_engine_abort(ep->eng, req, -ETIMEDOUT);
	xwi_ep_unlock(ep);
	collect(ep, req, st);
	if (err == -EALREADY) /* completed after all */
		return st ? st->error : 0;
	if (st)
		st->error = -ETIMEDOUT;
	return -ETIMEDOUT;
}

XW_API int xw_endpoint__send(struct xw_endpoint *ep, const struct xw_addr *dst, const void *buf,
			     size_t len, __u64 match, int timeout_ms)
{
	struct xw_request *req;
	struct xw_status st = { .sz = sizeof(st) };
	/* the deadline read only if the send has to wait for room */
	__u64 deadline = XWI_WAIT_REL, t;
	int err;

	for (;;) {
		err = xw_endpoint__isend(ep, dst, buf, len, match, &req);
		if (err != -EAGAIN)
			break;
		t = xwi_now_ns();
		if (deadline == XWI_WAIT_REL)
			deadline = xwi_deadline_after(t, timeout_ms);
		if (deadline && t >= deadline)
			return -ETIMEDOUT;
		xw_endpoint__progress(ep);
	}
	if (err)
		return err;
	err = wait_collect(ep, req, XW_WAIT_DEFAULT, 0, deadline, timeout_ms, &st);
	if (err == -ETIMEDOUT)
		return timed_out(ep, req, &st);
	return err ? err : st.error;
}

XW_API int xw_endpoint__recv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			     __u64 mask, struct xw_status *st, int timeout_ms)
{
	struct xw_request *req;
	struct xw_status s = { .sz = sizeof(s) };
	int err;

	if (!status_ok(st))
		return -EINVAL;
	err = xw_endpoint__irecv(ep, buf, len, match, mask, &req);
	if (err)
		return err;
	err = wait_collect(ep, req, XW_WAIT_DEFAULT, 0, XWI_WAIT_REL, timeout_ms, &s);
	if (err == -ETIMEDOUT)
		err = timed_out(ep, req, &s);
	if (st)
		XWI_OUT_COPY(st, &s, xw_status);
	return err ? err : (s.error == -EMSGSIZE ? 0 : s.error);
}
