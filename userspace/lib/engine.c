// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * engine.c - the message protocol engine (see engine.h for the interface):
 * configuration and creation, the peer table, the progress pass and the
 * next deadline, teardown.  The layers are in conn.c (connection), msg.c
 * and stream.c (messages) and match.c (matching); engine_int.h says who
 * owns which state.
 *
 * Pure protocol: no sockets, no threads, no clock, nothing printed; errors
 * are negative errno values; only libc (and xw_addr_equal) is used.
 *
 * The protocol (fragments, eager and push-pull framing, matching,
 * transmission order; with cfg.reliable the connection layer under the
 * messages: sessions, sequence numbers, acks, SACK, retransmission, and
 * the message streams across its resets) is described in
 * docs/PROTOCOL.md; keep that file true when the code changes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "engine_int.h"
#include "conn.h"
#include "match.h"
#include "msg.h"
#include "xdpwake_maps.h" /* XW_MAX_CONNS: the size of the `conns` map */

/* ---- configuration, creation ------------------------------------------ */

void xwi_engine_cfg_default(struct xwi_engine_cfg *cfg, __u16 ep, __u32 frag_payload)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ep = ep;
	cfg->frag_payload = frag_payload;
	cfg->eager_max = 32 * 1024;
	cfg->btp1 = frag_payload;
	cfg->btp2 = 4 * frag_payload;
	cfg->pull_block = 32;
	cfg->pull_inflight = 4;
	cfg->unexpected_max = 8ULL << 20;
	cfg->pushed_max = 4ULL << 20;
	cfg->tx_backlog_max = 1024;
	cfg->marks = XWI_MARK_ALL;
	cfg->mark_shift = 0;
	cfg->reliable = true;
	cfg->crc = true;
	cfg->window = 256;
	cfg->ooo_max = 256;
	cfg->ack_every = 16;
	cfg->peers_max = XW_MAX_CONNS;
	cfg->ack_delay_ns = 200000;
	cfg->rto_init_ns = 20000000;
	cfg->rto_min_ns = 1000000;
	cfg->rto_max_ns = 250000000;
	cfg->give_up_ns = 5000000000ULL;
	cfg->sack = true;
}

struct xwi_engine *xwi_engine_new(const struct xwi_engine_cfg *cfg,
				  const struct xwi_engine_ops *ops, void *ctx)
{
	struct xwi_engine *e;

	if (!cfg || !ops || !ops->send || cfg->frag_payload < sizeof(struct xw_pull_req) ||
	    cfg->frag_payload > 0xFFFF || cfg->pull_block < 1 || cfg->pull_block > 32 ||
	    cfg->pull_inflight < 1 || cfg->pull_inflight > 1024 || cfg->tx_backlog_max < 1 ||
	    (cfg->reliable && (cfg->window < 1 || cfg->window > (1u << 30) || !cfg->ack_every ||
			       !cfg->rto_min_ns || cfg->rto_max_ns < cfg->rto_min_ns ||
			       !cfg->give_up_ns ||
			       (cfg->isn_fixed &&
				(!cfg->isn || cfg->isn > 0xFFFFFFFEu - cfg->window))))) {
		errno = EINVAL;
		return NULL;
	}
	e = zalloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->c_req.size = sizeof(struct reqbox);
	e->c_rmsg.size = sizeof(struct rmsg);
	e->small = cfg->frag_payload < XWI_SMALL_MAX ? cfg->frag_payload : XWI_SMALL_MAX;
	e->c_frame.size = sizeof(struct xwi_frame) + e->small;
	e->c_copy.size = e->small;
	e->cfg.marks &= XWI_MARK_ALL;
	e->ops = *ops;
	e->ctx = ctx;
	xl_init(&e->peers);
	xl_init(&e->txrr);
	xwi_match_init(e);
	xl_init(&e->pending);
	xl_init(&e->rmsgs);
	while (!e->eid)
		xwi_rand_bytes(e, &e->eid, sizeof(e->eid));
	return e;
}

void *xwi_engine_ctx(struct xwi_engine *e)
{
	return e ? e->ctx : NULL;
}

void xwi_engine_stats(const struct xwi_engine *e, struct xwi_engine_stats *out)
{
	if (e && out) {
		*out = e->st;
		out->peers = e->npeers;
	}
}

__u64 xwi_engine_peers_unacked(const struct xwi_engine *e)
{
	__u64 n = 0;

	for (const struct xl *l = e ? e->peers.next : NULL; l && l != &e->peers; l = l->next) {
		const struct peer *p = xl_entry(l, struct peer, link);

		n += !xl_empty(xwi_conn_unacked(p)) || xwi_msg_has_work(p);
	}
	return n;
}

/* ---- peers ------------------------------------------------------------- */

/*
 * A peer we exchanged nothing with: no sequenced frame either way, no
 * message, no ack of ours, nothing queued - either half-open (it sent a
 * CONNECT, we answered, nothing since) or unknown (frames of a session we
 * do not know; we introduced ourselves).  Forged frames from made-up
 * addresses leave exactly such peers behind; a real peer sends its data
 * right after the handshake.  No message of it may be left either: a
 * connection reset keeps the complete ones in the unexpected queue.
 */
bool xwi_peer_idle(const struct xwi_engine *e, const struct peer *p)
{
	return xwi_conn_idle(p) && xwi_msg_idle(e, p);
}

void xwi_peer_forget(struct xwi_engine *e, struct peer *p)
{
	xwi_conn_forget(e, p);
	xl_del(&p->link);
	if (e->last_peer == p)
		e->last_peer = NULL;
	e->npeers--;
	xwi_msg_peer_fini(p);
	free(p);
}

/*
 * The peer table is full: forget the idle peer (see xwi_peer_idle) heard
 * from least recently, if it has been silent for 4 rto_max (1 s) at least:
 * a real peer sends its data well within that after its handshake, so it
 * is never evicted before it is established.  A flood of forged frames
 * from made-up addresses thus cannot lock real peers out for long (new
 * peers are refused while every idle peer is younger, and their handshake
 * is retried); established peers are never evicted.
 */
static bool peer_evict(struct xwi_engine *e)
{
	__u64 t = now(e), young = 4 * e->cfg.rto_max_ns;
	struct peer *victim = NULL;

	for (struct xl *l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		if (xwi_peer_idle(e, p) && t - xwi_conn_heard(p) >= young &&
		    (!victim || xwi_conn_heard(p) < xwi_conn_heard(victim)))
			victim = p;
	}
	if (!victim)
		return false;
	e->st.peers_evicted++;
	xwi_peer_forget(e, victim);
	return true;
}

struct peer *xwi_peer_get(struct xwi_engine *e, const struct xw_addr *a)
{
	struct peer *p = xwi_peer_find(e, a);

	if (p)
		return p;
	if (e->npeers >= (e->cfg.peers_max ? e->cfg.peers_max : XW_MAX_CONNS) && !peer_evict(e))
		return NULL;
	p = zalloc(1, sizeof(*p));
	if (!p)
		return NULL;
	e->npeers++;
	p->addr = *a;
	xwi_conn_init(e, p);
	xwi_msg_peer_init(p);
	xl_add_tail(&p->link, &e->peers);
	e->last_peer = p;
	return p;
}

int xwi_engine_progress(struct xwi_engine *e, int budget)
{
	int n = 0;

	if (!e || budget <= 0)
		return 0;
	if (e->cfg.reliable) {
		xwi_msg_timers(e);
		n += xwi_conn_timers(e);
	}
	n += xwi_tx_run(e, budget);
	if (e->cfg.reliable)
		n += xwi_conn_acks(e);
	return n;
}

bool xwi_engine_tx_pending(const struct xwi_engine *e)
{
	return e && (!xl_empty(&e->txrr) || (e->cfg.reliable && xwi_conn_pending(e)));
}

/* ---- randomness -------------------------------------------------------- */

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

__u64 xwi_engine_next_deadline(const struct xwi_engine *e)
{
	__u64 c, m;

	if (!e || !e->cfg.reliable)
		return UINT64_MAX;
	c = xwi_conn_deadline(e);
	m = xwi_msg_deadline(e);
	return c < m ? c : m;
}

/* ---- teardown ---------------------------------------------------------- */

void xwi_engine_free(struct xwi_engine *e)
{
	struct xl *l, *n;

	if (!e)
		return;
	/* standalone control frames (NOTIFY) and carried frames still queued
	 * (before the requests, whose queue links go with them) */
	for (l = e->peers.next; l != &e->peers; l = l->next) {
		struct peer *p = xl_entry(l, struct peer, link);

		xwi_carry_free(p);
		while (!xl_empty(&p->ms.ctrlq)) {
			struct ctrl *c = xl_entry(p->ms.ctrlq.next, struct ctrl, tx.link);

			xl_del(&c->tx.link);
			if (c->standalone)
				free(c);
		}
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
	for (l = e->peers.next; l != &e->peers; l = n) {
		struct peer *p = xl_entry(l, struct peer, link);

		n = l->next;
		xwi_conn_fini(p);
		xwi_msg_peer_fini(p);
		free(p);
	}
	xwi_cache_drain(&e->c_req);
	xwi_cache_drain(&e->c_rmsg);
	xwi_cache_drain(&e->c_frame);
	xwi_cache_drain(&e->c_copy);
	free(e);
}
