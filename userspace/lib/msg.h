/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * msg.h - the message layer's interface inside the engine (msg.c,
 * stream.c; matching, match.c, beside it): what the engine's entry points
 * (engine.c) call, what the parts of the layer call of each other, and -
 * in one section, at the end - the up-calls of the connection layer below
 * (conn.c, peer.c), the only functions of this layer it calls.  The
 * message layer owns the message-layer part of a peer (struct xwi_mpeer,
 * peer->ms), requests, incoming messages and the TX scheduler's
 * round-robin (e->txrr); it reaches the connection only through conn.h.
 */
#ifndef XWI_MSG_H
#define XWI_MSG_H

#include "engine_int.h"
#include "conn.h"

/* Has @p frames queued to emit? */
static inline bool xwi_msg_has_work(const struct peer *p)
{
	return !xl_empty(&p->ms.ctrlq) || !xl_empty(&p->ms.dataq);
}

/* ---- for the engine's entry points (engine.c) ---------------------------- */

/* The TX scheduler: emit up to @budget queued frames, peers served
 * round-robin one frame at a time.  Frames emitted. */
int xwi_tx_run(struct xwi_engine *e, int budget);
/* Message-layer timers (partial messages of peers given up). */
void xwi_msg_timers(struct xwi_engine *e);
/* The next of them (UINT64_MAX: none). */
__u64 xwi_msg_deadline(const struct xwi_engine *e);
/* Free what the message layer holds (the engine goes). */
void xwi_msg_fini(struct xwi_engine *e);
/* xwi_engine_isend_data() with its arguments checked. */
int xwi_msg_send(struct xwi_engine *e, const struct xw_addr *dst, const void *buf, size_t len,
		 __u64 match, __u32 flags, __u32 data, struct xw_request **reqp);
/* xwi_engine_cancel() / xwi_engine_abort() of pending request @req. */
int xwi_msg_cancel(struct xwi_engine *e, struct xw_request *req);
void xwi_msg_abort(struct xwi_engine *e, struct xw_request *req, int err);

/* ---- inside the message layer (msg.c, stream.c, match.c) ----------------- */

/* A new pending request of @kind (queued in e->pending). */
struct xw_request *xwi_req_new(struct xwi_engine *e, enum xwi_req_kind kind);
/* Receive @req takes eligible message @m (held data copied over); @m may
 * complete (and be freed) at once. */
void xwi_msg_attach(struct xwi_engine *e, struct rmsg *m, struct xw_request *req);

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
/* Drop every control frame queued to @p (standalone ones freed). */
void xwi_ctrlq_drop(struct peer *p);

/* ---- up-calls of the connection layer (conn.c, peer.c) ------------------- */
/*
 * The only functions of the layers above that the connection layer calls.
 * On the receive path a frame of the message layer enters it once, through
 * xwi_msg_rx(); the connection's own frames may end in xwi_msg_kick (the
 * connection may send now), xwi_msg_reset and xwi_msg_stream_sync (a
 * session ended or began).
 */

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

/* The peer table frees @p. */
static inline void xwi_msg_peer_fini(struct peer *p)
{
	free(p->ms.redo);
}

/* A frame kept lazily from send @s's buffer went (acknowledged, or its
 * connection reset): the send completes if it only waited for that. */
void xwi_msg_unref(struct xwi_engine *e, struct xwi_req_priv *s);

/* Nothing of the message layer with @p (xwi_peer_idle). */
bool xwi_msg_idle(const struct xwi_engine *e, const struct peer *p);

/*
 * Put @p in the round-robin when it has frames to emit and its connection
 * lets them go (xwi_conn_tx_ready: with cfg.reliable the handshake starts
 * if there is none; else it is kicked again once the CONNECT is out or the
 * window opens).  The connection layer calls it when that happens.
 */
static inline void xwi_msg_kick(struct xwi_engine *e, struct peer *p)
{
	if (!xl_empty(&p->ms.rr) || !xwi_msg_has_work(p))
		return;
	if (!xwi_conn_tx_ready(e, p))
		return;
	xl_add_tail(&p->ms.rr, &e->txrr);
}

/* A lossless peer's mark: it read our large message (xwi_engine_cma_done). */
void xwi_msg_cma_done(struct xwi_engine *e, const struct xw_addr *src, __u32 msg_id,
		      __u32 session);

/*
 * A frame of the message layer (SMALL, MEDIUM, RNDV, PULL_REPLY, PULL,
 * NOTIFY) from @src, in order (reliable) or as it came; its header rules
 * are checked (xwi_frame_check).  @p: @src's peer table entry (reliable:
 * always; else NULL when the address is new).  Afterwards @p is kicked
 * (its connection may have opened with this frame's ack).  0 (taken or
 * harmlessly ignored), -EPROTO, or -ENOBUFS / -ENOMEM: not taken for want
 * of memory - the connection does not acknowledge it, so the sender
 * resends it later.
 */
int xwi_msg_rx(struct xwi_engine *e, struct peer *p, const struct xw_addr *src,
	       const struct xw_hdr *h, const struct xwi_pl *pl);

/*
 * @p's connection ended (@mode; requests fail with @err as the mode
 * says).  @unacked: our frames the connection never had acknowledged
 * (struct xwi_frame, in order); the message layer may take frames off it
 * (carried over a reconnect), the connection frees the rest.  Returns what
 * the end cut short: requests completed with @err, plus 1 if @unacked held
 * frames (0: nothing was under way with @p).
 */
unsigned int xwi_msg_reset(struct xwi_engine *e, struct peer *p, int err,
			   enum xwi_reset_mode mode, struct xl *unacked);
/* What a CONNECT / CONNECT_REPLY to @p carries of our message stream:
 * match (our endpoint incarnation << 32 | resume id) and, in *@finals,
 * msg_len (the final ids after resume).  See docs/PROTOCOL.md. */
__u64 xwi_msg_hello(const struct xwi_engine *e, const struct peer *p, __u32 *finals);
/* A new session of the peer told us its endpoint @eid, where its stream
 * resumes and the final ids after that. */
void xwi_msg_stream_sync(struct xwi_engine *e, struct peer *p, __u32 eid, __u32 resume,
			 __u32 finals);

/* Large sends to @p wait for its PULLs (a silent peer is probed). */
static inline bool xwi_msg_awaits_pulls(const struct peer *p)
{
	return !xl_empty(&p->ms.sends);
}

/* Our PULLs to @p are out and their data is owed (silence gives up). */
bool xwi_msg_awaits_data(const struct peer *p);

#endif
