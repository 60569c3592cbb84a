/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * msg.h - the message layer's interface inside the engine: what matching
 * (match.c) and the engine (engine.c) call, and the up-calls of the
 * connection layer below it (conn.c).  The message layer owns the
 * message-layer part of a peer (struct xwi_mpeer, peer->ms), requests,
 * incoming messages and the TX scheduler's round-robin (e->txrr); it
 * reaches the connection only through conn.h.
 */
#ifndef XWI_MSG_H
#define XWI_MSG_H

#include "engine_int.h"
#include "conn.h"

/* A new pending request of @kind (queued in e->pending). */
struct xw_request *xwi_req_new(struct xwi_engine *e, enum xwi_req_kind kind);
/* Receive @req takes eligible message @m (held data copied over); @m may
 * complete (and be freed) at once. */
void xwi_msg_attach(struct xwi_engine *e, struct rmsg *m, struct xw_request *req);
/* The TX scheduler: emit up to @budget queued frames, peers served
 * round-robin one frame at a time.  Frames emitted. */
int xwi_tx_run(struct xwi_engine *e, int budget);

/* A new peer's message state: nothing queued, streams from id 0. */
static inline void xwi_msg_peer_init(struct peer *p)
{
	xl_init(&p->ms.rr);
	xl_init(&p->ms.ctrlq);
	xl_init(&p->ms.dataq);
	xl_init(&p->ms.sends);
	xl_init(&p->ms.active);
	xl_init(&p->ms.held);
}

static inline void xwi_msg_peer_fini(struct peer *p)
{
	free(p->ms.redo);
}

static inline bool xwi_msg_has_work(const struct peer *p)
{
	return !xl_empty(&p->ms.ctrlq) || !xl_empty(&p->ms.dataq);
}

/* Put @p in the round-robin when it has frames to emit (and, reliable,
 * its connection lets them go; else it is kicked again once it does). */
static inline void xwi_msg_kick(struct xwi_engine *e, struct peer *p)
{
	if (!xl_empty(&p->ms.rr) || !xwi_msg_has_work(p))
		return;
	if (e->cfg.reliable) {
		if (p->cn.cstate == C_NONE)
			xwi_conn_start(e, p);
		if (!xwi_conn_can_tx(e, p))
			return; /* kicked again when the CONNECT is out / acked */
	}
	xl_add_tail(&p->ms.rr, &e->txrr);
}

/* Message-layer timers (partial messages of peers given up). */
void xwi_msg_timers(struct xwi_engine *e);
/* The next of them (UINT64_MAX: none). */
__u64 xwi_msg_deadline(const struct xwi_engine *e);
/* Nothing of the message layer with @p (xwi_peer_idle). */
bool xwi_msg_idle(const struct xwi_engine *e, const struct peer *p);

/* ---- inside the message layer (msg.c, stream.c) ------------------------- */

/* Take @p out of the round-robin when its queues became empty. */
static inline void xwi_tx_idle_check(struct peer *p)
{
	if (!xwi_msg_has_work(p) && !xl_empty(&p->ms.rr))
		xl_del(&p->ms.rr);
}

/* Request @req is complete (status set). */
void xwi_req_done(struct xwi_engine *e, struct xw_request *req);
/* Complete send @s (error @err); drops whatever of it is still queued. */
void xwi_send_complete(struct xwi_engine *e, struct xwi_req_priv *s, int err);
void xwi_job_free(struct job *j);
/* Take control frame @c out of @p's queue if queued. */
void xwi_ctrl_unqueue(struct peer *p, struct ctrl *c);
void xwi_rmsg_free(struct xwi_engine *e, struct rmsg *m);
/* The receive that took @m (if any) completes with @err. */
void xwi_rmsg_fail_req(struct xwi_engine *e, struct rmsg *m, int err);
/* @m's id is its peer's next: place it, and the held ones that follow. */
void xwi_rmsg_eligible(struct xwi_engine *e, struct rmsg *m);
/* @p's next id (rx_next_id) moved: step over the ids the peer said are
 * final, then the held message whose turn has come goes on. */
void xwi_next_turn(struct xwi_engine *e, struct peer *p);
/* Step rx_next_id over the ids the peer said are final; is @id one? */
void xwi_skip_finals(struct peer *p);
bool xwi_id_final(const struct peer *p, __u32 id);
/* Ids dropped incomplete by a reset, taken again if they come again. */
void xwi_redo_add(struct xwi_engine *e, struct peer *p, __u32 id);
bool xwi_redo_take(struct peer *p, __u32 id);
/* Memory is needed: drop partial messages of peers given up or silent.
 * True if anything was dropped. */
bool xwi_orphans_reclaim(struct xwi_engine *e);
/* Free @p's carried frames (the engine goes). */
void xwi_carry_free(struct peer *p);

/* ---- up-calls from the connection layer (conn.c) ------------------------ */

/* Checks of a received frame that need no state (the header rules and
 * the fragment geometry, docs/PROTOCOL.md "Fragments").  0 or -EPROTO. */
static inline int xwi_msg_check(const struct xwi_engine *e, const struct xw_hdr *h,
				size_t len)
{
	__u64 P = e->cfg.frag_payload;
	__u32 plen = ntohs(h->payload_len), mlen = ntohl(h->msg_len), off = ntohl(h->frag_off);
	__u32 idx = ntohl(h->frag_idx), cnt = ntohl(h->frag_count);

	if (h->version != XW_VERSION || h->type == XW_PKT_INVALID || h->type >= XW_PKT_TYPE_MAX)
		return -EPROTO;
	if (plen > len || ntohs(h->dst_ep) != e->cfg.ep)
		return -EPROTO;
	switch (h->type) {
	case XW_PKT_SMALL:
	case XW_PKT_MEDIUM:
	case XW_PKT_RNDV:
	case XW_PKT_PULL_REPLY:
	case XW_PKT_PULL:
		break;
	case XW_PKT_NOTIFY:
		if (plen)
			return -EPROTO;
		/* fall through */
	default:
		return (off || idx || cnt) ? -EPROTO : 0;
	}
	if (cnt == 0 || idx >= cnt || cnt != nfrags_of(mlen, P))
		return -EPROTO;
	switch (h->type) {
	case XW_PKT_SMALL:
		if (plen != mlen || idx || off || mlen > P)
			return -EPROTO;
		break;
	case XW_PKT_RNDV:
		if (off || plen != frag_size(mlen, (__u32)P, 0))
			return -EPROTO;
		break;
	case XW_PKT_PULL:
		if (off != idx * P || plen != sizeof(struct xw_pull_req))
			return -EPROTO;
		break;
	default: /* MEDIUM, PULL_REPLY */
		if (off != idx * P || plen != frag_size(mlen, (__u32)P, idx))
			return -EPROTO;
		break;
	}
	return 0;
}

int xwi_msg_rx_data(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		    const void *payload);
int xwi_msg_rx_pull(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		    const void *payload);
int xwi_msg_rx_notify(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h);

/*
 * A frame of the message layer from @src, in order (reliable) or as it
 * came.  0 (taken or harmlessly ignored), -EPROTO, or -ENOBUFS / -ENOMEM:
 * not taken for want of memory - the connection does not acknowledge it,
 * so the sender resends it later.
 */
static inline int xwi_msg_rx(struct xwi_engine *e, const struct xw_addr *src,
			     const struct xw_hdr *h, const void *payload)
{
	switch (h->type) {
	case XW_PKT_SMALL:
	case XW_PKT_MEDIUM:
	case XW_PKT_RNDV:
	case XW_PKT_PULL_REPLY:
		return xwi_msg_rx_data(e, src, h, payload);
	case XW_PKT_PULL:
		return xwi_msg_rx_pull(e, src, h, payload);
	case XW_PKT_NOTIFY:
		return xwi_msg_rx_notify(e, src, h);
	default:
		e->st.rx_frames[h->type]++;
		return 0;
	}
}

/*
 * @p's connection ended (@mode; requests fail with @err as the mode
 * says).  @unacked: our frames the connection never had acknowledged
 * (struct xwi_frame, in order); the message layer may take frames off it
 * (carried over a reconnect), the connection frees the rest.
 */
void xwi_msg_reset(struct xwi_engine *e, struct peer *p, int err, enum xwi_reset_mode mode,
		   struct xl *unacked);
/* What a CONNECT / CONNECT_REPLY to @p carries of our message stream:
 * match (our endpoint incarnation << 32 | resume id) and, in *@finals,
 * msg_len (the final ids after resume).  See docs/PROTOCOL.md. */
__u64 xwi_msg_hello(const struct xwi_engine *e, const struct peer *p, __u32 *finals);
/* A new session of the peer told us its endpoint @eid, where its stream
 * resumes and the final ids after that. */
void xwi_msg_stream_sync(struct xwi_engine *e, struct peer *p, __u32 eid, __u32 resume,
			 __u32 finals);

/* Is @eid the peer endpoint our message streams with @p count for (a new
 * session of it is a reconnect, not a restart)? */
static inline bool xwi_msg_same_endpoint(const struct peer *p, __u32 eid)
{
	return eid && eid == p->ms.peer_eid;
}

/* Large sends to @p wait for its PULLs (a silent peer is probed). */
static inline bool xwi_msg_awaits_pulls(const struct peer *p)
{
	return !xl_empty(&p->ms.sends);
}

/* Our PULLs to @p are out and their data is owed (silence gives up). */
bool xwi_msg_awaits_data(const struct peer *p);

#endif
