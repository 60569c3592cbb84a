// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stream.c - the message layer's streams across the connection layer's
 * resets: what a reset does to requests and messages (xwi_msg_reset:
 * reconnect, restart, give-up), eager frames carried over a reconnect,
 * sends replayed to a new incarnation, where our stream resumes
 * (xwi_msg_hello) and the peer's (xwi_msg_stream_sync), ids taken again
 * (redo), orphaned partial messages.  See docs/PROTOCOL.md, "Message
 * streams across connections".
 */
#include <endian.h>
#include <errno.h>

#include "engine_int.h"
#include "conn.h"
#include "match.h"
#include "msg.h"

static struct carry *carry_find(struct peer *p);

static struct xwi_req_priv *started_send(struct xwi_engine *e, struct peer *p, __u32 id)
{
	for (struct xl *l = e->pending.next; l != &e->pending; l = l->next) {
		struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, elink);

		if (r->req->kind == XWI_REQ_SEND && r->peer == p && r->started && r->msg_id == id)
			return r;
	}
	return NULL;
}

/* Take started send @s back to its first frame (out of every queue; the
 * caller queues it again), under the same msg_id if @keep_id. */
static void send_rewind(struct xwi_engine *e, struct xwi_req_priv *s, bool keep_id)
{
	if (xl_empty(&s->tx.link))
		e->backlog++;
	else
		xl_del(&s->tx.link);
	xl_del(&s->slink);
	s->started = false;
	s->keep_id = keep_id;
	s->replayed = true;
	s->notified = false;
	s->next = 0;
}

/* An internal send of the eager message @id rebuilt from its frames in
 * @p's retransmission queue (the request that posted it is complete). */
static struct xwi_req_priv *eager_rebuild(struct xwi_engine *e, struct peer *p,
					  const struct xl *unacked, const struct xwi_frame *f0)
{
	__u32 len = ntohl(f0->h.msg_len), id = ntohl(f0->h.msg_id), got = 0;
	unsigned char *copy = len ? xwi_copy_alloc(e, len) : NULL;
	struct xw_request *req;
	struct xwi_req_priv *s;

	if (len && !copy)
		return NULL;
	req = xwi_req_new(e, XWI_REQ_SEND);
	if (!req) {
		if (copy)
			xwi_copy_put(e, copy, len);
		return NULL;
	}
	for (const struct xl *l = &f0->link; l != unacked; l = l->next) {
		const struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
		__u32 off = ntohl(f->h.frag_off);

		if (f->h.type == f0->h.type && ntohl(f->h.msg_id) == id && off < len &&
		    f->len <= len - off) {
			memcpy(copy + off, f->pl, f->len);
			got += f->len;
		}
	}
	if (got != len) {
		/* not every fragment is still here: never a broken copy */
		xl_del(&req->priv->elink);
		free(xl_entry(req, struct reqbox, pub));
		free(copy);
		return NULL;
	}
	s = req->priv;
	s->internal = true;
	s->peer = p;
	s->data = s->copy = copy;
	s->len = len;
	s->nfrags = ntohl(f0->h.frag_count);
	s->burst = s->nfrags;
	s->match = be64toh(f0->h.match);
	s->has_data = f0->h.flags & XW_F_DATA;
	s->mdata = ntohl(f0->h.data);
	s->cls = f0->h.type;
	e->backlog++;
	return s;
}

/*
 * Messages whose first frame the old incarnation never acknowledged
 * cannot have been taken by it: they go to the new one, in their order,
 * ahead of the sends not started yet.  Pending sends are rewound; eager
 * messages already complete for their sender are rebuilt from their
 * frames.  Sends the old incarnation has acknowledged something of are
 * left started (they fail).
 */
static void replay_unacked(struct xwi_engine *e, struct peer *p, struct xl *unacked)
{
	struct xl replay;

	xl_init(&replay);
	for (struct xl *l = unacked->next; l != unacked; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
		struct xwi_req_priv *s;
		__u8 t = f->h.type;

		if (!(t == XW_PKT_SMALL || t == XW_PKT_RNDV || (t == XW_PKT_MEDIUM && !f->h.frag_idx)))
			continue;
		s = started_send(e, p, ntohl(f->h.msg_id));
		if (s) {
			if (!xl_empty(&s->jobs))
				continue; /* pulled: the peer had it */
			send_rewind(e, s, false);
		} else if (t != XW_PKT_RNDV) {
			s = eager_rebuild(e, p, unacked, f);
			if (!s) {
				e->st.sends_lost++;
				continue;
			}
		} else {
			continue; /* aborted large send */
		}
		xl_add_tail(&s->tx.link, &replay);
		e->st.replayed++;
	}
	xl_splice_front(&replay, &p->ms.dataq);
}

/* The receive that took @m (if any) completes with @err; @m is left to
 * the caller (to free). */
void xwi_rmsg_fail_req(struct xwi_engine *e, struct rmsg *m, int err)
{
	struct xw_request *req = m->req;

	if (!req)
		return;
	if (m->notify)
		xwi_ctrl_unqueue(m->peer, m->notify);
	m->req = NULL;
	req->priv->m = NULL;
	memset(&req->status, 0, sizeof(req->status));
	req->status.error = err;
	xwi_req_done(e, req);
}

/* Call @fn for the id of every message we may still send to @p (a frame
 * unacknowledged or carried, a send started or rewound); ids may repeat. */
static void outstanding_ids(const struct xwi_engine *e, const struct peer *p,
			    void (*fn)(__u32 id, void *arg), void *arg)
{
	const struct carry *c = carry_find((struct peer *)p);
	const struct xl *qs[2] = { xwi_conn_unacked(p), c ? &c->frames : NULL };

	for (int k = 0; k < 2; k++) {
		if (!qs[k])
			continue;
		for (const struct xl *l = qs[k]->next; l != qs[k]; l = l->next) {
			const struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
			__u8 t = f->h.type;

			if (t == XW_PKT_SMALL || t == XW_PKT_MEDIUM || t == XW_PKT_RNDV ||
			    t == XW_PKT_PULL_REPLY)
				fn(ntohl(f->h.msg_id), arg);
		}
	}
	for (const struct xl *l = e->pending.next; l != &e->pending; l = l->next) {
		const struct xwi_req_priv *s = xl_entry(l, struct xwi_req_priv, elink);

		if (s->req->kind == XWI_REQ_SEND && s->peer == p && (s->started || s->keep_id))
			fn(s->msg_id, arg);
	}
}

struct resume_scan {
	__u32 r, out; /* oldest outstanding id; outstanding ids r+1 .. r+32 */
};

static void resume_min(__u32 id, void *arg)
{
	struct resume_scan *rs = arg;

	if (id_before(id, rs->r))
		rs->r = id;
}

static void resume_mark(__u32 id, void *arg)
{
	struct resume_scan *rs = arg;
	__u32 d = id - rs->r - 1;

	if (d < 32)
		rs->out |= 1u << d;
}

/*
 * Where our message stream to @p resumes: the oldest message id we may
 * still send, else the next new one; everything before it is final
 * (delivered, or failed here).  *@finals: bit i set when id resume+1+i was
 * used and is final too (acknowledged whole, or its send aborted or failed
 * while an older one is still outstanding): the peer must not wait for it.
 */
static __u32 resume_id(const struct xwi_engine *e, const struct peer *p, __u32 *finals)
{
	struct resume_scan rs = { .r = p->ms.tx_next_id };

	outstanding_ids(e, p, resume_min, &rs);
	outstanding_ids(e, p, resume_mark, &rs);
	*finals = 0;
	for (__u32 i = 0; i < 32; i++)
		if (id_before(rs.r + 1 + i, p->ms.tx_next_id) && !(rs.out >> i & 1))
			*finals |= 1u << i;
	return rs.r;
}

/* Remember that message @id of @p, behind rx_next_id, was dropped
 * incomplete: if it comes again it is taken as new.  At most `window`
 * entries (a peer resends no more messages than it had frames in flight);
 * the oldest go first. */
void xwi_redo_add(struct xwi_engine *e, struct peer *p, __u32 id)
{
	__u32 cap = e->cfg.window;

	if (!id_before(id, p->ms.rx_next_id))
		return; /* not passed yet: taken anyway */
	if (!p->ms.redo) {
		p->ms.redo = zalloc(cap, sizeof(*p->ms.redo));
		if (!p->ms.redo)
			return; /* then a resend of it is ignored: lost, its
				 * receive (if any) failed */
	}
	if (p->ms.nredo == cap) {
		memmove(p->ms.redo, p->ms.redo + 1, (cap - 1) * sizeof(*p->ms.redo));
		p->ms.nredo--;
	}
	p->ms.redo[p->ms.nredo++] = id;
}

bool xwi_redo_take(struct peer *p, __u32 id)
{
	for (__u32 i = 0; i < p->ms.nredo; i++)
		if (p->ms.redo[i] == id) {
			memmove(p->ms.redo + i, p->ms.redo + i + 1, (p->ms.nredo - i - 1) * sizeof(*p->ms.redo));
			p->ms.nredo--;
			return true;
		}
	return false;
}

/* Drop redo entries before @id (final for the peer). */
static void redo_trim(struct peer *p, __u32 id)
{
	__u32 k = 0;

	for (__u32 i = 0; i < p->ms.nredo; i++)
		if (!id_before(p->ms.redo[i], id))
			p->ms.redo[k++] = p->ms.redo[i];
	p->ms.nredo = k;
}

/* Count the eager messages of @p's frames in @q whose sends already
 * completed (buffered): they are lost with the frames. */
static void frames_lost(struct xwi_engine *e, struct peer *p, struct xl *q)
{
	__u32 last = 0;
	bool have = false;

	for (struct xl *l = q->next; l != q; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
		__u32 id = ntohl(f->h.msg_id);

		if (f->h.type != XW_PKT_SMALL && f->h.type != XW_PKT_MEDIUM)
			continue;
		if (have && id == last)
			continue;
		have = true;
		last = id;
		if (!started_send(e, p, id))
			e->st.sends_lost++;
	}
}

/* @p's carry item (frames carried by a reconnect, not sent yet), if any. */
static struct carry *carry_find(struct peer *p)
{
	for (struct xl *l = p->ms.dataq.next; l != &p->ms.dataq; l = l->next) {
		struct txitem *it = xl_entry(l, struct txitem, link);

		if (it->kind == TX_CARRY)
			return xl_entry(it, struct carry, tx);
	}
	return NULL;
}

/* Put @p's carried frames not sent yet back behind its unacknowledged
 * ones (a reset that does not carry them over: they are replayed or
 * counted lost with those). */
static void carry_unsend(struct peer *p, struct xl *unacked)
{
	struct carry *c = carry_find(p);

	if (!c)
		return;
	while (!xl_empty(&c->frames)) {
		struct xl *l = c->frames.next;

		xl_del(l);
		xl_add_tail(l, unacked);
	}
	xl_del(&c->tx.link);
	free(c);
}

/* Free @p's carried frames (the engine goes). */
void xwi_carry_free(struct peer *p)
{
	struct carry *c = carry_find(p);

	if (!c)
		return;
	xwi_frames_free(&c->frames);
	xl_del(&c->tx.link);
	free(c);
}

/*
 * A reconnect (the peer's new session, from the same peer endpoint): the
 * message streams go on.  Eager frames not acknowledged are sent again on
 * the new connection, as they were (same message ids and fragments; the
 * receiver keeps its partial messages and ignores what it has); eager
 * sends go on where they were; large sends that started are rewound and
 * sent again from their RNDV under the same id (their receiver dropped
 * them, or completed them and answers the RNDV with its NOTIFY again).
 */
static void carry_over(struct xwi_engine *e, struct peer *p, struct xl *unacked)
{
	struct carry *c = carry_find(p);
	struct xl front, moved;

	xl_init(&front);
	xl_init(&moved);
	for (struct xl *l = unacked->next, *n; l != unacked; l = n) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);

		n = l->next;
		if (f->h.type != XW_PKT_SMALL && f->h.type != XW_PKT_MEDIUM)
			continue;
		xl_del(&f->link);
		xl_add_tail(&f->link, &moved);
	}
	if (!xl_empty(&moved) && !c) {
		c = zalloc(1, sizeof(*c));
		if (!c) {
			frames_lost(e, p, &moved);
			xwi_frames_free(&moved);
		} else {
			c->tx.kind = TX_CARRY;
			xl_init(&c->frames);
			xl_init(&c->tx.link);
		}
	}
	if (c) {
		/* the frames sent on the closed connection came from the
		 * head of an earlier carry, or after it: they go first */
		xl_splice_front(&moved, &c->frames);
		xl_del(&c->tx.link);
		xl_add_tail(&c->tx.link, &front);
	}
	/* started large sends: rewound, in the order they started */
	for (struct xl *l = e->pending.next; l != &e->pending; l = l->next) {
		struct xwi_req_priv *s = xl_entry(l, struct xwi_req_priv, elink);

		if (s->req->kind != XWI_REQ_SEND || s->peer != p || !s->started ||
		    s->cls != XW_PKT_RNDV)
			continue;
		while (!xl_empty(&s->jobs))
			xwi_job_free(xl_entry(s->jobs.next, struct job, slink));
		send_rewind(e, s, true);
		xl_add_tail(&s->tx.link, &front);
		e->st.replayed++;
	}
	/* @front goes ahead of everything queued (an eager send that was
	 * half out stays right behind: its first frames are carried) */
	xl_splice_front(&front, &p->ms.dataq);
}

/*
 * Partial eager messages of a peer we gave up are kept (if it comes back,
 * the rest of them is carried over: see peer_reset) - for give_up_ns, or
 * until their memory is needed for a live peer's message: then they are
 * dropped (abandoned).  The same when memory is needed, for the partial
 * messages of a peer silent for give_up_ns (a sender that died, or forged
 * the start of a message, would otherwise hold the unexpected bytes for
 * ever, and every live peer's eager message would be refused).
 */
static void orphans_drop(struct xwi_engine *e, struct peer *p)
{
	for (struct xl *l = e->rmsgs.next, *n; l != &e->rmsgs; l = n) {
		struct rmsg *m = xl_entry(l, struct rmsg, alink);

		n = l->next;
		if (m->peer != p || m->req || m->rndv || m->nhave == m->nfrags)
			continue;
		e->st.abandoned++;
		xwi_rmsg_free(e, m);
	}
	p->ms.orphan_since = 0;
}

/* Memory is needed: drop the partial messages of peers given up or silent
 * for give_up_ns (one pass over the messages held: a flood of peers costs
 * nothing here).  True if anything was dropped. */
bool xwi_orphans_reclaim(struct xwi_engine *e)
{
	__u64 t = now(e), before = e->st.abandoned;

	for (struct xl *l = e->rmsgs.next, *n; l != &e->rmsgs; l = n) {
		struct rmsg *m = xl_entry(l, struct rmsg, alink);
		const struct peer *p = m->peer;

		n = l->next;
		if (m->req || m->rndv || m->nhave == m->nfrags)
			continue;
		if ((p->ms.orphan_since && !xwi_conn_up(p)) ||
		    (xwi_conn_up(p) && t - xwi_conn_heard(p) >= e->cfg.give_up_ns)) {
			e->st.abandoned++;
			xwi_rmsg_free(e, m);
		}
	}
	return e->st.abandoned != before;
}

/*
 * The peer endpoint behind @p is another one than the one our message ids
 * count for (it was reopened; we learn it when it connects after we gave
 * it up, or when its introduction replaces an empty session): the old
 * one's messages we still hold incomplete are dropped (receives fail with
 * -ECONNRESET).  Our ids go on (frames with them may be on their way to
 * it, carried ones too: it starts at our resume point, see stream_sync).
 */
static void stream_new(struct xwi_engine *e, struct peer *p)
{
	for (struct xl *l = e->rmsgs.next, *n; l != &e->rmsgs; l = n) {
		struct rmsg *m = xl_entry(l, struct rmsg, alink);

		n = l->next;
		if (m->peer != p || (m->state == R_UNEXP && !m->rndv && m->nhave == m->nfrags))
			continue;
		xwi_rmsg_fail_req(e, m, -ECONNRESET);
		xwi_rmsg_free(e, m);
	}
	p->ms.nredo = 0;
}

/*
 * A new session of the peer told us its endpoint (@eid) and where its
 * message stream to us resumes (@resume: every message of it before that
 * is final - delivered, or failed at its end - and is never sent again).
 * Messages before @resume that we hold incomplete are dropped (receives
 * fail with -ECONNRESET); ids we never saw before it are skipped.
 */
void xwi_msg_stream_sync(struct xwi_engine *e, struct peer *p, __u32 eid, __u32 resume,
			 __u32 finals)
{
	if (!eid || (p->ms.peer_eid && p->ms.peer_eid != eid)) {
		/* another endpoint: its stream to us starts at @resume */
		for (__u32 i = 0; i < p->ms.nold_eids && i < XWI_RETIRED; i++)
			if (eid && p->ms.old_eids[i] == eid)
				e->st.eid_flaps++; /* late frames of a dead one */
		if (p->ms.peer_eid)
			p->ms.old_eids[p->ms.nold_eids++ % XWI_RETIRED] = p->ms.peer_eid;
		stream_new(e, p);
		p->ms.rx_next_id = resume;
	}
	p->ms.peer_eid = eid;
	if (resume - p->ms.rx_next_id >= XWI_ORDER_WINDOW && !id_before(resume, p->ms.rx_next_id))
		return; /* bogus */
	p->ms.skip_base = resume;
	p->ms.skip_mask = finals;
	for (struct xl *l = e->rmsgs.next, *n; l != &e->rmsgs; l = n) {
		struct rmsg *m = xl_entry(l, struct rmsg, alink);

		n = l->next;
		if (m->peer != p || (!id_before(m->msg_id, resume) && !xwi_id_final(p, m->msg_id)) ||
		    (m->state == R_UNEXP && !m->rndv && m->nhave == m->nfrags))
			continue;
		xwi_rmsg_fail_req(e, m, -ECONNRESET);
		e->st.abandoned++;
		xwi_rmsg_free(e, m);
	}
	redo_trim(p, resume);
	if (id_before(p->ms.rx_next_id, resume))
		p->ms.rx_next_id = resume;
	xwi_next_turn(e, p);
}

/*
 * The connection with @p ended (xwi_conn_reset; @unacked: its frames never
 * acknowledged).
 *  RM_NEWPEER: requests that put frames on the wire with it (started
 *   sends, receives of its messages) complete with @err; sends not started
 *   stay queued for the new connection, and messages the old incarnation
 *   never acknowledged are sent again (replay_unacked); the message ids
 *   start again from 0.
 *  RM_RECONNECT: the message streams go on (carry_over); only large
 *   messages being received complete with @err (the sender starts them
 *   again: taken again, see redo).
 *  RM_GIVEUP: every request with the peer completes with @err, receives
 *   posted for messages from it only (directed) too; the message ids go on
 *   (if the same peer endpoint comes back, nothing it already gave us is
 *   taken twice), and messages of it we hold without a receive stay.
 * Complete eager messages in the unexpected queue always stay.
 */
unsigned int xwi_msg_reset(struct xwi_engine *e, struct peer *p, int err,
			   enum xwi_reset_mode mode, struct xl *unacked)
{
	struct xl *l, *n;
	unsigned int cut;

	if (mode != RM_RECONNECT)
		carry_unsend(p, unacked);
	cut = !xl_empty(unacked);
	if (mode == RM_NEWPEER) {
		/* another endpoint: a new message stream, from id 0; what
		 * the old one never acknowledged goes to the new one
		 * (renumbered); carried frames of a reconnect are lost */
		replay_unacked(e, p, unacked);
		for (l = e->pending.next; l != &e->pending; l = l->next) {
			struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, elink);

			if (r->req->kind == XWI_REQ_SEND && r->peer == p && !r->started)
				r->keep_id = false;
		}
	} else if (mode == RM_RECONNECT) {
		carry_over(e, p, unacked);
	} else {
		frames_lost(e, p, unacked);
		p->ms.orphan_since = now(e);
	}

	for (l = e->pending.next; l != &e->pending; l = n) {
		struct xwi_req_priv *r = xl_entry(l, struct xwi_req_priv, elink);

		n = l->next;
		if (r->req->kind == XWI_REQ_SEND && r->peer == p &&
		    (mode == RM_GIVEUP || (mode == RM_NEWPEER && r->started))) {
			xwi_send_complete(e, r, err);
			cut++;
			n = e->pending.next; /* the list changed: start over */
		}
	}
	for (l = e->rmsgs.next; l != &e->rmsgs; l = n) {
		struct rmsg *m = xl_entry(l, struct rmsg, alink);
		bool complete_unexp = m->state == R_UNEXP && !m->rndv && m->nhave == m->nfrags;

		n = l->next;
		if (m->peer != p || complete_unexp)
			continue;
		if (mode != RM_NEWPEER && !m->rndv && (!m->req || mode == RM_RECONNECT))
			continue; /* eager: the sender's frames complete it */
		cut += m->req != NULL;
		xwi_rmsg_fail_req(e, m, err);
		if (mode != RM_NEWPEER && m->rndv)
			xwi_redo_add(e, p, m->msg_id);
		xwi_rmsg_free(e, m);
	}
	xwi_ctrlq_drop(p);
	if (mode == RM_GIVEUP)
		xwi_match_fail_directed(e, p, err);
	if (mode == RM_NEWPEER)
		p->ms.tx_next_id = p->ms.rx_next_id = 0;
	p->ms.last = NULL;
	xwi_tx_idle_check(p);
	return cut;
}

/* Where our stream to @p resumes, for our CONNECT / CONNECT_REPLY. */
__u64 xwi_msg_hello(const struct xwi_engine *e, const struct peer *p, __u32 *finals)
{
	return (__u64)e->eid << 32 | resume_id(e, p, finals);
}

void xwi_msg_timers(struct xwi_engine *e)
{
	__u64 t = now(e);

	for (struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		if (p->ms.orphan_since &&
		    (xwi_conn_up(p) || t - p->ms.orphan_since >= e->cfg.give_up_ns)) {
			if (xwi_conn_up(p))
				p->ms.orphan_since = 0; /* it came back: they are its again */
			else
				orphans_drop(e, p);
		}
	}
}

__u64 xwi_msg_deadline(const struct xwi_engine *e)
{
	__u64 d = UINT64_MAX;

	for (const struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		const struct peer *p = xl_entry(l, struct peer, link);

		if (p->ms.orphan_since && p->ms.orphan_since + e->cfg.give_up_ns < d)
			d = p->ms.orphan_since + e->cfg.give_up_ns;
	}
	return d;
}
