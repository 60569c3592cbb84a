// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * match.c - matching, beside the message layer: the posted-receive queue
 * (post order), the unexpected queue (oldest first), peek/claim and
 * directed receives.  The message layer offers each message here once its
 * turn has come (xwi_match_posted); receives posted later look through
 * the unexpected queue first.  See docs/PROTOCOL.md, "Matching".
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "engine_int.h"
#include "match.h"
#include "msg.h"

/* Does a receive for (@match, @mask, @src: NULL any sender) take a message
 * with match @m from @from? */
static bool recv_matches(__u64 match, __u64 mask, const struct xw_addr *src, __u64 m,
			 const struct xw_addr *from)
{
	return (m & mask) == (match & mask) && (!src || xw_addr_equal(src, from));
}

bool xwi_match_would(const struct xwi_engine *e, __u64 match, const struct xw_addr *from)
{
	for (const struct xl *l = e->posted.next; l != &e->posted; l = l->next) {
		const struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, qlink);

		if (recv_matches(r->rmatch, r->mask, r->has_src ? &r->src : NULL, match, from))
			return true;
	}
	return false;
}

struct xw_request *xwi_match_posted(struct xwi_engine *e, __u64 match,
				     const struct xw_addr *from)
{
	for (struct xl *l = e->posted.next; l != &e->posted; l = l->next) {
		struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, qlink);

		if (recv_matches(r->rmatch, r->mask, r->has_src ? &r->src : NULL, match, from)) {
			xl_del(&r->qlink);
			return r->req;
		}
	}
	return NULL;
}

void xwi_match_fail_directed(struct xwi_engine *e, const struct peer *p, int err)
{
	struct xl *l, *n;

	for (l = e->posted.next; l != &e->posted; l = n) {
		struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, qlink);
		struct xw_request *req = r->req;

		n = l->next;
		if (!r->has_src || !xw_addr_equal(&r->src, &p->addr))
			continue;
		xwi_match_unpost(r);
		memset(&req->status, 0, sizeof(req->status));
		req->status.error = err;
		req->status.src = p->addr;
		xwi_req_done(e, req);
	}
}

bool xwi_match_has_unexpected(const struct xwi_engine *e)
{
	for (const struct xl *l = e->unexp.next; l != &e->unexp; l = l->next)
		if (!xl_entry(l, const struct rmsg, ulink)->claim)
			return true;
	return false;
}

/* The oldest unclaimed unexpected message a receive (@match, @mask, @src)
 * would take, or NULL. */
static struct rmsg *unexp_find(struct xwi_engine *e, __u64 match, __u64 mask,
			       const struct xw_addr *src)
{
	for (struct xl *l = e->unexp.next; l != &e->unexp; l = l->next) {
		struct rmsg *m = xl_entry(l, struct rmsg, ulink);

		if (!m->claim && recv_matches(match, mask, src, m->match, &m->peer->addr))
			return m;
	}
	return NULL;
}

static struct xw_request *recv_new(struct xwi_engine *e, void *buf, size_t len)
{
	struct xw_request *req = xwi_req_new(e, XWI_REQ_RECV);

	if (req) {
		req->priv->buf = buf;
		req->priv->buflen = len;
	}
	return req;
}

int xwi_match_recv(struct xwi_engine *e, void *buf, size_t len, __u64 match, __u64 mask,
		   const struct xw_addr *src, struct xw_request **reqp)
{
	struct xwi_req_priv *r;
	struct xw_request *req;
	struct rmsg *m;

	req = recv_new(e, buf, len);
	if (!req)
		return -ENOMEM;
	r = req->priv;
	r->rmatch = match;
	r->mask = mask;
	if (src) {
		r->has_src = true;
		r->src = *src;
	}
	*reqp = req;
	m = unexp_find(e, match, mask, src);
	if (m) {
		xwi_msg_attach(e, m, req);
		xwi_tx_run(e, INT_MAX);
		return 0;
	}
	xl_add_tail(&r->qlink, &e->posted); /* out: xwi_match_unpost() */
	return 0;
}

int xwi_match_peek(struct xwi_engine *e, __u64 match, __u64 mask, const struct xw_addr *src,
		   bool claim, struct xw_status *st, __u64 *claim_id)
{
	struct rmsg *m = unexp_find(e, match, mask, src);
	if (!m)
		return -ENOMSG;
	if (st) {
		memset(st, 0, sizeof(*st));
		st->len = m->msg_len;
		st->msg_len = m->msg_len;
		st->match = m->match;
		st->src = m->peer->addr;
		st->has_data = m->has_data;
		st->data = m->mdata;
	}
	if (claim) {
		m->claim = ++e->next_claim;
		*claim_id = m->claim;
	}
	return 0;
}

int xwi_match_recv_claimed(struct xwi_engine *e, __u64 claim_id, void *buf, size_t len,
			   struct xw_request **reqp)
{
	struct xw_request *req;

	for (struct xl *l = e->unexp.next; l != &e->unexp; l = l->next) {
		struct rmsg *m = xl_entry(l, struct rmsg, ulink);

		if (m->claim != claim_id)
			continue;
		req = recv_new(e, buf, len);
		if (!req)
			return -ENOMEM;
		req->priv->rmatch = m->match;
		req->priv->mask = ~0ULL;
		*reqp = req;
		xwi_msg_attach(e, m, req);
		xwi_tx_run(e, INT_MAX);
		return 0;
	}
	return -ENOENT; /* never claimed, already taken, or its peer was reset */
}

/* @m's turn came and no posted receive took it: it waits, unexpected. */
void xwi_match_unexpected(struct xwi_engine *e, struct rmsg *m)
{
	xl_add_tail(&m->ulink, &e->unexp);
	e->st.unexpected_msgs++;
}
