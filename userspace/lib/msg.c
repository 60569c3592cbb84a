// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * msg.c - the message layer: requests, sends (eager: SMALL, MEDIUM;
 * push-pull: RNDV, pushes, PULL blocks, NOTIFY), the LAT and MORE marks,
 * the TX scheduler (peers with frames served round-robin), incoming
 * messages (reassembly, per-peer order, pulls, bounded memory) and
 * cancel/abort.  Frames go down through xwi_conn_emit() (conn.h) and come
 * up, each once, through xwi_msg_rx() (msg.h); matching is match.c's, the
 * streams across resets stream.c's.  The pull pipeline (PULL blocks,
 * jobs, PULL_REPLY) is one section.  See docs/PROTOCOL.md, "Message
 * layer".
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include "engine_int.h"
#include "conn.h"
#include "match.h"
#include "msg.h"

static int tx_job(struct xwi_engine *e, struct peer *p, struct job *j, bool other);

/* Does @p hold a queued item other than @it? */
static bool peer_has_other(const struct peer *p, const struct txitem *it)
{
	const struct xl *qs[2] = { &p->ms.ctrlq, &p->ms.dataq };

	for (int i = 0; i < 2; i++) {
		const struct xl *q = qs[i];

		if (xl_empty(q))
			continue;
		if (q->next != &it->link || q->next->next != q)
			return true;
	}
	return false;
}

/* ---- requests ----------------------------------------------------------- */

struct xw_request *xwi_req_new(struct xwi_engine *e, enum xwi_req_kind kind)
{
	struct reqbox *b = xwi_cache_zget(&e->c_req);

	if (!b)
		return NULL;
	b->pub.eng = e;
	b->pub.kind = kind;
	b->pub.state = XWI_REQ_PENDING;
	b->pub.priv = &b->priv;
	b->priv.req = &b->pub;
	xl_init(&b->priv.tx.link);
	b->priv.tx.kind = TX_SEND;
	xl_init(&b->priv.slink);
	xl_init(&b->priv.jobs);
	xl_init(&b->priv.qlink);
	xl_add_tail(&b->priv.elink, &e->pending);
	return &b->pub;
}

void xwi_req_done(struct xwi_engine *e, struct xw_request *req)
{
	xl_del(&req->priv->elink);
	req->state = XWI_REQ_DONE;
	if (req->priv->internal) {
		/* the application holds the completed copy made by isend */
		xwi_cache_put(&e->c_req, xl_entry(req, struct reqbox, pub));
		return;
	}
	if (req->kind == XWI_REQ_SEND)
		e->st.sends_done++;
	else
		e->st.recvs_done++;
}

void xwi_job_free(struct job *j)
{
	xl_del(&j->tx.link);
	xl_del(&j->slink);
	free(j);
}

/* The request of send @s completes (@err), its buffer no longer used. */
static void send_finish(struct xwi_engine *e, struct xwi_req_priv *s, int err)
{
	struct xw_request *req = s->req;

	s->fin_wait = false;
	if (s->copy)
		xwi_copy_put(e, s->copy, s->len);
	s->copy = NULL;
	s->data = NULL;
	if (s->internal && err)
		e->st.sends_lost++; /* its request completed when buffered */
	req->status.len = err ? 0 : s->len;
	req->status.msg_len = s->len;
	req->status.match = s->match;
	req->status.error = err;
	xwi_req_done(e, req);
}

/* Complete send @s (error @err); drops whatever of it is still queued.
 * While frames kept lazily from its buffer are unacknowledged (krefs) it
 * only waits for them (fin_wait: xwi_msg_unref completes it). */
void xwi_send_complete(struct xwi_engine *e, struct xwi_req_priv *s, int err)
{
	struct peer *p = s->peer;

	if (s->fin_wait) {
		if (err)
			s->fin_err = err;
		return;
	}
	if (!xl_empty(&s->tx.link)) {
		xl_del(&s->tx.link);
		e->backlog--;
	}
	while (!xl_empty(&s->jobs))
		xwi_job_free(xl_entry(s->jobs.next, struct job, slink));
	xl_del(&s->slink);
	xwi_tx_idle_check(p);
	if (s->krefs) {
		s->fin_wait = true;
		s->fin_err = err;
		return;
	}
	send_finish(e, s, err);
}

void xwi_msg_unref(struct xwi_engine *e, struct xwi_req_priv *s)
{
	if (!--s->krefs && s->fin_wait)
		send_finish(e, s, s->fin_err);
}

/*
 * A NOTIFY'd large send completes once the frames it has queued are out:
 * the last frame emitted may have said MORE because of them, so they are
 * not withdrawn (a frame with MORE is always followed by another).
 */
static void send_try_finish(struct xwi_engine *e, struct xwi_req_priv *s)
{
	if (s->notified && xl_empty(&s->tx.link) && xl_empty(&s->jobs))
		xwi_send_complete(e, s, 0);
}

/* Our send @s is done at the receiver (its NOTIFY, or its mark). */
static void send_notified(struct xwi_engine *e, struct xwi_req_priv *s)
{
	if (s && !s->notified) {
		s->notified = true;
		send_try_finish(e, s);
	}
}

/* ---- the TX scheduler ----------------------------------------------------- */

/* The message's data, on each of its data frames. */
static void hdr_data(struct xw_hdr *h, const struct xwi_req_priv *s)
{
	if (!s->has_data)
		return;
	h->flags |= XW_F_DATA;
	h->data = htonl(s->mdata);
}

/* Emit the next initial frame of send @s. */
static int tx_send(struct xwi_engine *e, struct peer *p, struct xwi_req_priv *s, bool other)
{
	__u32 P = e->cfg.frag_payload, i = s->next, fsz = frag_size(s->len, P, i);
	__u32 id = s->started || s->keep_id ? s->msg_id : p->ms.tx_next_id;
	bool last = i + 1 == s->burst;
	struct xw_hdr h;
	__u8 flags = 0;
	int err;

	switch (s->cls) {
	case XW_PKT_SMALL:
		hdr_init(e, &h, p, XW_PKT_SMALL);
		if (e->cfg.marks & XWI_MARK_SMALL)
			flags |= XW_F_LAT;
		break;
	case XW_PKT_MEDIUM:
		hdr_init(e, &h, p, XW_PKT_MEDIUM);
		if ((e->cfg.marks & XWI_MARK_MEDIUM) && i == mark_pos(e, s->nfrags))
			flags |= XW_F_LAT;
		if (i == s->nfrags - 1)
			flags |= XW_F_LAST;
		h.frag_idx = htonl(i);
		h.frag_off = htonl(i * P);
		break;
	default: /* RNDV, then pushed PULL_REPLY fragments */
		if (i == 0) {
			hdr_init(e, &h, p, XW_PKT_RNDV);
			if (e->cfg.marks & XWI_MARK_RNDV)
				flags |= XW_F_LAT;
			h.frag_idx = htonl(s->burst - 1);
			if (s->cma) {
				/* our buffer, for the receiver to read */
				__u64 a = (__u64)(uintptr_t)s->data;

				flags |= XW_F_CMA;
				h.rsvd2 = htonl((__u32)(a >> 32));
				h.csum = htonl((__u32)a);
			}
		} else {
			hdr_init(e, &h, p, XW_PKT_PULL_REPLY);
			h.frag_idx = htonl(i);
			h.frag_off = htonl(i * P);
		}
		break;
	}
	if (s->more && s->cls != XW_PKT_RNDV)
		flags &= (__u8)~XW_F_LAT; /* the next message's frames wake */
	if (!last || other || s->more)
		flags |= XW_F_MORE;
	h.flags = flags;
	hdr_data(&h, s);
	h.msg_id = htonl(id);
	h.msg_len = htonl(s->len);
	h.frag_count = htonl(s->nfrags);
	h.match = htobe64(s->match);
	err = xwi_conn_emit(e, p, &h, fsz ? s->data + (size_t)i * P : NULL, fsz,
			    s->cls == XW_PKT_RNDV ? s : NULL);
	if (err)
		return err;
	if (!s->started) {
		s->started = true;
		s->msg_id = id;
		if (!s->keep_id)
			p->ms.tx_next_id++;
		if (s->cls == XW_PKT_RNDV)
			xl_add_tail(&s->slink, &p->ms.sends);
	}
	s->next++;
	if (last) {
		xl_del(&s->tx.link);
		e->backlog--;
		if (s->cls != XW_PKT_RNDV)
			xwi_send_complete(e, s, 0);
		else
			send_try_finish(e, s);
	}
	return 0;
}

static int tx_ctrl(struct xwi_engine *e, struct peer *p, struct ctrl *c, bool other)
{
	struct xw_pull_req pr;
	struct xw_hdr h;
	__u8 flags = 0;
	int err;

	hdr_init(e, &h, p, c->type);
	h.msg_id = htonl(c->msg_id);
	h.msg_len = htonl(c->msg_len);
	h.match = htobe64(c->match);
	if (other)
		flags |= XW_F_MORE;
	if (c->type == XW_PKT_PULL) {
		if (e->cfg.marks & XWI_MARK_PULL)
			flags |= XW_F_LAT;
		h.frag_idx = htonl(c->frag_idx);
		h.frag_off = htonl(c->frag_idx * e->cfg.frag_payload);
		h.frag_count = htonl(c->frag_count);
		pr.block_id = htonl(c->block_id);
		pr.nfrags = htonl(c->nfrags);
		h.flags = flags;
		err = xwi_conn_emit(e, p, &h, &pr, sizeof(pr), NULL);
	} else {
		if (e->cfg.marks & XWI_MARK_NOTIFY)
			flags |= XW_F_LAT;
		h.flags = flags;
		err = xwi_conn_emit(e, p, &h, NULL, 0, NULL);
	}
	if (err)
		return err;
	xl_del(&c->tx.link);
	if (c->standalone)
		free(c);
	return 0;
}

/* Send the next carried frame again, on the new connection (a late copy:
 * neither LAT nor MORE, as a retransmission). */
static int tx_carry(struct xwi_engine *e, struct peer *p, struct carry *c)
{
	struct xwi_frame *f = xl_entry(c->frames.next, struct xwi_frame, link);
	struct xw_hdr h = f->h;
	int err;

	h.flags &= (__u8)~(XW_F_MORE | XW_F_LAT);
	err = xwi_conn_emit(e, p, &h, f->len ? f->pl : NULL, f->len, NULL);
	if (err)
		return err;
	e->st.rtx_frames[h.type]++;
	e->st.carried++;
	xl_del(&f->link);
	free(f);
	if (xl_empty(&c->frames)) {
		xl_del(&c->tx.link);
		free(c);
	}
	return 0;
}

/* Emit one frame of @p's work. */
static int peer_tx_one(struct xwi_engine *e, struct peer *p)
{
	struct xl *q = !xl_empty(&p->ms.ctrlq) ? &p->ms.ctrlq : &p->ms.dataq;
	struct txitem *it = xl_entry(q->next, struct txitem, link);
	bool other = peer_has_other(p, it);

	switch (it->kind) {
	case TX_SEND:
		return tx_send(e, p, xl_entry(it, struct xwi_req_priv, tx), other);
	case TX_JOB:
		return tx_job(e, p, xl_entry(it, struct job, tx), other);
	case TX_CARRY:
		return tx_carry(e, p, xl_entry(it, struct carry, tx));
	default:
		return tx_ctrl(e, p, xl_entry(it, struct ctrl, tx), other);
	}
}

int xwi_tx_run(struct xwi_engine *e, int budget)
{
	int n = 0;

	while (n < budget && !xl_empty(&e->txrr)) {
		struct peer *p = xl_entry(e->txrr.next, struct peer, ms.rr);

		if (e->cfg.reliable && !xwi_conn_can_tx(e, p)) {
			xl_del(&p->ms.rr); /* kicked again when it can send */
			continue;
		}
		if (peer_tx_one(e, p))
			break;
		n++;
		xl_del(&p->ms.rr);
		xwi_msg_kick(e, p);
	}
	return n;
}

/* ---- sends ---------------------------------------------------------------- */

/*
 * The short path of a one-frame message to a peer whose frames go out at
 * once (xwi_conn_direct: the local ring, established) with nothing queued
 * before it: the frame tx_send() would build goes out now and the request
 * is handed out completed, as the long way ends for it (queued, emitted,
 * completed) - without the reserved copy, the queue and the scheduler's
 * round, or a pending request made only to be completed.  -EAGAIN (the
 * ring is full, nothing done): the long way queues it.
 */
static int send_direct(struct xwi_engine *e, struct peer *p, const void *buf, size_t len,
		       __u64 match, __u32 flags, __u32 data, struct xw_request **reqp)
{
	bool more = flags & XWI_SEND_MORE;
	struct reqbox *b;
	struct xw_hdr h;
	int err;

	b = xwi_cache_get(&e->c_req);
	if (!b)
		return -ENOMEM;
	hdr_init(e, &h, p, XW_PKT_SMALL);
	/* as tx_send: the last (only) frame, nothing else queued */
	if (more)
		h.flags = XW_F_MORE;
	else if (e->cfg.marks & XWI_MARK_SMALL)
		h.flags = XW_F_LAT;
	if (flags & XWI_SEND_DATA) {
		h.flags |= XW_F_DATA;
		h.data = htonl(data);
	}
	h.msg_id = htonl(p->ms.tx_next_id);
	h.msg_len = htonl((__u32)len);
	h.frag_count = htonl(1);
	h.match = htobe64(match);
	e->kick_early = !more;
	err = xwi_conn_emit(e, p, &h, len ? buf : NULL, len, NULL);
	e->kick_early = false;
	if (err) {
		xwi_cache_put(&e->c_req, b);
		return -EAGAIN;
	}
	p->ms.tx_next_id++;
	memset(&b->pub, 0, sizeof(b->pub));
	b->pub.eng = e;
	b->pub.kind = XWI_REQ_SEND;
	b->pub.state = XWI_REQ_DONE;
	b->pub.priv = &b->priv;
	b->pub.status.len = len;
	b->pub.status.msg_len = len;
	b->pub.status.match = match;
	b->priv.req = &b->pub;
	b->priv.internal = false;
	xl_init(&b->priv.elink);
	e->st.sends_done++;
	e->st.sends_direct++;
	*reqp = &b->pub;
	return 0;
}

int xwi_msg_send(struct xwi_engine *e, const struct xw_addr *dst, const void *buf, size_t len,
		 __u64 match, __u32 flags, __u32 data, struct xw_request **reqp)
{
	__u32 P, n;
	struct xwi_req_priv *s;
	struct xw_request *req;
	unsigned char *copy = NULL;
	struct reqbox *done = NULL;
	struct peer *p;
	bool cma, eager;

	if (e->backlog >= e->cfg.tx_backlog_max)
		return -EAGAIN;
	P = e->cfg.frag_payload;
	n = (__u32)nfrags_of(len, P);
	p = xwi_peer_get(e, dst);
	if (!p)
		return -ENOMEM;
	xwi_conn_named(e, p, dst->nonce);
	/* A peer on this host that reads our buffer (cross-memory attach)
	 * takes a message above local_eager_max straight from it: one copy
	 * instead of the ring's two, nothing pushed (it would be copied twice). */
	cma = xwi_conn_lossless(p) && e->ops.cma_read && !p->ms.cma_tx_off;
	eager = len <= (cma && e->cfg.local_eager_max < e->cfg.eager_max ? e->cfg.local_eager_max
									    : e->cfg.eager_max);
	if (eager && len <= P && xl_empty(&p->ms.dataq) && xl_empty(&p->ms.ctrlq) &&
	    xwi_conn_direct(e, p)) {
		int err = send_direct(e, p, buf, len, match, flags, data, reqp);

		if (err != -EAGAIN)
			return err;
	}
	if (eager && len > 0) {
		/* reserved now, filled only if frames must wait */
		copy = xwi_copy_alloc(e, len);
		if (!copy)
			return -ENOMEM;
	}
	if (e->cfg.reliable && eager) {
		/* the completed request handed out if the frames must wait
		 * (zeroed only then: most go out at once) */
		done = xwi_cache_get(&e->c_req);
		if (!done) {
			if (copy)
				xwi_copy_put(e, copy, len);
			return -ENOMEM;
		}
	}
	req = xwi_req_new(e, XWI_REQ_SEND);
	if (!req) {
		if (copy)
			xwi_copy_put(e, copy, len);
		xwi_cache_put(&e->c_req, done);
		return -ENOMEM;
	}
	s = req->priv;
	s->peer = p;
	s->data = buf;
	s->len = (__u32)len;
	s->nfrags = n;
	s->match = match;
	s->more = !!(flags & XWI_SEND_MORE);
	s->has_data = !!(flags & XWI_SEND_DATA);
	s->mdata = data;
	if (!eager) {
		__u64 btp = (__u64)e->cfg.btp1 + e->cfg.btp2;
		__u64 k = btp ? (btp + P - 1) / P : 1;

		s->cls = XW_PKT_RNDV;
		s->burst = (__u32)(k < 1 ? 1 : k > n ? n : k);
		s->cma = cma;
		if (cma)
			s->burst = 1;
	} else {
		s->cls = len <= P ? XW_PKT_SMALL : XW_PKT_MEDIUM;
		s->burst = n;
	}
	xl_add_tail(&s->tx.link, &p->ms.dataq);
	e->backlog++;
	xwi_msg_kick(e, p);
	*reqp = req;
	e->kick_early = s->cls == XW_PKT_SMALL && !s->more;
	xwi_tx_run(e, INT_MAX);
	e->kick_early = false;
	if (copy) {
		if (req->state == XWI_REQ_PENDING) {
			/* all of it, the frames already out too: a connection
			 * reset rewinds the send to its start (replay_unacked) */
			memcpy(copy, buf, len);
			s->copy = copy;
			s->data = copy;
		} else {
			xwi_copy_put(e, copy, len);
		}
	}
	if (done) {
		if (req->state == XWI_REQ_PENDING) {
			/*
			 * Reliable eager sends are buffered: they complete once
			 * copied, like when their frames are out, even while the
			 * connection is being set up or the window is full (the
			 * peer need not be polling).  The queued send carries on
			 * as an internal request.
			 */
			s->internal = true;
			memset(done, 0, sizeof(*done));
			done->pub.eng = e;
			done->pub.kind = XWI_REQ_SEND;
			done->pub.state = XWI_REQ_DONE;
			done->pub.priv = &done->priv;
			done->priv.req = &done->pub;
			done->pub.status.len = len;
			done->pub.status.msg_len = len;
			done->pub.status.match = match;
			xl_init(&done->priv.elink);
			e->st.sends_done++;
			*reqp = &done->pub;
		} else {
			xwi_cache_put(&e->c_req, done);
		}
	}
	return 0;
}

/* ---- incoming messages ----------------------------------------------------- */

static struct xwi_req_priv *send_find(struct peer *p, __u32 id)
{
	for (struct xl *l = p->ms.sends.next; l != &p->ms.sends; l = l->next) {
		struct xwi_req_priv *s = xl_entry(l, struct xwi_req_priv, slink);

		if (s->msg_id == id)
			return s;
	}
	return NULL;
}

void xwi_ctrl_unqueue(struct peer *p, struct ctrl *c)
{
	if (!xl_empty(&c->tx.link)) {
		xl_del(&c->tx.link);
		xwi_tx_idle_check(p);
	}
}

void xwi_ctrlq_drop(struct peer *p)
{
	while (!xl_empty(&p->ms.ctrlq)) {
		struct ctrl *c = xl_entry(p->ms.ctrlq.next, struct ctrl, tx.link);

		xl_del(&c->tx.link);
		if (c->standalone)
			free(c);
	}
}

void xwi_rmsg_free(struct xwi_engine *e, struct rmsg *m)
{
	struct peer *p = m->peer;

	if (p->ms.last == m)
		p->ms.last = NULL;
	xl_del(&m->alink);
	xl_del(&m->plink);
	xwi_match_forget(m);
	/* pulls_out: read without the port lock (xwi_engine_pulling) */
	__atomic_store_n(&e->pulls_out, e->pulls_out - m->inflight, __ATOMIC_RELAXED);
	m->inflight = 0;
	if (m->blocks) {
		for (__u32 i = 0; i < e->cfg.pull_inflight; i++)
			xwi_ctrl_unqueue(p, &m->blocks[i].pull);
		free(m->blocks);
	}
	free(m->notify);
	if (m->data) {
		if (m->rndv)
			e->st.pushed_bytes -= m->data_len;
		else
			e->st.unexpected_bytes -= m->data_len;
		free(m->data);
	}
	if (m->have != &m->have1)
		free(m->have);
	xwi_cache_put(&e->c_rmsg, m);
}

static struct rmsg *rmsg_find(struct peer *p, __u32 id)
{
	struct xl *l;

	if (p->ms.last && p->ms.last->msg_id == id)
		return p->ms.last;
	for (l = p->ms.active.prev; l != &p->ms.active; l = l->prev) {
		struct rmsg *m = xl_entry(l, struct rmsg, plink);

		if (m->msg_id == id)
			return p->ms.last = m;
	}
	for (l = p->ms.held.next; l != &p->ms.held; l = l->next) {
		struct rmsg *m = xl_entry(l, struct rmsg, plink);

		if (m->msg_id == id)
			return p->ms.last = m;
	}
	return NULL;
}

/* Reserve the unexpected buffer of @m; false when over the bound. */
static bool rmsg_reserve(struct xwi_engine *e, struct rmsg *m)
{
	__u64 size, *cur, max;

	if (m->rndv) {
		size = (__u64)m->npush * e->cfg.frag_payload;
		if (size > m->msg_len)
			size = m->msg_len;
		cur = &e->st.pushed_bytes;
		max = e->cfg.pushed_max;
	} else {
		size = m->msg_len;
		cur = &e->st.unexpected_bytes;
		max = e->cfg.unexpected_max;
	}
	if (!size)
		return true;
	if (*cur + size > max)
		return false;
	m->data = malloc(size);
	if (!m->data)
		return false;
	m->data_len = size;
	*cur += size;
	return true;
}

static void rmsg_drop_data(struct xwi_engine *e, struct rmsg *m)
{
	if (!m->data)
		return;
	if (m->rndv)
		e->st.pushed_bytes -= m->data_len;
	else
		e->st.unexpected_bytes -= m->data_len;
	free(m->data);
	m->data = NULL;
	m->data_len = 0;
}

/* ---- the pull pipeline ---------------------------------------------------- */
/*
 * A large message after its pushed bytes: the receiver asks for the rest
 * in PULL blocks of up to cfg.pull_block fragments, cfg.pull_inflight of
 * them in flight (pull_fill, block_account: struct block, rmsg.blocks);
 * the sender answers each PULL with a job (rx_pull) whose PULL_REPLY
 * frames the TX scheduler emits (tx_job); NOTIFY ends the message
 * (rmsg_complete, rx_notify).  The RNDV and the pushed fragments are
 * tx_send's; fragment sizes are frag_size() (engine_int.h).
 */

static bool expected_push(const struct rmsg *m, __u32 i)
{
	return i < m->npush && !m->push_dropped;
}

/* Request blocks while slots are free and fragments are missing. */
static void pull_fill(struct xwi_engine *e, struct rmsg *m)
{
	struct peer *p = m->peer;

	while (m->inflight < e->cfg.pull_inflight) {
		__u32 i = m->pull_next, first, n = 0;
		struct block *b = NULL;

		while (i < m->need_end && (bit_test(m->have, i) || expected_push(m, i)))
			i++;
		if (i >= m->need_end) {
			m->pull_next = i;
			return;
		}
		first = i;
		while (i < m->need_end && n < e->cfg.pull_block && !bit_test(m->have, i) &&
		       !expected_push(m, i)) {
			i++;
			n++;
		}
		m->pull_next = i;
		for (__u32 k = 0; k < e->cfg.pull_inflight; k++) {
			if (!m->blocks[k].busy) {
				b = &m->blocks[k];
				break;
			}
		}
		b->busy = true;
		b->first = first;
		b->n = n;
		b->left = n;
		b->pull.type = XW_PKT_PULL;
		b->pull.msg_id = m->msg_id;
		b->pull.msg_len = m->msg_len;
		b->pull.frag_idx = first;
		b->pull.frag_count = m->nfrags;
		b->pull.nfrags = n;
		b->pull.block_id = m->next_block++;
		b->pull.match = m->match;
		xl_add_tail(&b->pull.tx.link, &p->ms.ctrlq);
		m->inflight++;
		__atomic_store_n(&e->pulls_out, e->pulls_out + 1, __ATOMIC_RELAXED);
		xwi_msg_kick(e, p);
	}
}

/* Fragment @i arrived: account it to its block. */
static void block_account(struct xwi_engine *e, struct rmsg *m, __u32 i)
{
	for (__u32 k = 0; k < e->cfg.pull_inflight; k++) {
		struct block *b = &m->blocks[k];

		if (!b->busy || i < b->first || i - b->first >= b->n)
			continue;
		if (--b->left == 0) {
			b->busy = false;
			m->inflight--;
			__atomic_store_n(&e->pulls_out, e->pulls_out - 1, __ATOMIC_RELAXED);
			xwi_ctrl_unqueue(m->peer, &b->pull);
		}
		return;
	}
}

static int tx_job(struct xwi_engine *e, struct peer *p, struct job *j, bool other)
{
	struct xwi_req_priv *s = j->s;
	__u32 P = e->cfg.frag_payload, i = j->next, pos = i - j->first;
	bool last = pos + 1 == j->n;
	__u32 fsz = frag_size(s->len, P, i);
	struct xw_hdr h;
	__u8 flags = 0;
	int err;

	hdr_init(e, &h, p, XW_PKT_PULL_REPLY);
	if ((e->cfg.marks & XWI_MARK_PULL_REPLY) && pos == mark_pos(e, j->n))
		flags |= XW_F_LAT;
	if (last)
		flags |= XW_F_LAST;
	if (!last || other)
		flags |= XW_F_MORE;
	h.flags = flags;
	hdr_data(&h, s);
	h.msg_id = htonl(s->msg_id);
	h.msg_len = htonl(s->len);
	h.frag_idx = htonl(i);
	h.frag_off = htonl(i * P);
	h.frag_count = htonl(s->nfrags);
	h.match = htobe64(s->match);
	err = xwi_conn_emit(e, p, &h, fsz ? s->data + (size_t)i * P : NULL, fsz, s);
	if (err)
		return err;
	j->next++;
	if (last) {
		xwi_job_free(j);
		send_try_finish(e, s);
	}
	return 0;
}

/* A PULL: the receiver asks for a block of a large send's fragments. */
static int rx_pull(struct xwi_engine *e, struct peer *p, const struct xw_hdr *h,
		   const struct xwi_pl *pl)
{
	__u32 id = ntohl(h->msg_id), idx = ntohl(h->frag_idx), cnt = ntohl(h->frag_count);
	struct xwi_req_priv *s;
	struct xw_pull_req pr;
	struct job *j;
	__u32 nf;

	xwi_pl_copy(&pr, pl, 0, sizeof(pr));
	nf = ntohl(pr.nfrags);
	if (nf == 0 || (__u64)idx + nf > cnt) {
		e->st.rx_bad++;
		return -EPROTO;
	}
	s = p ? send_find(p, id) : NULL;
	if (!s || s->notified) {
		e->st.rx_frames[h->type]++;
		return 0; /* unknown or finished send */
	}
	if (s->len != ntohl(h->msg_len) || s->match != be64toh(h->match)) {
		e->st.rx_bad++;
		return -EPROTO;
	}
	if (s->cma)
		p->ms.cma_tx_off = true; /* it cannot read our buffers: push again */
	j = zalloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	e->st.rx_frames[h->type]++;
	j->tx.kind = TX_JOB;
	j->s = s;
	j->block_id = ntohl(pr.block_id);
	j->first = idx;
	j->n = nf;
	j->next = idx;
	xl_add_tail(&j->slink, &s->jobs);
	xl_add_tail(&j->tx.link, &p->ms.dataq);
	xwi_msg_kick(e, p);
	return 0;
}

/* ---- receives completing, the turn of messages ----------------------------- */

/* Receive @req completes with a message of @msg_len bytes from @p (its
 * buffer holds what fitted). */
static void recv_done(struct xwi_engine *e, struct xw_request *req, const struct peer *p,
		      __u32 msg_len, __u64 match, bool has_data, __u32 data)
{
	struct xwi_req_priv *r = req->priv;

	req->status.len = r->buflen < msg_len ? r->buflen : msg_len;
	req->status.msg_len = msg_len;
	req->status.match = match;
	req->status.src = p->addr;
	req->status.has_data = has_data;
	req->status.data = data;
	req->status.error = r->buflen < msg_len ? -EMSGSIZE : 0;
	r->m = NULL;
	xwi_req_done(e, req);
}

/* Every needed fragment of matched @m is in: complete its receive. */
static void rmsg_complete(struct xwi_engine *e, struct rmsg *m)
{
	struct peer *p = m->peer;

	recv_done(e, m->req, p, m->msg_len, m->match, m->has_data, m->mdata);
	/* Read from the sender's buffer: a mark in its inbox tells it, where
	 * it need not be woken (ops.cma_done), no NOTIFY frame. */
	if (m->cma && e->ops.cma_done && !e->ops.cma_done(e->ctx, &p->addr, m->msg_id, m->cma_sid))
		e->st.cma_marks++;
	else if (m->rndv) {
		struct ctrl *c = m->notify;

		m->notify = NULL;
		c->standalone = true;
		c->type = XW_PKT_NOTIFY;
		c->msg_id = m->msg_id;
		c->msg_len = m->msg_len;
		c->match = m->match;
		xl_add_tail(&c->tx.link, &p->ms.ctrlq);
		xwi_msg_kick(e, p);
	}
	xwi_rmsg_free(e, m);
}

/* Receive @req takes message @m (eligible; held data copied over). */
void xwi_msg_attach(struct xwi_engine *e, struct rmsg *m, struct xw_request *req)
{
	struct xwi_req_priv *r = req->priv;
	__u32 P = e->cfg.frag_payload;
	size_t want = r->buflen < m->msg_len ? r->buflen : m->msg_len;

	r->m = m;
	m->req = req;
	xwi_match_forget(m);
	m->state = R_MATCHED;
	if (m->cma && want) {
		/* One copy, from the sender's buffer into ours; where that is
		 * not permitted, the fragments are pulled (once per peer). */
		int err = e->ops.cma_read(e->ctx, &m->peer->addr, m->cma_addr, r->buf, want);

		if (!err) {
			e->st.cma_reads++;
			e->st.cma_bytes += want;
			rmsg_drop_data(e, m);
			rmsg_complete(e, m);
			return;
		}
		/* refused: for good (counted); else (the sender died, its
		 * buffer went) this message only */
		m->cma = false;
		if (err == -EPERM && !m->peer->ms.cma_rx_off) {
			m->peer->ms.cma_rx_off = true;
			e->st.cma_fallbacks++;
		}
	}
	if (m->rndv)
		m->need_end = (__u32)(want ? (want + P - 1) / P : 0);
	else
		m->need_end = m->nfrags;
	if (m->data) {
		for (__u32 i = 0; i < m->nfrags; i++) {
			size_t off = (size_t)i * P;
			__u32 fsz;

			if (off >= want)
				break;
			if (!bit_test(m->have, i))
				continue;
			fsz = frag_size(m->msg_len, P, i);
			if (fsz > want - off)
				fsz = (__u32)(want - off);
			memcpy(r->buf + off, m->data + off, fsz);
		}
	}
	rmsg_drop_data(e, m);
	m->need_left = m->need_end - bits_below(m->have, m->need_end);
	if (m->need_left == 0 && (m->rndv || m->nhave == m->nfrags)) {
		rmsg_complete(e, m);
		return;
	}
	if (xl_empty(&m->plink))
		xl_add_tail(&m->plink, &m->peer->ms.active);
	if (m->rndv)
		pull_fill(e, m);
}

/* Match @m (its turn came) or make it unexpected (or dropped). */
static void rmsg_place(struct xwi_engine *e, struct rmsg *m)
{
	struct peer *p = m->peer;
	struct xw_request *req;

	xl_del(&m->plink);
	if (!m->rndv && m->nodata) {
		m->state = R_DROPPED;
	} else if ((req = xwi_match_posted(e, m->match, &p->addr))) {
		xwi_msg_attach(e, m, req);
		return;
	} else if (!m->rndv && m->state == R_NEW && !rmsg_reserve(e, m)) {
		m->state = R_DROPPED;
	} else {
		if (m->rndv && m->state == R_NEW && !rmsg_reserve(e, m))
			m->push_dropped = true;
		m->state = R_UNEXP;
		xwi_match_unexpected(e, m);
	}
	if (m->rndv || m->nhave < m->nfrags)
		xl_add_tail(&m->plink, &p->ms.active);
	else if (m->state == R_DROPPED)
		xwi_rmsg_free(e, m);
}

/* Step rx_next_id over the ids the peer said are final (stream_sync). */
void xwi_skip_finals(struct peer *p)
{
	for (;;) {
		__u32 d = p->ms.rx_next_id - p->ms.skip_base - 1;

		if (d >= 32 || !(p->ms.skip_mask >> d & 1))
			return;
		p->ms.rx_next_id++;
	}
}

/*
 * @m's turn has come (its id is the peer's next): match it or make it
 * unexpected (or dropped), then release the held messages that follow.
 */
bool xwi_id_final(const struct peer *p, __u32 id)
{
	__u32 d = id - p->ms.skip_base - 1;

	return d < 32 && (p->ms.skip_mask >> d & 1);
}

void xwi_rmsg_eligible(struct xwi_engine *e, struct rmsg *m)
{
	struct peer *p = m->peer;

	for (;;) {
		p->ms.rx_next_id++;
		xwi_skip_finals(p);
		rmsg_place(e, m);
		if (xl_empty(&p->ms.held))
			return;
		m = xl_entry(p->ms.held.next, struct rmsg, plink);
		if (m->msg_id != p->ms.rx_next_id)
			return;
	}
}

void xwi_next_turn(struct xwi_engine *e, struct peer *p)
{
	xwi_skip_finals(p);
	if (!xl_empty(&p->ms.held)) {
		struct rmsg *m = xl_entry(p->ms.held.next, struct rmsg, plink);

		if (m->msg_id == p->ms.rx_next_id)
			xwi_rmsg_eligible(e, m);
	}
}

/*
 * A new incoming message, from its first frame.  It may be complete (and
 * freed) on return: a large message matched by a receive of 0 bytes.
 */
static int rmsg_new(struct xwi_engine *e, struct peer *p, const struct xw_hdr *h, bool redo)
{
	__u32 id = ntohl(h->msg_id);
	struct rmsg *m = xwi_cache_zget(&e->c_rmsg);

	if (!m)
		return -ENOMEM;
	m->peer = p;
	m->msg_id = id;
	m->msg_len = ntohl(h->msg_len);
	m->nfrags = ntohl(h->frag_count);
	m->match = be64toh(h->match);
	m->has_data = h->flags & XW_F_DATA;
	m->mdata = m->has_data ? ntohl(h->data) : 0;
	m->rndv = h->type == XW_PKT_RNDV;
	m->npush = m->rndv ? ntohl(h->frag_idx) + 1 : m->nfrags;
	/* the sender's buffer offered for reading: only by a peer on this
	 * host (from the wire the flag means nothing) */
	m->cma = m->rndv && (h->flags & XW_F_CMA) && xwi_conn_lossless(p) && e->ops.cma_read &&
		 !p->ms.cma_rx_off;
	if (m->cma) {
		m->cma_addr = (__u64)ntohl(h->rsvd2) << 32 | ntohl(h->csum);
		m->cma_sid = ntohl(h->session);
	}
	m->have = m->nfrags <= 64 ? &m->have1 : zalloc((m->nfrags + 63) / 64, sizeof(__u64));
	if (m->rndv) {
		m->blocks = zalloc(e->cfg.pull_inflight, sizeof(*m->blocks));
		m->notify = zalloc(1, sizeof(*m->notify));
	}
	if (!m->have || (m->rndv && (!m->blocks || !m->notify))) {
		if (m->have != &m->have1)
			free(m->have);
		free(m->blocks);
		free(m->notify);
		xwi_cache_put(&e->c_rmsg, m);
		return -ENOMEM;
	}
	if (m->rndv) {
		for (__u32 k = 0; k < e->cfg.pull_inflight; k++) {
			xl_init(&m->blocks[k].pull.tx.link);
			m->blocks[k].pull.tx.kind = TX_CTRL;
		}
		xl_init(&m->notify->tx.link);
		m->notify->tx.kind = TX_CTRL;
	}
	xl_init(&m->plink);
	xl_init(&m->ulink);
	xl_add_tail(&m->alink, &e->rmsgs);
	if (redo) {
		/* its turn came long ago: placed now, out of order */
		m->state = R_NEW;
		rmsg_place(e, m);
		return 0;
	}
	if (id == p->ms.rx_next_id) {
		m->state = R_NEW;
		xwi_rmsg_eligible(e, m);
		return 0;
	}
	/* ahead of its turn: held, buffered like an unexpected message */
	m->state = R_HELD;
	if (!rmsg_reserve(e, m)) {
		if (m->rndv)
			m->push_dropped = true;
		else
			m->nodata = true;
	}
	{
		struct xl *pos = &p->ms.held;

		for (struct xl *l = p->ms.held.next; l != &p->ms.held; l = l->next) {
			if (id_before(id, xl_entry(l, struct rmsg, plink)->msg_id)) {
				pos = l;
				break;
			}
		}
		xl_add_before(&m->plink, pos);
	}
	return 0;
}

/* A data fragment @i (bytes at i*P) of known message @m; @m may be freed. */
static void rmsg_frag(struct xwi_engine *e, struct rmsg *m, __u32 i, const struct xwi_pl *pl,
		      __u32 plen)
{
	size_t off = (size_t)i * e->cfg.frag_payload;

	if (bit_test(m->have, i)) {
		e->st.rx_dup++;
		return;
	}
	switch (m->state) {
	case R_MATCHED: {
		struct xwi_req_priv *r = m->req->priv;

		if (off < r->buflen && plen) {
			size_t n = r->buflen - off < plen ? r->buflen - off : plen;

			xwi_pl_copy(r->buf + off, pl, 0, n);
		}
		bit_set(m->have, i);
		m->nhave++;
		if (i < m->need_end)
			m->need_left--;
		if (m->rndv)
			block_account(e, m, i);
		if (m->need_left == 0 && (m->rndv || m->nhave == m->nfrags))
			rmsg_complete(e, m);
		else if (m->rndv)
			pull_fill(e, m);
		return;
	}
	case R_DROPPED:
		e->st.rx_dropped_nomem++;
		bit_set(m->have, i);
		if (++m->nhave == m->nfrags)
			xwi_rmsg_free(e, m);
		return;
	default: /* R_HELD, R_UNEXP */
		if (m->rndv) {
			if (i >= m->npush)
				return; /* not pushed, not asked: ignored */
			if (m->push_dropped) {
				e->st.rx_dropped_nomem++;
				return;
			}
		} else if (m->nodata) {
			e->st.rx_dropped_nomem++;
			bit_set(m->have, i);
			m->nhave++;
			return;
		}
		if (plen)
			xwi_pl_copy(m->data + off, pl, 0, plen);
		bit_set(m->have, i);
		m->nhave++;
		if (!m->rndv && m->nhave == m->nfrags && m->state == R_UNEXP)
			xl_del(&m->plink); /* complete: waits in the unexpected queue */
		return;
	}
}

/*
 * The RNDV of a large message we no longer know (it completed, or was given
 * up) came again: its sender, reconnected, started it over, maybe because
 * our NOTIFY was lost with the old connection.  Answer with a NOTIFY, so
 * that the send completes instead of waiting for PULLs that never come.
 */
static void notify_again(struct xwi_engine *e, struct peer *p, const struct xw_hdr *h)
{
	struct ctrl *c = zalloc(1, sizeof(*c));

	if (!c)
		return; /* the sender gives up then */
	c->tx.kind = TX_CTRL;
	c->standalone = true;
	c->type = XW_PKT_NOTIFY;
	c->msg_id = ntohl(h->msg_id);
	c->msg_len = ntohl(h->msg_len);
	c->match = be64toh(h->match);
	xl_add_tail(&c->tx.link, &p->ms.ctrlq);
	e->st.renotified++;
	xwi_msg_kick(e, p);
}

/*
 * The common case without a struct rmsg: a one-frame message whose turn
 * it is (the peer's next id) and that a posted receive takes.  It ends as
 * rmsg_new() -> xwi_rmsg_eligible() -> rmsg_place() -> xwi_msg_attach()
 * -> rmsg_frag() -> rmsg_complete() would: the id stepped over, the
 * payload in the receive's buffer, the request completed, the held
 * messages that follow released.  False (nothing done) when no posted
 * receive takes it: the caller goes the long way.
 */
static bool rx_small_now(struct xwi_engine *e, struct peer *p, const struct xw_hdr *h,
			 const struct xwi_pl *pl)
{
	__u32 mlen = ntohl(h->msg_len);
	__u64 match = be64toh(h->match);
	struct xw_request *req = xwi_match_posted(e, match, &p->addr);
	struct xwi_req_priv *r;

	if (!req)
		return false;
	r = req->priv;
	p->ms.rx_next_id++;
	e->st.rx_frames[h->type]++;
	if (r->buflen && mlen)
		xwi_pl_copy(r->buf, pl, 0, r->buflen < mlen ? r->buflen : mlen);
	recv_done(e, req, p, mlen, match, h->flags & XW_F_DATA,
		  h->flags & XW_F_DATA ? ntohl(h->data) : 0);
	xwi_next_turn(e, p);
	return true;
}

/* A data frame (SMALL, MEDIUM, RNDV, PULL_REPLY) of an incoming message. */
static int rx_data(struct xwi_engine *e, struct peer *p, const struct xw_addr *src,
		   const struct xw_hdr *h, const struct xwi_pl *pl)
{
	__u32 id = ntohl(h->msg_id), mlen = ntohl(h->msg_len), cnt = ntohl(h->frag_count);
	__u32 idx = ntohl(h->frag_idx), plen = ntohs(h->payload_len);
	bool rndv = h->type == XW_PKT_RNDV || h->type == XW_PKT_PULL_REPLY;
	__u64 match = be64toh(h->match);
	struct rmsg *m = p ? rmsg_find(p, id) : NULL;
	__u32 next = p ? p->ms.rx_next_id : 0;
	bool redo = false;
	int err;

	if (m) {
		if (m->msg_len != mlen || m->nfrags != cnt || m->match != match ||
		    m->rndv != rndv || (h->type == XW_PKT_RNDV && m->npush != idx + 1)) {
			e->st.rx_bad++;
			return -EPROTO;
		}
	} else if (id_before(id, next)) {
		if (p && p->ms.nredo && h->type != XW_PKT_PULL_REPLY && xwi_redo_take(p, id)) {
			/* dropped incomplete by a reset, sent again */
			e->st.redelivered++;
			redo = true;
		} else {
			/* a message already delivered (or dropped) */
			e->st.rx_frames[h->type]++;
			e->st.rx_dup++;
			if (h->type == XW_PKT_RNDV && p && e->cfg.reliable)
				notify_again(e, p, h);
			return 0;
		}
	} else if (id - next >= XWI_ORDER_WINDOW) {
		e->st.rx_bad++;
		return -EPROTO;
	}
	if (!m && h->type == XW_PKT_PULL_REPLY) {
		/* a message whose RNDV we have not seen: nothing to do */
		e->st.rx_frames[h->type]++;
		return 0;
	}
	if (!m && e->cfg.reliable && h->type == XW_PKT_MEDIUM && idx) {
		/* Frames of one message arrive in order: its head went to
		 * another endpoint of ours (the sender carried the rest over
		 * a reset to a new one).  It can never complete: skipped. */
		e->st.rx_frames[h->type]++;
		e->st.abandoned++;
		if (p && id == p->ms.rx_next_id) {
			p->ms.rx_next_id++;
			xwi_next_turn(e, p);
		}
		return 0;
	}
	if (!m && e->cfg.reliable && !rndv && id == next && mlen &&
	    e->st.unexpected_bytes + mlen > e->cfg.unexpected_max && !xwi_match_would(e, match, src) &&
	    (!xwi_orphans_reclaim(e) || e->st.unexpected_bytes + mlen > e->cfg.unexpected_max))
		return -ENOBUFS; /* not acknowledged: the sender resends it later */
	if (!m && !redo && p && h->type == XW_PKT_SMALL && id == next && cnt == 1 && !idx &&
	    plen == mlen && rx_small_now(e, p, h, pl))
		return 0;
	if (!m) {
		if (!p)
			p = xwi_peer_get(e, src);
		if (!p)
			return -ENOMEM;
		err = rmsg_new(e, p, h, redo);
		if (err) {
			if (redo)
				xwi_redo_add(e, p, id);
			return err;
		}
		m = rmsg_find(p, id);
	}
	e->st.rx_frames[h->type]++;
	if (m)
		rmsg_frag(e, m, h->type == XW_PKT_RNDV ? 0 : idx, pl, plen);
	return 0;
}

/* A NOTIFY: the receiver has the whole of a large send. */
static int rx_notify(struct xwi_engine *e, struct peer *p, const struct xw_hdr *h)
{
	struct xwi_req_priv *s = p ? send_find(p, ntohl(h->msg_id)) : NULL;

	if (s && s->len != ntohl(h->msg_len)) {
		e->st.rx_bad++;
		return -EPROTO;
	}
	e->st.rx_frames[h->type]++;
	send_notified(e, s);
	return 0;
}

void xwi_msg_cma_done(struct xwi_engine *e, const struct xw_addr *src, __u32 msg_id,
		      __u32 session)
{
	struct peer *p = xwi_peer_find(e, src);
	struct xwi_req_priv *s;

	/* only a send offered for reading, of the connection it was sent on */
	if (!p || !xwi_conn_lossless(p) || session != xwi_conn_my_sid(p))
		return;
	s = send_find(p, msg_id);
	if (s && s->cma) {
		if (!s->notified)
			e->st.cma_done++;
		send_notified(e, s);
	}
}

int xwi_msg_rx(struct xwi_engine *e, struct peer *p, const struct xw_addr *src,
	       const struct xw_hdr *h, const struct xwi_pl *pl)
{
	int rc;

	switch (h->type) {
	case XW_PKT_SMALL:
	case XW_PKT_MEDIUM:
	case XW_PKT_RNDV:
	case XW_PKT_PULL_REPLY:
		rc = rx_data(e, p, src, h, pl);
		if (!p) /* made by rx_data if the frame was taken */
			return rc;
		break;
	case XW_PKT_PULL:
		rc = rx_pull(e, p, h, pl);
		break;
	case XW_PKT_NOTIFY:
		rc = rx_notify(e, p, h);
		break;
	default: /* ACK, CONNECT*, CLOSE without cfg.reliable: no connections */
		e->st.rx_frames[h->type]++;
		return 0;
	}
	if (p)
		xwi_msg_kick(e, p);
	return rc;
}

/*
 * Does @p owe us PULL replies?  Our PULLs may all be acknowledged while
 * the data never comes (the sender died or stopped): then only silence
 * tells, and give_up_ns of it fails the receive like an unacked frame.
 */
bool xwi_msg_awaits_data(const struct peer *p)
{
	for (const struct xl *l = p->ms.active.next; l != &p->ms.active; l = l->next) {
		const struct rmsg *m = xl_entry(l, struct rmsg, plink);

		if (m->state == R_MATCHED && m->rndv && m->inflight)
			return true;
	}
	return false;
}

bool xwi_msg_idle(const struct xwi_engine *e, const struct peer *p)
{
	if (p->ms.tx_next_id || p->ms.rx_next_id || !xl_empty(&p->ms.rr) ||
	    !xl_empty(&p->ms.ctrlq) || !xl_empty(&p->ms.dataq) || !xl_empty(&p->ms.sends) ||
	    !xl_empty(&p->ms.active) || !xl_empty(&p->ms.held))
		return false;
	for (const struct xl *l = e->rmsgs.next; l != &e->rmsgs; l = l->next)
		if (xl_entry(l, struct rmsg, alink)->peer == p)
			return false;
	return true;
}

/* ---- cancel, abort, teardown ----------------------------------------------- */

int xwi_msg_cancel(struct xwi_engine *e, struct xw_request *req)
{
	struct xwi_req_priv *r = req->priv;

	if (req->kind == XWI_REQ_RECV) {
		if (r->m)
			return -EBUSY;
		xwi_match_unpost(r);
		memset(&req->status, 0, sizeof(req->status));
		req->status.error = -ECANCELED;
		xwi_req_done(e, req);
		return 0;
	}
	if (r->started || r->replayed)
		return -EBUSY; /* (replayed: the old connection may have it) */
	xwi_send_complete(e, r, -ECANCELED);
	return 0;
}

void xwi_msg_abort(struct xwi_engine *e, struct xw_request *req, int err)
{
	struct xwi_req_priv *r = req->priv;

	if (req->kind == XWI_REQ_SEND) {
		/* its buffer is the caller's again: frames kept from it lazily
		 * take copies (short of memory, it completes when they are
		 * acked, still read until then) */
		if (r->fin_wait)
			r->fin_err = err;
		if (r->krefs)
			xwi_conn_unref(e, r->peer, r);
		if (req->state == XWI_REQ_PENDING)
			xwi_send_complete(e, r, err);
		return;
	}
	if (r->m) {
		struct rmsg *m = r->m;

		/* Forget the message: later frames of its id are stale. */
		if (m->notify)
			xwi_ctrl_unqueue(m->peer, m->notify);
		m->req = NULL;
		xwi_rmsg_free(e, m);
		r->m = NULL;
	} else {
		xwi_match_unpost(r);
	}
	memset(&req->status, 0, sizeof(req->status));
	req->status.error = err;
	xwi_req_done(e, req);
}

/* Free what the message layer holds (the engine goes): queued control and
 * carried frames, incoming messages, pending requests; the peers' own
 * parts go with the peer table (xwi_msg_peer_fini). */
void xwi_msg_fini(struct xwi_engine *e)
{
	struct xl *l, *n;

	/* standalone control frames (NOTIFY) and carried frames still queued
	 * (before the requests, whose queue links go with them) */
	for (l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		xwi_carry_free(p);
		xwi_ctrlq_drop(p);
	}
	while (!xl_empty(&e->rmsgs))
		xwi_rmsg_free(e, xl_entry(e->rmsgs.next, struct rmsg, alink));
	for (l = e->pending.next; l != &e->pending; l = n) {
		struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, elink);

		n = l->next;
		while (!xl_empty(&r->jobs))
			xwi_job_free(xl_entry(r->jobs.next, struct job, slink));
		free(r->copy);
		free(xl_entry(r->req, struct reqbox, pub));
	}
}
