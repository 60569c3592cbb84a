// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * conn.c - the connection layer (cfg.reliable): per peer address a
 * connection that delivers the message layer's frames exactly once and in
 * order - sessions and the CONNECT / CONNECT_REPLY handshake, sequence
 * numbers, cumulative and selective acks, RTO and retransmission, the
 * out-of-order window, CRC32C, resets and give-ups - and the receive
 * path's first layer (xwi_conn_rx, from xwi_engine_rx in engine.c).  See
 * docs/PROTOCOL.md, "Connection layer".  Sections: sending, liveness,
 * sessions and the handshake, loss recovery (RTT, RTO, acks,
 * retransmission: all of it in one section), the receive path, timers.
 *
 * It owns struct xwi_conn (peer->cn) and, with peer.c, the peer table,
 * and nothing else of the engine's state: it hands frames up in order
 * through xwi_msg_rx(), each once, and tells the message layer about
 * resets through xwi_msg_reset() and about the peer's message stream
 * through xwi_msg_stream_sync() (the up-calls of msg.h, its only calls
 * upwards).
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

#include "engine_int.h"
#include "conn.h"
#include "msg.h"

static void conn_send(struct xwi_engine *e, struct peer *p, __u64 t);
static unsigned int sack_bits(const struct peer *p, __u64 *w);
static __u64 rto_cur(const struct xwi_engine *e, const struct peer *p);
static void xmit_stamp(struct xwi_engine *e, struct peer *p, struct xwi_frame *f);
static void tlp_arm(const struct xwi_engine *e, struct peer *p, __u64 t);

/* ---- the connection's own frames ---------------------------------------- */

/* csum of a complete header (network order) and its payload; none to a
 * lossless peer (the ring cannot corrupt a frame: docs/PROTOCOL.md "Local
 * peers"; csum is left as the frame has it, 0 but for a single-copy
 * RNDV). */
static void hdr_seal(const struct xwi_engine *e, const struct peer *p, struct xw_hdr *h,
		     const void *payload, size_t len)
{
	if (p && p->cn.lossless)
		return;
	h->csum = 0;
	if (e->cfg.crc)
		h->csum = htonl(xwi_crc32c(xwi_crc32c(0, h, sizeof(*h)), payload, len));
}

/* Seal @h and send it: the CRC computed while the endpoint copies the
 * frame out (ops.send_crc) where it offers that, else here first. */
static int seal_send(const struct xwi_engine *e, const struct peer *p, struct xw_hdr *h,
		     const void *payload, size_t len)
{
	if (e->ops.send_crc && e->cfg.crc && !p->cn.lossless) {
		h->csum = 0;
		return e->ops.send_crc(e->ctx, &p->addr, h, payload, len);
	}
	hdr_seal(e, p, h, payload, len);
	return e->ops.send(e->ctx, &p->addr, h, payload, len);
}

/* The test hook: is this the first transmission of the chosen type? */
static bool hook_drop(struct xwi_engine *e, __u8 type)
{
	if (!e->cfg.drop_first_type || e->hook_done || type != e->cfg.drop_first_type)
		return false;
	e->hook_done = true;
	e->st.hook_drops++;
	return true;
}

/* A lossless peer has not read frames of ours yet: nothing to resend (it
 * is descheduled or busy; whether it lives, the liveness check says). */
static bool unread(struct xwi_engine *e, const struct peer *p)
{
	return p->cn.lossless && e->ops.unread && e->ops.unread(e->ctx, &p->addr) == 1;
}

/* A frame carrying our current ack went out: no ACK owed any more - except
 * the one with the selective acks while we hold frames out of order (only
 * a pure ACK carries them, @sacks). */
static void ack_sent(const struct xwi_engine *e, struct peer *p, bool sacks)
{
	p->cn.ack_owed = 0;
	p->cn.ack_due = 0;
	if (sacks || !e->cfg.sack || !p->cn.nooo)
		p->cn.ack_now = false;
}

/* An unsequenced frame (ACK, CONNECT*, CLOSE) of @p's connection.  CONNECT
 * and CONNECT_REPLY carry, in match, our endpoint's incarnation (high 32
 * bits) and where our message stream to the peer resumes (low 32), and in
 * msg_len the final ids just after it (see resume_id).  An ACK carries the
 * selective acks (match and its payload, see sack_bits).  CONNECT*, CLOSE
 * carry the peer endpoint's nonce as we know it in frag_off:frag_idx and
 * ours in data:rsvd2 (docs/PROTOCOL.md "Incarnation nonces"). */
static int emit_ctl(struct xwi_engine *e, struct peer *p, __u8 type, __u32 seq, __u32 msg_id)
{
	__u64 w[XW_SACK_EXT_WORDS + 1];
	unsigned int nw = 0;
	struct xw_hdr h;
	__u32 finals;

	hdr_init(e, &h, p, type);
	if (type == XW_PKT_CONNECT || type == XW_PKT_CONNECT_REPLY || type == XW_PKT_CLOSE) {
		h.frag_off = htonl((__u32)(p->addr.nonce >> 32));
		h.frag_idx = htonl((__u32)p->addr.nonce);
		h.data = htonl((__u32)(e->nonce >> 32));
		h.rsvd2 = htonl((__u32)e->nonce);
	}
	if (type == XW_PKT_CONNECT || type == XW_PKT_CONNECT_REPLY) {
		h.match = htobe64(xwi_msg_hello(e, p, &finals));
		h.msg_len = htonl(finals);
	} else if (type == XW_PKT_ACK && e->cfg.sack && p->cn.rx_known) {
		nw = sack_bits(p, w);
		h.match = htobe64(w[0]);
		for (unsigned int i = 0; i < nw; i++)
			w[i] = htobe64(w[i]);
		nw = nw ? nw - 1 : 0; /* words after match: the payload */
		h.payload_len = htons((__u16)(8 * nw));
	}
	h.session = htonl(p->cn.my_sid);
	h.seq = htonl(seq);
	h.ack = htonl(p->cn.rx_known ? p->cn.rcv_nxt : 0);
	h.msg_id = htonl(msg_id);
	hdr_seal(e, p, &h, nw ? &w[1] : NULL, 8 * nw);
	if (!hook_drop(e, type) && e->ops.send(e->ctx, &p->addr, &h, nw ? &w[1] : NULL, 8 * nw))
		return -EAGAIN;
	e->st.tx_frames[type]++;
	if (p->cn.rx_known)
		ack_sent(e, p, type == XW_PKT_ACK);
	return 0;
}

/* ---- liveness of silent peers -------------------------------------------- */

/*
 * Liveness of a peer that is silent while something is owed (docs/
 * PROTOCOL.md "Liveness"): a rank that computes for minutes, or is stopped,
 * must not be given up; a process that died must.  A PROBE asks the peer's
 * XDP program whether the peer endpoint's socket is open; it answers
 * without waking anyone (proto.h).  We put the CRC32C its reply must carry
 * in the probe's data, so the program need not compute one.  1 if a probe
 * went out.
 */
static int emit_probe(struct xwi_engine *e, struct peer *p)
{
	struct xw_hdr h, r;
	__u32 nonce = 0;

	while (!nonce)
		xwi_rand_bytes(e, &nonce, sizeof(nonce));
	hdr_init(e, &h, p, XW_PKT_PROBE);
	h.session = htonl(p->cn.my_sid);
	h.seq = htonl(nonce);
	r = h;
	r.type = XW_PKT_PROBE_REPLY;
	r.dst_ep = h.src_ep;
	r.src_ep = h.dst_ep;
	/* the "gone" answer's (flags XW_F_GONE, rsvd2 0) in rsvd2, then the
	 * "alive" answer's, which keeps rsvd2, in data */
	r.flags = XW_F_GONE;
	hdr_seal(e, NULL, &r, NULL, 0);
	h.rsvd2 = r.csum;
	r.flags = h.flags;
	r.rsvd2 = h.rsvd2;
	hdr_seal(e, NULL, &r, NULL, 0);
	h.data = r.csum;
	hdr_seal(e, NULL, &h, NULL, 0);
	if (e->ops.send(e->ctx, &p->addr, &h, NULL, 0))
		return 0;
	p->cn.probe_nonce = nonce;
	e->st.tx_frames[XW_PKT_PROBE]++;
	e->st.live_probes++;
	return 1;
}

static __u64 min64(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

/* The peer has been silent since @since while something is owed: after a
 * quarter of give_up_ns of it (at most live_probe_ns), ask whether it is
 * alive, then every eighth (at most live_probe_ns; the endpoint layer
 * answers for a peer on this host, a PROBE the others).  A peer that is
 * gone says so at once: the silence it takes to find a dead peer does not
 * grow with give_up_ns, which only bounds a silence nobody answers. */
static __u64 live_due(const struct xwi_engine *e, const struct peer *p, __u64 since)
{
	__u64 lp = e->cfg.live_probe_ns ? e->cfg.live_probe_ns : UINT64_MAX;
	__u64 d = since + min64(e->cfg.give_up_ns / 4, lp);
	__u64 r = p->cn.last_liveprobe + min64(e->cfg.give_up_ns / 8, lp);

	return d > r ? d : r;
}

/*
 * When @p, silent since @since while something is owed, is given up:
 * give_up_ns after its last sign of life, and not before our probes have
 * gone unanswered for half of it - we may have been away ourselves (a
 * process that computed for a minute, or was stopped, ran no timers and
 * sent no probes: its own absence is no evidence against its peers).
 * UINT64_MAX while no probe has gone out since @since.
 */
static __u64 giveup_at(const struct xwi_engine *e, const struct peer *p, __u64 since)
{
	__u64 g = since + e->cfg.give_up_ns, q = p->cn.probing_since + e->cfg.give_up_ns / 2;

	if (p->cn.probing_since <= since)
		return UINT64_MAX;
	return g > q ? g : q;
}

static void give_up(struct xwi_engine *e, struct peer *p, __u64 t, __u64 since, int err,
		    const char *what);

/*
 * The peer endpoint @p, silent since @since, is gone for certain (@how:
 * its "gone" answer, or the endpoint layer's look at a peer on this host).
 * When we had a session with it, that endpoint is the one that is gone:
 * given up at once, its requests -ECONNRESET (a peer that restarts has a
 * new session; it reconnects).  Else it may not be open yet (a peer that
 * starts later): no evidence, its silence is waited out.  1 if given up.
 */
static int live_gone(struct xwi_engine *e, struct peer *p, __u64 t, __u64 since, const char *how)
{
	if (!p->cn.rx_known) {
		e->st.live_gone_unknown++;
		return 0;
	}
	e->st.live_gone++;
	give_up(e, p, t, since, -ECONNRESET, how);
	return 1;
}

/* Whether @p, silent since @since, is alive (see live_due).  1 if a probe
 * went out, -1 if @p was given up (gone: the caller leaves it alone for
 * this pass), else 0. */
static int live_check(struct xwi_engine *e, struct peer *p, __u64 t, __u64 since)
{
	int a = -EOPNOTSUPP;

	if (t < live_due(e, p, since))
		return 0;
	p->cn.last_liveprobe = t ? t : 1;
	if (p->cn.probing_since <= since) /* the first probe since its last sign of life */
		p->cn.probing_since = t > since ? t : since + 1;
	if (e->ops.alive)
		a = e->ops.alive(e->ctx, &p->addr);
	if (a > 0) {
		p->cn.last_alive = t;
		e->st.live_local++;
		return 0;
	}
	if (a == 0)
		return live_gone(e, p, t, since, "its endpoint on this host is closed or its "
					       "process is gone") ? -1 : 0;
	return a == -EOPNOTSUPP ? emit_probe(e, p) : 0;
}

static __u64 max64(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/* ---- sending the message layer's frames ---------------------------------- */

/* The application's one-frame message is in the transmit path: on the
 * wire before the bookkeeping (see xwi_engine_ops.kick). */
static void kick_early(struct xwi_engine *e)
{
	if (!e->kick_early)
		return;
	e->kick_early = false;
	if (e->ops.kick)
		e->ops.kick(e->ctx);
}

/* The payload bytes @f holds itself (0: kept lazily, see xwi_frame). */
static size_t kept_len(const struct xwi_frame *f)
{
	return f->ext ? 0 : f->len;
}

/* An acknowledged frame goes: a lazily kept one lets its send go. */
static void kept_put(struct xwi_engine *e, struct xwi_frame *f)
{
	struct xwi_req_priv *s = f->owner;

	xwi_frame_put(e, f, kept_len(f));
	if (s)
		xwi_msg_unref(e, s);
}

int xwi_conn_emit(struct xwi_engine *e, struct peer *p, struct xw_hdr *h, const void *payload,
		  size_t len, struct xwi_req_priv *owner)
{
	struct xwi_frame *f;
	__u64 t;

	h->payload_len = htons((__u16)len);
	if (!e->cfg.reliable) {
		if (seal_send(e, p, h, payload, len))
			return -EAGAIN;
		kick_early(e);
		e->st.tx_frames[h->type]++;
		return 0;
	}
	if (!xwi_conn_can_tx(e, p))
		return -EAGAIN;
	h->session = htonl(p->cn.my_sid);
	h->seq = htonl(p->cn.snd_nxt);
	h->ack = htonl(p->cn.rx_known ? p->cn.rcv_nxt : 0);
	if (p->cn.lossless && p->cn.cstate == C_EST) {
		/* In the peer's ring it is delivered, in order, intact: not
		 * kept, no timer, no ack awaited (a full ring: -EAGAIN, it
		 * waits queued).  The sequence number stays: the receiver's
		 * order check is the same for every peer. */
		if (e->ops.send(e->ctx, &p->addr, h, payload, len))
			return -EAGAIN;
		kick_early(e);
		p->cn.snd_nxt++;
		if (!p->cn.inflight) {
			p->cn.snd_una = p->cn.snd_nxt;
			p->cn.acked_once = true;
		}
		if (p->cn.rx_known)
			ack_sent(e, p, false);
		e->st.tx_frames[h->type]++;
		return 0;
	}
	/* Before the handshake completed a lossless peer may still refuse
	 * it (a session it does not take), or have no inbox yet: kept until
	 * acked, and the peer asked to ack it at once (the timer, at
	 * rto_max, only resends what one of those lost). */
	if (p->cn.lossless)
		h->flags |= XW_F_ACKREQ;
	if (!len)
		owner = NULL;
	f = xwi_frame_alloc(e, owner ? 0 : len);
	if (!f)
		return -EAGAIN;
	if (!hook_drop(e, h->type) && seal_send(e, p, h, payload, len)) {
		xwi_frame_put(e, f, owner ? 0 : len);
		return -EAGAIN;
	}
	kick_early(e);
	t = now(e);
	f->seq = p->cn.snd_nxt++;
	f->tries = 1;
	f->sack = 0;
	xmit_stamp(e, p, f);
	f->len = len;
	f->h = *h;
	f->owner = owner;
	f->ext = owner ? payload : NULL;
	if (owner)
		owner->krefs++; /* its buffer stays until this frame is acked */
	else if (len)
		memcpy(f->pl, payload, len);
	xl_add_tail(&f->link, &p->cn.rtxq);
	if (!p->cn.inflight++) {
		p->cn.last_progress = t;
		p->cn.rtx_due = t + (p->cn.lossless ? e->cfg.rto_max_ns : rto_cur(e, p));
	}
	if (!p->cn.lossless)
		tlp_arm(e, p, t);
	if (p->cn.rx_known)
		ack_sent(e, p, false);
	e->st.tx_frames[h->type]++;
	return 0;
}

/* Send @s goes (aborted): each frame kept lazily from its buffer takes a
 * copy of its payload, in its place (the receiver may still need it). */
int xwi_conn_unref(struct xwi_engine *e, struct peer *p, struct xwi_req_priv *s)
{
	int err = 0;

	for (struct xl *l = p->cn.rtxq.next; l != &p->cn.rtxq && s->krefs; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link), *c;

		if (f->owner != s)
			continue;
		c = xwi_frame_alloc(e, f->len);
		if (!c) {
			err = -ENOMEM;
			continue;
		}
		memcpy(c, f, sizeof(*f));
		memcpy(c->pl, f->ext, f->len);
		c->ext = NULL;
		c->owner = NULL;
		xl_add_before(&c->link, &f->link);
		xl_del(&f->link);
		l = &c->link;
		kept_put(e, f);
	}
	return err;
}

/* ---- sessions and the handshake ------------------------------------------ */

/* Session ids, ISNs, probe nonces, the endpoint incarnation: see conn.h. */
void xwi_rand_bytes(struct xwi_engine *e, void *buf, size_t len)
{
	if (e->ops.random) {
		e->ops.random(e->ctx, buf, len);
		return;
	}
	if (getrandom(buf, len, 0) != (ssize_t)len) {
		/* no getrandom: mix the clock and the engine's address */
		__u64 x = now(e) ^ (__u64)(uintptr_t)e ^ 0x9E3779B97F4A7C15ULL;

		for (size_t i = 0; i < len; i++) {
			x ^= x >> 29;
			x *= 0xBF58476D1CE4E5B9ULL;
			((unsigned char *)buf)[i] = (unsigned char)(x >> 56);
		}
	}
}

static bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static void conn_event(struct xwi_engine *e, struct peer *p, __u32 sid)
{
	if (e->ops.conn_event)
		e->ops.conn_event(e->ctx, &p->addr, sid);
}

/* Our new incarnation towards @p: session id and ISN. */
static void incarnation_new(struct xwi_engine *e, struct peer *p)
{
	__u32 r[2] = { 0, 0 };

	while (!r[0])
		xwi_rand_bytes(e, r, sizeof(r));
	p->cn.my_sid = r[0];
	/* 1 .. 2^32 - window - 2: no ack of 0 before the first real one */
	p->cn.isn = e->cfg.isn_fixed ? e->cfg.isn : 1 + r[1] % (0xFFFFFFFEu - e->cfg.window);
	p->cn.acked_once = false;
	p->cn.est_counted = false;
	p->cn.snd_una = p->cn.snd_nxt = p->cn.isn;
	p->cn.backoff = 0;
	p->cn.dupacks = 0;
	p->cn.in_recovery = false;
	p->cn.rack_valid = p->cn.tlp_out = false;
	p->cn.rack_due = p->cn.tlp_due = 0;
}

/* The handshake starts: CONNECT goes out now (or from progress). */
void xwi_conn_start(struct xwi_engine *e, struct peer *p)
{
	if (p->cn.cstate != C_NONE)
		return;
	incarnation_new(e, p);
	p->cn.cstate = C_SYN;
	p->cn.conn_start = now(e);
	p->cn.conn_tries = 0;
	p->cn.unsol_due = 0;
	p->cn.probe = false;
	conn_send(e, p, p->cn.conn_start);
}

static bool sid_retired(const struct peer *p, __u32 sid)
{
	for (__u32 i = 0; i < p->cn.nretired && i < XWI_RETIRED; i++)
		if (p->cn.retired[i] == sid)
			return true;
	return false;
}

/*
 * Forget the connection with @p.
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
unsigned int xwi_conn_reset(struct xwi_engine *e, struct peer *p, int err, enum xwi_reset_mode mode)
{
	struct xl unacked;
	unsigned int cut;

	/* the frames not acknowledged go to the message layer, which may
	 * carry them over (a reconnect) or learn from them what to replay */
	xl_init(&unacked);
	/* lazily kept frames let their sends go first (nothing reads their
	 * payload again: the message layer looks at eager frames only) */
	for (struct xl *l = p->cn.rtxq.next; l != &p->cn.rtxq; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
		struct xwi_req_priv *s = f->owner;

		f->owner = NULL;
		if (s)
			xwi_msg_unref(e, s);
	}
	xl_splice_front(&p->cn.rtxq, &unacked);
	cut = xwi_msg_reset(e, p, err, mode, &unacked);
	xwi_frames_free(&unacked);
	xwi_frames_free(&p->cn.ooo);
	p->cn.inflight = p->cn.nooo = 0;
	if (p->cn.rx_known) {
		p->cn.retired[p->cn.nretired++ % XWI_RETIRED] = p->cn.peer_sid;
		p->cn.rx_known = false;
		conn_event(e, p, 0);
	}
	p->cn.cstate = C_NONE;
	p->cn.sess_sure = false;
	p->cn.my_sid = p->cn.peer_sid = 0;
	p->cn.ack_owed = 0;
	p->cn.ack_now = p->cn.reply_owed = p->cn.rtx_now = p->cn.in_recovery = p->cn.holes = false;
	p->cn.ack_due = p->cn.rtx_due = p->cn.conn_due = 0;
	p->cn.rack_due = p->cn.tlp_due = 0;
	p->cn.rack_valid = p->cn.tlp_out = false;
	p->cn.backoff = p->cn.dupacks = 0;
	p->cn.last_alive = 0;
	p->cn.probe_nonce = 0;
	p->cn.alive_seen = false;
	p->cn.probing_since = 0;
	return cut;
}

/* The peer's incarnation (@sid, @isn) is the one we talk to now. */
static void adopt(struct xwi_engine *e, struct peer *p, __u32 sid, __u32 isn)
{
	p->cn.peer_sid = sid;
	p->cn.rcv_nxt = p->cn.peer_isn = isn;
	p->cn.rx_known = true;
	p->cn.probe = false; /* a real handshake now: retried as any */
	p->cn.ack_owed = 0;
	p->cn.unsol_due = 0;
	p->cn.last_heard = now(e);
	conn_event(e, p, sid);
}

/* Both sides know each other's session: the connection is established
 * (counted once per incarnation of ours in st.sessions). */
static void establish(struct xwi_engine *e, struct peer *p)
{
	p->cn.cstate = C_EST;
	p->cn.conn_due = 0;
	if (!p->cn.est_counted) {
		p->cn.est_counted = true;
		e->st.sessions++;
	}
}

/* Does @ack (from a frame of the peer's session) show that the peer knows
 * our incarnation: an ack in [isn, snd_nxt], never 0 before our first real
 * ack? */
static bool ack_knows_us(const struct peer *p, __u32 ack)
{
	return (ack || p->cn.acked_once) && !seq_before(ack, p->cn.isn) && !seq_before(p->cn.snd_nxt, ack);
}

/*
 * May the peer's CONNECT carrying @ack start a session with us?  Its ack
 * is 0 while its session knows none of ours (a new one), else it names the
 * session of ours it is bound to: it must be our current one.
 */
static bool connect_for_us(const struct peer *p, __u32 ack)
{
	return !ack || (p->cn.cstate != C_NONE && ack_knows_us(p, ack));
}

/*
 * The peer's incarnation we adopted is still empty: nothing of it received
 * (no sequenced frame beyond its ISN, none held) and nothing of ours
 * acknowledged by anyone.  Such a session can be replaced by another one
 * of the same peer without losing or duplicating anything: the peer
 * dropped a session that never carried data (an introduction it forgot,
 * or crossing handshakes), and our frames, all still unacked, go to the
 * new one from our ISN on.
 */
static bool peer_sess_empty(const struct peer *p)
{
	return p->cn.rx_known && p->cn.rcv_nxt == p->cn.peer_isn && !p->cn.nooo && p->cn.snd_una == p->cn.isn &&
	       !p->cn.acked_once;
}

/* Replace the peer's empty session (see peer_sess_empty) by (@sid, @isn). */
static void readopt(struct xwi_engine *e, struct peer *p, __u32 sid, __u32 isn)
{
	p->cn.retired[p->cn.nretired++ % XWI_RETIRED] = p->cn.peer_sid;
	e->st.sessions_replaced++;
	adopt(e, p, sid, isn);
}

/* The nonces of a CONNECT*, CLOSE: the destination's (ours, if the sender
 * knows it; 0 if not) and the sender's. */
static __u64 nonce_dst(const struct xw_hdr *h)
{
	return (__u64)ntohl(h->frag_off) << 32 | ntohl(h->frag_idx);
}

static __u64 nonce_src(const struct xw_hdr *h)
{
	return (__u64)ntohl(h->data) << 32 | ntohl(h->rsvd2);
}

/* The peer's nonce, from a handshake frame that carried ours (@sure) or
 * only claimed by one that did not (kept only while we know no better). */
static void nonce_learn(struct peer *p, __u64 sn, bool sure)
{
	if (sure || !p->nonce_sure) {
		if (p->nonce_sure && sn != p->addr.nonce)
			p->nonce_prev = p->addr.nonce;
		p->addr.nonce = sn;
		p->nonce_sure = sure;
	}
}

void xwi_conn_renamed(struct xwi_engine *e, struct peer *p, __u64 nonce)
{
	if (p->nonce_sure && nonce == p->nonce_prev)
		return; /* a stale address: we talk to its successor already */
	if (p->cn.rx_known || p->cn.cstate != C_NONE) {
		/* a connection with another incarnation (or with one that
		 * only claimed to be the peer, without our nonce): the
		 * application names this one, so that one is gone */
		e->st.peer_restarts++;
		xwi_conn_reset(e, p, -ECONNRESET, RM_NEWPEER);
	}
	nonce_learn(p, nonce, true);
}

/* A CONNECT*, CLOSE that would reset or replace a connection without
 * carrying our nonce: dropped, counted.  The XDP program may have dropped
 * the session of @p (a CONNECT with another session): registered again. */
static int nonce_reject(struct xwi_engine *e, struct peer *p)
{
	e->st.nonce_rejects++;
	if (p && p->cn.rx_known)
		conn_event(e, p, p->cn.peer_sid);
	return 0;
}

/*
 * A CONNECT refused for its nonce (sender's nonce @sn).  While we know no
 * better, @sn is taken as the peer's claimed nonce: a peer that was
 * reopened and spoken to first (it does not know our nonce yet) hears it
 * from our own CONNECT, which it refuses (it carries the nonce of its
 * previous incarnation) - its next introduction then carries ours.  And,
 * like TCP's challenge ACK (RFC 5961), a CONNECT refused against a session
 * we have is answered, at most once per rto_init, by a CONNECT of that
 * session: the real peer, alive, takes it as a duplicate; a reopened one
 * learns our nonce from it.  A forged source cannot make us send more.
 */
static int connect_reject(struct xwi_engine *e, struct peer *p, __u64 sn)
{
	__u64 t = now(e);

	if (p) {
		nonce_learn(p, sn, false);
		if (p->cn.rx_known && p->cn.cstate != C_NONE &&
		    (!p->cn.last_challenge || t - p->cn.last_challenge >= e->cfg.rto_init_ns) &&
		    !emit_ctl(e, p, XW_PKT_CONNECT, p->cn.isn, 0)) {
			p->cn.last_challenge = t ? t : 1;
			e->st.nonce_challenges++;
		}
	}
	return nonce_reject(e, p);
}

/*
 * May a CONNECT without our nonce (@sid, the sender's nonce @sn) act on
 * @p?  Only as an opening: not against a peer nonce we are sure of, and
 * not against a session of the peer that was set up with our nonce
 * (unless it is that very session again: a handshake duplicate).
 */
static bool connect_open_only(const struct peer *p, __u32 sid, __u64 sn)
{
	if (p->nonce_sure && sn != p->addr.nonce)
		return false;
	return !p->cn.rx_known || !p->cn.sess_sure || sid == p->cn.peer_sid;
}

/* We have a handshake of ours to finish: CONNECT retried until the peer
 * shows it knows our session (CONNECT_REPLY, or an ack). */
static void conn_retry(struct xwi_engine *e, struct peer *p)
{
	__u64 t = now(e);

	if (p->cn.cstate == C_SYN && p->cn.conn_due)
		return;
	p->cn.cstate = C_SYN;
	p->cn.conn_start = t;
	if (!p->cn.conn_tries)
		p->cn.conn_tries = 1;
	p->cn.conn_due = t + rto_cur(e, p);
}

/* ---- loss recovery: RTT, RTO, acks, retransmission ---------------------- */
/*
 * Everything that decides when a frame is resent is here (after RFC 6298,
 * RFC 6675 and RFC 8985, RACK-TLP):
 * - the RTO (rto_cur: the smoothed RTT, its variance and the backoff;
 *   rtt_sample).  An RTT sample is taken only from a frame acknowledged
 *   (cumulatively or selectively) for the first time and never resent, at
 *   that moment, one per ack (the latest sent of them), and not when a
 *   resent frame sent after it is acknowledged by the same ack (it was
 *   held behind a hole: its time is the repair's, not the path's).  The
 *   backoff ends with a sample (Karn).
 * - acks (rx_ack: cumulative, duplicate acks, fast retransmit, NewReno
 *   recovery; rx_sack: selective acks; newly_acked, ack_done: what one ack
 *   taught).
 * - loss detection by time (rack_detect, with cfg.sack): every
 *   transmission has a place in the send order (xwi_frame.xmit); a frame
 *   not held by the receiver and sent before the latest-sent frame that
 *   was acknowledged is lost once it has been out for that frame's RTT
 *   plus a reordering window (a quarter of the smallest RTT): it is resent
 *   at once - a retransmission that was lost again too (lost_rtx), on the
 *   next ack, not after a timeout.  Until its window ends a timer waits
 *   (rack_due).
 * - the tail probe (tlp_*): when nothing was acknowledged for
 *   max(2 srtt + ack_delay, rto_min / 2) and that is before the RTO, the
 *   last frame the receiver does not hold is sent again once (a lost tail
 *   PULL_REPLY, PULL, NOTIFY, a lost retransmission the receiver's stalled
 *   pipeline would not bring news of, or a lost final ACK: the duplicate
 *   makes the receiver ack at once); its ack brings the evidence above.
 * - the retransmission timer (rtx_timers, from xwi_conn_timers): on the
 *   first expiry of an episode every frame out for an RTO that the
 *   receiver does not hold is resent (at most the window), on later ones
 *   (backed off: the peer is silent) only the oldest; the backoff doubles
 *   the RTO up to rto_max.  The timer is armed by xwi_conn_emit (the first
 *   frame in flight) and by each ack that acknowledged something new.
 * What a receiver can make us do is bounded: a selective ack that names a
 * sequence number we never sent is ignored whole (bad_sacks); a frame it
 * says it holds is never resent by acks (only by a timer expiry, the
 * oldest); one ack resends at most the frames in flight (the window).
 * The give-up of a peer that acknowledges nothing is the liveness rule's
 * (giveup_at).
 */

/* Is transmission @a later than @b (wrap-safe)? */
static bool xmit_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

static __u64 rto_cur(const struct xwi_engine *e, const struct peer *p)
{
	__u64 r = p->cn.rto;

	for (__u32 i = 0; i < p->cn.backoff && r < e->cfg.rto_max_ns; i++)
		r *= 2;
	return r < e->cfg.rto_max_ns ? r : e->cfg.rto_max_ns;
}

static void rtt_sample(struct xwi_engine *e, struct peer *p, __u64 r)
{
	__u64 rto;

	e->st.rtt_samples++;
	if (!p->cn.min_rtt || r < p->cn.min_rtt)
		p->cn.min_rtt = r ? r : 1;
	if (!p->cn.srtt) {
		p->cn.srtt = r;
		p->cn.rttvar = r / 2;
	} else {
		__u64 d = p->cn.srtt > r ? p->cn.srtt - r : r - p->cn.srtt;

		p->cn.rttvar = (3 * p->cn.rttvar + d) / 4;
		p->cn.srtt = (7 * p->cn.srtt + r) / 8;
	}
	/* the variance term is at least rto_min (as Linux does): a peer
	 * whose answers take a few ms with some jitter is not resent to */
	rto = p->cn.srtt + (4 * p->cn.rttvar > e->cfg.rto_min_ns ? 4 * p->cn.rttvar : e->cfg.rto_min_ns) +
	      e->cfg.ack_delay_ns;
	if (rto < e->cfg.rto_min_ns)
		rto = e->cfg.rto_min_ns;
	if (rto > e->cfg.rto_max_ns)
		rto = e->cfg.rto_max_ns;
	p->cn.rto = rto;
}

/* The tail probe's wait (UINT64_MAX: none - no RTT known yet). */
static __u64 tlp_wait(const struct xwi_engine *e, const struct peer *p)
{
	__u64 w = 2 * p->cn.srtt + e->cfg.ack_delay_ns;

	if (!p->cn.srtt || !e->cfg.sack)
		return UINT64_MAX;
	return w > e->cfg.rto_min_ns / 2 ? w : e->cfg.rto_min_ns / 2;
}

/* Arm the tail probe from @t (unless one is out). */
static void tlp_arm(const struct xwi_engine *e, struct peer *p, __u64 t)
{
	__u64 w = tlp_wait(e, p);

	if (!p->cn.tlp_out)
		p->cn.tlp_due = w == UINT64_MAX ? 0 : t + w;
}

/* A (re)transmission of @f goes out now: its place in the send order. */
static void xmit_stamp(struct xwi_engine *e, struct peer *p, struct xwi_frame *f)
{
	f->t_sent = now(e);
	f->xmit = ++p->cn.xmit_n;
}

/* Send @f (unacknowledged) again: 1, or -EAGAIN. */
static int rtx_frame(struct xwi_engine *e, struct peer *p, struct xwi_frame *f)
{
	f->h.ack = htonl(p->cn.rx_known ? p->cn.rcv_nxt : 0);
	/* No LAT (a resent frame is an RTO late already; the coalescing
	 * timeout wakes the receiver) and no MORE. */
	f->h.flags &= (__u8)~(XW_F_MORE | XW_F_LAT);
	if (seal_send(e, p, &f->h, f->len ? xwi_frame_data(f) : NULL, f->len))
		return -EAGAIN;
	f->tries++;
	xmit_stamp(e, p, f);
	e->st.tx_frames[f->h.type]++;
	e->st.rtx_frames[f->h.type]++;
	ack_sent(e, p, false);
	return 1;
}

/* Resend the oldest unacknowledged frame (timeout, three duplicate acks,
 * a partial ack) - unless acks had it resent already since the last
 * timeout (a timeout clears that). */
static int rtx_head(struct xwi_engine *e, struct peer *p)
{
	struct xwi_frame *f;

	if (xl_empty(&p->cn.rtxq))
		return 0;
	f = xl_entry(p->cn.rtxq.next, struct xwi_frame, link);
	if (f->sack & RF_HOLED)
		return 0;
	return rtx_frame(e, p, f);
}

/* Mark @f lost: resent from progress (rtx_holes). */
static void mark_lost(struct xwi_engine *e, struct peer *p, struct xwi_frame *f, __u8 how)
{
	f->sack |= (__u8)(RF_RESEND | how);
	if (f->tries > 1)
		e->st.lost_rtx++;
	p->cn.holes = true;
}

/* What one ack taught (rx_ack, rx_sack; then ack_done). */
struct acked {
	__u64 t;
	bool progress;	    /* a frame acknowledged for the first time */
	bool cand, rtx;	    /* ... one never resent; one resent          */
	__u32 cand_xmit;    /* the latest sent never-resent one            */
	__u64 cand_sent;
	__u32 rtx_xmit;	    /* the latest sent resent one                  */
};

/* @f is acknowledged for the first time (cumulatively or selectively). */
static void newly_acked(struct xwi_engine *e, struct peer *p, struct xwi_frame *f, struct acked *a)
{
	__u64 r = a->t - f->t_sent;

	a->progress = true;
	if (f->tries > 1) {
		if (r < p->cn.min_rtt) {
			/* sooner than any round trip: the ack is the first
			 * transmission's, the resend was not needed (RFC 8985
			 * 6.2 step 2); it says nothing about the send order */
			e->st.spurious_rtx++;
			return;
		}
		if (!a->rtx || xmit_after(f->xmit, a->rtx_xmit))
			a->rtx_xmit = f->xmit;
		a->rtx = true;
	} else if (!a->cand || xmit_after(f->xmit, a->cand_xmit)) {
		a->cand = true;
		a->cand_xmit = f->xmit;
		a->cand_sent = f->t_sent;
	}
	/* the send order is learnt from frames sent once only: the ack of a
	 * resent frame may be the first copy's (a receiver that was slow to
	 * ack, not a loss), and taking it would declare every frame sent
	 * before the resend lost */
	if (f->tries == 1 && (!p->cn.rack_valid || xmit_after(f->xmit, p->cn.rack_xmit))) {
		p->cn.rack_valid = true;
		p->cn.rack_xmit = f->xmit;
		p->cn.rack_rtt = r;
	}
}

/* RACK: mark the frames lost that were sent before the latest-sent frame
 * acknowledged and have been out longer than its RTT plus the reordering
 * window; the timer waits for the others. */
static void rack_detect(struct xwi_engine *e, struct peer *p, __u64 t)
{
	__u64 reo = p->cn.min_rtt / 4, due = 0;

	p->cn.rack_due = 0;
	if (!e->cfg.sack || !p->cn.rack_valid)
		return;
	for (struct xl *l = p->cn.rtxq.next; l != &p->cn.rtxq; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
		__u64 d = f->t_sent + p->cn.rack_rtt + reo;

		if ((f->sack & (RF_SACKED | RF_RESEND)) || !xmit_after(p->cn.rack_xmit, f->xmit))
			continue;
		if (t >= d)
			mark_lost(e, p, f, 0);
		else if (!due || d < due)
			due = d;
	}
	p->cn.rack_due = due;
}

/* After an ack: the RTT sample, the timers, loss detection. */
static void ack_done(struct xwi_engine *e, struct peer *p, struct acked *a)
{
	if (!a->progress)
		return;
	if (p->cn.lossless) {
		/* only frames of before the handshake were kept: no RTT, no
		 * tail probe, a timer at rto_max for what is still out */
		p->cn.rtx_due = p->cn.inflight ? a->t + e->cfg.rto_max_ns : 0;
		return;
	}
	if (a->cand && (!a->rtx || xmit_after(a->cand_xmit, a->rtx_xmit))) {
		/* Karn: the backed-off RTO stays until a frame sent once is
		 * acked (a peer that computes before acking is learnt) */
		p->cn.backoff = 0;
		rtt_sample(e, p, a->t - a->cand_sent);
	} else {
		e->st.rtt_skipped++;
	}
	p->cn.rtx_due = p->cn.inflight ? a->t + rto_cur(e, p) : 0;
	p->cn.tlp_out = false;
	p->cn.tlp_due = 0;
	if (p->cn.inflight)
		tlp_arm(e, p, a->t);
	rack_detect(e, p, a->t);
}

/*
 * Selective acks: the bitmap of an ACK (match, and the payload's words:
 * docs/PROTOCOL.md "Retransmission") of the frames the receiver holds out
 * of order.  sack_bits fills it (@w: XW_SACK_EXT_WORDS + 1 words, word 0
 * = match); its number of words.
 */
static unsigned int sack_bits(const struct peer *p, __u64 *w)
{
	unsigned int n = 0;

	memset(w, 0, (XW_SACK_EXT_WORDS + 1) * sizeof(*w));
	for (const struct xl *l = p->cn.ooo.next; l != &p->cn.ooo; l = l->next) {
		__u32 d = xl_entry(l, struct xwi_frame, link)->seq - p->cn.rcv_nxt - 1;

		if (d / 64 > XW_SACK_EXT_WORDS)
			break; /* by seq: the rest is further */
		w[d / 64] |= 1ULL << (d % 64);
		if (d / 64 + 1 > n)
			n = d / 64 + 1;
	}
	return n;
}

static void rx_sack(struct xwi_engine *e, struct peer *p, const struct xw_hdr *h,
		    const struct xwi_pl *pl, struct acked *a)
{
	__u32 ack = ntohl(h->ack), plen = ntohs(h->payload_len), nw = 1 + plen / 8, top = 0;
	__u64 w[XW_SACK_EXT_WORDS + 1];

	w[0] = be64toh(h->match);
	if (plen % 8 || plen / 8 > XW_SACK_EXT_WORDS) {
		e->st.bad_sacks++;
		return;
	}
	for (__u32 i = 1; i < nw; i++) {
		xwi_pl_copy(&w[i], pl, 8 * (i - 1), 8);
		w[i] = be64toh(w[i]);
	}
	for (__u32 i = 0; i < nw; i++)
		if (w[i])
			top = 64 * i + 64 - (__u32)__builtin_clzll(w[i]); /* highest bit + 1 */
	if (!top || ack != p->cn.snd_una || xl_empty(&p->cn.rtxq))
		return;
	if (top > p->cn.snd_nxt - ack - 1) {
		/* names a frame never sent: forged or confused, all of it */
		e->st.bad_sacks++;
		return;
	}
	for (struct xl *l = p->cn.rtxq.next; l != &p->cn.rtxq; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);
		__u32 d = f->seq - ack - 1;

		if (f->seq == ack)
			continue; /* the hole at the ack */
		if (d >= top)
			break;
		if (!(w[d / 64] >> (d % 64) & 1) || (f->sack & RF_SACKED))
			continue;
		f->sack |= RF_SACKED;
		f->sack &= (__u8)~RF_RESEND; /* held: no need */
		newly_acked(e, p, f, a);
	}
}

/* Resend the frames marked lost.  Frames sent, >= 0. */
static int rtx_holes(struct xwi_engine *e, struct peer *p)
{
	int n = 0;

	for (struct xl *l = p->cn.rtxq.next; l != &p->cn.rtxq; l = l->next) {
		struct xwi_frame *f = xl_entry(l, struct xwi_frame, link);

		if (!(f->sack & RF_RESEND))
			continue;
		if (rtx_frame(e, p, f) < 0)
			return n; /* later, from progress */
		if (!(f->sack & RF_BYRTO))
			e->st.sack_rtx++;
		f->sack &= (__u8)~(RF_RESEND | RF_BYRTO);
		f->sack |= RF_HOLED;
		n++;
	}
	p->cn.holes = false;
	return n;
}

/* The tail probe: the last frame the receiver does not hold, again. */
static int tlp_send(struct xwi_engine *e, struct peer *p)
{
	struct xwi_frame *f = NULL;

	for (struct xl *l = p->cn.rtxq.prev; l != &p->cn.rtxq && !f; l = l->prev)
		if (!(xl_entry(l, struct xwi_frame, link)->sack & RF_SACKED))
			f = xl_entry(l, struct xwi_frame, link);
	if (!f || rtx_frame(e, p, f) < 0)
		return 0;
	e->st.tail_probes++;
	return 1;
}

/* The retransmission timers of @p (frames in flight: RTO, reordering
 * window, tail probe) and the resends owed (the oldest frame, the lost
 * ones).  Frames sent. */
static int rtx_timers(struct xwi_engine *e, struct peer *p, __u64 t)
{
	int n = 0;

	if (p->cn.rtx_due && t >= p->cn.rtx_due && unread(e, p))
		p->cn.rtx_due = t + e->cfg.rto_max_ns; /* in its ring: not lost */
	if (p->cn.rtx_due && t >= p->cn.rtx_due) {
		bool first = !p->cn.backoff;

		/* a new round: frames may be resent again */
		for (struct xl *q = p->cn.rtxq.next; q != &p->cn.rtxq; q = q->next)
			xl_entry(q, struct xwi_frame, link)->sack &= (__u8)~RF_HOLED;
		/* the first expiry of an episode: every frame out for an RTO
		 * below one the receiver holds is lost (the oldest goes
		 * through rtx_now; the frames after the last one it holds go
		 * once acks show them lost: an RTO from a receiver that was
		 * slow, not from loss, resends one frame, not the window) */
		for (struct xl *q = p->cn.rtxq.prev, *held = NULL; first && e->cfg.sack &&
		     q != p->cn.rtxq.next && q != &p->cn.rtxq; q = q->prev) {
			struct xwi_frame *f = xl_entry(q, struct xwi_frame, link);

			if (f->sack & RF_SACKED)
				held = q;
			else if (held && !(f->sack & RF_RESEND) && t - f->t_sent >= p->cn.rto)
				mark_lost(e, p, f, RF_BYRTO);
		}
		e->st.rtx_timeouts++;
		p->cn.backoff++;
		p->cn.in_recovery = true;
		p->cn.recover = p->cn.snd_nxt;
		p->cn.dupacks = 0;
		p->cn.rtx_now = true;
		p->cn.rtx_due = t + (p->cn.lossless ? e->cfg.rto_max_ns : rto_cur(e, p));
		p->cn.tlp_due = 0;
		p->cn.tlp_out = false;
	}
	if (p->cn.rack_due && t >= p->cn.rack_due)
		rack_detect(e, p, t);
	if (p->cn.tlp_due && t >= p->cn.tlp_due) {
		p->cn.tlp_due = 0;
		if (!p->cn.rtx_due || t < p->cn.rtx_due) {
			int r = tlp_send(e, p);

			n += r;
			p->cn.tlp_out = r > 0;
			if (r)
				p->cn.rtx_due = t + rto_cur(e, p);
		}
	}
	if (p->cn.rtx_now) {
		int r = rtx_head(e, p);

		if (r >= 0) {
			p->cn.rtx_now = false;
			n += r;
		}
	}
	if (p->cn.holes)
		n += rtx_holes(e, p);
	return n;
}

/*
 * Take the peer's cumulative @ack (@pure: of an ACK frame); what it
 * acknowledged goes into @a.  True when the message layer is to be kicked
 * (xwi_msg_kick): the connection was established or the window opened -
 * the caller kicks once it is done with the frame (xwi_msg_rx does so for
 * a frame it hands up).
 */
static bool rx_ack(struct xwi_engine *e, struct peer *p, __u32 ack, bool pure, struct acked *a)
{
	/*
	 * ack 0: none (a peer that does not know us yet writes 0) until the
	 * peer has acked something; our ISN is chosen so that no real ack
	 * before that can be 0 (at most `window` frames, no wrap).
	 */
	bool kick = false;

	if (p->cn.cstate == C_NONE || (!ack && !p->cn.acked_once))
		return false;
	if (seq_before(p->cn.snd_nxt, ack)) {
		e->st.bad_acks++;
		return false;
	}
	if (p->cn.cstate == C_SYN && p->cn.rx_known && ack_knows_us(p, ack)) {
		establish(e, p); /* the peer acks our frames: it knows us */
		kick = true;
	}
	if (seq_before(ack, p->cn.snd_una))
		return kick; /* old */
	if (ack == p->cn.snd_una) {
		if (p->cn.lossless)
			return kick; /* nothing was lost: no duplicate acks */
		if (pure && p->cn.inflight)
			p->cn.last_dupack = a->t; /* alive, refusing (or lost data) */
		if (pure && p->cn.inflight && ++p->cn.dupacks == 3) {
			e->st.fast_rtx++;
			p->cn.rtx_now = true;
		}
		return kick;
	}
	p->cn.acked_once = true;
	while (!xl_empty(&p->cn.rtxq)) {
		struct xwi_frame *f = xl_entry(p->cn.rtxq.next, struct xwi_frame, link);

		if (!seq_before(f->seq, ack))
			break;
		if (!(f->sack & RF_SACKED))
			newly_acked(e, p, f, a);
		xl_del(&f->link);
		kept_put(e, f);
		p->cn.inflight--;
	}
	a->progress = true;
	p->cn.snd_una = ack;
	p->cn.dupacks = 0;
	p->cn.last_progress = a->t;
	if (p->cn.in_recovery) {
		if (p->cn.inflight && seq_before(ack, p->cn.recover))
			p->cn.rtx_now = true; /* partial ack: the next hole */
		else
			p->cn.in_recovery = false;
	}
	return true;
}

/* The cumulative @ack of a frame that is not the message layer's nor an
 * ACK (CONNECT_REPLY). */
static void ack_take(struct xwi_engine *e, struct peer *p, __u32 ack)
{
	struct acked a = { .t = now(e) };

	rx_ack(e, p, ack, false, &a);
	ack_done(e, p, &a);
}

/* The largest RTO (backoff included) among the connections, and that
 * connection's smoothed RTT (0, 0: none). */
void xwi_conn_rto_worst(const struct xwi_engine *e, __u64 *rto, __u64 *srtt)
{
	*rto = *srtt = 0;
	for (const struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		const struct peer *p = xl_entry(l, struct peer, link);

		if (p->cn.cstate == C_EST && rto_cur(e, p) > *rto) {
			*rto = rto_cur(e, p);
			*srtt = p->cn.srtt;
		}
	}
}

/* ---- the receive path ---------------------------------------------------- */

static int rx_connect(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h)
{
	__u32 sid = ntohl(h->session), isn = ntohl(h->seq), ack = ntohl(h->ack);
	__u32 peer_eid = (__u32)(be64toh(h->match) >> 32), resume = (__u32)be64toh(h->match);
	__u64 dn = nonce_dst(h), sn = nonce_src(h);
	bool sure = dn == e->nonce;
	struct peer *p;

	if (!sid) {
		e->st.rx_bad++;
		return -EPROTO;
	}
	if (dn && !sure)
		return connect_reject(e, xwi_peer_find(e, src), sn);
	p = xwi_peer_get(e, src);
	if (!p) {
		e->st.peers_dropped++;
		return 0;
	}
	if (!sure && !connect_open_only(p, sid, sn))
		return connect_reject(e, p, sn);
	e->st.rx_frames[XW_PKT_CONNECT]++;
	if (p->cn.rx_known && sid == p->cn.peer_sid) {
		__u64 t = now(e);

		e->st.handshake_dups++;
		if (t - p->cn.last_reply >= e->cfg.rto_min_ns / 2)
			p->cn.reply_owed = true;
		if (p->cn.cstate == C_SYN && ack_knows_us(p, ack)) {
			establish(e, p);
			xwi_msg_kick(e, p);
		}
		return 0;
	}
	if (sid_retired(p, sid)) {
		e->st.session_rejects++;
		if (p->cn.rx_known)
			conn_event(e, p, p->cn.peer_sid); /* the XDP program dropped it */
		return 0;
	}
	if (!connect_for_us(p, ack)) {
		/*
		 * The CONNECT's session is bound to a session of ours that we
		 * no longer have: of an earlier incarnation of this endpoint
		 * (we were reopened), or one we reset.  Its frames are
		 * numbered in the peer's message stream to that endpoint,
		 * which the peer restarts from id 0 once it learns of us;
		 * taking them now would mix the two numberings (a message
		 * held under an id the new stream gives to another one).
		 * Not adopted: like a frame of a session we do not know, it
		 * makes us introduce ourselves (a reconnect or a restart for
		 * the peer, which then answers with a session bound to ours).
		 */
		if (p->cn.rx_known) {
			e->st.session_rejects++; /* stale: ours goes on */
			conn_event(e, p, p->cn.peer_sid); /* the XDP program dropped it */
			return 0;
		}
		e->st.no_session++;
		if (p->cn.cstate == C_NONE && !p->cn.unsol_due)
			p->cn.unsol_due = now(e) + 2 * e->cfg.rto_init_ns;
		return 0;
	}
	if (p->cn.rx_known && peer_sess_empty(p)) {
		/* The peer's session we knew never carried anything: it
		 * forgot it (an introduction of its own that it gave up
		 * while our handshake crossed it).  No reset: the new one
		 * replaces it, and ours must now be made known to it. */
		readopt(e, p, sid, isn);
	} else {
		if (p->cn.rx_known && peer_eid && peer_eid == p->cn.peer_eid) {
			/* the same endpoint, a new session (it gave us up,
			 * or forgot a session): the streams go on */
			e->st.reconnects++;
			xwi_conn_reset(e, p, -ECONNRESET, RM_RECONNECT);
		} else if (p->cn.rx_known) {
			e->st.peer_restarts++;
			xwi_conn_reset(e, p, -ECONNRESET, RM_NEWPEER);
		}
		adopt(e, p, sid, isn);
	}
	p->cn.sess_sure = sure;
	nonce_learn(p, sn, sure);
	p->cn.peer_eid = peer_eid;
	xwi_msg_stream_sync(e, p, peer_eid, resume, ntohl(h->msg_len));
	p->cn.reply_owed = true;
	if (p->cn.cstate == C_NONE) {
		/* Answering: the peer retries its CONNECT until our reply
		 * arrives, so we are established (and may send) now. */
		incarnation_new(e, p);
		establish(e, p);
	} else if (ack_knows_us(p, ack)) {
		establish(e, p);
	} else {
		/* Crossing handshakes (or an introduction from the peer):
		 * the peer does not know our session yet and may not retry
		 * its own CONNECT (an introduction is sent once), so ours is
		 * retried until the peer shows that it knows us. */
		conn_retry(e, p);
	}
	xwi_msg_kick(e, p);
	return 0;
}

static int rx_connect_reply(struct xwi_engine *e, const struct xw_addr *src,
			    const struct xw_hdr *h)
{
	__u32 sid = ntohl(h->session), isn = ntohl(h->seq), echo = ntohl(h->msg_id);
	struct peer *p = xwi_peer_find(e, src);

	/* an answer to our CONNECT, which carried our nonce: it has it */
	if (nonce_dst(h) != e->nonce)
		return nonce_reject(e, p);
	if (!p || p->cn.cstate == C_NONE || echo != p->cn.my_sid || !sid) {
		e->st.session_rejects++;
		return 0;
	}
	e->st.rx_frames[XW_PKT_CONNECT_REPLY]++;
	if (sid_retired(p, sid)) {
		e->st.session_rejects++;
		return 0;
	}
	if (p->cn.rx_known && sid == p->cn.peer_sid) {
		/* the answer to a probe, or to our CONNECT retried after
		 * crossing handshakes: it echoes our session, so the peer
		 * knows us */
		e->st.handshake_dups++;
		p->cn.last_heard = now(e);
		if (p->cn.cstate == C_SYN)
			establish(e, p);
		ack_take(e, p, ntohl(h->ack));
		xwi_msg_kick(e, p);
		return 0;
	}
	if (p->cn.rx_known && !peer_sess_empty(p)) {
		e->st.session_rejects++;
		return 0;
	}
	if (p->cn.rx_known) {
		readopt(e, p, sid, isn); /* see rx_connect */
	} else {
		if (p->cn.cstate == C_SYN && p->cn.conn_tries == 1)
			rtt_sample(e, p, now(e) - p->cn.conn_start);
		adopt(e, p, sid, isn);
	}
	p->cn.sess_sure = true;
	nonce_learn(p, nonce_src(h), true);
	p->cn.peer_eid = (__u32)(be64toh(h->match) >> 32);
	xwi_msg_stream_sync(e, p, p->cn.peer_eid, (__u32)be64toh(h->match), ntohl(h->msg_len));
	establish(e, p);
	ack_take(e, p, ntohl(h->ack));
	xwi_msg_kick(e, p);
	return 0;
}

/* Hold @h/@pl ahead of the expected seq (copied, by seq). */
static void ooo_hold(struct xwi_engine *e, struct peer *p, __u32 seq, const struct xw_hdr *h,
		     const struct xwi_pl *pl, size_t len)
{
	struct xl *pos = &p->cn.ooo;
	struct xwi_frame *f;

	for (struct xl *l = p->cn.ooo.next; l != &p->cn.ooo; l = l->next) {
		struct xwi_frame *g = xl_entry(l, struct xwi_frame, link);

		if (g->seq == seq) {
			e->st.rx_dup_frames++;
			return;
		}
		if (seq_before(seq, g->seq)) {
			pos = l;
			break;
		}
	}
	if (p->cn.nooo >= e->cfg.ooo_max || seq - p->cn.rcv_nxt >= 4 * e->cfg.window ||
	    !(f = xwi_frame_alloc(e, len))) {
		e->st.rx_ooo_dropped++;
		return;
	}
	f->seq = seq;
	f->tries = 0;
	f->sack = 0;
	f->t_sent = 0;
	f->len = len;
	f->ext = NULL;
	f->owner = NULL;
	f->h = *h;
	xwi_pl_copy(f->pl, pl, 0, len);
	xl_add_before(&f->link, pos);
	p->cn.nooo++;
	e->st.rx_ooo++;
}

/* A PROBE reached the library (the peer's program did not answer it: a
 * peer on this host, or a program without the answer): answer it as the
 * program would, when its session is the one we know for the peer. */
static int rx_probe(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h)
{
	struct peer *p = xwi_peer_find(e, src);
	struct xw_hdr r = *h;

	e->st.rx_frames[XW_PKT_PROBE]++;
	/* only a peer whose session we know (the program answers also one
	 * whose handshake we have not taken yet: we do not poll then) */
	if (!p || !p->cn.rx_known || ntohl(h->session) != p->cn.peer_sid) {
		e->st.session_rejects++;
		return 0;
	}
	r.type = XW_PKT_PROBE_REPLY;
	r.flags = 0;
	r.dst_ep = h->src_ep;
	r.src_ep = h->dst_ep;
	r.csum = h->data;
	/* we poll (this very probe says so): a count that moves */
	r.data = htonl((__u32)e->st.rx_frames[XW_PKT_PROBE]);
	if (!e->ops.send(e->ctx, src, &r, NULL, 0)) {
		e->st.tx_frames[XW_PKT_PROBE_REPLY]++;
		e->st.probes_answered++;
	}
	return 0;
}

/* The answer to our last PROBE (its session ours, its nonce the last one):
 * the peer endpoint is alive. */
static int rx_probe_reply(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h)
{
	struct peer *p = xwi_peer_find(e, src);
	__u32 c;

	if (!p || p->cn.cstate == C_NONE || !p->cn.probe_nonce ||
	    ntohl(h->session) != p->cn.my_sid || ntohl(h->seq) != p->cn.probe_nonce) {
		e->st.session_rejects++;
		return 0;
	}
	e->st.rx_frames[XW_PKT_PROBE_REPLY]++;
	p->cn.probe_nonce = 0; /* one answer per probe */
	if (h->flags & XW_F_GONE) {
		/* its program says nobody is there: the endpoint closed, or
		 * its process died (the kernel closed its socket) */
		live_gone(e, p, now(e), xwi_conn_heard(p),
			  "its endpoint is closed or its process died (its XDP program "
			  "answered our liveness probe)");
		return 0;
	}
	/* Its endpoint is open.  Alive, unless the process polls (its
	 * consumed count moved since the last answer) and still neither
	 * acknowledges nor answers us: a peer that takes our frames and
	 * ignores them (it refuses our handshake, a session mix-up) is given
	 * up as before; one that computes or is stopped does not poll. */
	c = ntohl(h->data);
	if (p->cn.alive_seen && c != p->cn.alive_consumed) {
		e->st.live_polling++;
	} else {
		e->st.live_replies++;
		p->cn.last_alive = now(e);
	}
	p->cn.alive_seen = true;
	p->cn.alive_consumed = c;
	return 0;
}

static int rel_rx(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		  const struct xwi_pl *pl)
{
	__u32 sid = ntohl(h->session), seq = ntohl(h->seq);
	size_t plen = ntohs(h->payload_len);
	bool filled = false, kick;
	struct acked a = { 0 };
	struct peer *p;
	int rc;

	if (h->type == XW_PKT_CONNECT)
		return rx_connect(e, src, h);
	if (h->type == XW_PKT_CONNECT_REPLY)
		return rx_connect_reply(e, src, h);
	if (h->type == XW_PKT_PROBE)
		return rx_probe(e, src, h);
	if (h->type == XW_PKT_PROBE_REPLY)
		return rx_probe_reply(e, src, h);
	p = xwi_peer_find(e, src);
	if (!p || !p->cn.rx_known) {
		__u64 t = now(e);

		e->st.no_session++;
		/* We were reopened (or forgot the peer): introduce ourselves,
		 * at most once per rto_min. */
		if (h->type == XW_PKT_ACK || h->type == XW_PKT_CLOSE)
			return 0;
		if (!p && !(p = xwi_peer_get(e, src)))
			return 0;
		if (p->cn.cstate == C_NONE && !p->cn.unsol_due)
			p->cn.unsol_due = t + 2 * e->cfg.rto_init_ns;
		return 0;
	}
	if (sid != p->cn.peer_sid) {
		e->st.session_rejects++;
		return 0;
	}
	p->cn.last_heard = a.t = now(e);
	kick = rx_ack(e, p, ntohl(h->ack), h->type == XW_PKT_ACK, &a);
	if (h->type == XW_PKT_ACK && e->cfg.sack)
		rx_sack(e, p, h, pl, &a);
	ack_done(e, p, &a);
	if (h->type == XW_PKT_ACK) {
		e->st.rx_frames[XW_PKT_ACK]++;
		if (kick)
			xwi_msg_kick(e, p);
		return 0;
	}
	if (h->type == XW_PKT_CLOSE) {
		if (nonce_dst(h) != e->nonce)
			return nonce_reject(e, p);
		e->st.rx_frames[XW_PKT_CLOSE]++;
		e->st.peer_closes++;
		if (kick)
			xwi_msg_kick(e, p);
		/* A close after everything (the ack it carries included) is a
		 * clean end; one that cuts requests short is a reset. */
		if (xwi_conn_reset(e, p, -ECONNRESET, RM_NEWPEER) || xwi_msg_has_work(p))
			e->st.peer_closes_cut++;
		xwi_msg_kick(e, p);
		return 0;
	}
	if (seq != p->cn.rcv_nxt) {
		if (seq_before(seq, p->cn.rcv_nxt))
			e->st.rx_dup_frames++;
		else
			ooo_hold(e, p, seq, h, pl, plen);
		p->cn.ack_now = true;
		if (kick)
			xwi_msg_kick(e, p);
		return 0;
	}
	/* up, once: the message layer kicks @p afterwards (see rx_ack) */
	rc = xwi_msg_rx(e, p, &p->addr, h, pl);
	if (rc == -ENOBUFS || rc == -ENOMEM) {
		e->st.rx_nobufs++;
		if (p->cn.lossless)
			return -ENOBUFS; /* it stays in the ring: back-pressure */
		p->cn.ack_now = true;
		return 0;
	}
	p->cn.rcv_nxt++;
	p->cn.ack_owed++;
	while (!xl_empty(&p->cn.ooo)) {
		struct xwi_frame *f = xl_entry(p->cn.ooo.next, struct xwi_frame, link);
		struct iovec one = { f->pl, f->len };
		struct xwi_pl fpl = { &one, 1 };
		int r2;

		if (f->seq != p->cn.rcv_nxt)
			break;
		r2 = xwi_msg_rx(e, p, &p->addr, &f->h, &fpl);
		if (r2 == -ENOBUFS || r2 == -ENOMEM) {
			e->st.rx_nobufs++;
			break;
		}
		xl_del(&f->link);
		xwi_frame_put(e, f, f->len);
		p->cn.nooo--;
		p->cn.rcv_nxt++;
		p->cn.ack_owed++;
		filled = true;
	}
	if (p->cn.lossless) {
		/* it keeps only what it asked us to ack (XW_F_ACKREQ) */
		p->cn.ack_owed = 0;
		if (h->flags & XW_F_ACKREQ)
			p->cn.ack_now = true;
		return rc;
	}
	if (filled || p->cn.ack_owed >= e->cfg.ack_every)
		p->cn.ack_now = true;
	else if (!p->cn.ack_due)
		p->cn.ack_due = now(e) + e->cfg.ack_delay_ns;
	return rc;
}

/* ---- timers, acks, deadlines --------------------------------------------- */

static void conn_send(struct xwi_engine *e, struct peer *p, __u64 t)
{
	__u64 r = p->cn.rto;

	if (emit_ctl(e, p, XW_PKT_CONNECT, p->cn.isn, 0)) {
		p->cn.conn_due = t + e->cfg.rto_min_ns;
		return;
	}
	if (p->cn.conn_tries)
		e->st.rtx_frames[XW_PKT_CONNECT]++;
	/* A lossless peer has it in its inbox: resent at rto_max only (as
	 * the frames behind it), not because the peer's process was
	 * descheduled for an RTO (a busy rank in MPI_Init, a loaded host);
	 * a dead peer is found by the liveness check meanwhile. */
	if (p->cn.lossless)
		r = e->cfg.rto_max_ns;
	for (__u32 i = 0; i < p->cn.conn_tries && r < e->cfg.rto_max_ns; i++)
		r *= 2;
	p->cn.conn_tries++;
	p->cn.conn_due = t + (r < e->cfg.rto_max_ns ? r : e->cfg.rto_max_ns);
}

/* Give @p up, silent since @since (now @t) while @what was owed
 * (-ETIMEDOUT), or gone (-ECONNRESET, @what how we know); the endpoint
 * layer logs it (ops.gave_up): it fails the application's requests with
 * the peer. */
static void give_up(struct xwi_engine *e, struct peer *p, __u64 t, __u64 since, int err,
		    const char *what)
{
	if (err == -ETIMEDOUT)
		e->st.timeouts++;
	if (e->ops.gave_up)
		e->ops.gave_up(e->ctx, &p->addr, err, what, t > since ? t - since : 0,
			       p->cn.probing_since && t > p->cn.probing_since
				       ? t - p->cn.probing_since
				       : 0);
	xwi_conn_reset(e, p, err, RM_GIVEUP);
}

int xwi_conn_timers(struct xwi_engine *e)
{
	__u64 t = now(e);
	int n = 0;

	for (struct xl *l = e->peers.next, *next; l != &e->peers; l = next) {
		struct peer *p = xl_entry(l, struct peer, link);

		next = l->next; /* p may be forgotten */
		if (p->cn.unsol_due && t >= p->cn.unsol_due) {
			/* frames of a session we do not know kept coming and
			 * no CONNECT: we were reopened (or forgot the peer) */
			p->cn.unsol_due = 0;
			if (p->cn.cstate == C_NONE) {
				xwi_conn_start(e, p);
				p->cn.probe = true;
				n++;
				xwi_msg_kick(e, p);
			}
		}
		if (p->cn.cstate == C_SYN && p->cn.conn_due && t >= p->cn.conn_due) {
			if (p->cn.probe && !p->cn.rx_known && xwi_peer_idle(e, p)) {
				/* An introduction is not retried: one CONNECT
				 * per frame of the unknown session at most (no
				 * amplification); the peer's own retransmission
				 * brings the next.  The peer is kept for a while
				 * (its CONNECT may be on the way: our session
				 * must stay the one we introduced), then
				 * forgotten. */
				__u64 life = p->cn.conn_start + 4 * e->cfg.rto_max_ns;

				if (t >= life) {
					xwi_peer_forget(e, p);
					continue;
				}
				p->cn.conn_due = life;
				continue;
			}
			/* a peer endpoint that is alive but does not
			 * poll (it computes, or is stopped) is waited for */
			if (t >= giveup_at(e, p, max64(p->cn.conn_start, p->cn.last_alive))) {
				give_up(e, p, t, max64(p->cn.conn_start, p->cn.last_alive), -ETIMEDOUT,
					"no answer to our CONNECT");
				continue;
			}
			if (unread(e, p)) {
				/* our CONNECT waits in its ring */
				p->cn.conn_due = t + e->cfg.rto_max_ns;
			} else {
				conn_send(e, p, t);
				n++;
			}
		}
		if (p->cn.cstate == C_SYN && !(p->cn.probe && !p->cn.rx_known)) {
			int r = live_check(e, p, t, max64(p->cn.conn_start, p->cn.last_alive));

			if (r < 0) { /* given up */
				n++;
				continue;
			}
			n += r;
		}
		if (p->cn.reply_owed && p->cn.cstate != C_NONE && p->cn.rx_known) {
			if (!emit_ctl(e, p, XW_PKT_CONNECT_REPLY, p->cn.isn, p->cn.peer_sid)) {
				if (p->cn.last_reply)
					e->st.rtx_frames[XW_PKT_CONNECT_REPLY]++;
				p->cn.reply_owed = false;
				p->cn.last_reply = t ? t : 1;
				n++;
			}
		}
		if (!p->cn.inflight) {
			/* nothing left to resend (acked or reset) */
			p->cn.rtx_now = p->cn.holes = p->cn.tlp_out = false;
			p->cn.tlp_due = p->cn.rack_due = 0;
			if (p->cn.rx_known && p->cn.cstate == C_EST && xwi_msg_awaits_pulls(p)) {
				/* Large sends wait for the peer's PULLs (a late
				 * receiver may post its receive any time): a
				 * silent peer is probed with a duplicate CONNECT,
				 * which an alive peer answers; one that stays
				 * silent for give_up_ns is given up. */
				__u64 quiet = t - xwi_conn_heard(p);
				int r;

				if (t >= giveup_at(e, p, xwi_conn_heard(p))) {
					give_up(e, p, t, xwi_conn_heard(p), -ETIMEDOUT,
						"silent while our large sends wait for its PULLs");
					continue;
				}
				r = live_check(e, p, t, xwi_conn_heard(p));
				if (r < 0) {
					n++;
					continue;
				}
				n += r;
				if (quiet >= e->cfg.give_up_ns / 4 &&
				    t - p->cn.last_probe >= e->cfg.give_up_ns / 8 &&
				    !emit_ctl(e, p, XW_PKT_CONNECT, p->cn.isn, 0)) {
					p->cn.last_probe = t;
					e->st.probes++;
					n++;
				}
			}
			if (p->cn.rx_known && xwi_msg_awaits_data(p)) {
				int r;

				if (t >= giveup_at(e, p, xwi_conn_heard(p)))
					give_up(e, p, t, xwi_conn_heard(p), -ETIMEDOUT,
						"silent while we wait for the rest of its message");
				else if ((r = live_check(e, p, t, xwi_conn_heard(p))) > 0)
					n += r;
				else if (r < 0)
					n++;
			}
			continue;
		}
		/* Nothing acknowledged for give_up_ns: give up unless the
		 * peer is alive and refusing (its unexpected queue is full:
		 * it answers our resends, every rto_max, with a pure ACK of
		 * what it had, as TCP probes a zero window).  Other frames of
		 * the peer do not count: a peer that talks but ignores our
		 * frames (a session mix-up) must be given up and reset. */
		{
			__u64 since = max64(max64(p->cn.last_progress, p->cn.last_dupack),
					    p->cn.last_alive);
			int r;

			if (t >= giveup_at(e, p, since)) {
				give_up(e, p, t, since, -ETIMEDOUT, "nothing we sent acknowledged");
				continue;
			}
			r = live_check(e, p, t, since);
			if (r < 0) {
				n++;
				continue;
			}
			n += r;
		}
		n += rtx_timers(e, p, t);
	}
	return n;
}

int xwi_conn_acks(struct xwi_engine *e, bool owed)
{
	__u64 t = owed ? UINT64_MAX : now(e);
	int n = 0;

	for (struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		if (!p->cn.rx_known || p->cn.cstate == C_NONE)
			continue;
		if (p->cn.ack_now || (p->cn.ack_due && t >= p->cn.ack_due)) {
			if (!emit_ctl(e, p, XW_PKT_ACK, p->cn.snd_nxt, 0))
				n++;
		}
	}
	return n;
}

bool xwi_conn_pending(const struct xwi_engine *e)
{
	for (const struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		const struct peer *p = xl_entry(l, struct peer, link);

		if (p->cn.reply_owed || p->cn.rtx_now || p->cn.ack_now || p->cn.holes)
			return true;
	}
	return false;
}

/* The connection layer's next timer (see xwi_engine_next_deadline). */
__u64 xwi_conn_deadline(const struct xwi_engine *e)
{
	__u64 d = UINT64_MAX;

	for (const struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		const struct peer *p = xl_entry(l, struct peer, link);
		__u64 c = UINT64_MAX;

		if (p->cn.reply_owed || (p->cn.rtx_now && p->cn.inflight) || p->cn.ack_now ||
		    (p->cn.holes && p->cn.inflight))
			return 0;
		if (p->cn.inflight && p->cn.rack_due && p->cn.rack_due < c)
			c = p->cn.rack_due;
		if (p->cn.inflight && p->cn.tlp_due && p->cn.tlp_due < c)
			c = p->cn.tlp_due;
		if (p->cn.cstate == C_SYN && p->cn.conn_due)
			c = p->cn.conn_due;
		if (p->cn.cstate == C_SYN && !(p->cn.probe && !p->cn.rx_known)) {
			__u64 lv = live_due(e, p, max64(p->cn.conn_start, p->cn.last_alive));

			if (lv < c)
				c = lv;
		}
		if (p->cn.unsol_due && p->cn.unsol_due < c)
			c = p->cn.unsol_due;
		if (p->cn.ack_due && p->cn.ack_due < c)
			c = p->cn.ack_due;
		if (p->cn.inflight) {
			__u64 last = max64(max64(p->cn.last_progress, p->cn.last_dupack),
					   p->cn.last_alive);

			if (p->cn.rtx_due && p->cn.rtx_due < c)
				c = p->cn.rtx_due;
			if (giveup_at(e, p, last) < c)
				c = giveup_at(e, p, last);
			if (live_due(e, p, last) < c)
				c = live_due(e, p, last);
		} else {
			if (p->cn.rx_known && xwi_msg_awaits_data(p)) {
				__u64 h = xwi_conn_heard(p);

				if (giveup_at(e, p, h) < c)
					c = giveup_at(e, p, h);
				if (live_due(e, p, h) < c)
					c = live_due(e, p, h);
			}
			if (p->cn.rx_known && p->cn.cstate == C_EST && xwi_msg_awaits_pulls(p)) {
				/* the probe of a silent peer, then the give-up */
				__u64 h = xwi_conn_heard(p), probe = h + e->cfg.give_up_ns / 4;

				if (probe < p->cn.last_probe + e->cfg.give_up_ns / 8)
					probe = p->cn.last_probe + e->cfg.give_up_ns / 8;
				if (probe > h + e->cfg.give_up_ns)
					probe = h + e->cfg.give_up_ns;
				if (probe < c)
					c = probe;
				if (live_due(e, p, h) < c)
					c = live_due(e, p, h);
				if (giveup_at(e, p, h) < c)
					c = giveup_at(e, p, h);
			}
		}
		if (c < d)
			d = c;
	}
	return d;
}

/* ---- entries of the engine (engine.c) ------------------------------------ */

void xwi_conn_close_all(struct xwi_engine *e, bool send_close)
{
	for (struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		if (send_close && p->cn.cstate != C_NONE && p->cn.rx_known)
			emit_ctl(e, p, XW_PKT_CLOSE, p->cn.snd_nxt, 0);
		if (p->cn.rx_known) {
			p->cn.rx_known = false;
			conn_event(e, p, 0);
		}
		p->cn.cstate = C_NONE;
	}
}

/* The CRC32C of the first @len bytes of @pl, after @crc. */
static __u32 pl_crc(__u32 crc, const struct xwi_pl *pl, size_t len)
{
	for (unsigned int i = 0; i < pl->n && len; i++) {
		size_t l = pl->iov[i].iov_len < len ? pl->iov[i].iov_len : len;

		crc = xwi_crc32c(crc, pl->iov[i].iov_base, l);
		len -= l;
	}
	return crc;
}

int xwi_conn_rx(struct xwi_engine *e, const struct xw_addr *src, struct xw_hdr *h,
		const struct xwi_pl *pl, size_t len, bool lossless)
{
	/* The CRC first: a corrupted frame is counted as such, whatever
	 * field the corruption hit (but payload_len must fit to check it).
	 * None on the local ring: memory to memory, nothing corrupts it. */
	if (e->cfg.crc && !lossless && ntohs(h->payload_len) <= len) {
		__u32 want = ntohl(h->csum), got;
		__be32 d = h->data;

		h->csum = 0;
		if (h->type == XW_PKT_PROBE_REPLY) /* the answerer's, outside the CRC */
			h->data = 0;
		got = pl_crc(xwi_crc32c(0, h, sizeof(*h)), pl, ntohs(h->payload_len));
		h->csum = htonl(want);
		h->data = d;
		if (got != want) {
			e->st.crc_failures++;
			return -EBADMSG;
		}
	}
	/* XW_F_CMA offers the sender's memory for reading: only the local
	 * ring may carry it (a wire frame can claim a local peer's source
	 * address, the path it came by it cannot). */
	if (xwi_frame_check(e, h, len) || src->ep != ntohs(h->src_ep) ||
	    (!lossless && (h->flags & XW_F_CMA))) {
		e->st.rx_bad++;
		return -EPROTO;
	}
	if (e->cfg.reliable)
		return rel_rx(e, src, h, pl);
	/* no connections: every frame goes up as it came */
	return xwi_msg_rx(e, xwi_peer_find(e, src), src, h, pl);
}

void xwi_conn_forget(struct xwi_engine *e, struct peer *p)
{
	if (p->cn.rx_known)
		conn_event(e, p, 0);
}
