// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * engine.c - the message protocol engine's entry points (see engine.h for
 * the interface): configuration and creation, the frame entry
 * (xwi_engine_rx), the progress pass and the next deadline, shutdown and
 * teardown.  It calls the layers below: the message layer (msg.c,
 * stream.c, with matching, match.c; msg.h) and the connection layer
 * (conn.c, with the peer table, peer.c; conn.h).  engine_int.h says who
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
	/*
	 * Eager up to 32 KiB or 8 frames, whichever is more (at MTU 9000:
	 * 71,488 B, so a 64 KiB message goes without the RNDV/PULL round
	 * trip, which made 64 KiB ping-pong 0.21x the TCP BTL's, bench/
	 * RESULTS.md "Bulk data").  The pull window: XWI_PULL_WINDOW bytes
	 * per message in flight (above the bandwidth-delay product of a
	 * veth or a 100G link at tens of microseconds), in 8 blocks so that
	 * a new PULL goes out each time an eighth of it is in, not when a
	 * 32-fragment block is.
	 */
	cfg->eager_max = 8 * frag_payload > 32 * 1024 ? 8 * frag_payload : 32 * 1024;
	cfg->local_eager_max = XWI_LOCAL_EAGER_MAX;
	cfg->btp1 = frag_payload;
	cfg->btp2 = 4 * frag_payload;
	cfg->pull_inflight = 8;
	cfg->pull_block = frag_payload ? XWI_PULL_WINDOW / (cfg->pull_inflight * frag_payload) : 32;
	if (cfg->pull_block > 32)
		cfg->pull_block = 32;
	if (cfg->pull_block < 1)
		cfg->pull_block = 1;
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
	cfg->give_up_ns = 60000000000ULL;
	cfg->live_probe_ns = 1000000000ULL;
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
	e->c_req.max = e->c_rmsg.max = e->c_frame.max = e->c_copy.max = XWI_CACHE_MAX;
	e->c_kept.size = sizeof(struct xwi_frame);
	e->c_kept.max = cfg->window;
	e->c_big.size = sizeof(struct xwi_frame) + cfg->frag_payload;
	e->c_big.max = (unsigned int)(XWI_BIG_CACHE_BYTES / e->c_big.size);
	if (e->c_big.max > cfg->window)
		e->c_big.max = cfg->window;
	e->c_eager.size = cfg->eager_max <= XWI_EAGER_CACHE_LEN ? cfg->eager_max : 0;
	e->c_eager.max = XWI_EAGER_CACHE;
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
	while (!e->nonce)
		xwi_rand_bytes(e, &e->nonce, sizeof(e->nonce));
	return e;
}

__u64 xwi_engine_nonce(const struct xwi_engine *e)
{
	return e ? e->nonce : 0;
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
		xwi_conn_rto_worst(e, &out->rto_ns, &out->srtt_ns);
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

/* ---- the receive entry ------------------------------------------------- */

/*
 * A received frame goes to the connection layer once (xwi_conn_rx: CRC,
 * header rules, session, ack, sequence, order), which hands a frame of the
 * message layer up once (xwi_msg_rx: streams, matching, requests).
 */
static int engine_rx(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		     const struct iovec *iov, unsigned int n, size_t len, bool lossless)
{
	struct xwi_pl pl = { iov, n };
	struct xw_hdr hc;
	size_t sum = 0;

	if (!e || !src || !h)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return -EINVAL;
		sum += iov[i].iov_len;
	}
	if (sum < len)
		return -EINVAL;
	memcpy(&hc, h, sizeof(hc)); /* @h need not be aligned */
	return xwi_conn_rx(e, src, &hc, &pl, len, lossless);
}

int xwi_engine_rx(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		  const void *payload, size_t len)
{
	struct iovec one = { (void *)(uintptr_t)payload, len };

	return engine_rx(e, src, h, &one, 1, len, false);
}

int xwi_engine_rx_iov(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		      const struct iovec *iov, unsigned int n, size_t len)
{
	if (!iov && n)
		return -EINVAL;
	return engine_rx(e, src, h, iov, n, len, false);
}

int xwi_engine_rx_local(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
			const void *payload, size_t len)
{
	struct iovec one = { (void *)(uintptr_t)payload, len };

	return engine_rx(e, src, h, &one, 1, len, true);
}

void xwi_engine_cma_done(struct xwi_engine *e, const struct xw_addr *src, __u32 msg_id,
			 __u32 session)
{
	if (e && src)
		xwi_msg_cma_done(e, src, msg_id, session);
}

/* ---- sends and receives ----------------------------------------------- */

int xwi_engine_isend(struct xwi_engine *e, const struct xw_addr *dst, const void *buf, size_t len,
		     __u64 match, struct xw_request **reqp)
{
	return xwi_engine_isend_flags(e, dst, buf, len, match, 0, reqp);
}

int xwi_engine_isend_flags(struct xwi_engine *e, const struct xw_addr *dst, const void *buf,
			   size_t len, __u64 match, __u32 flags, struct xw_request **reqp)
{
	if (flags & XWI_SEND_DATA)
		return -EINVAL;
	return xwi_engine_isend_data(e, dst, buf, len, match, flags, 0, reqp);
}

int xwi_engine_isend_data(struct xwi_engine *e, const struct xw_addr *dst, const void *buf,
			  size_t len, __u64 match, __u32 flags, __u32 data, struct xw_request **reqp)
{
	if (!e || !dst || !reqp || (!buf && len) || dst->ep >= XW_MAX_ENDPOINTS ||
	    (flags & ~(XWI_SEND_MORE | XWI_SEND_DATA)))
		return -EINVAL;
	if ((__u64)len > UINT32_MAX)
		return -EMSGSIZE;
	return xwi_msg_send(e, dst, buf, len, match, flags, data, reqp);
}

int xwi_engine_irecv(struct xwi_engine *e, void *buf, size_t len, __u64 match, __u64 mask,
		     struct xw_request **reqp)
{
	return xwi_engine_irecv_from(e, buf, len, match, mask, NULL, reqp);
}

int xwi_engine_irecv_from(struct xwi_engine *e, void *buf, size_t len, __u64 match, __u64 mask,
			  const struct xw_addr *src, struct xw_request **reqp)
{
	if (!e || !reqp || (!buf && len))
		return -EINVAL;
	return xwi_match_recv(e, buf, len, match, mask, src, reqp);
}

int xwi_engine_peek(struct xwi_engine *e, __u64 match, __u64 mask, const struct xw_addr *src,
		    bool claim, struct xw_status *st, __u64 *claim_id)
{
	if (!e || (claim && !claim_id))
		return -EINVAL;
	return xwi_match_peek(e, match, mask, src, claim, st, claim_id);
}

int xwi_engine_irecv_claimed(struct xwi_engine *e, __u64 claim_id, void *buf, size_t len,
			     struct xw_request **reqp)
{
	if (!e || !reqp || !claim_id || (!buf && len))
		return -EINVAL;
	return xwi_match_recv_claimed(e, claim_id, buf, len, reqp);
}

bool xwi_engine_has_unexpected(const struct xwi_engine *e)
{
	return xwi_match_has_unexpected(e);
}

__u32 xwi_engine_pulling(const struct xwi_engine *e)
{
	/* read by a wait without the port lock, as a hint (msg.c stores it
	 * under the lock) */
	return e ? __atomic_load_n(&e->pulls_out, __ATOMIC_RELAXED) : 0;
}

int xwi_engine_cancel(struct xwi_engine *e, struct xw_request *req)
{
	if (!e || !req || req->eng != e)
		return -EINVAL;
	if (req->state != XWI_REQ_PENDING)
		return -EBUSY;
	return xwi_msg_cancel(e, req);
}

int xwi_engine_abort(struct xwi_engine *e, struct xw_request *req, int err)
{
	if (!e || !req || req->eng != e || err >= 0)
		return -EINVAL;
	if (req->state != XWI_REQ_PENDING)
		return -EALREADY;
	xwi_msg_abort(e, req, err);
	return 0;
}

int xwi_request_free(struct xw_request *req)
{
	if (!req)
		return -EINVAL;
	if (req->state != XWI_REQ_DONE)
		return -EBUSY;
	xwi_cache_put(&req->eng->c_req, xl_entry(req, struct reqbox, pub));
	return 0;
}

/* ---- progress, deadlines ----------------------------------------------- */

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
		n += xwi_conn_acks(e, false);
	return n;
}

int xwi_engine_ack_owed(struct xwi_engine *e)
{
	return e && e->cfg.reliable ? xwi_conn_acks(e, true) : 0;
}

bool xwi_engine_tx_pending(const struct xwi_engine *e)
{
	return e && (!xl_empty(&e->txrr) || (e->cfg.reliable && xwi_conn_pending(e)));
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

void xwi_engine_shutdown(struct xwi_engine *e, bool send_close)
{
	if (e && e->cfg.reliable)
		xwi_conn_close_all(e, send_close);
}

void xwi_engine_free(struct xwi_engine *e)
{
	if (!e)
		return;
	xwi_msg_fini(e);
	xwi_peers_free(e);
	xwi_cache_drain(&e->c_req);
	xwi_cache_drain(&e->c_rmsg);
	xwi_cache_drain(&e->c_kept);
	xwi_cache_drain(&e->c_frame);
	xwi_cache_drain(&e->c_copy);
	xwi_cache_drain(&e->c_big);
	xwi_cache_drain(&e->c_eager);
	free(e);
}
