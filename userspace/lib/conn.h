/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * conn.h - the connection layer's interface (conn.c, peer.c), for the
 * layer above (the message layer: msg.c, stream.c, match.c) and the
 * engine's entry points (engine.c).
 *
 * Received frames come in through xwi_conn_rx() (from xwi_engine_rx):
 * the CRC, the header rules, then the connection's own frames are taken
 * here and the message layer's go up in order, each once, through
 * xwi_msg_rx().  Every up-call of this layer is declared in msg.h's
 * section "up-calls of the connection layer"; nothing else of the layers
 * above is called from here.
 *
 * With cfg.reliable, every frame of the message layer goes out through
 * xwi_conn_emit() (it takes a sequence number and is kept until acked);
 * resets and give-ups are reported up (xwi_msg_reset).  Without
 * cfg.reliable xwi_conn_emit() transmits at once and frames go up as they
 * come.  The connection's state (struct xwi_conn, peer->cn) is read by no
 * one else; the inline accessors below are what the layers above may
 * know of it.
 */
#ifndef XWI_CONN_H
#define XWI_CONN_H

#include "engine_int.h"

/* How a connection ends (xwi_conn_reset, xwi_msg_reset). */
enum xwi_reset_mode {
	RM_NEWPEER,	/* another peer endpoint (restart, CLOSE): new streams */
	RM_RECONNECT,	/* the same peer endpoint, a new session: streams go on */
	RM_GIVEUP,	/* the peer is silent: everything with it fails */
};

/* @len random bytes (ops->random, else getrandom(), else the clock). */
void xwi_rand_bytes(struct xwi_engine *e, void *buf, size_t len);

/* The handshake starts (if none is under way): CONNECT goes out now, or
 * from progress. */
void xwi_conn_start(struct xwi_engine *e, struct peer *p);

/* A new peer's connection: none yet. */
static inline void xwi_conn_init(const struct xwi_engine *e, struct peer *p)
{
	p->cn.lossless = e->ops.lossless && e->ops.lossless(e->ctx, &p->addr);
	p->cn.rto = e->cfg.rto_init_ns;
	xl_init(&p->cn.rtxq);
	xl_init(&p->cn.ooo);
}

/* Free the frames @p's connection keeps (the engine goes). */
static inline void xwi_conn_fini(struct peer *p)
{
	xwi_frames_free(&p->cn.rtxq);
	xwi_frames_free(&p->cn.ooo);
}

/*
 * May a sequenced frame go to @p now (reliable engines)?  Once our
 * CONNECT went out (before the peer answers: the CONNECT precedes them and
 * tells the peer our session and ISN, so the first messages cost no round
 * trip), within the window.
 */
static inline bool xwi_conn_can_tx(const struct xwi_engine *e, const struct peer *p)
{
	return (p->cn.cstate == C_EST || (p->cn.cstate == C_SYN && p->cn.conn_tries)) &&
	       p->cn.inflight < e->cfg.window;
}

void xwi_conn_renamed(struct xwi_engine *e, struct peer *p, __u64 nonce);

/* The application sends to @p with an address carrying @nonce (0: none):
 * a nonce we never saw is a new incarnation of the peer endpoint (the
 * application learned it through its own exchange, as a launcher gives
 * a restarted process's address): the connection with the old one is
 * reset as a restart (xwi_conn_renamed). */
static inline void xwi_conn_named(struct xwi_engine *e, struct peer *p, __u64 nonce)
{
	if (nonce && nonce != p->addr.nonce)
		xwi_conn_renamed(e, p, nonce);
}

/* May the message layer's frames go to @p now?  With cfg.reliable a
 * connection is needed: the handshake starts if none is under way (the
 * frames wait for the CONNECT to go out, or for the window). */
static inline bool xwi_conn_tx_ready(struct xwi_engine *e, struct peer *p)
{
	if (!e->cfg.reliable)
		return true;
	if (p->cn.cstate == C_NONE)
		xwi_conn_start(e, p);
	return xwi_conn_can_tx(e, p);
}

/* Is @p reached through a lossless path (ops.lossless: a local peer)? */
static inline bool xwi_conn_lossless(const struct peer *p)
{
	return p->cn.lossless;
}

/* Does a frame to @p go out at once and stay nowhere: a lossless peer
 * (the local ring) whose connection is established, with room in the
 * window - xwi_conn_emit() hands it to ops.send, keeps no copy, arms no
 * timer (the message layer's short path for a one-frame send). */
static inline bool xwi_conn_direct(const struct xwi_engine *e, const struct peer *p)
{
	return e->cfg.reliable && p->cn.lossless && p->cn.cstate == C_EST &&
	       p->cn.inflight < e->cfg.window;
}

/* Our session of @p's connection (the `session` of the frames we send). */
static inline __u32 xwi_conn_my_sid(const struct peer *p)
{
	return p->cn.my_sid;
}

/* Do we know the peer's session (a connection is up or half-open)? */
static inline bool xwi_conn_up(const struct peer *p)
{
	return p->cn.rx_known;
}

/* The peer's last sign of life: a frame of its session arrived, or its
 * endpoint answered a liveness probe (it is computing, or stopped, but its
 * process and endpoint are there). */
static inline __u64 xwi_conn_heard(const struct peer *p)
{
	return p->cn.last_heard > p->cn.last_alive ? p->cn.last_heard : p->cn.last_alive;
}

/* Our frames to @p not acknowledged yet (struct xwi_frame, by seq). */
static inline const struct xl *xwi_conn_unacked(const struct peer *p)
{
	return &p->cn.rtxq;
}

/* Nothing was ever exchanged on @p's connection (xwi_peer_idle). */
static inline bool xwi_conn_idle(const struct peer *p)
{
	return !(p->cn.acked_once || (p->cn.rx_known && p->cn.rcv_nxt != p->cn.peer_isn) ||
		 p->cn.snd_nxt != p->cn.isn || p->cn.inflight || p->cn.nooo ||
		 !xl_empty(&p->cn.rtxq) || !xl_empty(&p->cn.ooo));
}

/*
 * Transmit a frame of the message layer to @p: @h complete but for
 * payload_len (and, reliable, session/seq/ack), in network order.  0, or
 * -EAGAIN (not sent: the window is full, the handshake not started, or
 * the link is full; the caller keeps the frame queued).  @owner (reliable,
 * not a lossless peer's established connection): @payload is in send
 * @owner's buffer and is kept by reference, not copied (xwi_frame.ext;
 * xwi_msg_unref() when the frame goes); NULL: copied.
 */
int xwi_conn_emit(struct xwi_engine *e, struct peer *p, struct xw_hdr *h, const void *payload,
		  size_t len, struct xwi_req_priv *owner);
/* Send @s's buffer is no longer to be read (abort): the frames kept from
 * it lazily take copies of their payloads.  0, or -ENOMEM: some still
 * refer to it (the send then completes once they are acknowledged). */
int xwi_conn_unref(struct xwi_engine *e, struct peer *p, struct xwi_req_priv *s);
/* Forget @p's connection (conn_event(peer, 0) if it had a session). */
void xwi_conn_forget(struct xwi_engine *e, struct peer *p);
/* End @p's connection: the message layer is told (xwi_msg_reset) with
 * the frames not acknowledged, then the connection state is cleared.
 * Returns what that cut short (xwi_msg_reset; 0: nothing was under way). */
unsigned int xwi_conn_reset(struct xwi_engine *e, struct peer *p, int err,
			    enum xwi_reset_mode mode);

/*
 * A frame received from @src (xwi_engine_rx: arguments checked, @h
 * aligned, network order; @len bytes in @pl follow it, in one piece or
 * several (xwi_engine_rx_iov: a multi-buffer frame); @lossless: through the
 * local ring, xwi_engine_rx_local).  The CRC (cfg.crc, not @lossless), the
 * header rules (xwi_frame_check), then: the connection's own frames
 * (CONNECT*, PROBE*, ACK, CLOSE) are taken here; a frame of the message
 * layer goes up once, through xwi_msg_rx() - with cfg.reliable in order,
 * after its session, ack and sequence number were taken.  Returns as
 * xwi_engine_rx().
 */
int xwi_conn_rx(struct xwi_engine *e, const struct xw_addr *src, struct xw_hdr *h,
		const struct xwi_pl *pl, size_t len, bool lossless);
/* xwi_engine_shutdown(): CLOSE to every connected peer if @send_close,
 * then every connection forgotten (conn_event(peer, 0)). */
void xwi_conn_close_all(struct xwi_engine *e, bool send_close);

/* Timers of every connection: handshake retries, introductions, CONNECT
 * replies, probes, retransmissions, give-ups.  Frames sent. */
int xwi_conn_timers(struct xwi_engine *e);
/* ACKs that are due; with @owed, every ACK owed, its delay cut short.
 * Frames sent. */
int xwi_conn_acks(struct xwi_engine *e, bool owed);
/* Is a connection frame owed at once (reply, resend, ack)? */
bool xwi_conn_pending(const struct xwi_engine *e);
/* The next connection timer (0: now; UINT64_MAX: none). */
__u64 xwi_conn_deadline(const struct xwi_engine *e);
/* The largest current RTO (backoff included) among the established
 * connections, and that connection's smoothed RTT (0, 0: none). */
void xwi_conn_rto_worst(const struct xwi_engine *e, __u64 *rto, __u64 *srtt);

/* ---- the peer table (peer.c) -------------------------------------------- */

/* The entry of address @a, NULL if none (the last one found is cached). */
static inline struct peer *xwi_peer_find(struct xwi_engine *e, const struct xw_addr *a)
{
	struct xl *l;

	if (e->last_peer && xw_addr_equal(&e->last_peer->addr, a))
		return e->last_peer;
	for (l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		if (xw_addr_equal(&p->addr, a)) {
			e->last_peer = p;
			return p;
		}
	}
	return NULL;
}

/* @a's entry, made if new (NULL: no memory, or the table is full). */
struct peer *xwi_peer_get(struct xwi_engine *e, const struct xw_addr *a);
/* Nothing exchanged with @p, nothing held for it (may be forgotten). */
bool xwi_peer_idle(const struct xwi_engine *e, const struct peer *p);
/* Drop @p from the table and free it. */
void xwi_peer_forget(struct xwi_engine *e, struct peer *p);
/* Free every entry (the engine goes; the message layer freed its part). */
void xwi_peers_free(struct xwi_engine *e);

#endif
