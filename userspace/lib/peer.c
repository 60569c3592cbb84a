// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * peer.c - the peer table, the bottom of the connection layer: one struct
 * peer per address the engine exchanges frames with (its connection,
 * peer->cn, and the message layer's part, peer->ms), found by address
 * (xwi_peer_find, conn.h), made on the first frame to or from it, evicted
 * when the table is full and it is idle, forgotten when an introduction
 * expires.  The message layer's part is set up, asked and freed through
 * the up-calls of msg.h (xwi_msg_peer_init, xwi_msg_idle,
 * xwi_msg_peer_fini).
 */
#include <stdlib.h>

#include "engine_int.h"
#include "conn.h"
#include "msg.h"
#include "xdpwake_maps.h" /* XW_MAX_CONNS: the size of the `conns` map */

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
		return p; /* a nonce @a carries: xwi_conn_named() */
	if (e->npeers >= (e->cfg.peers_max ? e->cfg.peers_max : XW_MAX_CONNS) && !peer_evict(e))
		return NULL;
	p = zalloc(1, sizeof(*p));
	if (!p)
		return NULL;
	e->npeers++;
	p->addr = *a;
	p->nonce_sure = a->nonce != 0;
	xwi_conn_init(e, p);
	xwi_msg_peer_init(p);
	xl_add_tail(&p->link, &e->peers);
	e->last_peer = p;
	return p;
}

void xwi_peers_free(struct xwi_engine *e)
{
	for (struct xl *l = e->peers.next, *n; l != &e->peers; l = n) {
		struct peer *p = xl_entry(l, struct peer, link);

		n = l->next;
		xwi_conn_fini(p);
		xwi_msg_peer_fini(p);
		free(p);
	}
	xl_init(&e->peers);
	e->last_peer = NULL;
	e->npeers = 0;
}
